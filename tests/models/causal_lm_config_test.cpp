// Tests for src/models/causal_lm_config.h (the reader of a causal LM's config.json) together with the family's
// range rules (CheckCausalLmConfig), as loadModel runs them: the kinds refused by key, the
// RoPE base from either generation, token ids, duplicate keys, every range at its edges (the last valid value
// and the first invalid one), and a file's {"model": "causal_lm", …}.
#include "models/causal_lm_config.h"

#include <gtest/gtest.h>

#include <cmath>

#include "config_test_util.h"
#include "io/json_fields.h"
#include "models/causal_lm.h"

namespace aw {
namespace {

// config.json text → the config, as loadModel reads it: parsed, read, then the family's rules with the text
// as their source.
Status ParseHf(const std::string& text, CausalLmConfig* out) {
  io::JsonValue root;
  AW_RETURN_IF_ERROR(io::ParseObject(text, "config", "a Hugging Face config.json", &root));
  AW_RETURN_IF_ERROR(ReadCausalLmConfig(root, "config", out));
  const io::ConfigSource src{&root, "config"};
  return CheckCausalLmConfig(*out, &src);
}

// ---- causal LMs: a Hugging Face config.json (ParseCausalLmConfig) and a file's {"model": "causal_lm", …} ----

// The keys a Llama config.json needs (HF's defaults for the rest).
const Members kMinLlama = {{"model_type", "\"llama\""},      {"vocab_size", "98"},         {"hidden_size", "128"},
                           {"intermediate_size", "384"},      {"num_hidden_layers", "4"},   {"num_attention_heads", "4"}};

void ExpectHfInvalid(const Members& ms, const std::string& message) {
  CausalLmConfig spec;
  const Status s = ParseHf(Json(ms), &spec);
  ASSERT_FALSE(s.ok()) << "accepted: " << Json(ms);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), message) << "config: " << Json(ms);
}

TEST(CausalLmConfigTest, CausalLmConfigJsonReadWithHuggingFaceDefaults) {
  CausalLmConfig l;
  ASSERT_TRUE(ParseHf(Json(kMinLlama), &l).ok());
  EXPECT_EQ(l.model_type, "llama");
  EXPECT_EQ(l.kv_heads, 4);        // num_key_value_heads absent: = num_attention_heads
  EXPECT_EQ(l.head_dim, 32);       // hidden_size / num_attention_heads
  EXPECT_EQ(l.rms_eps, 1e-6);
  EXPECT_EQ(l.rope.theta, 10000.0);
  EXPECT_EQ(l.max_positions, 2048);
  EXPECT_FALSE(l.tied || l.qkv_bias || l.o_bias || l.mlp_bias);
  Members b = Set(Set(kMinLlama, "attention_bias", "true"), "mlp_bias", "true");
  ASSERT_TRUE(ParseHf(Json(Set(Set(b, "num_key_value_heads", "2"), "head_dim", "64")), &l).ok());
  EXPECT_TRUE(l.qkv_bias && l.o_bias && l.mlp_bias);
  EXPECT_EQ(l.kv_heads, 2);
  EXPECT_EQ(l.head_dim, 64);
  // Qwen2: q, k, v biased always, o and the MLP never; 32768 positions by default.
  CausalLmConfig q;
  ASSERT_TRUE(ParseHf(Json(Set(Set(Set(kMinLlama, "model_type", "\"qwen2\""), "num_key_value_heads", "2"), "tie_word_embeddings", "true")), &q).ok());
  EXPECT_TRUE(q.qkv_bias && !q.o_bias && !q.mlp_bias && q.tied);
  EXPECT_EQ(q.max_positions, 32768);
  // Keys it does not read are ignored; rope_scaling null or default is no scaling.
  ASSERT_TRUE(ParseHf(Json(Set(Set(kMinLlama, "architectures", "[\"LlamaForCausalLM\"]"), "rope_scaling",
                                           "{\"rope_type\": \"default\"}")), &l).ok());
}

