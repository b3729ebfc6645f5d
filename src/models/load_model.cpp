#include "models/load_model.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

#include "core/rules.h"
#include "io/json_fields.h"
#include "kernels/convert.h"
#include "io/model_config.h"
#include "layers/activation.h"
#include "models/causal_lm.h"
#include "models/encoder.h"
#include "io/encoder_config.h"
#include "models/translator.h"
#include "models/vit_classifier.h"

namespace aw {

const char* ModelClassName(std::string_view kind) {
  return kind == "vit" ? "Classifier" : kind == "causal_lm" ? "CausalLM" : kind == "encoder" ? "Embedder" : "Translator";
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


bool EndsWith(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// The model a config describes: a config.json's text (a causal LM), else the first file's attnwasm.config.
// *root keeps the config alive while the model is built (its range errors quote it).
Status BuildFromConfig(std::string_view expected_model, std::string_view config_json,
                       const std::vector<ModelLoader::File>& files, io::JsonValue* root, std::unique_ptr<Module>* out,
                       std::string* kind) {
  const io::StFile& first = files[0].header;
  ModelSpec spec;
  io::ConfigSource lm_source;
  if (!config_json.empty()) {
    // A checkpoint with its Hugging Face config.json beside it: a causal LM, or an encoder (BERT's family).
    if (!expected_model.empty() && expected_model != "causal_lm" && expected_model != "encoder")
      return ArgError("config: only a causal LM or an encoder is loaded with a config.json; this loader expects a \"" +
                      std::string(expected_model) + "\" model");
    AW_RETURN_IF_ERROR(io::ParseObject(config_json, "config", "a Hugging Face config.json", root));
    if (IsEncoderConfig(*root)) {
      if (expected_model == "causal_lm")
        return ArgError("config.model_type: expected a causal LM's (" + std::string(CausalLmFamilies()) + "), got \"" +
                        root->Find("model_type")->str + "\", an encoder: load it with loadModel");
      EncoderConfig ec;
      AW_RETURN_IF_ERROR(ReadEncoderConfig(*root, "config", &ec));
      for (const ModelLoader::File& f : files)  // a pooler if the checkpoint has one (BertModel's add_pooling_layer)
        for (const io::StTensor& t : f.header.tensors) ec.pooler = ec.pooler || EndsWith(t.name, "pooler.dense.weight");
      const io::ConfigSource src{root, "config"};
      *kind = "encoder";
      return Make<Encoder>(ec, out, &src);
    }
    if (expected_model == "encoder")
      return ArgError("config.model_type: expected \"bert\", \"roberta\" or \"xlm-roberta\" (an encoder), got " +
                      io::Describe(root->Find("model_type")));
    const io::JsonValue* mt = root->Find("model_type");
    if (expected_model.empty() && !(mt && mt->is_string() && (IsCausalLmType(mt->str) || mt->str == "gemma3")))
      return ArgError("config.model_type: expected a causal LM's (" + std::string(CausalLmFamilies()) +
                      ") or an encoder's (\"bert\", \"roberta\" or \"xlm-roberta\"), got " + io::Describe(mt));
    AW_RETURN_IF_ERROR(ReadCausalLmConfig(*root, "config", &spec.lm));
    spec.model = "causal_lm";
    lm_source = {root, "config"};
  } else {
    if (expected_model == "encoder")
      return ArgError("config: an encoder is loaded with its Hugging Face config.json (loadModel(weights, { config }) or "
                      "its folder)");
    const std::string* json = nullptr;
    for (const auto& kv : first.metadata)
      if (kv.first == "attnwasm.config") json = &kv.second;
    if (!json)
      return ArgError("source: the file has no \"attnwasm.config\" metadata (export it with tools/export_safetensors.py, "
                      "or pass a Hugging Face checkpoint's config.json: loadModel(bytes, { config }))");
    Status s = io::ParseJson(*json, root);
    if (!s.ok()) {
      std::string m = s.message();
      if (m.rfind("json: ", 0) == 0) m.erase(0, 6);
      s = ArgError("attnwasm.config: not valid JSON: " + m);
    }
    if (s.ok()) s = ReadModelConfig(*root, expected_model, &spec);
    if (!s.ok()) return Status(s.code(), "source: " + s.message());
    if (spec.model == "causal_lm") lm_source = {root->Find("hf_config"), "source: attnwasm.config.hf_config"};
  }
  AW_RETURN_IF_ERROR(Build(spec, lm_source, out));
  *kind = spec.model;
  return Status::OK();
}


// FNV-1a over 32-bit words: the rows of a tied lm_head and of the embedding, compared at Finish.
constexpr uint64_t kFnvOffset = 1469598103934665603ull, kFnvPrime = 1099511628211ull;
// Rows converted to float32 at a time on their way into a store: a panel of its packed layouts (kernels/gemm.h
// kGemmNR, kernels/qgemm.h), which it then writes whole.
constexpr size_t kRowBlock = 8;
uint64_t HashRow(uint64_t h, const float* row, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, &row[i], 4);
    h = (h ^ b) * kFnvPrime;
  }
  return h;
}

// n elements of a float dtype (little-endian bytes) to float32 (Begin refused the other dtypes).
void ToF32(io::StDType d, size_t n, const uint8_t* p, float* out) {
  switch (d) {
    case io::StDType::kF32: kernels::f32_from_f32_bytes(n, p, out); break;
    case io::StDType::kBF16: kernels::f32_from_bf16_bytes(n, p, out); break;
    case io::StDType::kF16: kernels::f32_from_f16_bytes(n, p, out); break;
    case io::StDType::kF64: kernels::f32_from_f64_bytes(n, p, out); break;
    default: std::fill(out, out + n, 0.0f); break;
  }
}

// A row's finite values must stay finite in the store's type: float16 holds up to 65504 (values from 65520 on
// round to inf), bfloat16 up to float32's largest but for the last half ulp.
Status CheckFits(const io::StTensor& t, size_t row, size_t n, const float* v, WeightType type) {
  if (type != WeightType::kF16 && type != WeightType::kBF16) return Status::OK();
  const float limit = type == WeightType::kF16 ? 65520.0f : 3.3961775e38f;  // the first values rounding to inf
  for (size_t j = 0; j < n; ++j)
    if (std::fabs(v[j]) >= limit && std::isfinite(v[j]))
      return ArgError("dtype: '" + std::string(WeightTypeName(type)) + "' cannot hold " + t.name + "'s value " +
                      NumStr(double(v[j])) + " (row " + std::to_string(row) + ", column " + std::to_string(j) +
                      "): its largest is " + (type == WeightType::kF16 ? "65504" : "3.39e38") +
                      "; load with dtype 'f32' or 'bf16' (or as stored)");
  return Status::OK();
}

bool Parse(std::string_view dtype, bool* as_stored, WeightType* t) {
  *as_stored = dtype.empty();
  if (dtype.empty()) return true;
  for (WeightType w : {WeightType::kF32, WeightType::kBF16, WeightType::kF16, WeightType::kQ8, WeightType::kQ4,
                       WeightType::kQ4A16})
    if (dtype == WeightTypeName(w)) {
      *t = w;
      return true;
    }
  return false;
}

}  // namespace

