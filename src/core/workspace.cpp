// The workspace (workspace.h): a stack of blocks per thread, taken from by
// bumping an offset, released to a mark, trimmed when the outermost scope ends.
#include "core/workspace.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>

#include "core/rules.h"

namespace aw {
namespace {

constexpr size_t kAlign = 64;                  // every take starts on a cache line
constexpr size_t kMinBlock = size_t(64) << 10;  // a new block holds at least this much (small: its unused tail is wasted when a take does not fit)
constexpr size_t kMaxBlocks = 48;              // far more than any call's nesting needs

std::atomic<size_t> g_budget{kDefaultWorkBudgetBytes};

size_t RoundUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

class Workspace {
 public:
  ~Workspace() { FreeAll(); }

  // Takes `bytes` (a multiple of kAlign) at the current position.
  Status Take(size_t bytes, const char* what, void** out) {
    if (cur_ < count_ && offset_ + bytes <= blocks_[cur_].size) {
      *out = blocks_[cur_].data + offset_;
      offset_ += bytes;
      return Used(bytes);
    }
    // The next block, if there is one and it is large enough; otherwise the
    // blocks from there on (from this one, if nothing is taken from it yet)
    // are replaced by one new block.
    const size_t next = cur_ < count_ && offset_ > 0 ? cur_ + 1 : cur_;
    if (next < count_ && blocks_[next].size >= bytes) {
      cur_ = next;
      offset_ = bytes;
      *out = blocks_[cur_].data;
      return Used(bytes);
    }
    for (size_t i = next; i < count_; ++i) { held_ -= blocks_[i].size; std::free(blocks_[i].data); }
    count_ = next;
    if (count_ == kMaxBlocks) return OomError(std::string("out of memory: too many scratch blocks for ") + what);
    const size_t size = std::max(bytes, kMinBlock);
    auto* p = static_cast<char*>(std::aligned_alloc(kAlign, size));
    if (!p)
      return OomError(std::string("out of memory: cannot allocate ") + what + " (" +
                      MiBStr(double(bytes)) + " MiB of working memory)");
    blocks_[count_++] = {p, size};
    held_ += size;
    cur_ = count_ - 1;
    offset_ = bytes;
    *out = p;
    return Used(bytes);
  }

  void Enter(size_t* block, size_t* offset) {
    ++depth_;
    *block = cur_;
    *offset = offset_;
  }

  void Leave(size_t block, size_t offset) {
    cur_ = block;
    offset_ = offset;
    in_use_ = Position();
    if (--depth_ == 0) Trim();
  }

  WorkspaceStats Stats() const { return {in_use_, held_, peak_}; }
  void ResetPeak() { peak_ = in_use_; }

 private:
  struct Block {
    char* data = nullptr;
    size_t size = 0;
  };

  Status Used(size_t) {
    in_use_ = Position();  // counts the unused tail of a block left behind, too: it is held until release
    peak_ = std::max(peak_, in_use_);
    call_peak_ = std::max(call_peak_, in_use_);
    return Status::OK();
  }

  // Bytes before the current position: whole blocks before cur_, then offset_.
  size_t Position() const {
    size_t n = offset_;
    for (size_t i = 0; i < cur_ && i < count_; ++i) n += blocks_[i].size;
    return n;
  }

  // The end of a public call: keep one block of at most kKeepScratchBytes,
  // as large as this call used (so the same call again takes nothing new).
  void Trim() {
    const size_t want = RoundUp(call_peak_);
    call_peak_ = 0;
    if (want > kKeepScratchBytes) {
      FreeAll();
      return;
    }
    if (count_ == 1 && blocks_[0].size >= want) return;
    FreeAll();
    if (want == 0) return;
    auto* p = static_cast<char*>(std::aligned_alloc(kAlign, std::max(want, kMinBlock)));
    if (!p) return;  // the next call allocates what it needs (and reports it if it cannot)
    blocks_[0] = {p, std::max(want, kMinBlock)};
    count_ = 1;
    held_ = blocks_[0].size;
  }

  void FreeAll() {
    for (size_t i = 0; i < count_; ++i) std::free(blocks_[i].data);
    count_ = cur_ = offset_ = held_ = 0;
  }

  Block blocks_[kMaxBlocks];
  size_t count_ = 0;
  size_t cur_ = 0, offset_ = 0;  // the position: block cur_ (== count_ when there is none), byte offset_
  size_t depth_ = 0;             // open scopes
  size_t in_use_ = 0, held_ = 0, peak_ = 0, call_peak_ = 0;
};

Workspace& ThreadWorkspace() {
  thread_local Workspace ws;
  return ws;
}

}  // namespace

size_t WorkBudget() { return g_budget.load(std::memory_order_relaxed); }

Status SetWorkBudget(int64_t bytes) {
  AW_RETURN_IF_ERROR(IntInRange("workingMemory", bytes, kMinWorkBudgetBytes, kMaxWorkBudgetBytes));
  g_budget.store(size_t(bytes), std::memory_order_relaxed);
  return Status::OK();
}

size_t WorkPieceEntries(size_t entries, size_t per_entry, size_t fixed) {
  if (entries <= 1) return entries;
  const size_t used = ThreadWorkspace().Stats().in_use, budget = WorkBudget();
  const size_t left = budget > used + fixed ? budget - used - fixed : 0;
  const size_t fit = per_entry ? left / per_entry : entries;
  return std::clamp<size_t>(fit, 1, entries);
}

WorkspaceStats GetWorkspaceStats() { return ThreadWorkspace().Stats(); }
void ResetWorkspacePeak() { ThreadWorkspace().ResetPeak(); }

ScratchScope::ScratchScope() { ThreadWorkspace().Enter(&mark_block_, &mark_offset_); }
ScratchScope::~ScratchScope() { ThreadWorkspace().Leave(mark_block_, mark_offset_); }

Status ScratchScope::TakeBytes(size_t n, size_t elem, const char* what, void** out) {
  // n · elem in checked arithmetic (size_t is 32 bits in wasm).
  if (elem && n > (SIZE_MAX - kAlign) / elem)
    return OomError(std::string("out of memory: ") + what + " of " + std::to_string(n) + " elements is too large");
  return ThreadWorkspace().Take(RoundUp(std::max<size_t>(n * elem, 1)), what, out);
}

}  // namespace aw
