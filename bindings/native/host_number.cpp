// The host's decimal-to-double conversion for core/parse_double.cpp: JavaScript's Number(), correctly rounded
// (ECMAScript's StringToNumber), in place of musl's strtod and its 128-bit soft float (14 KB of every .wasm).
// The text is a JSON number (ASCII) that the native JSON parser has validated.
#include <emscripten/em_js.h>
#include <emscripten/emscripten.h>  // EMSCRIPTEN_KEEPALIVE, which em_js.h uses

// clang-format off
EM_JS(double, aw_host_number, (const char* text, unsigned long n), {
  const p = text >>> 0;
  return Number(String.fromCharCode.apply(null, HEAPU8.subarray(p, p + n)));
});
// clang-format on