// Every tensor of every file: where its bytes go.
struct ModelLoader::State {
  struct Target {
    size_t file = 0;
    const io::StTensor* t = nullptr;
    size_t esize = 0, cols = 0, rows = 0;  // rows of cols elements (a 1-D tensor: one row)
    float* data = nullptr;                  // a float parameter, or
    ParamStore* store = nullptr;            // a stored one, or neither (an ignored tensor, a tied copy)
    bool hash = false;                      // fold its rows into `h` (a tied lm_head and its embedding)
    uint64_t h = kFnvOffset;
    uint64_t received = 0;                  // bytes
  };
  struct FileState {
    File f;
    uint64_t next = 0;                      // bytes fed so far (the next offset expected)
    std::vector<size_t> order;              // its targets by offset
    size_t cur = 0;                         // the first target not yet complete
    BufferT<uint8_t> carry;                 // a row begun in one chunk and ended in the next
    size_t carry_n = 0;
  };
  std::unique_ptr<Module> model;
  std::string kind;
  std::vector<FileState> files;
  std::vector<Target> targets;
  Buffer row;                               // up to kRowBlock rows converted
  int tied_copy = -1, tied_embed = -1;      // targets compared at Finish
  bool begun = false;

  // Converts `rows` whole rows of t from bytes p (row r first) into its destination.
  // An error when a value does not fit the store's type (a float32 weight of 1e6 made float16 is inf).
  Status WriteRows(Target& t, size_t r, size_t rows, const uint8_t* p);
};

