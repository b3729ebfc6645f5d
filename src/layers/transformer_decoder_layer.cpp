#include "layers/transformer_decoder_layer.h"

#include <algorithm>

namespace aw {

Status TransformerDecoderLayer::Init(const TransformerLayerConfig& c, Rng& rng) {
  AW_RETURN_IF_ERROR(CheckLayerConfig(c));
  cfg_ = c;
  MhaConfig mc;
  mc.embed_dim = c.d_model; mc.num_heads = c.nhead; mc.dropout = c.dropout; mc.bias = c.bias;
  mc.batch_first = c.batch_first;
  AW_RETURN_IF_ERROR(self_attn_.Init(mc, rng));
  AW_RETURN_IF_ERROR(multihead_attn_.Init(mc, rng));
  AW_RETURN_IF_ERROR(linear1_.Init(c.d_model, c.dim_feedforward, c.bias, rng));
  AW_RETURN_IF_ERROR(linear2_.Init(c.dim_feedforward, c.d_model, c.bias, rng));
  AW_RETURN_IF_ERROR(norm1_.Init(c.d_model, c.layer_norm_eps, true, c.bias));
  AW_RETURN_IF_ERROR(norm2_.Init(c.d_model, c.layer_norm_eps, true, c.bias));
  AW_RETURN_IF_ERROR(norm3_.Init(c.d_model, c.layer_norm_eps, true, c.bias));
  AddChild("self_attn", &self_attn_);
  AddChild("multihead_attn", &multihead_attn_);
  AddChild("linear1", &linear1_);
  AddChild("linear2", &linear2_);
  AddChild("norm1", &norm1_);
  AddChild("norm2", &norm2_);
  AddChild("norm3", &norm3_);
  return Status::OK();
}

Status TransformerDecoderLayer::Forward(const TensorView& tgt, const TensorView& memory, const DecoderLayerForward& o,
                                        Buffer* out, Shape* out_shape) {
  AW_RETURN_IF_ERROR(CheckSequence(memory, cfg_.d_model, cfg_.batch_first, "memory"));
  AW_RETURN_IF_ERROR(BeginSequence(tgt, cfg_.d_model, cfg_.batch_first, "tgt", out, out_shape));
  return Run(out->data(), tgt.shape, memory, o);
}

Status TransformerDecoderLayer::Run(float* x, const Shape& shape, const TensorView& memory,
                                    const DecoderLayerForward& o) {
  const size_t E = size_t(cfg_.d_model);
  const size_t rows = size_t(NumelChecked(shape)) / E;
  MhaForwardOptions so;  // self-attention
  so.attn_mask = o.tgt_mask;
  so.key_padding_mask = o.tgt_key_padding_mask;
  so.is_causal = o.tgt_is_causal;
  so.need_weights = false;
  so.names.query = so.names.key = so.names.value = "tgt";
  so.names.attn_mask = "tgtMask";
  so.names.key_padding_mask = "tgtKeyPaddingMask";
  so.names.is_causal = "tgtIsCausal";
  MhaForwardOptions co;  // cross-attention
  co.attn_mask = o.memory_mask;
  co.key_padding_mask = o.memory_key_padding_mask;
  co.is_causal = o.memory_is_causal;
  co.need_weights = false;
  co.names.query = "tgt";
  co.names.key = co.names.value = "memory";
  co.names.attn_mask = "memoryMask";
  co.names.key_padding_mask = "memoryKeyPaddingMask";
  co.names.is_causal = "memoryIsCausal";
  AW_RETURN_IF_ERROR(f_.Resize(rows * E, "feed-forward output"));
  if (cfg_.norm_first) {
    AW_RETURN_IF_ERROR(t_.Resize(rows * E, "normalised input"));
    const TensorView t{t_.data(), shape};
    norm1_.Apply(rows, x, E, t_.data(), E);
    AW_RETURN_IF_ERROR(self_attn_.Forward(t, t, t, so, &sa_));
    kernels::f32_add(rows * E, x, sa_.output.data());
    norm2_.Apply(rows, x, E, t_.data(), E);
    AW_RETURN_IF_ERROR(multihead_attn_.Forward(t, memory, memory, co, &sa_));
    kernels::f32_add(rows * E, x, sa_.output.data());
    norm3_.Apply(rows, x, E, t_.data(), E);
    AW_RETURN_IF_ERROR(FeedForward(linear1_, linear2_, cfg_.activation, rows, t_.data(), f_.data(), &h_));
    kernels::f32_add(rows * E, x, f_.data());
  } else {
    const TensorView xv{x, shape};
    AW_RETURN_IF_ERROR(self_attn_.Forward(xv, xv, xv, so, &sa_));
    kernels::f32_add(rows * E, x, sa_.output.data());
    norm1_.Apply(rows, x, E, x, E);
    AW_RETURN_IF_ERROR(multihead_attn_.Forward(xv, memory, memory, co, &sa_));
    kernels::f32_add(rows * E, x, sa_.output.data());
    norm2_.Apply(rows, x, E, x, E);
    AW_RETURN_IF_ERROR(FeedForward(linear1_, linear2_, cfg_.activation, rows, x, f_.data(), &h_));
    kernels::f32_add(rows * E, x, f_.data());
    norm3_.Apply(rows, x, E, x, E);
  }
  return Status::OK();
}

Status TransformerDecoderLayer::BeginSteps(const float* memory, size_t S, size_t max_beams, size_t max_len,
                                           StepCache* c) const {
  const size_t E = size_t(cfg_.d_model);
  c->max_beams = max_beams; c->max_len = max_len; c->S = S;
  AW_RETURN_IF_ERROR(c->k_self.Resize(max_beams * max_len * E, "self-attention key cache"));
  AW_RETURN_IF_ERROR(c->v_self.Resize(max_beams * max_len * E, "self-attention value cache"));
  AW_RETURN_IF_ERROR(c->k_mem.Resize(S * E, "cross-attention keys"));
  AW_RETURN_IF_ERROR(c->v_mem.Resize(S * E, "cross-attention values"));
  multihead_attn_.Project(1, S, memory, E, c->k_mem.data(), E);
  multihead_attn_.Project(2, S, memory, E, c->v_mem.data(), E);
  return Status::OK();
}

Status TransformerDecoderLayer::Step(float* x, size_t B, size_t t, StepCache* c, float* cross_weights) {
  const size_t E = size_t(cfg_.d_model);
  const size_t ld = c->max_len * E;  // one sequence's cache rows
  AW_RETURN_IF_ERROR(q_.Resize(B * E, "step queries"));
  AW_RETURN_IF_ERROR(a_.Resize(B * E, "step attention"));
  AW_RETURN_IF_ERROR(t_.Resize(B * E, "step input"));
  AW_RETURN_IF_ERROR(f_.Resize(B * E, "step output"));
  float* q = q_.data();
  float* a = a_.data();
  float* tmp = f_.data();
  // Self-attention over positions 0..t (the cache is causal by construction).
  auto self_attend = [&](const float* in) {
    self_attn_.Project(0, B, in, E, q, E);
    self_attn_.Project(1, B, in, E, c->k_self.data() + t * E, ld);
    self_attn_.Project(2, B, in, E, c->v_self.data() + t * E, ld);
    AW_RETURN_IF_ERROR(self_attn_.AttendSteps(B, q, c->k_self.data(), c->v_self.data(), ld, t + 1, a, nullptr));
    self_attn_.OutProject(B, a, tmp);
    return Status::OK();
  };
  auto cross_attend = [&](const float* in) {
    multihead_attn_.Project(0, B, in, E, q, E);
    AW_RETURN_IF_ERROR(multihead_attn_.AttendSteps(B, q, c->k_mem.data(), c->v_mem.data(), 0, c->S, a, cross_weights));
    multihead_attn_.OutProject(B, a, tmp);
    return Status::OK();
  };
  float* n = t_.data();
  if (cfg_.norm_first) {
    norm1_.Apply(B, x, E, n, E);
    AW_RETURN_IF_ERROR(self_attend(n));
    kernels::f32_add(B * E, x, tmp);
    norm2_.Apply(B, x, E, n, E);
    AW_RETURN_IF_ERROR(cross_attend(n));
    kernels::f32_add(B * E, x, tmp);
    norm3_.Apply(B, x, E, n, E);
    AW_RETURN_IF_ERROR(FeedForward(linear1_, linear2_, cfg_.activation, B, n, tmp, &h_));
    kernels::f32_add(B * E, x, tmp);
  } else {
    AW_RETURN_IF_ERROR(self_attend(x));
    kernels::f32_add(B * E, x, tmp);
    norm1_.Apply(B, x, E, x, E);
    AW_RETURN_IF_ERROR(cross_attend(x));
    kernels::f32_add(B * E, x, tmp);
    norm2_.Apply(B, x, E, x, E);
    AW_RETURN_IF_ERROR(FeedForward(linear1_, linear2_, cfg_.activation, B, x, tmp, &h_));
    kernels::f32_add(B * E, x, tmp);
    norm3_.Apply(B, x, E, x, E);
  }
  return Status::OK();
}

}  // namespace aw
