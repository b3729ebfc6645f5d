#include "core/rules.h"

#include <cmath>
#include <cstdlib>

namespace aw {

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

Status Finite(const std::string& name, double v) {
  if (std::isfinite(v)) return Status::OK();
  return OutOfRangeError(name + ": expected a finite number, got " + NumStr(v));
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
