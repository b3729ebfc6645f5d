#include "core/parse_double.h"

#include <cstdint>

#ifdef __EMSCRIPTEN__
// JavaScript's Number() of the text (bindings/native/host_number.cpp).
extern "C" double aw_host_number(const char* text, unsigned long n);
#else
#include <clocale>
#include <cstdlib>
#include <string>
#endif

namespace aw {

double ParseDouble(std::string_view t) {
  // An integer of at most 15 digits is below 2^53: exact as a double, no conversion to ask for.
  const bool neg = !t.empty() && t[0] == '-';
  const std::string_view digits = t.substr(neg ? 1 : 0);
  if (!digits.empty() && digits.size() <= 15) {
    uint64_t v = 0;
    bool integer = true;
    for (const char c : digits) {
      if (c < '0' || c > '9') {
        integer = false;
        break;
      }
      v = v * 10 + uint64_t(c - '0');
    }
    if (integer) return neg ? -double(v) : double(v);
  }
#ifdef __EMSCRIPTEN__
  return aw_host_number(t.data(), static_cast<unsigned long>(t.size()));
#else
  // strtod follows LC_NUMERIC: give it the locale's decimal point, so a host program that called setlocale()
  // still reads "0.5" as a half.
  std::string text(t);
  const char point = std::localeconv()->decimal_point[0];
  if (point != '.') {
    for (char& c : text)
      if (c == '.') c = point;
  }
  return std::strtod(text.c_str(), nullptr);
#endif
}

}  // namespace aw
