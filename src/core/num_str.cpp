// Numbers as text for messages, without printf: NumStr (the shortest decimal that reads back as the double, in
// ECMAScript's Number::toString layout), hex digits and MiB figures. printf's float formatting (and the
// vfprintf it comes in) was 6-7 KB of every .wasm for a few error messages; here the digits come from the
// double's exact decimal expansion (a small bignum), rounded half to even as printf rounds, and the first
// precision that reads back as the same double (core/parse_double.h) wins, as before.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/parse_double.h"
#include "core/rules.h"

namespace aw {

namespace {

// The exact decimal digits of a finite v > 0 and where its point sits: v = 0.D × 10^n.
void ExactDigits(double v, std::string* digits, int* n) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  const int biased = int(bits >> 52 & 0x7FF);
  uint64_t m = bits & ((uint64_t(1) << 52) - 1);
  int e;
  if (biased) {
    m |= uint64_t(1) << 52;
    e = biased - 1075;
  } else {
    e = -1074;  // subnormal
  }
  // m × 2^e as an integer B × 10^exp10: B in base-1e9 limbs, least significant first.
  std::vector<uint32_t> b{uint32_t(m % 1000000000), uint32_t(m / 1000000000 % 1000000000), uint32_t(m / 1000000000000000000)};
  auto mul = [&b](uint32_t k) {
    uint64_t carry = 0;
    for (uint32_t& limb : b) {
      const uint64_t x = uint64_t(limb) * k + carry;
      limb = uint32_t(x % 1000000000);
      carry = x / 1000000000;
    }
    while (carry) {
      b.push_back(uint32_t(carry % 1000000000));
      carry /= 1000000000;
    }
  };
  int exp10 = 0;
  for (; e >= 29; e -= 29) mul(uint32_t(1) << 29);
  if (e > 0) mul(uint32_t(1) << e);
  for (; e <= -13; e += 13) mul(1220703125u), exp10 -= 13;  // 5^13: 2^-13 = 5^13 × 10^-13
  for (; e < 0; ++e) mul(5), exp10 -= 1;
  while (b.size() > 1 && b.back() == 0) b.pop_back();
  std::string d = std::to_string(b.back());
  for (size_t i = b.size() - 1; i-- > 0;) {
    const std::string limb = std::to_string(b[i]);
    d += std::string(9 - limb.size(), '0') + limb;
  }
  *n = int(d.size()) + exp10;
  *digits = d;
}

// The first p digits of `d`, rounded half to even on the rest; *n grows by one when they carry out (99.5 → 100).
std::string Rounded(const std::string& d, size_t p, int* n) {
  if (d.size() <= p) return d;
  std::string r = d.substr(0, p);
  const char next = d[p];
  bool up = next > '5';
  if (next == '5') {
    const bool more = d.find_first_not_of('0', p + 1) != std::string::npos;
    up = more || (r.back() - '0') % 2 == 1;
  }
  if (up) {
    size_t i = p;
    while (i > 0 && r[i - 1] == '9') r[--i] = '0';
    if (i == 0) {
      r.insert(r.begin(), '1');
      r.pop_back();
      ++*n;
    } else {
      ++r[i - 1];
    }
  }
  return r;
}

}  // namespace

std::string NumStr(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return "0";
  const std::string sign = v < 0 ? "-" : "";
  std::string exact;
  int n0;
  ExactDigits(std::fabs(v), &exact, &n0);
  // The shortest digits that read back as v (ECMAScript Number::toString).
  std::string digits;
  int n = n0;
  for (size_t p = 1; p <= 17; ++p) {
    n = n0;
    digits = Rounded(exact, p, &n);
    const std::string text = sign + "0." + digits + "e" + std::to_string(n);
    if (ParseDouble(text) == v) break;
  }
  const int k = int(digits.size());  // the decimal point sits after n digits
  if (k <= n && n <= 21) return sign + digits + std::string(size_t(n - k), '0');
  if (0 < n && n <= 21) return sign + digits.substr(0, size_t(n)) + "." + digits.substr(size_t(n));
  if (-6 < n && n <= 0) return sign + "0." + std::string(size_t(-n), '0') + digits;
  const std::string exp = (n - 1 >= 0 ? "e+" : "e-") + std::to_string(std::abs(n - 1));
  return sign + digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "") + exp;
}

std::string HexStr(uint32_t v, int width, bool upper) {
  const char* const set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string s(size_t(width), '0');
  for (int i = width - 1; i >= 0; --i, v >>= 4) s[size_t(i)] = set[v & 15];
  return s;
}

std::string MiBStr(double bytes) { return NumStr(std::round(bytes / (1024.0 * 1024.0) * 10.0) / 10.0); }

}  // namespace aw