TEST(CausalLmConfigTest, CausalLmConfigJsonRefusalsNameTheKey) {
  ExpectHfInvalid(Set(kMinLlama, "model_type", "\"gpt2\""),
                  "config.model_type: expected \"llama\", \"qwen2\", \"qwen3\", \"mistral\", \"gemma3_text\", "
                  "\"phi3\" or \"smollm3\", got \"gpt2\"");
  ExpectHfInvalid(Set(kMinLlama, "model_type", "\"gemma3\""),
                  "config.model_type: expected \"llama\", \"qwen2\", \"qwen3\", \"mistral\", \"gemma3_text\", "
                  "\"phi3\" or \"smollm3\" (\"gemma3\" is the multimodal model: its text model's config has "
                  "\"gemma3_text\"), got \"gemma3\"");
  ExpectHfInvalid(Set(kMinLlama, "hidden_act", "\"gelu\""), "config.hidden_act: expected \"silu\", got \"gelu\"");
  ExpectHfInvalid(Set(kMinLlama, "rope_scaling", "{\"rope_type\": \"su\", \"factor\": 2.0}"),
                  "config.rope_scaling.rope_type: expected one of \"default\", \"linear\", \"dynamic\", \"yarn\" or "
                  "\"llama3\", got \"su\"");
  ExpectHfInvalid(Set(kMinLlama, "rope_scaling", "{\"rope_type\": \"longrope\", \"short_factor\": [1], \"long_factor\": [1]}"),
                  "config.rope_scaling.rope_type: expected one of \"default\", \"linear\", \"dynamic\", \"yarn\" or "
                  "\"llama3\" (longrope is Phi-3's), got \"longrope\"");
  ExpectHfInvalid(Set(kMinLlama, "model_type", "\"qwen3\""),
                  "config.num_key_value_heads: expected a divisor of num_attention_heads (4): absent, it is qwen3's "
                  "default 32, got nothing");
  ExpectHfInvalid(Set(kMinLlama, "rope_scaling", "{\"rope_type\": \"linear\"}"),
                  "config.rope_scaling.factor: expected a finite number > 0, got nothing");
  ExpectHfInvalid(Set(kMinLlama, "rope_scaling", "{\"rope_type\": \"linear\", \"factor\": 2.0, \"beta_fast\": 8}"),
                  "config.rope_scaling.beta_fast: expected no such key (rope_type \"linear\" reads its own fields: "
                  "docs/families.md), got 8");
  ExpectHfInvalid(Set(kMinLlama, "num_key_value_heads", "3"),
                  "config.num_key_value_heads: expected a divisor of num_attention_heads (4), got 3");
  ExpectHfInvalid(Set(kMinLlama, "head_dim", "33"), "config.head_dim: expected an even number (RoPE pairs), got 33");
  ExpectHfInvalid(Set(kMinLlama, "num_attention_heads", "3"),
                  "config.head_dim: expected a number, or hidden_size / num_attention_heads an even integer (128 / 3), "
                  "got nothing");
  ExpectHfInvalid(Set(Set(Set(kMinLlama, "model_type", "\"qwen2\""), "num_key_value_heads", "2"), "use_sliding_window", "1"),
                  "config.use_sliding_window: expected a boolean, got 1");
  ExpectHfInvalid(Set(kMinLlama, "sliding_window", "4"),
                  "config.sliding_window: expected null (\"llama\" has no sliding-window layers), got 4");
  ExpectHfInvalid(Set(kMinLlama, "final_logit_softcapping", "30.0"),
                  "config.final_logit_softcapping: expected null (\"llama\" has no soft-capping), got 30.0");
  ExpectHfInvalid(Set(kMinLlama, "vocab_size", "0"), "config.vocab_size: expected an integer in [1, 1000000], got 0");
  ExpectHfInvalid(Without(kMinLlama, "hidden_size"), "config.hidden_size: expected an integer in [1, 16384], got nothing");
  ExpectHfInvalid(Set(kMinLlama, "tie_word_embeddings", "1"), "config.tie_word_embeddings: expected a boolean, got 1");
  CausalLmConfig spec;
  EXPECT_EQ(ParseHf("[1]", &spec).message(),
            "config: expected a JSON object (a Hugging Face config.json), got an array of 1 element");
  EXPECT_EQ(ParseHf("{", &spec).code(), Code::kInvalidArgument);
}

