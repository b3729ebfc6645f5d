// The translator's own config (a model file's attnwasm.config with "model": "translator"): its keys checked in a
// fixed order, so the first problem is the one reported, then read into TranslatorConfig. The vocabularies and
// language tokens are checked here and read by the JS face (bindings/translator.js).
#include <string>
#include <string_view>
#include <vector>

#include "core/limits.h"
#include "models/own_config.h"
#include "models/translator.h"

namespace aw {

using io::Describe;
using io::FieldReader;
using io::JsonValue;
using io::QuoteJson;

Status ReadTranslatorFile(const FieldReader& c, TranslatorConfig* out) {
  int64_t unused = 0, max_len = 0;
  AW_RETURN_IF_ERROR(own::Width(c));
  AW_RETURN_IF_ERROR(c.Int("numEncoderLayers", 1, kMaxLayers, &unused));
  AW_RETURN_IF_ERROR(c.Int("numDecoderLayers", 1, kMaxLayers, &unused));
  AW_RETURN_IF_ERROR(c.Int("dimFeedforward", 1, kMaxFeedforward, &unused));
  AW_RETURN_IF_ERROR(own::LayerOptions(c));
  AW_RETURN_IF_ERROR(c.Int("maxLen", 1, kMaxSequence, &max_len));
  AW_RETURN_IF_ERROR(c.OptionalNumber("embedScale", /*positive=*/false));
  size_t src_size = 0, tgt_size = 0;
  AW_RETURN_IF_ERROR(own::Vocab(c, "srcVocab", &src_size));
  AW_RETURN_IF_ERROR(own::Vocab(c, "tgtVocab", &tgt_size));
  AW_RETURN_IF_ERROR(c.Index("pad", "tgtVocab", tgt_size));
  AW_RETURN_IF_ERROR(c.Index("eos", "tgtVocab", tgt_size));
  AW_RETURN_IF_ERROR(c.OptionalIndex("srcPad", "srcVocab", src_size));

  const JsonValue* langs = c.Get("langTokens");
  const std::string expect_langs = "an object of language name -> tgtVocab index with at least one key";
  if (!langs || !langs->is_object() || langs->members.empty()) return c.Fail(".langTokens", expect_langs, Describe(langs));
  std::vector<std::string_view> names;
  for (const io::JsonMember& m : langs->members) names.push_back(m.key);
  size_t first = 0;
  const size_t repeat = io::FirstRepeat(names, &first);
  for (size_t k = 0; k < langs->members.size(); ++k) {
    const io::JsonMember& m = langs->members[k];
    if (m.key.empty()) return c.Fail(".langTokens", "non-empty language names", "\"\"");
    if (k == repeat) return c.Fail(".langTokens", "unique language names", QuoteJson(m.key) + " more than once");
    if (!io::IntIn(&m.value, 0, int64_t(tgt_size) - 1, &unused))
      return c.Fail(".langTokens" + io::KeyPath(m.key),
                    "an integer in " + io::RangeStr(0, int64_t(tgt_size) - 1) + " (an index into tgtVocab)", Describe(&m.value));
  }
  AW_RETURN_IF_ERROR(c.OptionalBool("srcAddsEos"));
  if (const JsonValue* v = c.Get("sourceText"))
    if (!(v->is_string() && (v->str == "english-numbers" || v->str == "words")))
      return c.Fail(".sourceText", "\"english-numbers\" or \"words\"", Describe(v));
  if (const JsonValue* d = c.Get("detokenize")) {
    if (!d->is_object()) return c.Fail(".detokenize", "an object of language name -> rule", Describe(d));
    for (const io::JsonMember& m : d->members) {
      const JsonValue& v = m.value;
      if (!(v.is_string() && (v.str == "hyphen-join" || v.str == "concat" || v.str == "space-join")))
        return c.Fail(".detokenize" + io::KeyPath(m.key), "\"hyphen-join\", \"concat\" or \"space-join\"", Describe(&v));
    }
  }
  AW_RETURN_IF_ERROR(c.Int("maxSrcTokens", 1, max_len, &unused, " (at most maxLen)"));
  AW_RETURN_IF_ERROR(c.Int("maxTgtTokens", 1, max_len, &unused, " (at most maxLen)"));
  // Every key accepted: the fields.
  const JsonValue& root = c.object();
  TranslatorConfig t;
  t.layer = own::LayerOf(root);
  t.num_encoder_layers = own::IntOf(root, "numEncoderLayers");
  t.num_decoder_layers = own::IntOf(root, "numDecoderLayers");
  t.src_vocab = int64_t(own::SizeOf(root, "srcVocab"));
  t.tgt_vocab = int64_t(own::SizeOf(root, "tgtVocab"));
  t.max_len = own::IntOf(root, "maxLen");
  t.eos = own::IntOf(root, "eos");
  t.embed_scale = own::NumberOr(root, "embedScale", 1.0);
  *out = t;
  return Status::OK();
}

}  // namespace aw
