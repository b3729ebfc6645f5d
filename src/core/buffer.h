// Buffer: an owned, growable-on-request float array whose allocation can fail
// without aborting. std::vector would call abort() on bad_alloc in the
// no-exceptions wasm build; Buffer uses malloc (the wasm build links with
// ABORTING_MALLOC=0) and reports failure as a Status instead.
// Owner: whoever holds the Buffer; released by its destructor.
#pragma once
#include <cstddef>
#include <cstdlib>
#include <string>

#include "core/status.h"

namespace aw {

// Bytes as MiB with one decimal, for messages (core/rules.h, core/num_str.cpp).
std::string MiBStr(double bytes);


template <typename T>
class BufferT {
 public:
  BufferT() = default;
  ~BufferT() { std::free(data_); }
  BufferT(const BufferT&) = delete;
  BufferT& operator=(const BufferT&) = delete;
  BufferT(BufferT&& o) noexcept : data_(o.data_), size_(o.size_), cap_(o.cap_) {
    o.data_ = nullptr; o.size_ = o.cap_ = 0;
  }
  BufferT& operator=(BufferT&& o) noexcept {
    if (this != &o) {
      std::free(data_);
      data_ = o.data_; size_ = o.size_; cap_ = o.cap_;
      o.data_ = nullptr; o.size_ = o.cap_ = 0;
    }
    return *this;
  }

  // Sets the size to n elements (contents unspecified). Reuses the allocation
  // when it is large enough, so a scratch buffer kept across calls does not
  // allocate in steady state. `what` names the buffer in the error message.
  Status Resize(size_t n, const char* what) {
    if (n > cap_) {
      std::free(data_);
      data_ = nullptr; size_ = cap_ = 0;
      if (n > (size_t(1) << 31) / sizeof(T)) return TooLarge(n, what);
      data_ = static_cast<T*>(std::malloc(n * sizeof(T)));
      if (!data_) return TooLarge(n, what);
      cap_ = n;
    }
    size_ = n;
    return Status::OK();
  }
  void Release() { std::free(data_); data_ = nullptr; size_ = cap_ = 0; }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  static Status TooLarge(size_t n, const char* what) {
    return OomError(std::string("out of memory: cannot allocate ") + what + " of " +
                    std::to_string(n) + " elements (" +
                    MiBStr(double(n) * sizeof(T)) + " MiB)");
  }
  T* data_ = nullptr;
  size_t size_ = 0;
  size_t cap_ = 0;
};

using Buffer = BufferT<float>;

}  // namespace aw
