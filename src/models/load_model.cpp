#include "models/load_model.h"

#include <algorithm>

#include "io/load_params.h"
#include "io/model_config.h"
#include "layers/activation.h"
#include "models/causal_lm.h"
#include "models/translator.h"
#include "models/vit_classifier.h"

namespace aw {

const char* ModelClassName(std::string_view kind) {
  return kind == "vit" ? "Classifier" : kind == "causal_lm" ? "CausalLM" : "Translator";
}

std::string ModelInfoJson(const Module& m, std::string_view kind) {
  if (kind == "causal_lm") return CausalLmConfigJson(static_cast<const CausalLm&>(m).config());
  return "{}";
}

namespace {

// The families' Transformer layers, from the config's fields.
TransformerLayerConfig LayerOf(const ModelSpec& s) {
  TransformerLayerConfig l;
  l.d_model = s.d_model;
  l.nhead = s.nhead;
  l.dim_feedforward = s.dim_feedforward;
  l.dropout = 0.0;
  ParseActivation(s.activation, &l.activation);  // validated: "relu" or "gelu"
  l.norm_first = s.norm_first;
  l.layer_norm_eps = s.layer_norm_eps;
  l.batch_first = true;
  l.bias = true;
  return l;
}

template <class M, class C, class... A>
Status Make(const C& c, std::unique_ptr<Module>* out, A... args) {
  Rng rng = Rng::ForLoading();  // every parameter comes from the file: no random values, no packing of them
  auto m = std::make_unique<M>();
  AW_RETURN_IF_ERROR(m->Init(c, rng, args...));
  *out = std::move(m);
  return Status::OK();
}

// A causal LM's tensors, read as Hugging Face reads a checkpoint: older
// saves' per-layer rotary_emb.inv_freq buffers are ignored (RoPE is computed),
// and a tied model's lm_head.weight is accepted only as a copy of the
// embedding. Every other tensor must be a parameter and every parameter a
// tensor (Module::LoadParams: missing and unexpected keys by name).
Status LoadCausalLm(CausalLm* m, const uint8_t* bytes, size_t size, const io::StFile& file) {
  const std::string rope_buffer = ".rotary_emb.inv_freq";
  io::StFile kept = file;
  kept.tensors.clear();
  const io::StTensor* lm_head = nullptr;
  for (const io::StTensor& t : file.tensors) {
    if (t.name.size() > rope_buffer.size() &&
        t.name.compare(t.name.size() - rope_buffer.size(), rope_buffer.size(), rope_buffer) == 0)
      continue;
    if (m->config().tied && t.name == "lm_head.weight") {
      lm_head = &t;
      continue;
    }
    kept.tensors.push_back(t);
  }
  AW_RETURN_IF_ERROR(io::LoadParamsFromSafetensors(m, bytes, size, kept, "", "CausalLM"));
  if (lm_head) {
    const CausalLmConfig& c = m->config();
    const float* embed = m->Param("model.embed_tokens.weight");
    Buffer head;
    if (lm_head->shape != Shape{c.vocab, c.hidden} || !head.Resize(size_t(c.vocab * c.hidden), "lm_head.weight").ok() ||
        !io::ReadAsF32(bytes, size, *lm_head, head.data()).ok() ||
        !std::equal(head.data(), head.data() + head.size(), embed))
      return Status(Code::kStateDict, "stateDict: lm_head.weight: tie_word_embeddings is true, so lm_head.weight must "
                                      "equal model.embed_tokens.weight (or be absent), and it differs");
  }
  return Status::OK();
}

// lm_source: where a causal LM's config was read from (its range errors name the file's fields).
Status Build(const ModelSpec& s, const io::ConfigSource& lm_source, std::unique_ptr<Module>* out) {
  if (s.model == "causal_lm") return Make<CausalLm>(s.lm, out, &lm_source);
  if (s.model == "translator") {
    TranslatorConfig c;
    c.layer = LayerOf(s);
    c.num_encoder_layers = s.num_encoder_layers;
    c.num_decoder_layers = s.num_decoder_layers;
    c.src_vocab = s.src_vocab;
    c.tgt_vocab = s.tgt_vocab;
    c.max_len = s.max_len;
    c.embed_scale = s.embed_scale;
    c.eos = s.eos;
    return Make<Translator>(c, out);
  }
  VitConfig c;
  c.layer = LayerOf(s);
  c.image_size = s.image_size;
  c.patch_size = s.patch_size;
  c.in_channels = s.in_channels;
  c.num_layers = s.num_layers;
  c.num_classes = s.num_classes;
  c.mean = s.mean;
  c.std = s.std;
  return Make<VitClassifier>(c, out);
}

}  // namespace

Status LoadModel(const uint8_t* bytes, size_t size, const io::StFile& file, std::string_view expected_model,
                 std::string_view config_json, std::unique_ptr<Module>* out, std::string* kind) {
  out->reset();
  ModelSpec spec;
  io::JsonValue root;  // the config read, alive while the model is built (its errors quote it)
  io::ConfigSource lm_source;
  if (!config_json.empty()) {
    // A checkpoint with its Hugging Face config.json beside it: a causal LM.
    if (!expected_model.empty() && expected_model != "causal_lm")
      return ArgError("config: only a causal LM is loaded with a config.json; this loader expects a \"" +
                      std::string(expected_model) + "\" model");
    AW_RETURN_IF_ERROR(io::ParseObject(config_json, "config", "a Hugging Face config.json", &root));
    AW_RETURN_IF_ERROR(ReadCausalLmConfig(root, "config", &spec.lm));
    spec.model = "causal_lm";
    lm_source = {&root, "config"};
  } else {
    const std::string* json = nullptr;
    for (const auto& kv : file.metadata)
      if (kv.first == "attnwasm.config") json = &kv.second;
    if (!json)
      return ArgError("source: the file has no \"attnwasm.config\" metadata (export it with tools/export_safetensors.py, "
                      "or pass a Hugging Face checkpoint's config.json: loadModel(bytes, { config }))");
    Status s = io::ParseJson(*json, &root);
    if (!s.ok()) {
      std::string m = s.message();
      if (m.rfind("json: ", 0) == 0) m.erase(0, 6);
      s = ArgError("attnwasm.config: not valid JSON: " + m);
    }
    if (s.ok()) s = ReadModelConfig(root, expected_model, &spec);
    if (!s.ok()) return Status(s.code(), "source: " + s.message());
    if (spec.model == "causal_lm") lm_source = {root.Find("hf_config"), "source: attnwasm.config.hf_config"};
  }
  std::unique_ptr<Module> m;
  AW_RETURN_IF_ERROR(Build(spec, lm_source, &m));
  const char* what = ModelClassName(spec.model);
  if (spec.model == "causal_lm") {
    AW_RETURN_IF_ERROR(LoadCausalLm(static_cast<CausalLm*>(m.get()), bytes, size, file));
  } else {
    if (spec.model == "vit") {
      // Named as the classifier's loader always named them (tests/js/model_files.test.mjs).
      std::string unexpected;
      const std::vector<ParamSpec> params = m->Params();
      for (const io::StTensor& t : file.tensors) {
        bool known = false;
        for (const auto& p : params) known = known || p.name == t.name;
        if (!known) unexpected += (unexpected.empty() ? "\"" : ", \"") + t.name + "\"";
      }
      if (!unexpected.empty())
        return Status(Code::kStateDict, "stateDict: unexpected key(s) for a classifier: " + unexpected);
    }
    AW_RETURN_IF_ERROR(io::LoadParamsFromSafetensors(m.get(), bytes, size, file, "", what));
  }
  *out = std::move(m);
  *kind = spec.model;
  return Status::OK();
}

}  // namespace aw