void ExpectHfOk(const Members& ms, CausalLmConfig* out = nullptr) {
  CausalLmConfig spec;
  const Status s = ParseHf(Json(ms), out ? out : &spec);
  EXPECT_TRUE(s.ok()) << Json(ms) << ": " << s.message();
}

// The RoPE base from either generation of config.json: transformers 4.x writes rope_theta, 5.x only
// rope_parameters.rope_theta (issue 28: it was ignored, and every 5.x save of a model whose base is not
// 10 000 gave wrong logits). Both may be given when they agree.
TEST(CausalLmConfigTest, CausalLmRopeBaseFromEitherGeneration) {
  CausalLmConfig l;
  ExpectHfOk(Set(kMinLlama, "rope_theta", "500000.0"), &l);
  EXPECT_EQ(l.rope.theta, 500000.0);
  ExpectHfOk(Set(kMinLlama, "rope_parameters", R"({"rope_theta": 500000.0, "rope_type": "default"})"), &l);
  EXPECT_EQ(l.rope.theta, 500000.0);
  ExpectHfOk(Set(kMinLlama, "rope_parameters", R"({"type": "default", "rope_theta": 1e6, "partial_rotary_factor": 1.0})"), &l);
  EXPECT_EQ(l.rope.theta, 1e6);
  ExpectHfOk(Set(Set(kMinLlama, "rope_theta", "100000"), "rope_parameters", R"({"rope_type": "default", "rope_theta": 1e5})"), &l);
  EXPECT_EQ(l.rope.theta, 1e5);
  ExpectHfOk(Set(kMinLlama, "rope_parameters", R"({"rope_type": "default"})"), &l);
  EXPECT_EQ(l.rope.theta, 10000.0);
  ExpectHfOk(Set(kMinLlama, "rope_parameters", "null"), &l);
  EXPECT_EQ(l.rope.theta, 10000.0);
  ExpectHfInvalid(Set(Set(kMinLlama, "rope_theta", "10000.0"), "rope_parameters", R"({"rope_type": "default", "rope_theta": 500000.0})"),
                  "config.rope_parameters.rope_theta: expected the same base as rope_theta (10000.0) when both are given, "
                  "got 500000.0");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "default", "rope_theta": 0})"),
                  "config.rope_parameters.rope_theta: expected a finite number > 0, got 0");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "default", "rope_theta": -10000})"),
                  "config.rope_parameters.rope_theta: expected a finite number > 0, got -10000");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "default", "rope_theta": "1e6"})"),
                  "config.rope_parameters.rope_theta: expected a finite number > 0, got \"1e6\"");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0})"),
                  "config.rope_parameters.low_freq_factor: expected a finite number > 0, got nothing");
  ExpectHfOk(Set(kMinLlama, "rope_parameters", R"({"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0,
      "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})"), &l);
  EXPECT_EQ(l.rope.type, "llama3");
  EXPECT_EQ(l.rope.factor, 32.0);
  EXPECT_EQ(l.rope.original_max, 8192);
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "llama3", "rope_theta": 500000.0, "factor": 32.0,
      "low_freq_factor": 4.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192})"),
                  "config.rope_parameters.high_freq_factor: expected a number > low_freq_factor (4), got 4.0");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_theta": 500000.0, "factor": 8.0})"),
                  "config.rope_parameters.factor: expected no such key (rope_type \"default\" reads rope_theta only), "
                  "got 8.0");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_type": "default", "partial_rotary_factor": 0.5})"),
                  "config.rope_parameters.partial_rotary_factor: expected 1 (RoPE on every dim: only phi3 rotates part "
                  "of a head), got 0.5");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", "\"default\""),
                  "config.rope_parameters: expected null or an object, got \"default\"");
  ExpectHfInvalid(Set(kMinLlama, "rope_theta", "0"), "config.rope_theta: expected a finite number > 0, got 0");
}

