#include "core/rules.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace aw {

std::string NumStr(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  if (v == 0) return "0";
  // The shortest digits that read back as v (ECMAScript Number::toString).
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  // buf: [-]d[.ddd]e±x
  std::string s(buf), digits, sign;
  size_t i = 0;
  if (s[0] == '-') { sign = "-"; i = 1; }
  const size_t e = s.find('e');
  for (; i < e; ++i)
    if (s[i] != '.') digits += s[i];
  const int k = int(digits.size());
  const int n = std::atoi(s.c_str() + e + 1) + 1;  // the decimal point sits after n digits
  if (k <= n && n <= 21) return sign + digits + std::string(size_t(n - k), '0');
  if (0 < n && n <= 21) return sign + digits.substr(0, size_t(n)) + "." + digits.substr(size_t(n));
  if (-6 < n && n <= 0) return sign + "0." + std::string(size_t(-n), '0') + digits;
  const std::string exp = (n - 1 >= 0 ? "e+" : "e-") + std::to_string(std::abs(n - 1));
  return sign + digits.substr(0, 1) + (k > 1 ? "." + digits.substr(1) : "") + exp;
}

Status IntInRange(const std::string& name, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return Status::OK();
  return OutOfRangeError(name + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                         "], got " + std::to_string(v));
}

Status PositiveInt(const std::string& name, int64_t v) { return IntInRange(name, v, 1, kMaxInt32); }

Status Probability(const std::string& name, double v) {
  if (v >= 0.0 && v <= 1.0) return Status::OK();
  return OutOfRangeError(name + ": expected a probability in [0, 1], got " + NumStr(v));
}

Status NonNegativeFinite(const std::string& name, double v) {
  if (v >= 0.0 && std::isfinite(v)) return Status::OK();
  return OutOfRangeError(name + ": expected a finite number >= 0, got " + NumStr(v));
}

Status PositiveFinite(const std::string& name, double v) {
  if (v > 0.0 && std::isfinite(v)) return Status::OK();
  return OutOfRangeError(name + ": expected a finite number > 0, got " + NumStr(v));
}

Status DivisibleBy(const std::string& name, int64_t v, const std::string& by_name, int64_t by) {
  if (v % by == 0) return Status::OK();
  return ArgError(name + ": must be divisible by " + by_name + " (" + std::to_string(by) + "), got " +
                  std::to_string(v));
}

Status CheckShape(const std::string& name, const Shape& shape) {
  double numel = 1, nonzero = 1;  // as the JS layer counts: in double, so no overflow
  for (int64_t d : shape) {
    if (d < 0) return OutOfRangeError(name + ".shape: dims must be >= 0, got " + ShapeStr(shape));
    numel *= double(d);
    if (d) nonzero *= double(d);
  }
  if (numel > double(kMaxElements))
    return OutOfRangeError(name + ".shape: " + ShapeStr(shape) + " has " + NumStr(numel) +
                           " elements, more than the limit 2^29");
  // An empty tensor's other dims still size loops and strides (NumelChecked refuses them too).
  if (nonzero > double(kMaxElements))
    return OutOfRangeError(name + ".shape: " + ShapeStr(shape) + " has a 0 dim, but its other dims multiply to " +
                           NumStr(nonzero) + ", more than the limit 2^29");
  return Status::OK();
}

}  // namespace aw
