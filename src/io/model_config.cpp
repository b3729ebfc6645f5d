// ValidateModelConfig: parse with the strict JSON reader, then check the keys
// of one model kind in a fixed order, so the first problem is the one reported.
// Ranges are the runtime's limits (core/limits.h; model_config.h lists the keys).
#include "io/model_config.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "core/limits.h"
#include "io/json.h"
#include "io/json_fields.h"

namespace aw {
namespace {

using io::Describe;
using io::FieldReader;
using io::JsonType;
using io::JsonValue;
using io::QuoteJson;

constexpr char kRoot[] = "attnwasm.config";

std::string Num(int64_t v) { return std::to_string(v); }

// The options both kinds share: activation, normFirst, layerNormEps.
Status LayerOptions(const FieldReader& c) {
  AW_RETURN_IF_ERROR(c.OptionalEnum("activation", {"relu", "gelu"}));
  AW_RETURN_IF_ERROR(c.OptionalBool("normFirst"));
  return c.OptionalNumber("layerNormEps", /*positive=*/true);
}

// dModel and nhead (a divisor of dModel).
Status Width(const FieldReader& c) {
  int64_t d_model = 0, nhead = 0;
  AW_RETURN_IF_ERROR(c.Int("dModel", 1, kMaxModelWidth, &d_model));
  return c.Divisor("nhead", "dModel", d_model, &nhead);
}

// A vocabulary: 2 to kMaxVocab non-empty strings, no two equal.
Status Vocab(const FieldReader& c, const char* key, size_t* size) {
  const JsonValue* v = c.Get(key);
  const std::string path = std::string(".") + key;
  if (!v || !v->is_array() || v->items.size() < 2 || v->items.size() > size_t(kMaxVocab))
    return c.Fail(path, "an array of 2 to " + Num(kMaxVocab) + " non-empty unique strings", Describe(v));
  std::unordered_map<std::string_view, size_t> seen;
  seen.reserve(v->items.size());
  for (size_t i = 0; i < v->items.size(); ++i) {
    const JsonValue& item = v->items[i];
    const std::string at = path + "[" + Num(int64_t(i)) + "]";
    if (!item.is_string() || item.str.empty()) return c.Fail(at, "a non-empty string", Describe(&item));
    const auto ins = seen.emplace(item.str, i);
    if (!ins.second)
      return c.Fail(at, std::string("a string not already in ") + key,
                    Describe(&item) + " (also " + key + "[" + Num(int64_t(ins.first->second)) + "])");
  }
  *size = v->items.size();
  return Status::OK();
}

Status CheckTranslator(const FieldReader& c) {
  int64_t unused = 0, max_len = 0;
  AW_RETURN_IF_ERROR(Width(c));
  AW_RETURN_IF_ERROR(c.Int("numEncoderLayers", 1, kMaxLayers, &unused));
  AW_RETURN_IF_ERROR(c.Int("numDecoderLayers", 1, kMaxLayers, &unused));
  AW_RETURN_IF_ERROR(c.Int("dimFeedforward", 1, kMaxFeedforward, &unused));
  AW_RETURN_IF_ERROR(LayerOptions(c));
  AW_RETURN_IF_ERROR(c.Int("maxLen", 1, kMaxSequence, &max_len));
  AW_RETURN_IF_ERROR(c.OptionalNumber("embedScale", /*positive=*/false));
  size_t src_size = 0, tgt_size = 0;
  AW_RETURN_IF_ERROR(Vocab(c, "srcVocab", &src_size));
  AW_RETURN_IF_ERROR(Vocab(c, "tgtVocab", &tgt_size));
  AW_RETURN_IF_ERROR(c.Index("pad", "tgtVocab", tgt_size));
  AW_RETURN_IF_ERROR(c.Index("eos", "tgtVocab", tgt_size));
  AW_RETURN_IF_ERROR(c.OptionalIndex("srcPad", "srcVocab", src_size));

  const JsonValue* langs = c.Get("langTokens");
  const std::string expect_langs = "an object of language name -> tgtVocab index with at least one key";
  if (!langs || !langs->is_object() || langs->members.empty()) {
    return c.Fail(".langTokens", expect_langs, Describe(langs));
  }
  std::unordered_set<std::string_view> seen;
  for (const io::JsonMember& m : langs->members) {
    if (m.key.empty()) return c.Fail(".langTokens", "non-empty language names", "\"\"");
    if (!seen.insert(m.key).second) {
      return c.Fail(".langTokens", "unique language names", QuoteJson(m.key) + " more than once");
    }
    if (!io::IntIn(&m.value, 0, int64_t(tgt_size) - 1, &unused)) {
      return c.Fail(".langTokens" + io::KeyPath(m.key),
                  "an integer in " + io::RangeStr(0, int64_t(tgt_size) - 1) + " (an index into tgtVocab)",
                  Describe(&m.value));
    }
  }
  AW_RETURN_IF_ERROR(c.OptionalBool("srcAddsEos"));
  if (const JsonValue* v = c.Get("sourceText")) {
    if (!(v->is_string() && (v->str == "english-numbers" || v->str == "words"))) {
      return c.Fail(".sourceText", "\"english-numbers\" or \"words\"", Describe(v));
    }
  }
  if (const JsonValue* d = c.Get("detokenize")) {
    if (!d->is_object()) return c.Fail(".detokenize", "an object of language name -> rule", Describe(d));
    for (const io::JsonMember& m : d->members) {
      const JsonValue& v = m.value;
      if (!(v.is_string() && (v.str == "hyphen-join" || v.str == "concat" || v.str == "space-join"))) {
        return c.Fail(".detokenize" + io::KeyPath(m.key), "\"hyphen-join\", \"concat\" or \"space-join\"", Describe(&v));
      }
    }
  }
  AW_RETURN_IF_ERROR(c.Int("maxSrcTokens", 1, max_len, &unused, " (at most maxLen)"));
  return c.Int("maxTgtTokens", 1, max_len, &unused, " (at most maxLen)");
}

Status CheckVit(const FieldReader& c) {
  int64_t image = 0, patch = 0, unused = 0, classes = 0;
  AW_RETURN_IF_ERROR(c.Int("imageSize", 1, kMaxImageSize, &image));
  AW_RETURN_IF_ERROR(c.Divisor("patchSize", "imageSize", image, &patch));
  AW_RETURN_IF_ERROR(c.Int("inChannels", 1, kMaxChannels, &unused));
  AW_RETURN_IF_ERROR(Width(c));
  AW_RETURN_IF_ERROR(c.Int("numLayers", 1, kMaxLayers, &unused));
  AW_RETURN_IF_ERROR(c.Int("dimFeedforward", 1, kMaxFeedforward, &unused));
  AW_RETURN_IF_ERROR(LayerOptions(c));
  AW_RETURN_IF_ERROR(c.Int("numClasses", 1, kMaxClasses, &classes));
  if (const JsonValue* labels = c.Get("labels")) {
    if (!labels->is_array() || labels->items.size() != size_t(classes)) {
      return c.Fail(".labels", "an array of " + Num(classes) + " strings (numClasses)", Describe(labels));
    }
    for (size_t i = 0; i < labels->items.size(); ++i) {
      if (!labels->items[i].is_string()) {
        return c.Fail(".labels[" + Num(int64_t(i)) + "]", "a string", Describe(&labels->items[i]));
      }
    }
  }
  AW_RETURN_IF_ERROR(c.OptionalNumber("mean", /*positive=*/false));
  return c.OptionalNumber("std", /*positive=*/true);
}

// A file's {"model": "causal_lm", "hf_config": {…}, "tokenizer": {…}, "attentionWindow": n}: the HF config
// (read by io/causal_lm_config.h into spec->lm; its ranges are CausalLm::Init's), an optional character
// tokenizer (one string per id: the demo model's), and an optional attention window the model was trained with
// (generation's default).
Status ReadCausalLmFile(const FieldReader& c, CausalLmConfig* lm) {
  const JsonValue* hf = c.Get("hf_config");
  if (!hf || !hf->is_object()) return c.Fail(".hf_config", "a Hugging Face config.json object", Describe(hf));
  AW_RETURN_IF_ERROR(ReadCausalLmConfig(*hf, std::string(kRoot) + ".hf_config", lm));
  if (c.Get("attentionWindow")) AW_RETURN_IF_ERROR(c.Int("attentionWindow", 1, kMaxAttentionWindow, &lm->attention_window));
  const JsonValue* tok = c.Get("tokenizer");
  if (!tok) return Status::OK();
  if (!tok->is_object()) return c.Fail(".tokenizer", "an object", Describe(tok));
  const FieldReader t(*tok, std::string(kRoot) + ".tokenizer");
  const JsonValue* type = t.Get("type");
  if (!(type && type->is_string() && type->str == "chars")) return t.Fail(".type", "\"chars\"", Describe(type));
  // The vocabulary's size is vocab_size, whose range is Init's: an impossible one is refused there.
  const int64_t vocab = lm->vocab;
  if (vocab < 1 || vocab > kMaxVocab) return Status::OK();
  // special: ids that are not characters (listed once each); every other id is one character, each once.
  std::vector<bool> special(size_t(vocab), false);
  if (const JsonValue* sp = t.Get("special")) {
    if (!sp->is_array()) return t.Fail(".special", "an array of ids", Describe(sp));
    for (size_t i = 0; i < sp->items.size(); ++i) {
      int64_t id = 0;
      if (!io::IntIn(&sp->items[i], 0, vocab - 1, &id) || special[size_t(id)])
        return t.Fail(".special[" + Num(int64_t(i)) + "]", "an id in " + io::RangeStr(0, vocab - 1) + ", listed once",
                      Describe(&sp->items[i]));
      special[size_t(id)] = true;
    }
  }
  const JsonValue* vocab_list = t.Get("vocab");
  if (!vocab_list || !vocab_list->is_array() || int64_t(vocab_list->items.size()) != vocab)
    return t.Fail(".vocab", "an array of vocab_size (" + Num(vocab) + ") strings", Describe(vocab_list));
  std::unordered_set<std::string_view> entries;
  for (size_t i = 0; i < vocab_list->items.size(); ++i) {
    const JsonValue& e = vocab_list->items[i];
    size_t chars = 0;  // code points of valid UTF-8 (the parser's output)
    for (const char ch : e.str) chars += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    if (!e.is_string() || e.str.empty() || (!special[i] && chars != 1))
      return t.Fail(".vocab[" + Num(int64_t(i)) + "]",
                    special[i] ? "a non-empty string" : "one character (an id not in special)", Describe(&e));
    if (!entries.insert(e.str).second)
      return t.Fail(".vocab[" + Num(int64_t(i)) + "]", "an entry listed once", Describe(&e) + " again");
  }
  for (const char* key : {"bos", "eos"}) {
    const JsonValue* v = t.Get(key);
    if (!v || v->type == JsonType::kNull) continue;
    int64_t id = 0;
    if (!io::IntIn(v, 0, vocab - 1, &id) || !special[size_t(id)])
      return t.Fail(std::string(".") + key, "null or an id listed in special", Describe(v));
  }
  return t.OptionalEnum("unknown", {"refuse", "skip"});
}

int64_t IntOf(const JsonValue& root, const char* key) { return int64_t(root.Find(key)->number); }
double NumberOr(const JsonValue& root, const char* key, double def) {
  const JsonValue* v = root.Find(key);
  return v ? v->number : def;
}
size_t SizeOf(const JsonValue& root, const char* key) { return root.Find(key)->items.size(); }

// The fields of a translator or vit config Check* accepted: every required key is there with the right type,
// so these only pick the value or the default.
void ReadLayered(const JsonValue& root, ModelSpec* s) {
  s->d_model = IntOf(root, "dModel");
  s->nhead = IntOf(root, "nhead");
  s->dim_feedforward = IntOf(root, "dimFeedforward");
  const JsonValue* act = root.Find("activation");
  s->activation = act ? act->str : "relu";
  const JsonValue* norm_first = root.Find("normFirst");
  s->norm_first = norm_first && norm_first->boolean;
  s->layer_norm_eps = NumberOr(root, "layerNormEps", 1e-5);
  if (s->model == "translator") {
    s->num_encoder_layers = IntOf(root, "numEncoderLayers");
    s->num_decoder_layers = IntOf(root, "numDecoderLayers");
    s->src_vocab = int64_t(SizeOf(root, "srcVocab"));
    s->tgt_vocab = int64_t(SizeOf(root, "tgtVocab"));
    s->max_len = IntOf(root, "maxLen");
    s->eos = IntOf(root, "eos");
    s->embed_scale = NumberOr(root, "embedScale", 1.0);
  } else {
    s->image_size = IntOf(root, "imageSize");
    s->patch_size = IntOf(root, "patchSize");
    s->in_channels = IntOf(root, "inChannels");
    s->num_layers = IntOf(root, "numLayers");
    s->num_classes = IntOf(root, "numClasses");
    s->mean = NumberOr(root, "mean", 0.0);
    s->std = NumberOr(root, "std", 1.0);
  }
}

}  // namespace

Status ReadModelConfig(const JsonValue& root, std::string_view expected_model, ModelSpec* out) {
  if (!expected_model.empty() && expected_model != "translator" && expected_model != "vit" &&
      expected_model != "causal_lm") {
    return ArgError("expectedModel: expected \"translator\", \"vit\", \"causal_lm\" or \"\", got " +
                    QuoteJson(std::string(expected_model)));
  }
  if (!root.is_object()) return io::FieldError(kRoot, "", "a JSON object", Describe(&root));
  std::unordered_set<std::string_view> keys;
  for (const io::JsonMember& m : root.members)
    if (!keys.insert(m.key).second) return io::FieldError(kRoot, "", "unique keys", QuoteJson(m.key) + " more than once");

  const JsonValue* model = root.Find("model");
  const bool is_translator = model && model->is_string() && model->str == "translator";
  const bool is_vit = model && model->is_string() && model->str == "vit";
  const bool is_lm = model && model->is_string() && model->str == "causal_lm";
  if (!expected_model.empty()) {
    if (!(model && model->is_string() && model->str == expected_model))
      return io::FieldError(kRoot, "", "a \"" + std::string(expected_model) + "\" model", Describe(model));
  } else if (!is_translator && !is_vit && !is_lm) {
    return io::FieldError(kRoot, ".model", "\"translator\", \"vit\" or \"causal_lm\"", Describe(model));
  }
  const FieldReader c(root, kRoot);
  ModelSpec s;
  s.model = model->str;
  if (is_lm) {
    AW_RETURN_IF_ERROR(ReadCausalLmFile(c, &s.lm));
  } else {
    AW_RETURN_IF_ERROR(is_translator ? CheckTranslator(c) : CheckVit(c));
    ReadLayered(root, &s);
  }
  // Keys unique at every depth (the hf_config, the tokenizer, …): after the kind's own checks, so that their
  // messages come first (langTokens names its repeated language).
  AW_RETURN_IF_ERROR(io::UniqueKeys(root, kRoot));
  *out = std::move(s);
  return Status::OK();
}

Status ParseModelConfig(std::string_view json_text, std::string_view expected_model, ModelSpec* out) {
  JsonValue root;
  const Status json = io::ParseJson(json_text, &root);
  if (!json.ok()) {
    std::string m = json.message();
    if (m.rfind("json: ", 0) == 0) m.erase(0, 6);
    return ArgError(std::string(kRoot) + ": not valid JSON: " + m);
  }
  return ReadModelConfig(root, expected_model, out);
}

Status ValidateModelConfig(std::string_view json_text, std::string_view expected_model) {
  ModelSpec unused;
  return ParseModelConfig(json_text, expected_model, &unused);
}

}  // namespace aw