ModelLoader::ModelLoader() : st_(std::make_unique<State>()) {}
ModelLoader::~ModelLoader() = default;

uint64_t ModelLoader::weight_bytes() const { return st_->model ? st_->model->ParamBytes() : 0; }

Status ModelLoader::Begin(std::string_view expected, std::string_view config_json, std::vector<File> files,
                          std::string_view index_json, std::string_view dtype) {
  State& st = *st_;
  if (st.begun) return ArgError("loader: Begin was called already");
  st.begun = true;
  if (files.empty()) return ArgError("source: no safetensors file");
  bool as_stored = true;
  WeightType chosen = WeightType::kF32;
  if (!Parse(dtype, &as_stored, &chosen))
    return ArgError("dtype: expected 'f32', 'bf16', 'f16', 'q8', 'q4' or 'q4a16' (or nothing: the weights as stored), got '" +
                    std::string(dtype) + "'");
  io::JsonValue root;
  AW_RETURN_IF_ERROR(BuildFromConfig(expected, config_json, files, &root, &st.model, &st.kind));
  if (st.kind == "encoder") {
    // Hugging Face's names under a task model's prefix (BertForMaskedLM's "bert.", RobertaForMaskedLM's "roberta.":
    // the family's own only) are the model's; old saves' LayerNorm.gamma / .beta are weight / bias, as
    // transformers renames them.
    const bool bert = static_cast<Encoder*>(st.model.get())->config().model_type == "bert";
    const std::string prefix = bert ? "bert." : "roberta.";
    for (File& f : files)
      for (io::StTensor& t : f.header.tensors) {
        if (t.name.rfind(prefix, 0) == 0) t.name.erase(0, prefix.size());
        for (auto [from, to] : {std::pair{"LayerNorm.gamma", "LayerNorm.weight"}, std::pair{"LayerNorm.beta", "LayerNorm.bias"}})
          if (EndsWith(t.name, from)) t.name.replace(t.name.size() - std::strlen(from), std::strlen(from), to);
      }
  }
  const char* what = ModelClassName(st.kind);
  const bool lm = st.kind == "causal_lm";
  const bool tied = lm && static_cast<CausalLm*>(st.model.get())->config().tied;

  // A sharded checkpoint's index: every tensor of weight_map in the file it names, every file's tensor listed.
  std::map<std::string, size_t> file_of;  // tensor → file index
  for (size_t f = 0; f < files.size(); ++f)
    for (const io::StTensor& t : files[f].header.tensors) {
      const auto ins = file_of.emplace(t.name, f);
      if (!ins.second)
        return ArgError("source: tensor '" + t.name + "' is in two files: " + files[ins.first->second].name + " and " +
                        files[f].name);
    }
  if (!index_json.empty()) {
    io::JsonValue index;
    AW_RETURN_IF_ERROR(io::ParseObject(index_json, "index", "a model.safetensors.index.json", &index));
    const io::JsonValue* map = index.Find("weight_map");
    if (!map || !map->is_object())
      return io::FieldError("index", ".weight_map", "an object of tensor name → file name", io::Describe(map));
    size_t listed = 0;
    for (const io::JsonMember& m : map->members) {
      if (!m.value.is_string()) return io::FieldError("index", ".weight_map" + io::KeyPath(m.key), "a file name", io::Describe(&m.value));
      const auto it = file_of.find(m.key);
      if (it == file_of.end() || files[it->second].name != m.value.str) {
        bool shard_given = false;
        for (const File& f : files) shard_given = shard_given || f.name == m.value.str;
        return ArgError("index: weight_map names tensor '" + m.key + "' in " + m.value.str + ", " +
                        (!shard_given ? std::string("a file that was not given")
                                      : "which does not hold it" +
                                            (it == file_of.end() ? std::string(" (no file does)") : " (" + files[it->second].name + " does)")));
      }
      ++listed;
    }
    if (listed != file_of.size())
      for (const auto& [name, f] : file_of)
        if (!map->Find(name))
          return ArgError("index: " + files[f].name + " holds tensor '" + name + "', which weight_map does not list");
  }

  // Which tensors fill which parameters: every float tensor but the family's ignored ones.
  std::vector<ParamSpec> specs;
  std::vector<std::pair<size_t, const io::StTensor*>> used;
  int lm_head = -1;
  std::string vit_unexpected;
  std::vector<ParamSlot> slots = st.model->Slots();
  std::map<std::string, size_t> slot_of;
  for (size_t i = 0; i < slots.size(); ++i) slot_of[slots[i].name] = i;
  for (size_t f = 0; f < files.size(); ++f)
    for (const io::StTensor& t : files[f].header.tensors) {
      // Tensors a task head or an older save adds that the model does not use (HF ignores them too): a masked-LM
      // head, BERT's position_ids buffer.
      const bool head = st.kind == "encoder" && (t.name.rfind("cls.", 0) == 0 || t.name.rfind("lm_head.", 0) == 0 ||
                                                 t.name.rfind("classifier.", 0) == 0 ||
                                                 EndsWith(t.name, "embeddings.position_ids"));
      if (head || (lm && EndsWith(t.name, ".rotary_emb.inv_freq"))) {  // older saves' RoPE buffers
        st.targets.push_back({f, &t});
        continue;
      }
      if (tied && t.name == "lm_head.weight") {  // accepted only as a copy of the embedding (checked at Finish)
        lm_head = int(st.targets.size());
        st.targets.push_back({f, &t});
        continue;
      }
      if (st.kind == "vit" && !slot_of.count(t.name)) {
        // Named as the classifier's loader always named them (tests/js/model_files.test.mjs).
        vit_unexpected += (vit_unexpected.empty() ? "\"" : ", \"") + t.name + "\"";
        continue;
      }
      if (!io::IsFloat(t.dtype))
        return Status(Code::kDtype, "stateDict: " + t.name + ": expected a float tensor (F32, F16, BF16 or F64), got " +
                                        io::StDTypeName(t.dtype));
      specs.push_back({t.name, t.shape});
      used.push_back({f, &t});
    }
  if (!vit_unexpected.empty())
    return Status(Code::kStateDict, "stateDict: unexpected key(s) for a classifier: " + vit_unexpected);
  AW_RETURN_IF_ERROR(st.model->CheckParams(specs, what));
  if (lm_head >= 0) {
    const CausalLmConfig& c = static_cast<CausalLm*>(st.model.get())->config();
    const io::StTensor& t = *st.targets[size_t(lm_head)].t;
    if (t.shape != Shape{c.vocab, c.hidden} || !io::IsFloat(t.dtype))
      return Status(Code::kStateDict, "stateDict: lm_head.weight: tie_word_embeddings is true, so lm_head.weight must "
                                      "equal model.embed_tokens.weight (or be absent), and it differs");
  }
  size_t max_row = 0;
  for (const auto& [f, t] : used) {
    const ParamSlot& slot = slots[slot_of[t->name]];
    State::Target target{f, t};
    target.data = slot.data;
    target.store = slot.store;
    if (target.store) {
      AW_RETURN_IF_ERROR(target.store->Reserve(as_stored ? (t->dtype == io::StDType::kBF16 ? WeightType::kBF16
                                                            : t->dtype == io::StDType::kF16 ? WeightType::kF16
                                                                                            : WeightType::kF32)
                                                         : chosen));
    }
    if (lm_head >= 0 && t->name == "model.embed_tokens.weight") {
      target.hash = true;
      st.tied_embed = int(st.targets.size());
    }
    st.targets.push_back(target);
  }
  if (lm_head >= 0) {
    st.targets[size_t(lm_head)].hash = true;
    st.tied_copy = lm_head;
  }
  for (size_t i = 0; i < st.targets.size(); ++i) {
    State::Target& t = st.targets[i];
    t.esize = io::StDTypeSize(t.t->dtype);
    const int64_t numel = NumelChecked(t.t->shape);
    t.cols = t.t->shape.size() >= 2 ? size_t(t.t->shape.back()) : size_t(numel);
    t.rows = t.cols ? size_t(numel) / t.cols : 0;
    max_row = std::max(max_row, t.cols);
  }
  AW_RETURN_IF_ERROR(st.row.Resize(kRowBlock * max_row, "the rows being loaded"));
  st.files.resize(files.size());
  for (size_t f = 0; f < files.size(); ++f) {
    State::FileState& fs = st.files[f];
    fs.f = std::move(files[f]);
    // The file's targets in the order of their data (each tensor of the file is at most one target).
    const std::vector<io::StTensor>& ts = fs.f.header.tensors;
    std::vector<size_t> target_of(ts.size(), SIZE_MAX);
    size_t carry = 0;
    for (size_t i = 0; i < st.targets.size(); ++i)
      if (st.targets[i].file == f) {
        target_of[size_t(st.targets[i].t - ts.data())] = i;
        carry = std::max(carry, st.targets[i].cols * st.targets[i].esize);
      }
    for (size_t k : io::OrderByRange(ts))
      if (target_of[k] != SIZE_MAX) fs.order.push_back(target_of[k]);
    AW_RETURN_IF_ERROR(fs.carry.Resize(carry, "a row split between two chunks"));
  }
  return Status::OK();
}

