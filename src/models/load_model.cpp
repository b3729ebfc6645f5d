// ModelLoader (load_model.h): generic over the families. Begin asks the registry for the family (families.h),
// lets its row build the model and name the tensors, checks a shard index against the files, matches every tensor
// to a parameter and reserves the stored ones; Feed writes rows as they arrive; Finish checks that everything
// came and that a tied tensor equals its source.
#include "models/load_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>

#include "core/rules.h"
#include "io/json_fields.h"
#include "kernels/convert.h"
#include "models/families.h"

namespace aw {
namespace {

// FNV-1a over 32-bit words: the rows of a tied tensor and of its source, compared at Finish.
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
                      (type == WeightType::kF16 ? "; load with dtype 'f32' or 'bf16' (or as stored)"
                                                : "; load with dtype 'f32' (or as stored)"));
  return Status::OK();
}

bool ParseDtype(std::string_view dtype, bool* as_stored, WeightType* t) {
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

// The type a stored parameter keeps: the one asked for, or the file's (16-bit floats as they are, else float32).
WeightType StoreType(bool as_stored, WeightType chosen, io::StDType d) {
  if (!as_stored) return chosen;
  return d == io::StDType::kBF16 ? WeightType::kBF16 : d == io::StDType::kF16 ? WeightType::kF16 : WeightType::kF32;
}

// The family of the checkpoint and its model: from config_json (a Hugging Face config.json), else from the first
// file's own "attnwasm.config" metadata. *root keeps the config alive while the model is built (its range errors
// quote it).
Status BuildModel(std::string_view expected, std::string_view config_json, const std::vector<ModelLoader::File>& files,
                  io::JsonValue* root, const Family** family, std::unique_ptr<Module>* model) {
  FamilyConfig c;
  for (const ModelLoader::File& f : files)
    for (const io::StTensor& t : f.header.tensors) c.tensors.push_back(&t);
  c.json = root;
  AW_RETURN_IF_ERROR(CheckConfigKind(expected, !config_json.empty()));
  if (!config_json.empty()) {
    AW_RETURN_IF_ERROR(io::ParseObject(config_json, "config", "a Hugging Face config.json", root));
    c.root = "config";
  } else {
    const std::string* json = nullptr;
    for (const auto& kv : files[0].header.metadata)
      if (kv.first == "attnwasm.config") json = &kv.second;
    if (!json)
      return ArgError("source: the file has no \"attnwasm.config\" metadata (export it with tools/export_safetensors.py, "
                      "or pass a Hugging Face checkpoint's config.json: loadModel(bytes, { config }))");
    const Status s = io::ParseJson(*json, root);
    if (!s.ok()) {
      std::string m = s.message();
      if (m.rfind("json: ", 0) == 0) m.erase(0, 6);
      return ArgError("source: attnwasm.config: not valid JSON: " + m);
    }
    c.root = "source: attnwasm.config";
    c.own = true;
  }
  AW_RETURN_IF_ERROR(FindFamily(*root, c.own, expected, c.root, family));
  return (*family)->build(c, model);
}

// A sharded checkpoint's index against the files given: every tensor of weight_map in the file it names, every
// file's tensor listed. file_of: each stored tensor name → its file.
Status CheckIndex(std::string_view index_json, const std::vector<ModelLoader::File>& files,
                  const std::map<std::string, size_t>& file_of) {
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
      for (const ModelLoader::File& f : files) shard_given = shard_given || f.name == m.value.str;
      return ArgError("index: weight_map names tensor '" + m.key + "' in " + m.value.str + ", " +
                      (!shard_given ? std::string("a file that was not given")
                                    : "which does not hold it" +
                                          (it == file_of.end() ? std::string(" (no file does)") : " (" + files[it->second].name + " does)")));
    }
    ++listed;
  }
  if (listed != file_of.size())
    for (const auto& [name, f] : file_of)
      if (!map->Find(name)) return ArgError("index: " + files[f].name + " holds tensor '" + name + "', which weight_map does not list");
  return Status::OK();
}

}  // namespace

