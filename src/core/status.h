// Status: how every public C++ entry point reports failure. There are no C++
// exceptions anywhere in attnwasm (the wasm build has them disabled); a
// function that can fail returns a Status whose message names the argument,
// what was expected and what was received. The JS layer turns it into a thrown
// Error with a stable `code` (bindings/checks.js, NATIVE_CODES and nativeError).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace aw {

// Stable numeric codes; bindings/checks.js maps them to 'ERR_*' strings.
enum class Code : int {
  kOk = 0,
  kInvalidArgument = 1,  // an unsupported option or combination (e.g. a dim not divisible by another)
  kShape = 2,            // a tensor's rank or size does not fit
  kDtype = 3,            // a tensor of the wrong element type
  kStateDict = 4,        // missing / unexpected / mis-shaped state_dict entry
  kOutOfMemory = 5,      // an allocation the wasm heap cannot satisfy
  kOutOfRange = 6,       // a number outside its allowed range (core/rules.h); a RangeError in JS
};

// Where in an argument a failure is, for a caller that passed the argument on in other terms (the JS layer
// names its own caller's entry: "texts[17]" for "lengths[3]"): the argument, an element's index in it, the
// value there and the bound it broke. Set by the checks that know; the message says the same in words.
struct StatusAt {
  const char* arg = nullptr;  // a string literal ("lengths", "ids"): the Status keeps the pointer, not a copy
  int64_t index = -1;
  int64_t value = 0;
  int64_t limit = 0;
};

class Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status OK() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The failure's place (null: not said).
  const StatusAt* at() const { return at_.arg ? &at_ : nullptr; }
  Status&& At(StatusAt at) && {
    at_ = at;
    return std::move(*this);
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  StatusAt at_;  // trivially copied as a Status is passed up
};

inline Status ShapeError(std::string m) { return Status(Code::kShape, std::move(m)); }
inline Status DtypeError(std::string m) { return Status(Code::kDtype, std::move(m)); }
inline Status ArgError(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
inline Status OomError(std::string m) { return Status(Code::kOutOfMemory, std::move(m)); }
inline Status OutOfRangeError(std::string m) { return Status(Code::kOutOfRange, std::move(m)); }

}  // namespace aw

// Propagate a non-OK Status to the caller.
#define AW_RETURN_IF_ERROR(expr)          \
  do {                                    \
    ::aw::Status aw_status_ = (expr);     \
    if (!aw_status_.ok()) return aw_status_; \
  } while (0)
