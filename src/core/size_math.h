// SizeMath: checked int64 arithmetic for sizes that come from user input.
//
// Validation computes every derived size (products of dims, sums such as
// S + add_bias_kv, per-thread slabs, work estimates) through one SizeMath
// before any of them bounds a loop or forms an offset. An operation whose
// operands are negative or whose result would overflow int64 sets a sticky
// flag and yields 0, so the arithmetic that follows stays defined; the
// caller checks overflowed() once and returns an error naming the shapes.
// (A 0 dim lets every other dim of a tensor be any int64: NumelChecked of the
// tensor is 0 then, but E + Ev or S·(E + Ev) need not fit.)
#pragma once
#include <cstdint>
#include <initializer_list>

namespace aw {

class SizeMath {
 public:
  int64_t Mul(int64_t a, int64_t b) {
    int64_t r = 0;
    if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r)) return Fail();
    return r;
  }
  int64_t Add(int64_t a, int64_t b) {
    int64_t r = 0;
    if (a < 0 || b < 0 || __builtin_add_overflow(a, b, &r)) return Fail();
    return r;
  }
  int64_t Prod(std::initializer_list<int64_t> xs) {
    int64_t r = 1;
    for (int64_t x : xs) r = Mul(r, x);
    return r;
  }
  bool overflowed() const { return overflow_; }

 private:
  int64_t Fail() {
    overflow_ = true;
    return 0;
  }
  bool overflow_ = false;
};

}  // namespace aw
