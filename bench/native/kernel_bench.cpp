#include "kernel_bench.h"

#include <emscripten/emscripten.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "core/buffer.h"
#include "kernels/activation.h"
#include "kernels/gemm.h"
#include "kernels/pack.h"
#include "kernels/qgemm.h"
#include "ops/attention.h"
#include "ops/parallel_gemm.h"

namespace aw {
namespace {

double NowMs() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

Status Fill(Buffer* b, size_t n, const char* what) {
  AW_RETURN_IF_ERROR(b->Resize(n, what));
  for (size_t i = 0; i < n; ++i) b->data()[i] = float(int(i * 7 % 13) - 6) * 0.01f;
  return Status::OK();
}

double Median(std::vector<double> t) {
  std::nth_element(t.begin(), t.begin() + t.size() / 2, t.end());
  return t[t.size() / 2];
}

}  // namespace

Status BenchGemmStreamed(size_t m, size_t n, size_t k, size_t copies, int reps, double* median_ms) {
  if (m == 0 || n == 0 || k == 0 || copies == 0 || copies > 256 || reps < 1 || m * k > (size_t(1) << 26) ||
      n * k > (size_t(1) << 26) || m * n > (size_t(1) << 26) || copies * n * k > (size_t(1) << 28))
    return ArgError("benchGemm: sizes out of range");
  Buffer a, w, bias, c;
  std::vector<Buffer> wp(copies);
  AW_RETURN_IF_ERROR(Fill(&a, m * k, "A"));
  AW_RETURN_IF_ERROR(Fill(&w, n * k, "W"));
  AW_RETURN_IF_ERROR(Fill(&bias, n, "bias"));
  AW_RETURN_IF_ERROR(c.Resize(m * n, "C"));
  for (Buffer& b : wp) {
    AW_RETURN_IF_ERROR(b.Resize(kernels::f32_gemm_packed_floats(n, k), "packed W"));
    kernels::f32_gemm_pack_nt(n, k, w.data(), k, b.data());
  }
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = NowMs();
    for (Buffer& b : wp) ParallelGemmPacked(m, n, k, c.data(), n, a.data(), k, b.data(), n, 0, bias.data(), 1.0f);
    t.push_back((NowMs() - t0) / double(copies));
  }
  *median_ms = Median(t);
  return Status::OK();
}

Status BenchGemm(size_t m, size_t n, size_t k, int reps, double* median_ms) {
  return BenchGemmStreamed(m, n, k, 1, reps, median_ms);
}

Status BenchActivation(int kind, size_t n, int reps, double* median_ms) {
  if (kind < 0 || kind > 2 || n == 0 || n > (size_t(1) << 26) || reps < 1)
    return ArgError("benchActivation: sizes out of range");
  void (*const fn[])(size_t, float*) = {kernels::f32_gelu, kernels::f32_gelu_tanh, kernels::f32_silu};
  Buffer src, x;
  AW_RETURN_IF_ERROR(src.Resize(n, "x"));
  AW_RETURN_IF_ERROR(x.Resize(n, "x"));
  for (size_t i = 0; i < n; ++i) src.data()[i] = float(int(i * 7919 % 2001) - 1000) * 0.006f;  // [-6, 6]
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    std::memcpy(x.data(), src.data(), n * sizeof(float));
    const double t0 = NowMs();
    fn[kind](n, x.data());
    t.push_back(NowMs() - t0);
  }
  *median_ms = Median(t);
  return Status::OK();
}