Status ModelLoader::State::WriteRows(Target& t, size_t r, size_t rows, const uint8_t* p) {
  const size_t ld = t.cols * t.esize;
  // 16-bit rows kept as stored go in as their bits (no hash: a tied head's check reads floats).
  const WeightType bits = t.t->dtype == io::StDType::kBF16 ? WeightType::kBF16 : WeightType::kF16;
  const bool raw = t.store && !t.hash && (t.t->dtype == io::StDType::kBF16 || t.t->dtype == io::StDType::kF16) &&
                   t.store->type() == bits;
  if (raw && t.store->PutRowsBits(r, rows, p, ld, bits)) return Status::OK();
  if (!t.store) {  // straight into a float parameter (or only hashed)
    for (size_t i = 0; i < rows; ++i, p += ld) {
      float* dst = t.data ? t.data + (r + i) * t.cols : row.data();
      ToF32(t.t->dtype, t.cols, p, dst);
      if (t.hash) t.h = HashRow(t.h, dst, t.cols);
    }
    return Status::OK();
  }
  // Into a store through the row buffer, up to a panel of rows at a time (aligned to the panels, so that the
  // store can write them whole).
  size_t i = 0;
  while (i < rows) {
    const size_t n = std::min(rows - i, kRowBlock - (r + i) % kRowBlock);
    for (size_t j = 0; j < n; ++j, p += ld) {
      float* dst = row.data() + j * t.cols;
      ToF32(t.t->dtype, t.cols, p, dst);
      if (t.hash) t.h = HashRow(t.h, dst, t.cols);
      AW_RETURN_IF_ERROR(CheckFits(*t.t, r + i + j, t.cols, dst, t.store->type()));
    }
    t.store->PutRows(r + i, n, row.data(), t.cols);
    i += n;
  }
  return Status::OK();
}

