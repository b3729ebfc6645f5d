// Decimal text to double, without the C library's strtod in the .wasm: musl's strtod works in 128-bit long double,
// and with the soft-float routines that brings it was 14 KB of every .wasm for config numbers. Integers of up to 15
// digits convert exactly here; any other number is the host's: JavaScript's Number() in the wasm builds
// (bindings/native/host_number.cpp; ECMAScript's StringToNumber rounds to nearest, ties to even, as strtod does),
// strtod natively. Either way: the nearest double.
#pragma once
#include <string_view>

namespace aw {

// The nearest double to a number of JSON's grammar ([-](0|[1-9]d*)[.d+][(e|E)[+-]d+]); ±Infinity beyond the
// double range. The text is not validated: the JSON parser has done that.
double ParseDouble(std::string_view text);

}  // namespace aw