Status BenchQGemm(int kind, size_t m, size_t n, size_t k, int reps, double* median_ms) {
  if (kind < 0 || kind > 2 || m == 0 || n == 0 || k == 0 || reps < 1 || m * k > (size_t(1) << 26) ||
      n * k > (size_t(1) << 26) || m * n > (size_t(1) << 26))
    return ArgError("benchQGemm: sizes out of range");
  const kernels::QBits b = kind == 0 ? kernels::QBits::kQ8 : kernels::QBits::kQ4;
  Buffer a, w, bias, c;
  BufferT<uint8_t> wq;
  AW_RETURN_IF_ERROR(Fill(&a, m * k, "A"));
  AW_RETURN_IF_ERROR(Fill(&w, n * k, "W"));
  AW_RETURN_IF_ERROR(Fill(&bias, n, "bias"));
  AW_RETURN_IF_ERROR(wq.Resize(kernels::q_packed_bytes(b, n, k) + 64, "quantized W"));
  AW_RETURN_IF_ERROR(c.Resize(m * n, "C"));
  std::fill(wq.data(), wq.data() + wq.size(), uint8_t(0));
  kernels::q_pack_rows(b, n, k, 0, n, w.data(), k, wq.data());
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = NowMs();
    if (kind == 2) ParallelQ4GemmA8(m, n, k, c.data(), n, a.data(), k, wq.data(), bias.data(), 1.0f);
    else ParallelQGemm(b, m, n, k, c.data(), n, a.data(), k, wq.data(), bias.data(), 1.0f);
    t.push_back(NowMs() - t0);
  }
  *median_ms = Median(t);
  return Status::OK();
}

Status BenchAttention(size_t heads, size_t L, size_t hd, bool causal, int reps, double* median_ms) {
  if (heads == 0 || L == 0 || hd == 0 || reps < 1 || heads * L * hd > (size_t(1) << 26))
    return ArgError("benchAttention: sizes out of range");
  Buffer x, out;
  AW_RETURN_IF_ERROR(Fill(&x, heads * L * hd, "q = k = v"));
  AW_RETURN_IF_ERROR(out.Resize(heads * L * hd, "output"));
  AttnShape sh;
  sh.L = sh.S = L;
  sh.hd = sh.hdv = hd;
  sh.ldq = sh.ldk = sh.ldv = sh.ldo = hd;
  sh.scale = 1.0f;
  sh.causal = causal;
  sh.masked_keys = L;
  auto head = [&](size_t g, size_t) {
    AttnHead h;
    h.q = h.k = h.v = x.data() + g * L * hd;
    h.out = out.data() + g * L * hd;
    return h;
  };
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const double t0 = NowMs();
    AW_RETURN_IF_ERROR(Attend(sh, heads, 1, head));
    t.push_back(NowMs() - t0);
  }
  *median_ms = Median(t);
  return Status::OK();
}

}  // namespace aw

extern "C" {

EMSCRIPTEN_KEEPALIVE double aw_bench_gemm(int m, int n, int k, int reps) {
  double ms = -1;
  return m > 0 && n > 0 && k > 0 && aw::BenchGemm(size_t(m), size_t(n), size_t(k), reps, &ms).ok() ? ms : -1;
}

EMSCRIPTEN_KEEPALIVE double aw_bench_gemm_streamed(int m, int n, int k, int copies, int reps) {
  double ms = -1;
  return m > 0 && n > 0 && k > 0 && copies > 0 &&
                 aw::BenchGemmStreamed(size_t(m), size_t(n), size_t(k), size_t(copies), reps, &ms).ok()
             ? ms
             : -1;
}

EMSCRIPTEN_KEEPALIVE double aw_bench_activation(int kind, int n, int reps) {
  double ms = -1;
  return n > 0 && aw::BenchActivation(kind, size_t(n), reps, &ms).ok() ? ms : -1;
}

EMSCRIPTEN_KEEPALIVE double aw_bench_qgemm(int kind, int m, int n, int k, int reps) {
  double ms = -1;
  return m > 0 && n > 0 && k > 0 && aw::BenchQGemm(kind, size_t(m), size_t(n), size_t(k), reps, &ms).ok() ? ms : -1;
}

EMSCRIPTEN_KEEPALIVE double aw_bench_attention(int heads, int L, int hd, int causal, int reps) {
  double ms = -1;
  return heads > 0 && L > 0 && hd > 0 && aw::BenchAttention(size_t(heads), size_t(L), size_t(hd), causal != 0, reps, &ms).ok()
             ? ms
             : -1;
}

}  // extern "C"