Status ModelLoader::Feed(size_t file, uint64_t offset, const uint8_t* bytes, size_t n) {
  State& st = *st_;
  if (!st.begun || !st.model) return ArgError("loader: Begin has not succeeded");
  if (file >= st.files.size()) return ArgError("loader: no file " + std::to_string(file));
  State::FileState& fs = st.files[file];
  const std::string& fname = fs.f.name;
  // The header's bytes need not be fed again: data may start at the data section.
  if (fs.next == 0 && offset == fs.f.header.data_start) fs.next = offset;
  if (offset != fs.next)
    return ArgError("source: " + fname + ": bytes must arrive in order: expected offset " + std::to_string(fs.next) +
                    ", got " + std::to_string(offset));
  const uint64_t end_of_file = fs.f.header.data_start + fs.f.header.data_size;
  if (offset + n > end_of_file)
    return ArgError("source: " + fname + ": more than the " + std::to_string(end_of_file) +
                    " bytes its header describes");
  fs.next = offset + n;
  const uint64_t lo = offset, hi = offset + n;
  while (fs.cur < fs.order.size()) {
    State::Target& t = st.targets[fs.order[fs.cur]];
    const uint64_t size = t.t->end - t.t->begin;
    if (t.received == size) { ++fs.cur; continue; }  // complete (or empty)
    const uint64_t a = t.t->begin + t.received;
    if (a >= hi) break;
    const uint64_t b = std::min(hi, t.t->end);
    const uint8_t* p = bytes + (a - lo);
    size_t len = size_t(b - a);
    const size_t unit = t.cols * t.esize;
    size_t row = size_t(t.received / unit);
    if (fs.carry_n) {  // a row begun in an earlier chunk: complete it first
      const size_t take = std::min(len, unit - fs.carry_n);
      std::memcpy(fs.carry.data() + fs.carry_n, p, take);
      fs.carry_n += take; p += take; len -= take; t.received += take;
      if (fs.carry_n == unit) {
        AW_RETURN_IF_ERROR(st.WriteRows(t, row++, 1, fs.carry.data()));
        fs.carry_n = 0;
      }
    }
    const size_t whole = len / unit;
    if (whole) AW_RETURN_IF_ERROR(st.WriteRows(t, row, whole, p));
    p += whole * unit; len -= whole * unit; t.received += whole * unit;
    if (len) {  // the start of a row that ends in the next chunk
      std::memcpy(fs.carry.data(), p, len);
      fs.carry_n = len;
      t.received += len;
    }
    if (t.received < size) break;  // this chunk ends inside t
    ++fs.cur;
  }
  return Status::OK();
}