// Each family from its config.json in both generations: the features its modelling code has, the layer types
// (4.x's patterns and flags, 5.x's layer_types), the second RoPE of Gemma 3, SmolLM3's layers without RoPE.
TEST(CausalLmConfigTest, FamiliesReadTheirFeatures) {
  CausalLmConfig c;
  const Members gemma = Set(Set(Set(kMinLlama, "model_type", "\"gemma3_text\""), "num_hidden_layers", "7"),
                            "sliding_window", "16");
  ExpectHfOk(gemma, &c);  // 4.x: sliding_window_pattern 6 by default; rope_local_base_freq 10000
  EXPECT_TRUE(c.qk_norm && c.norm_unit_offset && c.sandwich && c.tied);
  EXPECT_EQ(c.act, LmActivation::kGeluTanh);
  EXPECT_EQ(c.head_dim, 256);
  EXPECT_EQ(c.embed_scale, std::sqrt(128.0));
  EXPECT_EQ(c.query_scale, std::pow(256.0, -0.5));
  EXPECT_EQ(c.layer_sliding, (std::vector<uint8_t>{1, 1, 1, 1, 1, 0, 1}));
  EXPECT_EQ(c.sliding_window, 16);
  EXPECT_TRUE(c.has_local_rope);
  EXPECT_EQ(c.rope.theta, 1e6);
  EXPECT_EQ(c.rope_local.theta, 10000.0);
  // 5.x: layer_types and one rope_parameters per layer type.
  ExpectHfOk(Set(Set(gemma, "layer_types", R"(["full_attention", "sliding_attention", "full_attention", "sliding_attention",
      "full_attention", "sliding_attention", "full_attention"])"), "rope_parameters", R"({"full_attention": {"rope_type":
      "linear", "factor": 8.0, "rope_theta": 1000000.0}, "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})"), &c);
  EXPECT_EQ(c.layer_sliding, (std::vector<uint8_t>{0, 1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(c.rope.type, "linear");
  EXPECT_EQ(c.rope.factor, 8.0);
  EXPECT_EQ(c.rope_local.type, "default");
  ExpectHfInvalid(Set(gemma, "layer_types", R"(["full_attention"])"),
                  "config.layer_types: expected a list of num_hidden_layers (7) entries, got an array of 1 element");
  ExpectHfInvalid(Set(gemma, "final_logit_softcapping", "-1"),
                  "config.final_logit_softcapping: expected null or a number > 0, got -1");
  ExpectHfInvalid(Set(gemma, "attn_logit_softcapping", "50.0"),
                  "config.attn_logit_softcapping: expected null (transformers' Gemma 3 does not soft-cap its attention "
                  "scores), got 50.0");
  // EmbeddingGemma: bidirectional, the stored window halved as Gemma3TextConfig does (16 // 2 + 1); null is false.
  ExpectHfOk(Set(gemma, "use_bidirectional_attention", "true"), &c);
  EXPECT_TRUE(c.bidirectional);
  EXPECT_EQ(c.sliding_window, 9);
  ExpectHfOk(Set(gemma, "use_bidirectional_attention", "null"), &c);
  EXPECT_FALSE(c.bidirectional);
  EXPECT_EQ(c.sliding_window, 16);
  ExpectHfInvalid(Set(gemma, "use_bidirectional_attention", "1"),
                  "config.use_bidirectional_attention: expected a boolean, got 1");
  ExpectHfInvalid(Set(gemma, "rope_parameters", R"({"rope_type": "default", "rope_theta": 10000.0})"),
                  "config.rope_parameters: expected an object per layer type ({\"full_attention\": {…}, "
                  "\"sliding_attention\": {…}}): Gemma 3's layers have two RoPEs, got an object with 2 keys");
  ExpectHfInvalid(Set(Set(gemma, "sliding_window_pattern", "2"), "layer_types", R"(["full_attention", "sliding_attention",
      "full_attention", "sliding_attention", "full_attention", "sliding_attention", "full_attention"])"),
                  "config.layer_types: expected the layers of sliding_window_pattern 2 when both are given "
                  "(transformers 4.50-4.52 read only the pattern), got an array of 7 elements");
  // Qwen3: q/k norms, head_dim 128 by default; use_sliding_window refused (transformers' generations disagree).
  const Members qwen3 = Set(Set(kMinLlama, "model_type", "\"qwen3\""), "num_key_value_heads", "2");
  ExpectHfOk(qwen3, &c);
  EXPECT_TRUE(c.qk_norm && !c.norm_unit_offset && !c.qkv_bias);
  EXPECT_EQ(c.head_dim, 128);
  EXPECT_TRUE(c.layer_sliding.empty());
  ExpectHfInvalid(Set(qwen3, "use_sliding_window", "true"),
                  "config.use_sliding_window: expected false (transformers 4.5x windowed every layer, 5.x only those "
                  "from max_window_layers: the generations disagree), got true");
  ExpectHfInvalid(Set(qwen3, "mlp_bias", "true"), "config.mlp_bias: expected false (\"qwen3\" has no MLP biases), got true");
  // Mistral: a window on every layer (4096 when absent, as MistralConfig; none when null); no layer_types.
  const Members mistral = Set(Set(kMinLlama, "model_type", "\"mistral\""), "num_key_value_heads", "2");
  ExpectHfOk(mistral, &c);
  EXPECT_EQ(c.layer_sliding, (std::vector<uint8_t>{1, 1, 1, 1}));
  EXPECT_EQ(c.sliding_window, 4096);
  ExpectHfOk(Set(mistral, "sliding_window", "null"), &c);
  EXPECT_TRUE(c.layer_sliding.empty());
  ExpectHfInvalid(Set(mistral, "sliding_window", "0"),
                  "config.sliding_window: expected an integer in [1, 2147483647], got 0");
  ExpectHfInvalid(Set(mistral, "layer_types", R"(["full_attention", "full_attention", "full_attention", "full_attention"])"),
                  "config.layer_types: expected absent (MistralModel does not read it; per-layer windows are model_type "
                  "\"ministral\"), got an array of 4 elements");
  ExpectHfInvalid(Set(mistral, "attention_bias", "true"),
                  "config.attention_bias: expected false (\"mistral\" has no attention biases), got true");
  // Phi-3: fused projections, partial rotary, longrope with the config's own original_max_position_embeddings.
  const std::string factors = "[1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]";  // head_dim 32 · 0.5 = 16 dims: 8 pairs
  const Members phi3 = Set(Set(Set(Set(kMinLlama, "model_type", "\"phi3\""), "partial_rotary_factor", "0.5"),
                               "original_max_position_embeddings", "64"),
                           "rope_scaling", "{\"type\": \"longrope\", \"short_factor\": " + factors + ", \"long_factor\": " + factors + "}");
  ExpectHfOk(phi3, &c);
  EXPECT_TRUE(c.fused_qkv && c.fused_gate_up);
  EXPECT_EQ(c.rope.type, "longrope");
  EXPECT_EQ(c.rope.original_max, 64);
  EXPECT_EQ(c.partial_rotary_factor, 0.5);
  ExpectHfOk(Set(phi3, "rope_scaling", "{\"type\": \"su\", \"short_factor\": " + factors + ", \"long_factor\": " + factors + "}"), &c);
  EXPECT_EQ(c.rope.type, "longrope");  // Phi-3's older name
  ExpectHfInvalid(Set(phi3, "rope_scaling", "{\"type\": \"linear\", \"factor\": 2.0}"),
                  "config.rope_scaling.type: expected \"longrope\" (or its older names \"su\" and \"yarn\"): Phi-3 runs "
                  "no other scaled RoPE, got \"linear\"");
  ExpectHfInvalid(Set(phi3, "head_dim", "16"),
                  "config.head_dim: expected hidden_size / num_attention_heads (32): Phi-3 derives it, got 16");
  ExpectHfInvalid(Set(phi3, "partial_rotary_factor", "0.25"),
                  "config.rope_scaling.short_factor: expected a list of rotary dims / 2 = 4 numbers, got an array of 8 "
                  "elements");
  // SmolLM3: every 4th layer without RoPE by default, or as no_rope_layers says.
  const Members smol = Set(Set(kMinLlama, "model_type", "\"smollm3\""), "num_key_value_heads", "2");
  ExpectHfOk(Set(smol, "num_hidden_layers", "8"), &c);
  EXPECT_EQ(c.layer_rope, (std::vector<uint8_t>{1, 1, 1, 0, 1, 1, 1, 0}));
  EXPECT_TRUE(c.tied);
  ExpectHfOk(Set(smol, "no_rope_layers", "[0, 1, 1, 0]"), &c);
  EXPECT_EQ(c.layer_rope, (std::vector<uint8_t>{0, 1, 1, 0}));
  EXPECT_TRUE(c.layer_sliding.empty());
  // With use_sliding_window, its layers without RoPE slide.
  ExpectHfOk(Set(Set(Set(smol, "no_rope_layers", "[0, 1, 1, 0]"), "use_sliding_window", "true"), "sliding_window", "8"), &c);
  EXPECT_EQ(c.layer_sliding, (std::vector<uint8_t>{1, 0, 0, 1}));
  EXPECT_EQ(c.sliding_window, 8);
  ExpectHfInvalid(Set(smol, "no_rope_layers", "[0, 1, 2, 0]"), "config.no_rope_layers[2]: expected 0 (no RoPE) or 1 (RoPE), got 2");
}

// bos/eos/pad ids: integers in [0, vocab_size) or null; eos_token_id also a list. Tested at both edges of the
// range (the last valid id and the first invalid one), and with what is not an id at all.
TEST(CausalLmConfigTest, CausalLmTokenIdsAreIdsOfTheVocabulary) {
  for (const char* key : {"bos_token_id", "eos_token_id", "pad_token_id"}) {
    SCOPED_TRACE(key);
    const std::string field = std::string("config.") + key + ": expected an id in [0, 97] (vocab_size 98) or null" +
                              (std::string(key) == "eos_token_id" ? ", or a list of ids" : "") + ", got ";
    ExpectHfOk(Set(kMinLlama, key, "null"));
    ExpectHfOk(Set(kMinLlama, key, "0"));
    ExpectHfOk(Set(kMinLlama, key, "97"));
    ExpectHfOk(Set(kMinLlama, key, "97.0"));
    ExpectHfInvalid(Set(kMinLlama, key, "98"), field + "98");
    ExpectHfInvalid(Set(kMinLlama, key, "-1"), field + "-1");
    ExpectHfInvalid(Set(kMinLlama, key, "\"two\""), field + "\"two\"");
    ExpectHfInvalid(Set(kMinLlama, key, "1.5"), field + "1.5");
    ExpectHfInvalid(Set(kMinLlama, key, "true"), field + "true");
    ExpectHfInvalid(Set(kMinLlama, key, "1e300"), field + "1e300");
  }
  ExpectHfOk(Set(kMinLlama, "eos_token_id", "[0, 97]"));
  ExpectHfOk(Set(kMinLlama, "eos_token_id", "[]"));
  ExpectHfInvalid(Set(kMinLlama, "eos_token_id", "[0, 98]"), "config.eos_token_id[1]: expected an id in [0, 97] (vocab_size 98), got 98");
  ExpectHfInvalid(Set(kMinLlama, "eos_token_id", "[\"two\"]"), "config.eos_token_id[0]: expected an id in [0, 97] (vocab_size 98), got \"two\"");
  ExpectHfInvalid(Set(kMinLlama, "bos_token_id", "[1]"),
                  "config.bos_token_id: expected an id in [0, 97] (vocab_size 98) or null, got an array of 1 element");
}

// A key given twice is read one way by JSON.parse (the last) and another by this reader (the first), so it is
// refused, at any depth (issue 28: vocab_size 256 then 100 gave 256-wide logits and a vocabSize of 100).
TEST(CausalLmConfigTest, DuplicateKeysAreRefusedAtAnyDepth) {
  ExpectHfInvalid(Set(kMinLlama, "vocab_size\": 256, \"vocab_size", "100"),
                  "config: expected unique keys, got \"vocab_size\" more than once");
  ExpectHfInvalid(Set(kMinLlama, "rope_parameters", R"({"rope_theta": 1e6, "rope_theta": 1e4})"),
                  "config.rope_parameters: expected unique keys, got \"rope_theta\" more than once");
  ExpectHfInvalid(Set(kMinLlama, "task_specific_params", R"({"a": [{"b": 1, "b": 2}]})"),
                  "config.task_specific_params.a[0]: expected unique keys, got \"b\" more than once");
  const std::string file = "{\"model\": \"causal_lm\", \"hf_config\": " + Json(Set(kMinLlama, "vocab_size\": 256, \"vocab_size", "100")) + "}";
  ExpectInvalid(file, "", "attnwasm.config.hf_config: expected unique keys, got \"vocab_size\" more than once");
}

// Every range the config reader applies, at its edges: the last valid value passes, the first invalid one is
// refused naming the key (a hand-made mutation run found range checks whose tests only used far-off values).
TEST(CausalLmConfigTest, CausalLmConfigRangesAtTheirEdges) {
  const Members base = Set(kMinLlama, "head_dim", "32");  // so that hidden_size and the heads vary alone
  struct Edge { const char* key; const char* ok; const char* bad; const char* expected; };
  const Edge edges[] = {
      {"vocab_size", "1", "0", "an integer in [1, 1000000]"},
      {"vocab_size", "1000000", "1000001", "an integer in [1, 1000000]"},
      {"hidden_size", "1", "0", "an integer in [1, 16384]"},
      {"hidden_size", "16384", "16385", "an integer in [1, 16384]"},
      {"intermediate_size", "1", "0", "an integer in [1, 65536]"},
      {"intermediate_size", "65536", "65537", "an integer in [1, 65536]"},
      {"num_hidden_layers", "1", "0", "an integer in [1, 1000]"},
      {"num_hidden_layers", "1000", "1001", "an integer in [1, 1000]"},
      {"num_attention_heads", "1", "0", "an integer in [1, 128]"},
      {"num_attention_heads", "128", "129", "an integer in [1, 128]"},
      {"num_key_value_heads", "4", "5", "a divisor of num_attention_heads (4)"},
      {"num_key_value_heads", "1", "0", "a divisor of num_attention_heads (4)"},
      {"head_dim", "2", "1", "an integer in [2, 1024]"},
      {"head_dim", "1024", "1025", "an integer in [2, 1024]"},
      {"head_dim", "1024", "1026", "an integer in [2, 1024]"},
      {"max_position_embeddings", "1", "0", "an integer in [1, 1048576]"},
      {"max_position_embeddings", "1048576", "1048577", "an integer in [1, 1048576]"},
      {"rms_norm_eps", "1e-300", "0", "a finite number > 0"},
      {"rope_theta", "1e-300", "0", "a finite number > 0"},
  };
  for (const Edge& e : edges) {
    SCOPED_TRACE(std::string(e.key) + " " + e.ok + " / " + e.bad);
    // num_attention_heads may not exceed hidden_size: one head for the smallest width.
    const Members b = std::string(e.key) == "hidden_size" ? Set(base, "num_attention_heads", "1") : base;
    ExpectHfOk(Set(b, e.key, e.ok));
    ExpectHfInvalid(Set(b, e.key, e.bad), std::string("config.") + e.key + ": expected " + e.expected + ", got " + e.bad);
  }
}

// A file's config: the HF config under hf_config, an optional "chars" tokenizer and attention window.
std::string LmFile(const std::string& tokenizer, const std::string& window = "") {
  return "{\"model\": \"causal_lm\", \"hf_config\": " +
         Json(Set(Set(kMinLlama, "vocab_size", "4"), "tie_word_embeddings", "true")) +
         (tokenizer.empty() ? "" : ", \"tokenizer\": " + tokenizer) + (window.empty() ? "" : ", \"attentionWindow\": " + window) +
         "}";
}

TEST(CausalLmConfigTest, CausalLmFileConfig) {
  const std::string tok = R"({"type": "chars", "vocab": ["<eos>", "a", "b", "\u00e9"], "special": [0], "bos": 0, "eos": 0, "unknown": "refuse"})";
  ExpectValid(LmFile(""), "causal_lm");
  ExpectValid(LmFile(tok, "128"), "");
  io::JsonValue root;
  ASSERT_TRUE(io::ParseJson(LmFile(tok, "128"), &root).ok());
  CausalLmConfig s;
  ASSERT_TRUE(ReadCausalLmFile(io::FieldReader(root, "attnwasm.config"), &s).ok());
  EXPECT_EQ(s.attention_window, 128);
  EXPECT_EQ(s.vocab, 4);
  EXPECT_TRUE(s.tied);
  ExpectInvalid(LmFile(tok), "vit", "attnwasm.config: expected a \"vit\" model, got \"causal_lm\"");
  ExpectInvalid("{\"model\": \"causal_lm\"}", "", "attnwasm.config.hf_config: expected a Hugging Face config.json object, got nothing");
  ExpectInvalid(LmFile("", "0"), "", "attnwasm.config.attentionWindow: expected an integer in [1, 2147483647], got 0");
  ExpectInvalid("{\"model\": \"causal_lm\", \"hf_config\": " + Json(Set(kMinLlama, "hidden_act", "\"relu\"")) + "}", "",
                "attnwasm.config.hf_config.hidden_act: expected \"silu\", got \"relu\"");
  ExpectInvalid(LmFile(R"({"type": "bpe"})"), "", "attnwasm.config.tokenizer.type: expected \"chars\", got \"bpe\"");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["a", "b"]})"), "",
                "attnwasm.config.tokenizer.vocab: expected an array of vocab_size (4) strings, got an array of 2 elements");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["<eos>", "a", "b", "c"]})"), "",
                "attnwasm.config.tokenizer.vocab[0]: expected one character (an id not in special), got \"<eos>\"");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["x", "a", "b", "a"]})"), "",
                "attnwasm.config.tokenizer.vocab[3]: expected an entry listed once, got \"a\" again");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["<eos>", "a", "b", "c"], "special": [0, 4]})"), "",
                "attnwasm.config.tokenizer.special[1]: expected an id in [0, 3], listed once, got 4");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["<eos>", "a", "b", "c"], "special": [0], "eos": 1})"), "",
                "attnwasm.config.tokenizer.eos: expected null or an id listed in special, got 1");
  ExpectInvalid(LmFile(R"({"type": "chars", "vocab": ["<eos>", "a", "b", "c"], "special": [0], "unknown": "drop"})"), "",
                "attnwasm.config.tokenizer.unknown: expected \"refuse\" or \"skip\", got \"drop\"");
}

}  // namespace
}  // namespace aw
