#include "layers/transformer_decoder_layer.h"

#include <algorithm>

#include "core/workspace.h"
#include "layers/entry_pieces.h"

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

MhaForwardOptions TransformerDecoderLayer::SelfOptions(const DecoderLayerForward& o) const {
  MhaForwardOptions so;
  so.attn_mask = o.tgt_mask;
  so.key_padding_mask = o.tgt_key_padding_mask;
  so.is_causal = o.tgt_is_causal;
  so.causal = o.tgt_causal;
  so.need_weights = false;
  so.names.query = so.names.key = so.names.value = "tgt";
  so.names.attn_mask = "tgtMask";
  so.names.key_padding_mask = "tgtKeyPaddingMask";
  so.names.is_causal = "tgtIsCausal";
  return so;
}

MhaForwardOptions TransformerDecoderLayer::CrossOptions(const DecoderLayerForward& o) const {
  MhaForwardOptions co;
  co.attn_mask = o.memory_mask;
  co.key_padding_mask = o.memory_key_padding_mask;
  co.is_causal = o.memory_is_causal;
  co.need_weights = false;
  co.names.query = "tgt";
  co.names.key = co.names.value = "memory";
  co.names.attn_mask = "memoryMask";
  co.names.key_padding_mask = "memoryKeyPaddingMask";
  co.names.is_causal = "memoryIsCausal";
  return co;
}

Status TransformerDecoderLayer::Scratch(const Shape& shape, const TensorView& memory, const DecoderLayerForward& o,
                                        size_t* per_entry, size_t* fixed) const {
  static const float kAny = 0.0f;  // Check reads shapes and compares pointers only
  const TensorView v{&kAny, shape};
  MhaPlan sp, cp;
  AW_RETURN_IF_ERROR(self_attn_.Check(v, v, v, SelfOptions(o), &sp));
  AW_RETURN_IF_ERROR(multihead_attn_.Check(v, memory, memory, CrossOptions(o), &cp));
  const size_t L = size_t(sp.L), E = size_t(cfg_.d_model), F = size_t(cfg_.dim_feedforward);
  const size_t own = ((cfg_.norm_first ? 2 : 1) * L * E) * sizeof(float);
  *per_entry = own + std::max({self_attn_.ScratchPerEntry(sp), multihead_attn_.ScratchPerEntry(cp),
                               L * F * sizeof(float)});
  *fixed = std::max(self_attn_.ScratchFixed(sp), multihead_attn_.ScratchFixed(cp));
  return Status::OK();
}

Status TransformerDecoderLayer::Run(float* x, const Shape& shape, const TensorView& memory,
                                    const DecoderLayerForward& o) {
  const MhaForwardOptions so = SelfOptions(o), co = CrossOptions(o);
  size_t per_entry = 0, fixed = 0;
  AW_RETURN_IF_ERROR(Scratch(shape, memory, o, &per_entry, &fixed));  // checks memory and the masks too
  const SeqLayout l = LayoutOf(shape, cfg_.batch_first), lm = LayoutOf(memory.shape, cfg_.batch_first);
  const size_t gather = size_t(PieceFloats(l, 1) + PieceFloats(lm, 1)) * sizeof(float);
  size_t P = WorkPieceEntries(size_t(l.N), per_entry, fixed);
  if (P < size_t(l.N) && gather) P = WorkPieceEntries(size_t(l.N), per_entry + gather, fixed);
  if (P == size_t(l.N)) return RunPiece(x, shape, memory, so, co);
  const int64_t H = cfg_.nhead;
  for (int64_t n0 = 0; n0 < l.N; n0 += int64_t(P)) {
    const int64_t n = std::min(int64_t(P), l.N - n0);
    ScratchScope piece;
    float *px = nullptr, *pm = nullptr;
    AW_RETURN_IF_ERROR(TakePiece(x, l, n0, n, &piece, "layer piece", &px));
    AW_RETURN_IF_ERROR(TakePiece(memory.data, lm, n0, n, &piece, "memory piece", &pm));
    MhaForwardOptions pso = so, pco = co;
    pso.attn_mask = SliceAttnMask(so.attn_mask, H, n0, n);
    pso.key_padding_mask = SliceKeyPaddingMask(so.key_padding_mask, n0, n);
    pco.attn_mask = SliceAttnMask(co.attn_mask, H, n0, n);
    pco.key_padding_mask = SliceKeyPaddingMask(co.key_padding_mask, n0, n);
    AW_RETURN_IF_ERROR(RunPiece(px, PieceShape(shape, cfg_.batch_first, n),
                                TensorView{pm, PieceShape(memory.shape, cfg_.batch_first, n)}, pso, pco));
    PutPiece(px, l, n0, n, x);
  }
  return Status::OK();
}