// Every tensor of every file: where its bytes go.
struct ModelLoader::State {
  struct Target {
    size_t file = 0;
    const io::StTensor* t = nullptr;
    size_t esize = 0, cols = 0, rows = 0;  // rows of cols elements (a 1-D tensor: one row)
    float* data = nullptr;                  // a float parameter, or
    ParamStore* store = nullptr;            // a stored one, or neither (a skipped tensor, a tied copy)
    bool hash = false;                      // fold its rows into `h` (a tied tensor and its source)
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
  const Family* family = nullptr;
  std::vector<FileState> files;
  std::vector<Target> targets;
  Buffer row;                               // up to kRowBlock rows converted
  int tied_copy = -1, tied_source = -1;     // targets compared at Finish
  std::string tied_message;
  bool begun = false;
  bool planning = false;                    // PlanOnly: nothing reserved, the stores' bytes summed here
  std::array<size_t, kWeightTypes> planned{};          // by weight type

  // Which tensors fill which parameters (the family's names), each target's geometry, the stores reserved.
  Status MatchTensors(std::vector<File>& files, bool as_stored, WeightType chosen);
  // Each file's targets in the order of their data, and its carry buffer.
  Status PlanFiles(std::vector<File> files);
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
  if (!ParseDtype(dtype, &as_stored, &chosen))
    return ArgError("dtype: expected 'f32', 'bf16', 'f16', 'q8', 'q4' or 'q4a16' (or nothing: the weights as stored), got '" +
                    std::string(dtype) + "'");
  io::JsonValue root;
  AW_RETURN_IF_ERROR(BuildModel(expected, config_json, files, &root, &st.family, &st.model));
  if (bounded_head_ && st.family->bounded_head) st.family->bounded_head(*st.model);
  std::map<std::string, size_t> file_of;  // stored tensor name → file
  for (size_t f = 0; f < files.size(); ++f)
    for (const io::StTensor& t : files[f].header.tensors) {
      const auto ins = file_of.emplace(t.name, f);
      if (!ins.second)
        return ArgError("source: tensor '" + t.name + "' is in two files: " + files[ins.first->second].name + " and " + files[f].name);
    }
  if (!index_json.empty()) AW_RETURN_IF_ERROR(CheckIndex(index_json, files, file_of));
  AW_RETURN_IF_ERROR(st.MatchTensors(files, as_stored, chosen));
  if (st.planning) return Status::OK();
  return st.PlanFiles(std::move(files));
}

Status ModelLoader::PlanOnly(std::string_view expected, std::string_view config_json, std::vector<File> files,
                             std::string_view index_json, std::string_view dtype, Plan* out) {
  st_->planning = true;
  const Status s = Begin(expected, config_json, std::move(files), index_json, dtype);
  out->family = st_->family;  // also when a later check refused
  AW_RETURN_IF_ERROR(s);
  // The stores as planned; every other parameter is float32, allocated with the model.
  Plan p;
  p.family = st_->family;
  p.bytes_by_type = st_->planned;
  for (const ParamSlot& slot : st_->model->Slots()) {
    const uint64_t n = uint64_t(NumelChecked(slot.shape));
    p.parameters += n;
    if (!slot.store) p.bytes_by_type[size_t(WeightType::kF32)] += n * sizeof(float);
  }
  *out = p;
  return Status::OK();
}

Status ModelLoader::State::MatchTensors(std::vector<File>& fs, bool as_stored, WeightType chosen) {
  const Family& fam = *family;
  TiedTensor tied;
  const bool has_tied = fam.tied(*model, &tied);
  std::vector<ParamSlot> slots = model->Slots();
  std::map<std::string, size_t> slot_of;
  for (size_t i = 0; i < slots.size(); ++i) slot_of[slots[i].name] = i;
  std::vector<ParamSpec> specs;
  std::vector<std::pair<size_t, std::string>> used;  // target index, parameter name
  std::string unexpected;
  for (size_t f = 0; f < fs.size(); ++f)
    for (const io::StTensor& t : fs[f].header.tensors) {
      std::string name = t.name;
      if (!fam.param_name(*model, &name)) {  // not the model's: read past
        targets.push_back({f, &t});
        continue;
      }
      if (has_tied && name == tied.name) {  // accepted only as a copy of its source (checked at Finish)
        if (t.shape != tied.shape || !io::IsFloat(t.dtype)) return Status(Code::kStateDict, tied.message);
        tied_copy = int(targets.size());
        targets.push_back({f, &t});
        targets.back().hash = true;
        continue;
      }
      if (fam.unexpected_prefix && !slot_of.count(name)) {
        unexpected += (unexpected.empty() ? "\"" : ", \"") + name + "\"";
        continue;
      }
      if (!io::IsFloat(t.dtype))
        return Status(Code::kDtype, "stateDict: " + t.name + ": expected a float tensor (F32, F16, BF16 or F64), got " +
                                        io::StDTypeName(t.dtype));
      specs.push_back({name, t.shape});
      used.push_back({targets.size(), name});
      targets.push_back({f, &t});
    }
  if (!unexpected.empty()) return Status(Code::kStateDict, fam.unexpected_prefix + unexpected);
  AW_RETURN_IF_ERROR(model->CheckParams(specs, fam.class_name));
  for (const auto& [i, name] : used) {
    Target& target = targets[i];
    const ParamSlot& slot = slots[slot_of[name]];
    target.data = slot.data;
    target.store = slot.store;
    if (target.store) {
      const WeightType type = StoreType(as_stored, chosen, target.t->dtype);
      if (planning) planned[size_t(type)] += target.store->BytesFor(type);
      else AW_RETURN_IF_ERROR(target.store->Reserve(type));
    }
    if (tied_copy >= 0 && name == tied.source) {
      target.hash = true;
      tied_source = int(i);
    }
  }
  tied_message = tied.message;
  if (planning) return Status::OK();
  size_t max_row = 0;
  for (Target& t : targets) {
    t.esize = io::StDTypeSize(t.t->dtype);
    const int64_t numel = NumelChecked(t.t->shape);
    t.cols = t.t->shape.size() >= 2 ? size_t(t.t->shape.back()) : size_t(numel);
    t.rows = t.cols ? size_t(numel) / t.cols : 0;
    max_row = std::max(max_row, t.cols);
  }
  return row.Resize(kRowBlock * max_row, "the rows being loaded");
}

Status ModelLoader::State::PlanFiles(std::vector<File> fs) {
  files.resize(fs.size());
  for (size_t f = 0; f < fs.size(); ++f) {
    FileState& file = files[f];
    file.f = std::move(fs[f]);
    // The file's targets in the order of their data (each tensor of the file is at most one target).
    const std::vector<io::StTensor>& ts = file.f.header.tensors;
    std::vector<size_t> target_of(ts.size(), SIZE_MAX);
    size_t carry = 0;
    for (size_t i = 0; i < targets.size(); ++i)
      if (targets[i].file == f) {
        target_of[size_t(targets[i].t - ts.data())] = i;
        carry = std::max(carry, targets[i].cols * targets[i].esize);
      }
    for (size_t k : io::OrderByRange(ts))
      if (target_of[k] != SIZE_MAX) file.order.push_back(target_of[k]);
    AW_RETURN_IF_ERROR(file.carry.Resize(carry, "a row split between two chunks"));
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

Status ModelLoader::Finish(std::unique_ptr<Module>* out, const Family** family) {
  State& st = *st_;
  out->reset();
  *family = nullptr;
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
  if (st.tied_copy >= 0 && (st.tied_source < 0 || st.targets[size_t(st.tied_copy)].h != st.targets[size_t(st.tied_source)].h))
    return Status(Code::kStateDict, st.tied_message);
  st.model->FinishLoad();  // derived forms (packed copies of float weights) from the loaded values
  *out = std::move(st.model);
  *family = st.family;
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
  const Family* family = nullptr;
  AW_RETURN_IF_ERROR(loader.Finish(out, &family));
  *kind = family->kind;
  return Status::OK();
}

}  // namespace aw
