// The argument rules of the API, each written once, with its error code and
// its message: "<argument>: expected <what>, got <value>", numbers printed as
// JavaScript prints them (NumStr), so an error reads the same whichever side
// of the boundary meets it. The JS layer checks only what it alone can see
// (types, integer-ness, typed-array classes, data length vs shape, option
// keys) and leaves every range and divisibility rule to these functions.
//
// Codes: a value outside its range is kOutOfRange (ERR_OUT_OF_RANGE, a
// RangeError in JS); a divisibility rule is kInvalidArgument.
#pragma once
#include <cstdint>
#include <string>

#include "core/status.h"
#include "core/tensor.h"

namespace aw {

// The largest value of a JS API integer argument without a tighter bound.
constexpr int64_t kMaxInt32 = 2147483647;

// A number as JavaScript's String(v) prints it: "1e+21", "0.1", "NaN", "-Infinity" (core/num_str.cpp).
std::string NumStr(double v);
// v's last `width` hex digits: HexStr(0x3a, 2, true) is "3A".
std::string HexStr(uint32_t v, int width, bool upper);
// Bytes as MiB with one decimal, for messages: "1.5".
std::string MiBStr(double bytes);

// "name: expected an integer in [lo, hi], got v"
Status IntInRange(const std::string& name, int64_t v, int64_t lo, int64_t hi);
// "name: expected a positive integer …": IntInRange(name, v, 1, kMaxInt32).
Status PositiveInt(const std::string& name, int64_t v);
// "name: expected a probability in [0, 1], got v"
Status Probability(const std::string& name, double v);
// "name: expected a finite number >= 0, got v"
Status NonNegativeFinite(const std::string& name, double v);
// "name: expected a finite number > 0, got v"
Status PositiveFinite(const std::string& name, double v);
// "name: expected a finite number, got v"
Status Finite(const std::string& name, double v);
// "name: must be divisible by by_name (by), got v" (kInvalidArgument); by > 0.
Status DivisibleBy(const std::string& name, int64_t v, const std::string& by_name, int64_t by);

// An input tensor's shape: every dim >= 0 and at most kMaxElements elements.
// "name.shape: dims must be >= 0, got (…)" or
// "name.shape: (…) has N elements, more than the limit 2^29".
Status CheckShape(const std::string& name, const Shape& shape);

}  // namespace aw