Status TransformerDecoderLayer::RunPiece(float* x, const Shape& shape, const TensorView& memory,
                                         const MhaForwardOptions& so, const MhaForwardOptions& co) {
  const size_t E = size_t(cfg_.d_model), rows = ResidualBlocks::Rows(shape, E);
  ScratchScope scope;
  ResidualBlocks res;
  AW_RETURN_IF_ERROR(res.Begin(&scope, cfg_.norm_first, rows, E));
  AW_RETURN_IF_ERROR(res.Block(norm1_, x, [&](const float* in, float* out) {
    const TensorView v{in, shape};
    return self_attn_.ForwardInto(v, v, v, so, out, nullptr);
  }));
  AW_RETURN_IF_ERROR(res.Block(norm2_, x, [&](const float* in, float* out) {
    return multihead_attn_.ForwardInto(TensorView{in, shape}, memory, memory, co, out, nullptr);
  }));
  return res.Block(norm3_, x, [&](const float* in, float* out) {
    return FeedForward(linear1_, linear2_, cfg_.activation, rows, in, out);
  });
}

Status TransformerDecoderLayer::ProjectMemory(const float* memory, size_t S, CrossKv* c) const {
  const size_t E = size_t(cfg_.d_model);
  c->S = S;
  AW_RETURN_IF_ERROR(c->k.Resize(S * E, "cross-attention keys"));
  AW_RETURN_IF_ERROR(c->v.Resize(S * E, "cross-attention values"));
  multihead_attn_.Project(Proj::kK, S, memory, E, c->k.data(), E);
  multihead_attn_.Project(Proj::kV, S, memory, E, c->v.data(), E);
  return Status::OK();
}

Status TransformerDecoderLayer::Step(float* x, size_t B, KvCache* self, size_t l, const CrossKv& cross,
                                     float* cross_weights) {
  const size_t E = size_t(cfg_.d_model), t = self->len;
  const size_t ld = self->seq_stride();  // one sequence's cache rows
  ScratchScope scope;
  float *q = nullptr, *a = nullptr;
  AW_RETURN_IF_ERROR(scope.Take(B * E, "step queries", &q));
  AW_RETURN_IF_ERROR(scope.Take(B * E, "step attention", &a));
  ResidualBlocks res;
  AW_RETURN_IF_ERROR(res.Begin(&scope, cfg_.norm_first, B, E));
  // Self-attention over positions 0..t (the cache is causal by construction).
  AW_RETURN_IF_ERROR(res.Block(norm1_, x, [&](const float* in, float* out) {
    self_attn_.Project(Proj::kQ, B, in, E, q, E);
    self_attn_.Project(Proj::kK, B, in, E, self->keys(l, 0, t), ld);
    self_attn_.Project(Proj::kV, B, in, E, self->values(l, 0, t), ld);
    AW_RETURN_IF_ERROR(self_attn_.AttendSteps(B, q, self->keys(l, 0, 0), self->values(l, 0, 0), ld, t + 1, a, nullptr));
    self_attn_.OutProject(B, a, out);
    return Status::OK();
  }));
  AW_RETURN_IF_ERROR(res.Block(norm2_, x, [&](const float* in, float* out) {
    multihead_attn_.Project(Proj::kQ, B, in, E, q, E);
    AW_RETURN_IF_ERROR(multihead_attn_.AttendSteps(B, q, cross.k.data(), cross.v.data(), 0, cross.S, a, cross_weights));
    multihead_attn_.OutProject(B, a, out);
    return Status::OK();
  }));
  return res.Block(norm3_, x, [&](const float* in, float* out) {
    return FeedForward(linear1_, linear2_, cfg_.activation, B, in, out);
  });
}

}  // namespace aw