Status ModelLoader::Finish(std::unique_ptr<Module>* out, std::string* kind) {
  State& st = *st_;
  out->reset();
  if (!st.begun || !st.model) return ArgError("loader: Begin has not succeeded");
  for (const State::FileState& fs : st.files) {
    const uint64_t want = fs.f.header.data_start + fs.f.header.data_size;
    if (fs.next < want) {
      std::string where;
      for (size_t i : fs.order) {
        const State::Target& t = st.targets[i];
        if (t.received < t.t->end - t.t->begin) {
          where = "; tensor '" + t.t->name + "' has " + std::to_string(t.received) + " of its " +
                  std::to_string(t.t->end - t.t->begin) + " bytes";
          break;
        }
      }
      return ArgError("source: " + fs.f.name + " is truncated: " + std::to_string(fs.next) + " of its " +
                      std::to_string(want) + " bytes arrived" + where);
    }
    if (fs.f.size != io::kStUnknownSize && fs.f.size != want)
      return ArgError("source: " + fs.f.name + " is " + std::to_string(fs.f.size) + " bytes, but its header describes " +
                      std::to_string(want));
  }
  if (st.tied_copy >= 0 && (st.tied_embed < 0 || st.targets[size_t(st.tied_copy)].h != st.targets[size_t(st.tied_embed)].h))
    return Status(Code::kStateDict, "stateDict: lm_head.weight: tie_word_embeddings is true, so lm_head.weight must "
                                    "equal model.embed_tokens.weight (or be absent), and it differs");
  st.model->FinishLoad();  // derived forms (packed copies of float weights) from the loaded values
  *out = std::move(st.model);
  *kind = st.kind;
  return Status::OK();
}

Status LoadModel(const uint8_t* bytes, size_t size, const io::StFile& file, std::string_view expected_model,
                 std::string_view config_json, std::unique_ptr<Module>* out, std::string* kind, std::string_view dtype) {
  out->reset();
  ModelLoader loader;
  std::vector<ModelLoader::File> files(1);
  files[0].name = "source";
  files[0].header = file;
  files[0].size = size;
  AW_RETURN_IF_ERROR(loader.Begin(expected_model, config_json, std::move(files), "", dtype));
  AW_RETURN_IF_ERROR(loader.Feed(0, 0, bytes, size));
  return loader.Finish(out, kind);
}

std::string ModelInfoJson(const Module& m, std::string_view kind) {
  // weightBytes: in all; weightTypes: by how they are kept ({"bf16": …, "f32": …}, the types held only).
  const std::array<size_t, kWeightTypes> by = m.ParamBytesByType();
  size_t total = 0;
  std::string types;
  for (size_t t = 0; t < by.size(); ++t) {
    total += by[t];
    if (by[t]) types += std::string(types.empty() ? "" : ", ") + "\"" + WeightTypeName(WeightType(t)) + "\": " + std::to_string(by[t]);
  }
  const std::string weights = "\"weightBytes\": " + std::to_string(total) + ", \"weightTypes\": {" + types + "}";
  if (kind == "causal_lm" || kind == "encoder") {
    std::string j = kind == "encoder" ? EncoderConfigJson(static_cast<const Encoder&>(m).config())
                                      : CausalLmConfigJson(static_cast<const CausalLm&>(m).config());
    return j.substr(0, j.size() - 1) + ", " + weights + "}";
  }
  return "{" + weights + "}";
}

}  // namespace aw
