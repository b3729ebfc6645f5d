// Deterministic generator for torch-style parameter initialisation: the same
// distributions as torch's init functions, not torch's numbers (weights are
// normally loaded from a checkpoint anyway).
#pragma once
#include <cmath>
#include <cstdint>

namespace aw {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0x5eedULL) : s_(seed) {}
  // For a module about to be loaded from a file (models/load_model.cpp): the
  // Fill calls write nothing and Init skips what derives from the values
  // (packing), since the load replaces every parameter and then derives them.
  static Rng ForLoading() {
    Rng r;
    r.fills_ = false;
    return r;
  }
  bool fills() const { return fills_; }
  uint32_t Next() {  // PCG-XSH-RR
    const uint64_t old = s_;
    s_ = old * 6364136223846793005ULL + 1442695040888963407ULL;
    const uint32_t x = uint32_t(((old >> 18u) ^ old) >> 27u), rot = uint32_t(old >> 59u);
    return (x >> rot) | (x << ((32 - rot) & 31));
  }
  double Uniform() { return (Next() + 0.5) / 4294967296.0; }  // (0, 1)
  double Normal() {
    return std::sqrt(-2 * std::log(Uniform())) * std::cos(6.283185307179586 * Uniform());
  }
  void FillUniform(float* p, int64_t n, double bound) {  // U(-bound, bound)
    if (!fills_) return;
    for (int64_t i = 0; i < n; ++i) p[i] = float((2 * Uniform() - 1) * bound);
  }
  void FillNormal(float* p, int64_t n, double std_) {
    if (!fills_) return;
    for (int64_t i = 0; i < n; ++i) p[i] = float(Normal() * std_);
  }

 private:
  uint64_t s_;
  bool fills_ = true;
};

}  // namespace aw
