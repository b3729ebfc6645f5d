// The encoder family's config (models/encoder.h): a Hugging Face config.json
// of BertModel, RobertaModel or XLMRobertaModel (model_type "bert",
// "roberta", "xlm-roberta"), as transformers 4.x and 5.x write it, HF's
// defaults for absent keys. This reader refuses by key what the family
// cannot run exactly (another activation, relative position embeddings, a
// decoder, cross-attention) and every other model_type, naming the ones it
// runs; CheckEncoderConfig holds the range rules, worded from the same
// source. docs/embeddings.md lists the fields; the registry row is
// models/encoder_family.cpp.
#pragma once
#include <cstdint>
#include <string>

#include "core/status.h"
#include "io/json.h"
#include "io/json_fields.h"

namespace aw {

// The task head a checkpoint carries, from config.json's architectures[0] (transformers' class):
//   kSequence  *ForSequenceClassification: logits = classifier(tanh(dense(x[:, 0]))), dense = BERT's
//              pooler.dense, or RoBERTa's / XLM-R's classifier.dense (RobertaClassificationHead; the
//              classifier is then classifier.out_proj); DistilBERT: classifier(relu(pre_classifier(x[:, 0])))
//   kToken     *ForTokenClassification: logits = classifier(x) at every token
// Other classes (the bare model, masked-LM, pretraining) have none: their heads are skipped as HF skips them.
//   kImage     *ForImageClassification (the vision models): classifier(x[:, 0]) (ViT, DeiT); DeiT's WithTeacher
//              (cls_classifier(x[:, 0]) + distillation_classifier(x[:, 1])) / 2; DINOv2's classifier(cat(x[:, 0],
//              mean(x[:, 1:])))
enum class EncoderHead { kNone = 0, kSequence = 1, kToken = 2, kImage = 3 };

// The feed-forward's activation (config.json hidden_act): gelu (erf), gelu_pytorch_tanh, quick_gelu
// (x · sigmoid(1.702 x), CLIP's).
enum class EncoderAct { kGelu = 0, kGeluTanh = 1, kQuickGelu = 2 };

// A tower of a two-tower model (models/clip_model.h): CLIP's and SigLIP's text and vision transformers.
//   kClipText     token + position embeddings (no LayerNorm), pre-norm layers under a causal mask,
//                 final_layer_norm; pooled: the row of the end-of-text token
//   kClipVision   [class_embedding; patches (conv, no bias)] + position_embedding, pre_layrnorm, pre-norm layers;
//                 pooled: post_layernorm(x[:, 0]) (last_hidden_state is before post_layernorm)
//   kSiglipText   as kClipText without the causal mask; pooled: head(x[:, -1]) after final_layer_norm
//   kSiglipVision patches (conv with bias) + position_embedding (no class token), pre-norm layers,
//                 post_layernorm; pooled: the attention-pooling head (a probe through nn.MultiheadAttention,
//                 LayerNorm, MLP with a residual)
enum class Tower { kNone = 0, kClipText = 1, kClipVision = 2, kSiglipText = 3, kSiglipVision = 4 };

struct EncoderConfig {
  std::string model_type;  // "bert", "roberta", "xlm-roberta"
  // Integers the reader could not read as integers are io::kUnreadInt: the rules refuse them by name.
  int64_t vocab = 0, hidden = 0, layers = 0, heads = 0, intermediate = 0;
  int64_t max_positions = 512;  // max_position_embeddings: the position table's rows
  int64_t type_vocab = 2;       // type_vocab_size (RoBERTa's: 1)
  int64_t pad_id = 0;           // pad_token_id; RoBERTa numbers positions from pad_token_id + 1
  double eps = 1e-12;           // layer_norm_eps
  bool roberta_positions = false;
  bool distil = false;          // DistilBERT: its own key names, no token types, a ReLU pre_classifier head
  bool pooler = false;          // the checkpoint has pooler.dense (the loader sets it from the file)
  EncoderHead head = EncoderHead::kNone;  // config.json architectures[0]'s task head
  int64_t labels = 0;           // the head's outputs: len(id2label), else num_labels, else 2 (HF's default)
  // The vision encoders (model_type vit, deit, dinov2; models/vision_config.cpp): pixels in through the patch
  // embedding, the class token (DeiT: and its distillation token) before the patches, learned positions, pre-norm
  // layers (layernorm_before / layernorm_after, DINOv2's norm1 / norm2), a final LayerNorm. No vocabulary.
  bool vision = false;
  int64_t image_size = 0, patch_size = 0, channels = 3;
  int64_t extra_tokens = 1;     // tokens before the patches: the class token, DeiT's distillation token
  bool layer_scale = false;     // DINOv2: each sublayer's output times layer_scale{1,2}.lambda1 before the residual
  bool dinov2 = false;          // DINOv2: positions resized bicubically to any grid (interpolate_pos_encoding),
                                // pooler_output x[:, 0], the classifier on cat(x[:, 0], mean(x[:, 1:]))
  bool teacher = false;         // DeiTForImageClassificationWithTeacher's two classifiers
  bool swiglu = false;          // DINOv2's SwiGLU FFN (use_swiglu_ffn: the giant model's): weights_out(silu(x1) · x2),
                                // x1, x2 the halves of weights_in(x) (2 · intermediate wide); intermediate is its
                                // hidden_features, (int(int(hidden · mlp_ratio) · 2 / 3) + 7) / 8 · 8
  // The two-tower models' towers (Tower; models/clip_config.cpp): pre-norm layers, their activation, CLIP's causal
  // text mask, the end-of-text token CLIP's text tower pools at (eos_argmax: the old configs' argmax(input_ids),
  // eos_token_id 2; else the first eos_id).
  Tower tower = Tower::kNone;
  bool pre_norm = false;        // vision encoders and towers: x = x + f(norm(x))
  bool causal = false;
  EncoderAct act = EncoderAct::kGelu;
  int64_t eos_id = 0;
  bool eos_argmax = false;
};

// The feed-forward's first product's width: intermediate, twice it for a SwiGLU FFN (both halves).
inline int64_t FfWidth(const EncoderConfig& c) { return c.swiglu ? 2 * c.intermediate : c.intermediate; }

// Tokens one sequence may hold: max_position_embeddings (RoBERTa's positions start at pad_token_id + 1: less
// pad_token_id + 1).
inline int64_t EncoderMaxTokens(const EncoderConfig& c) {
  return c.roberta_positions ? c.max_positions - c.pad_id - 1 : c.max_positions;
}

// The vision family's config.json (vit, deit, dinov2): the kinds refused by key, the fields, HF's defaults; the
// range rules in CheckVisionConfig.
Status ReadVisionConfig(const io::JsonValue& hf, const std::string& root, EncoderConfig* out);
Status CheckVisionConfig(const EncoderConfig& c, const io::ConfigSource* src = nullptr);
std::string VisionConfigJson(const EncoderConfig& c);

// hidden_size, num_hidden_layers, num_attention_heads (a divisor of hidden_size): the rules every pixel or tower
// config shares (models/vision_config.cpp).
Status CheckLayerWidths(const io::ConfigRules& r, const EncoderConfig& c);
// A two-tower model's tower's range rules (models/clip_config.cpp).
Status CheckTowerConfig(const EncoderConfig& c, const io::ConfigSource* src = nullptr);

// The model_types the family reads: "bert", "roberta", "xlm-roberta" (null-terminated).
const char* const* EncoderModelTypes();
// Whether a config.json is one of this family's (its model_type is one of EncoderModelTypes()).
bool IsEncoderConfig(const io::JsonValue& hf);
Status ReadEncoderConfig(const io::JsonValue& hf, const std::string& root, EncoderConfig* out);
// The family's range rules (bounds in core/limits.h), worded from the config's source as the causal LM's are.
Status CheckEncoderConfig(const EncoderConfig& c, const io::ConfigSource* src = nullptr);
// The resolved config as JSON for the JS face (hiddenSize, maxPositions, …).
std::string EncoderConfigJson(const EncoderConfig& c);

}  // namespace aw
