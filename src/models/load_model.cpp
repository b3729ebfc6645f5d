#include "models/load_model.h"

#include "io/load_params.h"
#include "io/model_config.h"
#include "layers/activation.h"
#include "models/translator.h"
#include "models/vit_classifier.h"

namespace aw {

const char* ModelClassName(std::string_view kind) { return kind == "vit" ? "Classifier" : "Translator"; }

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

template <class M, class C>
Status Make(const C& c, std::unique_ptr<Module>* out) {
  Rng rng;
  auto m = std::make_unique<M>();
  AW_RETURN_IF_ERROR(m->Init(c, rng));
  *out = std::move(m);
  return Status::OK();
}

Status Build(const ModelSpec& s, std::unique_ptr<Module>* out) {
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
                 std::unique_ptr<Module>* out, std::string* kind) {
  out->reset();
  const std::string* json = nullptr;
  for (const auto& kv : file.metadata)
    if (kv.first == "attnwasm.config") json = &kv.second;
  if (!json)
    return ArgError("source: the file has no \"attnwasm.config\" metadata (export it with tools/export_safetensors.py)");
  ModelSpec spec;
  Status s = ParseModelConfig(*json, expected_model, &spec);
  if (!s.ok()) return Status(s.code(), "source: " + s.message());
  std::unique_ptr<Module> m;
  AW_RETURN_IF_ERROR(Build(spec, &m));
  const char* what = ModelClassName(spec.model);
  if (spec.model == "vit") {
    // Named as the classifier's loader always named them (tests/js/model_files.test.mjs).
    std::string unexpected;
    const std::vector<ParamSpec> params = m->Params();
    for (const io::StTensor& t : file.tensors) {
      bool known = false;
      for (const auto& p : params) known = known || p.name == t.name;
      if (!known) unexpected += (unexpected.empty() ? "\"" : ", \"") + t.name + "\"";
    }
    if (!unexpected.empty()) return Status(Code::kStateDict, "stateDict: unexpected key(s) for a classifier: " + unexpected);
  }
  AW_RETURN_IF_ERROR(io::LoadParamsFromSafetensors(m.get(), bytes, size, file, "", what));
  *out = std::move(m);
  *kind = spec.model;
  return Status::OK();
}

}  // namespace aw
