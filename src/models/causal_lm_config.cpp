// The causal LM families' config: ReadCausalLmConfig (the family first — its recipe: HF's defaults and the
// features its modelling code has — then the kinds it can run, each refusal naming its key, then the fields),
// CheckCausalLmConfig (every range rule, bounds in core/limits.h), and a model file's own attnwasm.config
// (ReadCausalLmFile: the demo model's).
#include "models/causal_lm_config.h"

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "core/rules.h"
#include "io/json_fields.h"

namespace aw {
namespace {

using io::Describe;
using io::FieldReader;
using io::JsonType;
using io::IntOr;
using io::JsonValue;
using io::NumberOr;

// How a family's config.json says which layers slide.
enum class Sliding {
  kNone,     // every layer full (llama)
  kAll,      // sliding_window, when set, on every layer (mistral, phi3)
  kQwen,     // use_sliding_window refused: transformers 4.5x and 5.x disagree on which layers it windows (qwen2, qwen3)
  kNoRope,   // use_sliding_window: the layers without RoPE slide (smollm3)
  kPattern,  // every sliding_window_pattern-th layer full, the others sliding (gemma3_text)
};

// A family of config.json: HF's defaults (its configuration_*.py) and its modelling code's features. A recipe
// names only what differs from these defaults (Recipes()).
struct Recipe {
  const char* model_type = "";
  int64_t max_positions = 2048;    // max_position_embeddings when absent
  double rms_eps = 1e-6;           // rms_norm_eps when absent
  double rope_theta = 10000.0;     // rope_theta when absent
  int64_t head_dim = 0;            // head_dim when absent (0: hidden_size / num_attention_heads)
  int64_t kv_heads = 0;            // num_key_value_heads when absent (0: num_attention_heads; null is always that)
  bool tied = false;               // tie_word_embeddings when absent
  const char* act_key = "hidden_act";  // where the activation is named ("hidden_act" or "hidden_activation")
  const char* act = "silu";        // the activation its MLP has
  bool qkv_bias_always = false;    // Qwen2: q, k, v biases whatever attention_bias says
  bool attention_bias = false;     // it reads attention_bias (all four projections' biases)
  bool mlp_bias = false;           // it reads mlp_bias
  bool qk_norm = false;            // an RMSNorm on every q and k head (Qwen3, Gemma 3)
  bool gemma = false;              // Gemma's (1 + w) norms, sandwich norms, scaled embeddings, soft-capping, GeGLU
  bool fused = false;              // qkv_proj and gate_up_proj (Phi-3)
  bool no_rope = false;            // layers without RoPE (SmolLM3)
  bool partial_rotary = false;     // RoPE on part of a head, longrope (Phi-3)
  Sliding sliding = Sliding::kNone;
  std::optional<int64_t> window;   // sliding_window when absent
};

// The families, as their configuration_*.py and modeling_*.py are in transformers (docs/families.md).
// A fixed array (no heap: the first config read leaves nothing allocated behind).
constexpr size_t kRecipes = 7;
const std::array<Recipe, kRecipes>& Recipes() {
  static const std::array<Recipe, kRecipes> all = [] {
    std::array<Recipe, kRecipes> v;
    Recipe& llama = v[0];
    llama.model_type = "llama";
    llama.attention_bias = true;
    llama.mlp_bias = true;

    Recipe& qwen2 = v[1];
    qwen2.model_type = "qwen2";
    qwen2.max_positions = 32768;
    qwen2.kv_heads = 32;
    qwen2.qkv_bias_always = true;
    qwen2.sliding = Sliding::kQwen;
    qwen2.window = 4096;

    Recipe& qwen3 = v[2];
    qwen3.model_type = "qwen3";
    qwen3.max_positions = 32768;
    qwen3.head_dim = 128;
    qwen3.kv_heads = 32;
    qwen3.attention_bias = true;
    qwen3.qk_norm = true;
    qwen3.sliding = Sliding::kQwen;
    qwen3.window = 4096;

    Recipe& mistral = v[3];
    mistral.model_type = "mistral";
    mistral.max_positions = 4096 * 32;
    mistral.kv_heads = 8;
    mistral.sliding = Sliding::kAll;
    mistral.window = 4096;

    Recipe& gemma3 = v[4];
    gemma3.model_type = "gemma3_text";
    gemma3.max_positions = 131072;
    gemma3.rope_theta = 1000000.0;
    gemma3.head_dim = 256;
    gemma3.kv_heads = 4;
    gemma3.tied = true;
    gemma3.act_key = "hidden_activation";
    gemma3.act = "gelu_pytorch_tanh";
    gemma3.attention_bias = true;
    gemma3.qk_norm = true;
    gemma3.gemma = true;
    gemma3.sliding = Sliding::kPattern;
    gemma3.window = 4096;

    Recipe& phi3 = v[5];
    phi3.model_type = "phi3";
    phi3.max_positions = 4096;
    phi3.rms_eps = 1e-5;
    phi3.fused = true;
    phi3.partial_rotary = true;
    phi3.sliding = Sliding::kAll;

    Recipe& smollm3 = v[6];
    smollm3.model_type = "smollm3";
    smollm3.max_positions = 32768;
    smollm3.rope_theta = 2000000.0;
    smollm3.kv_heads = 4;
    smollm3.tied = true;
    smollm3.attention_bias = true;
    smollm3.mlp_bias = true;
    smollm3.no_rope = true;
    smollm3.sliding = Sliding::kNoRope;
    return v;
  }();
  return all;
}

std::string FamilyList() {
  std::string s;
  const auto& recipes = Recipes();
  for (size_t i = 0; i < recipes.size(); ++i)
    s += std::string(i == 0 ? "" : i + 1 == recipes.size() ? " or " : ", ") + "\"" + recipes[i].model_type + "\"";
  return s;
}

bool BoolOr(const FieldReader& c, const char* key, bool def) {
  const JsonValue* v = c.Get(key);
  return v && v->type == JsonType::kBool ? v->boolean : def;
}

const char* const kRopeTypes = "\"default\", \"linear\", \"dynamic\", \"yarn\" or \"llama3\"";

// One RoPE spec from an object (rope_scaling, rope_parameters or one of its layer types) at `path` (".rope_scaling"):
// its type ("rope_type", or "type" in older saves) and that type's fields, each named if of the wrong kind or not
// the type's. theta_ok: "rope_theta" may be in it (5.x). top_omax: the config's own
// original_max_position_embeddings (Phi-3 writes it beside rope_scaling), or 0.
Status ReadRopeSpec(const FieldReader& c, const Recipe& r, const JsonValue& o, const std::string& path, bool theta_ok,
                    int64_t top_omax, RopeSpec* s, double* theta, bool* has_theta, double* partial) {
  const JsonValue* t1 = o.Find("rope_type");
  const JsonValue* t2 = o.Find("type");
  if (t1 && t2 && !(t1->is_string() && t2->is_string() && t1->str == t2->str))
    return c.Fail(path + ".type", "the same type as rope_type (" + Describe(t1) + ") when both are given", Describe(t2));
  const JsonValue* t = t1 ? t1 : t2;
  const std::string tkey = path + (t1 ? ".rope_type" : ".type");
  s->type = "default";
  if (t) {
    if (!t->is_string()) return c.Fail(tkey, std::string("one of ") + kRopeTypes, Describe(t));
    s->type = t->str;
  }
  // Phi-3's config renames its older names of longrope ("su", "yarn"), and runs longrope only; longrope is
  // Phi-3's alone.
  if (r.partial_rotary && (s->type == "su" || s->type == "yarn")) s->type = "longrope";
  const std::string& ty = s->type;
  if (r.partial_rotary && ty != "default" && ty != "longrope")
    return c.Fail(tkey, "\"longrope\" (or its older names \"su\" and \"yarn\"): Phi-3 runs no other scaled RoPE", Describe(t));
  const bool known = ty == "default" || ty == "linear" || ty == "dynamic" || ty == "yarn" || ty == "llama3" ||
                     (ty == "longrope" && r.partial_rotary);
  if (!known)
    return c.Fail(tkey, std::string("one of ") + kRopeTypes + (ty == "longrope" ? " (longrope is Phi-3's)" : ""), Describe(t));
  // The fields each type reads (HF ignores others with a warning; here they are refused: a field that is
  // not read is a field whose meaning the file and the model could disagree on).
  auto allowed = [&](const std::string& k) {
    if (k == "rope_type" || k == "type") return true;
    if (k == "rope_theta" || k == "partial_rotary_factor") return theta_ok;
    if (ty == "linear" || ty == "dynamic") return k == "factor";
    if (ty == "yarn")
      return k == "factor" || k == "attention_factor" || k == "beta_fast" || k == "beta_slow" || k == "mscale" ||
             k == "mscale_all_dim" || k == "original_max_position_embeddings" || k == "truncate";
    if (ty == "llama3")
      return k == "factor" || k == "low_freq_factor" || k == "high_freq_factor" || k == "original_max_position_embeddings";
    if (ty == "longrope")
      return k == "short_factor" || k == "long_factor" || k == "factor" || k == "attention_factor" ||
             k == "original_max_position_embeddings";
    return false;
  };
  for (const io::JsonMember& m : o.members)
    if (!allowed(m.key))
      return c.Fail(path + io::KeyPath(m.key), "no such key (rope_type \"" + ty + "\" reads " +
                                                  (ty == "default" ? std::string("rope_theta only")
                                                                   : "its own fields: docs/families.md") + ")",
                    Describe(&m.value));
  auto num = [&](const char* key, double def) { return NumberOr(o.Find(key), def); };
  auto opt = [&](const char* key) -> std::optional<double> {
    const JsonValue* v = o.Find(key);
    if (!v || v->type == JsonType::kNull) return std::nullopt;
    return NumberOr(v, 0);
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (const JsonValue* th = o.Find("rope_theta")) {
    *theta = NumberOr(th, 0);
    *has_theta = true;
  }
  if (const JsonValue* p = o.Find("partial_rotary_factor")) *partial = NumberOr(p, nan);
  if (ty == "linear" || ty == "dynamic" || ty == "llama3") s->factor = num("factor", nan);
  if (ty == "yarn" || ty == "longrope") s->factor = num("factor", 0);  // absent: max / original
  if (ty == "llama3") {
    s->low_freq_factor = num("low_freq_factor", nan);
    s->high_freq_factor = num("high_freq_factor", nan);
  }
  if (ty == "yarn") {
    s->attention_factor = opt("attention_factor");
    // `or 32` / `or 1`: null and 0 give the defaults
    const double bf = num("beta_fast", 0), bs = num("beta_slow", 0);
    s->beta_fast = bf == 0 ? 32.0 : bf;
    s->beta_slow = bs == 0 ? 1.0 : bs;
    s->mscale = opt("mscale");
    s->mscale_all_dim = opt("mscale_all_dim");
    if (const JsonValue* tr = o.Find("truncate")) {
      if (tr->type != JsonType::kBool) return c.Fail(path + ".truncate", "a boolean", Describe(tr));
      s->truncate = tr->boolean;
    }
  }
  if (ty == "longrope") {
    s->attention_factor = opt("attention_factor");
    for (auto [key, list] : {std::pair{"short_factor", &s->short_factor}, std::pair{"long_factor", &s->long_factor}}) {
      const JsonValue* v = o.Find(key);
      if (!v || !v->is_array()) return c.Fail(path + "." + key, "a list of numbers (one per rotated pair)", Describe(v));
      for (size_t i = 0; i < v->items.size(); ++i) {
        const JsonValue& x = v->items[i];
        if (!(x.is_number() && x.number > 0 && std::isfinite(x.number)))
          return c.Fail(path + "." + key + "[" + std::to_string(i) + "]", "a number > 0", Describe(&x));
        list->push_back(x.number);
      }
    }
  }
  if (ty == "yarn" || ty == "llama3" || ty == "longrope") {
    const JsonValue* om = o.Find("original_max_position_embeddings");
    s->original_max = om ? IntOr(om, io::kUnreadInt) : top_omax;
    if (ty == "llama3" && !om) s->original_max = io::kUnreadInt;  // required
  }
  return Status::OK();
}

// The layer types of a 5.x config: "full_attention" or "sliding_attention" per layer.
Status ReadLayerTypes(const FieldReader& c, const JsonValue& lt, std::vector<uint8_t>* sliding) {
  if (!lt.is_array()) return c.Fail(".layer_types", "a list of \"full_attention\" / \"sliding_attention\"", Describe(&lt));
  for (size_t i = 0; i < lt.items.size(); ++i) {
    const JsonValue& x = lt.items[i];
    if (!(x.is_string() && (x.str == "full_attention" || x.str == "sliding_attention")))
      return c.Fail(".layer_types[" + std::to_string(i) + "]", "\"full_attention\" or \"sliding_attention\"", Describe(&x));
    sliding->push_back(x.str == "sliding_attention");
  }
  return Status::OK();
}

// The RoPE fields of either generation into s: the base, the spec(s), partial rotary.
Status ReadRope(const FieldReader& c, const Recipe& r, CausalLmConfig* s) {
  const int64_t top_omax = r.partial_rotary ? IntOr(c.Get("original_max_position_embeddings"), 0) : 0;
  const JsonValue* rs = c.Get("rope_scaling");
  const JsonValue* rp = c.Get("rope_parameters");
  const bool has_rs = rs && rs->type != JsonType::kNull, has_rp = rp && rp->type != JsonType::kNull;
  if (has_rs && !rs->is_object()) return c.FailAt("rope_scaling", "null or an object");
  if (has_rp && !rp->is_object()) return c.FailAt("rope_parameters", "null or an object");
  const JsonValue* top_theta = c.Get("rope_theta");
  s->rope.theta = NumberOr(top_theta, r.rope_theta);
  double partial = NumberOr(c.Get("partial_rotary_factor"), 1.0);
  bool has_theta = false;
  double theta = 0;
  if (has_rp) {
    // 5.x. Gemma 3: one per layer type ({"full_attention": {…}, "sliding_attention": {…}}).
    const JsonValue* full = rp->Find("full_attention");
    const JsonValue* local = rp->Find("sliding_attention");
    if (r.gemma && !full && !local)
      return c.FailAt("rope_parameters", "an object per layer type ({\"full_attention\": {…}, \"sliding_attention\": "
                                         "{…}}): Gemma 3's layers have two RoPEs");
    if (r.gemma) {
      for (const io::JsonMember& m : rp->members)
        if (m.key != "full_attention" && m.key != "sliding_attention")
          return c.Fail(".rope_parameters" + io::KeyPath(m.key), "no such key (Gemma 3's rope_parameters has "
                                                                 "full_attention and sliding_attention)", Describe(&m.value));
      if (full) {
        if (!full->is_object()) return c.Fail(".rope_parameters.full_attention", "an object", Describe(full));
        AW_RETURN_IF_ERROR(ReadRopeSpec(c, r, *full, ".rope_parameters.full_attention", true, 0, &s->rope, &theta, &has_theta, &partial));
        s->rope_key = "rope_parameters.full_attention";
        if (has_theta) { s->rope.theta = theta; s->rope_theta_key = "rope_parameters.full_attention.rope_theta"; }
      }
      if (local) {
        if (!local->is_object()) return c.Fail(".rope_parameters.sliding_attention", "an object", Describe(local));
        bool lt = false;
        double ltheta = 0;
        AW_RETURN_IF_ERROR(ReadRopeSpec(c, r, *local, ".rope_parameters.sliding_attention", true, 0, &s->rope_local, &ltheta, &lt, &partial));
        if (lt) { s->rope_local.theta = ltheta; s->local_theta_key = "rope_parameters.sliding_attention.rope_theta"; }
      }
    } else {
      AW_RETURN_IF_ERROR(ReadRopeSpec(c, r, *rp, ".rope_parameters", true, top_omax, &s->rope, &theta, &has_theta, &partial));
      s->rope_key = "rope_parameters";
      if (has_theta) {
        // Both generations' bases given: they must agree. (A base that is no base at all, 0 or "1e6", is
        // Init's to refuse first: its range rule.)
        if (top_theta && top_theta->is_number() && theta > 0 && std::isfinite(theta) && top_theta->number != theta)
          return c.Fail(".rope_parameters.rope_theta", "the same base as rope_theta (" + Describe(top_theta) +
                                                           ") when both are given", io::Describe(rp->Find("rope_theta")));
        s->rope.theta = theta;
        s->rope_theta_key = "rope_parameters.rope_theta";
      }
    }
    if (has_rs) return c.FailAt("rope_scaling", "null when rope_parameters is given (the RoPE of transformers 5.x: "
                                                "one of the two, not both)");
  } else if (has_rs) {  // 4.x
    AW_RETURN_IF_ERROR(ReadRopeSpec(c, r, *rs, ".rope_scaling", false, top_omax, &s->rope, &theta, &has_theta, &partial));
  }
  if (r.gemma && s->local_theta_key == "rope_local_base_freq")
    s->rope_local.theta = NumberOr(c.Get("rope_local_base_freq"), 10000.0);
  s->has_local_rope = r.gemma;
  if (partial != 1.0 && !r.partial_rotary)
    return c.Fail(has_rp && rp->Find("partial_rotary_factor") ? ".rope_parameters.partial_rotary_factor" : ".partial_rotary_factor",
                  "1 (RoPE on every dim: only phi3 rotates part of a head)",
                  Describe(has_rp && rp->Find("partial_rotary_factor") ? rp->Find("partial_rotary_factor") : c.Get("partial_rotary_factor")));
  s->partial_rotary_factor = partial;
  return Status::OK();
}

// Which layers slide, per the family's way of saying it (5.x layer_types wins where given), and, for SmolLM3,
// which have no RoPE.
Status ReadLayers(const FieldReader& c, const Recipe& r, CausalLmConfig* s) {
  const int64_t L = s->layers > 0 && s->layers <= 4096 ? s->layers : 0;
  if (r.no_rope) {  // SmolLM3: no_rope_layers[i] = 1 for a layer with RoPE; default every 4th without
    if (const JsonValue* nr = c.Get("no_rope_layers"); nr && nr->type != JsonType::kNull) {
      if (!nr->is_array() || int64_t(nr->items.size()) < L)
        return c.Fail(".no_rope_layers", "a list of at least num_hidden_layers (" + std::to_string(L) + ") 0s and 1s",
                      Describe(nr));
      for (size_t i = 0; i < size_t(L); ++i) {
        const JsonValue& x = nr->items[i];
        if (!(x.is_number() && (x.number == 0 || x.number == 1)))
          return c.Fail(".no_rope_layers[" + std::to_string(i) + "]", "0 (no RoPE) or 1 (RoPE)", Describe(&x));
        s->layer_rope.push_back(x.number == 1);
      }
    } else {
      const int64_t interval = IntOr(c.Get("no_rope_layer_interval"), 4);
      if (interval < 1) return c.FailAt("no_rope_layer_interval", "an integer >= 1");
      for (int64_t i = 0; i < L; ++i) s->layer_rope.push_back((i + 1) % interval != 0);
    }
  }
  const JsonValue* sw = c.Get("sliding_window");
  const bool window_set = sw ? sw->type != JsonType::kNull : r.window.has_value();
  const int64_t window = sw ? IntOr(sw, 0) : r.window.value_or(0);
  const JsonValue* lt = c.Get("layer_types");
  if (lt && lt->type == JsonType::kNull) lt = nullptr;
  std::vector<uint8_t> sliding;
  if (lt) {
    if (r.sliding == Sliding::kAll && !r.partial_rotary)
      return c.FailAt("layer_types", "absent (MistralModel does not read it; per-layer windows are model_type "
                                     "\"ministral\")");
    AW_RETURN_IF_ERROR(ReadLayerTypes(c, *lt, &sliding));
    if (int64_t(sliding.size()) != L && L > 0)
      return c.Fail(".layer_types", "a list of num_hidden_layers (" + std::to_string(L) + ") entries", Describe(lt));
  }
  switch (r.sliding) {
    case Sliding::kNone:
      if (sw && sw->type != JsonType::kNull)
        return c.FailAt("sliding_window", "null (\"" + std::string(r.model_type) + "\" has no sliding-window layers)");
      break;
    case Sliding::kAll: {  // Mistral, Phi-3: the window, when set, on every layer
      const std::vector<uint8_t> all(size_t(L), window_set ? 1 : 0);
      if (lt && sliding != all)
        return c.FailAt("layer_types", std::string("\"") + (window_set ? "sliding" : "full") +
                                           "_attention\" for every layer (Phi-3's sliding_window is every layer's)");
      sliding = all;
      break;
    }
    case Sliding::kQwen:
      AW_RETURN_IF_ERROR(c.OptionalBool("use_sliding_window"));
      if (BoolOr(c, "use_sliding_window", false))
        return c.FailAt("use_sliding_window", "false (transformers 4.5x windowed every layer, 5.x only those from "
                                              "max_window_layers: the generations disagree)");
      if (lt)
        for (size_t i = 0; i < sliding.size(); ++i)
          if (sliding[i]) return c.Fail(".layer_types[" + std::to_string(i) + "]", "\"full_attention\" (use_sliding_window is false)",
                                        Describe(&lt->items[i]));
      sliding.clear();
      break;
    case Sliding::kNoRope: {  // SmolLM3: with use_sliding_window, the layers without RoPE slide
      AW_RETURN_IF_ERROR(c.OptionalBool("use_sliding_window"));
      const bool on = BoolOr(c, "use_sliding_window", false) && window_set;
      if (!lt) {
        for (int64_t i = 0; i < L; ++i) sliding.push_back(on && !s->uses_rope(size_t(i)));
      } else {
        for (uint8_t v : sliding)
          if (v && !on) return c.FailAt("use_sliding_window", "true, with a sliding_window (layer_types has sliding layers)");
      }
      break;
    }
    case Sliding::kPattern: {  // Gemma 3: every pattern-th layer full
      const JsonValue* pat = c.Get("sliding_window_pattern");
      const int64_t pattern = IntOr(pat, 6);
      if (pattern < 1) return c.FailAt("sliding_window_pattern", "an integer >= 1");
      std::vector<uint8_t> from_pattern;
      for (int64_t i = 0; i < L; ++i) from_pattern.push_back((i + 1) % pattern != 0);
      if (lt && pat && pat->type != JsonType::kNull && sliding != from_pattern)
        return c.FailAt("layer_types", "the layers of sliding_window_pattern " + std::to_string(pattern) +
                                           " when both are given (transformers 4.50-4.52 read only the pattern)");
      if (!lt) sliding = from_pattern;
      break;
    }
  }
  bool any = false;
  for (uint8_t v : sliding) any = any || v;
  if (any) {
    if (!window_set) return c.FailAt("sliding_window", "an integer (layer_types has sliding layers)");
    s->sliding_window = window;
    s->layer_sliding = std::move(sliding);
  }
  return Status::OK();
}

}  // namespace

bool IsCausalLmType(std::string_view model_type) {
  for (const Recipe& r : Recipes())
    if (model_type == r.model_type) return true;
  return false;
}

const char* const* CausalLmModelTypes() {
  static const std::array<const char*, kRecipes + 1> types = [] {
    std::array<const char*, kRecipes + 1> t{};
    for (size_t i = 0; i < kRecipes; ++i) t[i] = Recipes()[i].model_type;
    return t;  // null-terminated
  }();
  return types.data();
}

Status ReadCausalLmConfig(const JsonValue& hf, const std::string& root, CausalLmConfig* out) {
  const FieldReader c(hf, root);
  const JsonValue* mt = c.Get("model_type");
  const Recipe* recipe = nullptr;
  for (const Recipe& r : Recipes())
    if (mt && mt->is_string() && mt->str == r.model_type) recipe = &r;
  if (!recipe) {
    if (mt && mt->is_string() && mt->str == "gemma3")
      return c.Fail(".model_type", FamilyList() + " (\"gemma3\" is the multimodal model: its text model's config has "
                                                  "\"gemma3_text\")", Describe(mt));
    return c.Fail(".model_type", FamilyList(), Describe(mt));
  }
  const Recipe& r = *recipe;
  CausalLmConfig s;
  s.model_type = r.model_type;
  AW_RETURN_IF_ERROR(c.OptionalEnum(r.act_key, {r.act}));
  s.act = r.gemma ? LmActivation::kGeluTanh : LmActivation::kSilu;
  if (const JsonValue* tp = c.Get("pretraining_tp"); tp && !(tp->is_number() && tp->number == 1.0))
    return c.FailAt("pretraining_tp", "1");
  AW_RETURN_IF_ERROR(c.OptionalBool("tie_word_embeddings"));
  AW_RETURN_IF_ERROR(c.OptionalBool("attention_bias"));
  AW_RETURN_IF_ERROR(c.OptionalBool("mlp_bias"));
  // A bias the family's modelling code does not have: transformers ignores the key; refused, as the file asks for
  // biases the model would not add.
  for (auto [key, has] : {std::pair{"attention_bias", r.attention_bias}, std::pair{"mlp_bias", r.mlp_bias}})
    if (!has && BoolOr(c, key, false))
      return c.FailAt(key, "false (\"" + std::string(r.model_type) + "\" has no " +
                               (std::string(key) == "attention_bias" ? "attention" : "MLP") + " biases)");
  s.vocab = IntOr(c.Get("vocab_size"), io::kUnreadInt);
  s.hidden = IntOr(c.Get("hidden_size"), io::kUnreadInt);
  s.intermediate = IntOr(c.Get("intermediate_size"), io::kUnreadInt);
  s.layers = IntOr(c.Get("num_hidden_layers"), io::kUnreadInt);
  s.heads = IntOr(c.Get("num_attention_heads"), io::kUnreadInt);
  // num_key_value_heads absent: the family's default (its config class's); null: num_attention_heads.
  const JsonValue* kvh = c.Get("num_key_value_heads");
  s.kv_heads = !kvh ? (r.kv_heads ? r.kv_heads : s.heads) : IntOr(kvh, s.heads);
  if (!kvh && r.kv_heads && s.heads > 0 && s.heads % r.kv_heads != 0)
    return c.FailAt("num_key_value_heads", "a divisor of num_attention_heads (" + std::to_string(s.heads) + "): absent, it is " +
                                               r.model_type + "'s default " + std::to_string(r.kv_heads));
  // head_dim absent: the family's default, else hidden_size / num_attention_heads when that is an even integer;
  // else 0, which Init refuses naming both.
  const bool even_split = s.hidden > 0 && s.heads > 0 && s.hidden % s.heads == 0 && (s.hidden / s.heads) % 2 == 0;
  s.head_dim = IntOr(c.Get("head_dim"), r.head_dim ? r.head_dim : even_split ? s.hidden / s.heads : 0);
  s.max_positions = IntOr(c.Get("max_position_embeddings"), r.max_positions);
  s.rms_eps = NumberOr(c.Get("rms_norm_eps"), r.rms_eps);
  s.tied = BoolOr(c, "tie_word_embeddings", r.tied);
  const bool attention_bias = r.attention_bias && BoolOr(c, "attention_bias", false);
  s.qkv_bias = r.qkv_bias_always || attention_bias;  // Qwen2: q, k, v always; the others: all four with attention_bias
  s.o_bias = attention_bias;
  s.mlp_bias = r.mlp_bias && BoolOr(c, "mlp_bias", false);
  s.fused_qkv = s.fused_gate_up = r.fused;
  s.qk_norm = r.qk_norm;
  s.norm_unit_offset = s.sandwich = r.gemma;
  if (r.gemma) {
    s.embed_scale = std::sqrt(double(s.hidden > 0 ? s.hidden : 1));
    const double qpas = NumberOr(c.Get("query_pre_attn_scalar"), 256.0);
    s.query_scale = qpas > 0 ? std::pow(qpas, -0.5) : std::numeric_limits<double>::quiet_NaN();
    const JsonValue* v = c.Get("final_logit_softcapping");
    s.final_softcap = !v || v->type == JsonType::kNull ? 0.0 : NumberOr(v, std::numeric_limits<double>::quiet_NaN());
    if (!(s.final_softcap == 0.0 || (s.final_softcap > 0 && std::isfinite(s.final_softcap))))
      return c.FailAt("final_logit_softcapping", "null or a number > 0");
    // Gemma3Attention keeps attn_logit_softcapping but never applies it (Gemma 2's does): a value would be
    // ignored by transformers, so it is refused rather than guessed (Gemma 3's checkpoints have null).
    if (!c.Missing("attn_logit_softcapping"))
      return c.FailAt("attn_logit_softcapping", "null (transformers' Gemma 3 does not soft-cap its attention scores)");
    // EmbeddingGemma: every key visible to every query (an embedder, not a generator).
    if (const JsonValue* b = c.Get("use_bidirectional_attention"); b && b->type != JsonType::kNull)
      AW_RETURN_IF_ERROR(c.OptionalBool("use_bidirectional_attention", &s.bidirectional));
  } else {
    for (const char* key : {"attn_logit_softcapping", "final_logit_softcapping"})
      if (!c.Missing(key)) return c.FailAt(key, "null (\"" + std::string(r.model_type) + "\" has no soft-capping)");
  }
  AW_RETURN_IF_ERROR(ReadRope(c, r, &s));
  AW_RETURN_IF_ERROR(ReadLayers(c, r, &s));
  // Gemma3TextConfig halves the stored window when bidirectional (exclusive bounds): |i − j| < sliding_window/2 + 1.
  if (s.bidirectional && s.sliding_window > 0) s.sliding_window = s.sliding_window / 2 + 1;
  if (r.partial_rotary) {  // Phi-3: head_dim is hidden_size / num_attention_heads; longrope's factor is max / original
    if (const JsonValue* hd = c.Get("head_dim"); hd && hd->type != JsonType::kNull && s.heads > 0 && s.hidden > 0 &&
                                                 s.head_dim != s.hidden / s.heads)
      return c.FailAt("head_dim", "hidden_size / num_attention_heads (" + std::to_string(s.hidden / s.heads) +
                                      "): Phi-3 derives it");
    if (s.rope.type == "longrope" && s.rope.factor != 0 && s.rope.original_max > 0 && s.max_positions > 0 &&
        s.rope.factor != double(s.max_positions) / double(s.rope.original_max))
      return c.Fail("." + s.rope_key + ".factor", "max_position_embeddings / original_max_position_embeddings (" +
                                                       NumStr(double(s.max_positions) / double(s.rope.original_max)) +
                                                       ") or absent: transformers versions read it differently",
                    Describe(c.Get(s.rope_key) ? c.Get(s.rope_key)->Find("factor") : nullptr));
  }
  if (!s.has_local_rope) s.rope_local = s.rope;
  if (!c.Missing("bos_token_id")) s.bos_id = IntOr(c.Get("bos_token_id"), 0);
  if (!c.Missing("pad_token_id")) s.pad_id = IntOr(c.Get("pad_token_id"), 0);
  if (const JsonValue* eos = c.Get("eos_token_id"); eos && eos->is_array()) {
    for (const JsonValue& item : eos->items) s.eos_ids.push_back(item.type == JsonType::kNull ? io::kUnreadInt : IntOr(&item, 0));
  } else if (eos && eos->type != JsonType::kNull) {
    s.eos_ids.push_back(IntOr(eos, 0));
  }
  *out = std::move(s);
  return Status::OK();
}

std::string CausalLmConfigJson(const CausalLmConfig& c) {
  std::string eos = "[";
  for (size_t i = 0; i < c.eos_ids.size(); ++i) eos += (i ? ", " : "") + std::to_string(c.eos_ids[i]);
  eos += "]";
  auto id = [](const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string("null"); };
  return "{\"modelType\": \"" + c.model_type + "\", \"vocabSize\": " + std::to_string(c.vocab) +
         ", \"hiddenSize\": " + std::to_string(c.hidden) + ", \"numLayers\": " + std::to_string(c.layers) +
         ", \"numHeads\": " + std::to_string(c.heads) + ", \"numKeyValueHeads\": " + std::to_string(c.kv_heads) +
         ", \"headDim\": " + std::to_string(c.head_dim) + ", \"maxPositions\": " + std::to_string(c.position_limit()) +
         ", \"attentionWindow\": " + (c.attention_window > 0 ? std::to_string(c.attention_window) : "null") +
         ", \"slidingWindow\": " + (c.sliding_window > 0 ? std::to_string(c.sliding_window) : "null") +
         ", \"ropeType\": \"" + c.rope.type + "\"" +
         ", \"eosTokenIds\": " + eos + ", \"bosTokenId\": " + id(c.bos_id) + ", \"padTokenId\": " + id(c.pad_id) +
         ", \"tied\": " + (c.tied ? "true" : "false") + ", \"bidirectional\": " + (c.bidirectional ? "true" : "false") + "}";
}

namespace {

// One RoPE spec's fields (key: where they were read, "rope_scaling" or "rope_parameters…").
Status CheckRope(const io::ConfigRules& r, const RopeSpec& s, const std::string& key, const std::string& theta_key,
                 int64_t rot) {
  AW_RETURN_IF_ERROR(r.Positive(theta_key, s.theta));
  const std::string k = key + ".";
  const std::string& t = s.type;
  if (t == "linear" || t == "dynamic" || t == "llama3" || ((t == "yarn" || t == "longrope") && s.factor != 0))
    AW_RETURN_IF_ERROR(r.Positive(k + "factor", s.factor));
  if (t == "llama3") {
    AW_RETURN_IF_ERROR(r.Positive(k + "low_freq_factor", s.low_freq_factor));
    AW_RETURN_IF_ERROR(r.Positive(k + "high_freq_factor", s.high_freq_factor));
    if (!(s.high_freq_factor > s.low_freq_factor))
      return r.Fail(k + "high_freq_factor", "a number > low_freq_factor (" + NumStr(s.low_freq_factor) + ")",
                    s.high_freq_factor);
  }
  if (t == "llama3" || t == "longrope" || (t == "yarn" && s.original_max != 0)) {
    const std::string om = r.Has(k + "original_max_position_embeddings") || t != "longrope"
                               ? k + "original_max_position_embeddings" : "original_max_position_embeddings";
    AW_RETURN_IF_ERROR(r.Int(om, s.original_max, 1, kMaxPositions));
  }
  if (s.attention_factor) AW_RETURN_IF_ERROR(r.Positive(k + "attention_factor", *s.attention_factor));
  if (t == "yarn") {
    AW_RETURN_IF_ERROR(r.Positive(k + "beta_fast", s.beta_fast));
    AW_RETURN_IF_ERROR(r.Positive(k + "beta_slow", s.beta_slow));
    for (auto [name, v] : {std::pair{"mscale", s.mscale}, std::pair{"mscale_all_dim", s.mscale_all_dim}})
      if (v && !std::isfinite(*v)) return r.Fail(k + name, "a number", *v);
  }
  if (t == "longrope")
    for (auto [name, list] : {std::pair{"short_factor", &s.short_factor}, std::pair{"long_factor", &s.long_factor}})
      if (int64_t(list->size()) != rot / 2)
        return r.Fail(k + name, "a list of rotary dims / 2 = " + std::to_string(rot / 2) + " numbers",
                      double(list->size()));
  return Status::OK();
}

}  // namespace

Status CheckCausalLmConfig(const CausalLmConfig& c, const io::ConfigSource* src) {
  const io::ConfigRules r(src);
  AW_RETURN_IF_ERROR(r.Int("vocab_size", c.vocab, 1, kMaxVocab));
  AW_RETURN_IF_ERROR(r.Int("hidden_size", c.hidden, 1, kMaxLmWidth));
  AW_RETURN_IF_ERROR(r.Int("intermediate_size", c.intermediate, 1, kMaxFeedforward));
  AW_RETURN_IF_ERROR(r.Int("num_hidden_layers", c.layers, 1, kMaxLayers));
  AW_RETURN_IF_ERROR(r.Int("num_attention_heads", c.heads, 1, c.hidden));
  AW_RETURN_IF_ERROR(r.Divisor("num_key_value_heads", c.kv_heads, "num_attention_heads", c.heads));
  if (c.head_dim == 0 && !r.Has("head_dim")) {  // absent, and hidden_size / num_attention_heads is not an even integer
    return r.Fail("head_dim", "a number, or hidden_size / num_attention_heads an even integer (" +
                                    std::to_string(c.hidden) + " / " + std::to_string(c.heads) + ")", 0);
  } else {
    AW_RETURN_IF_ERROR(r.Int("head_dim", c.head_dim, 2, kMaxHeadDim));
    if (c.head_dim % 2) return r.Fail("head_dim", "an even number (RoPE pairs)", double(c.head_dim));
  }
  AW_RETURN_IF_ERROR(r.Positive("rms_norm_eps", c.rms_eps));
  AW_RETURN_IF_ERROR(r.Int("max_position_embeddings", c.max_positions, 1, kMaxPositions));
  // RoPE: the rotated dims, then each spec's fields.
  if (!(c.partial_rotary_factor > 0 && c.partial_rotary_factor <= 1))
    return r.Fail(r.Has("rope_parameters.partial_rotary_factor") ? "rope_parameters.partial_rotary_factor"
                                                                  : "partial_rotary_factor",
                  "a number in (0, 1]", c.partial_rotary_factor);
  const int64_t rot = c.rotary_dim();
  if (rot < 2 || rot % 2)
    return r.Fail("partial_rotary_factor", "a factor giving an even number of rotated dims >= 2 (head_dim " +
                                               std::to_string(c.head_dim) + " × factor = " + std::to_string(rot) + ")",
                  c.partial_rotary_factor);
  AW_RETURN_IF_ERROR(CheckRope(r, c.rope, c.rope_key, c.rope_theta_key, rot));
  if (c.has_local_rope) AW_RETURN_IF_ERROR(CheckRope(r, c.rope_local, "rope_parameters.sliding_attention", c.local_theta_key, rot));
  if (!c.layer_sliding.empty()) AW_RETURN_IF_ERROR(r.Int("sliding_window", c.sliding_window, 1, kMaxAttentionWindow));
  if (c.query_scale != 0 && !(c.query_scale > 0 && std::isfinite(c.query_scale)))
    return r.Fail("query_pre_attn_scalar", "a number > 0", c.query_scale);
  // Special tokens: ids of the vocabulary (generate() stops at eos_token_id by default).
  const std::string ids = "an id in [0, " + std::to_string(c.vocab - 1) + "] (vocab_size " + std::to_string(c.vocab) + ")";
  for (const char* key : {"bos_token_id", "pad_token_id"}) {
    const std::optional<int64_t>& v = std::string(key) == "bos_token_id" ? c.bos_id : c.pad_id;
    if (v && !(*v >= 0 && *v < c.vocab)) return r.Fail(key, ids + " or null", double(*v));
  }
  for (size_t i = 0; i < c.eos_ids.size(); ++i) {
    const int64_t v = c.eos_ids[i];
    if (v >= 0 && v < c.vocab) continue;
    if (r.IsList("eos_token_id") || (!src && c.eos_ids.size() > 1)) return r.FailItem("eos_token_id", i, ids, double(v));
    return r.Fail("eos_token_id", ids + " or null, or a list of ids", double(v));
  }
  return Status::OK();  // attention_window: a file's own field, checked where the file is read (ReadCausalLmFile)
}


Status ReadCausalLmFile(const io::FieldReader& c, CausalLmConfig* lm) {
  const JsonValue* hf = c.Get("hf_config");
  if (!hf || !hf->is_object()) return c.Fail(".hf_config", "a Hugging Face config.json object", Describe(hf));
  AW_RETURN_IF_ERROR(ReadCausalLmConfig(*hf, c.root() + ".hf_config", lm));
  if (c.Get("attentionWindow")) AW_RETURN_IF_ERROR(c.Int("attentionWindow", 1, kMaxAttentionWindow, &lm->attention_window));
  const JsonValue* tok = c.Get("tokenizer");
  if (!tok) return Status::OK();
  if (!tok->is_object()) return c.Fail(".tokenizer", "an object", Describe(tok));
  const FieldReader t(*tok, c.root() + ".tokenizer");
  const JsonValue* type = t.Get("type");
  if (!(type && type->is_string() && type->str == "chars")) return t.Fail(".type", "\"chars\"", Describe(type));
  // The vocabulary's size is vocab_size, whose range is CheckCausalLmConfig's: an impossible one is refused there.
  const int64_t vocab = lm->vocab;
  if (vocab < 1 || vocab > kMaxVocab) return Status::OK();
  // special: ids that are not characters (listed once each); every other id is one character, each once.
  std::vector<bool> special(size_t(vocab), false);
  if (const JsonValue* sp = t.Get("special")) {
    if (!sp->is_array()) return t.Fail(".special", "an array of ids", Describe(sp));
    for (size_t i = 0; i < sp->items.size(); ++i) {
      int64_t id = 0;
      if (!io::IntIn(&sp->items[i], 0, vocab - 1, &id) || special[size_t(id)])
        return t.Fail(".special[" + std::to_string(i) + "]", "an id in " + io::RangeStr(0, vocab - 1) + ", listed once",
                      Describe(&sp->items[i]));
      special[size_t(id)] = true;
    }
  }
  const JsonValue* vocab_list = t.Get("vocab");
  if (!vocab_list || !vocab_list->is_array() || int64_t(vocab_list->items.size()) != vocab)
    return t.Fail(".vocab", "an array of vocab_size (" + std::to_string(vocab) + ") strings", Describe(vocab_list));
  std::vector<std::string_view> entries;
  for (size_t i = 0; i < vocab_list->items.size(); ++i) {
    const JsonValue& e = vocab_list->items[i];
    size_t chars = 0;  // code points of valid UTF-8 (the parser's output)
    for (const char ch : e.str) chars += (static_cast<unsigned char>(ch) & 0xC0) != 0x80;
    if (!e.is_string() || e.str.empty() || (!special[i] && chars != 1))
      return t.Fail(".vocab[" + std::to_string(i) + "]",
                    special[i] ? "a non-empty string" : "one character (an id not in special)", Describe(&e));
    entries.push_back(e.str);
  }
  size_t first = 0;
  if (const size_t i = io::FirstRepeat(entries, &first); i < entries.size())
    return t.Fail(".vocab[" + std::to_string(i) + "]", "an entry listed once", Describe(&vocab_list->items[i]) + " again");
  for (const char* key : {"bos", "eos"}) {
    const JsonValue* v = t.Get(key);
    if (!v || v->type == JsonType::kNull) continue;
    int64_t id = 0;
    if (!io::IntIn(v, 0, vocab - 1, &id) || !special[size_t(id)])
      return t.Fail(std::string(".") + key, "null or an id listed in special", Describe(v));
  }
  return t.OptionalEnum("unknown", {"refuse", "skip"});
}

}  // namespace aw
