// Workspace: the scratch memory of a call, bounded by a budget and given back.
//
// Every layer and op takes its temporary buffers (projections, attention
// slabs, normalised activations, feed-forward hidden rows, gathered pieces)
// from the calling thread's workspace instead of keeping them as members.
// A call's memory is then its inputs + its outputs + the workspace, and the
// workspace is bounded by planning, not by the batch: a layer that would
// need more than WorkBudget() processes its batch in pieces of whole batch
// entries sized so that the piece's scratch fits in what is left of the
// budget (WorkPieceEntries). Batch entries never interact in any layer here,
// and every kernel computes an element the same way whatever rows a call
// holds (kernels/gemm.h, "Summation order"), so pieces change no bit of any
// result. One floor: a single batch entry's own working set (its projected
// keys and values, say) is needed whole, so a call whose one entry needs more
// than the budget uses that much.
//
// Lifetime: ScratchScope marks the workspace on construction and releases
// everything taken through it on destruction (nested scopes stack). When the
// outermost scope of a thread ends — the end of a public call — the
// workspace keeps at most kKeepScratchBytes (so small calls do not allocate
// in steady state) and frees everything beyond: a module holds no big
// scratch between calls.
//
// Owner: the workspace (one per thread, never shared). Pointers taken
// through a scope are valid until that scope ends. Not for the pool's worker
// threads: the caller takes their slabs and hands them over.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace aw {

// The default working-memory budget: scratch one call may use, in bytes.
constexpr size_t kDefaultWorkBudgetBytes = size_t(32) << 20;
// Scratch a thread keeps between calls (larger blocks are freed).
constexpr size_t kKeepScratchBytes = size_t(4) << 20;

// The budget now (process-wide), and its setter: init({ workingMemory }) in
// JS; tests set it small to force pieces. A value outside
// [kMinWorkBudgetBytes, kMaxWorkBudgetBytes] is refused (ERR_OUT_OF_RANGE,
// named workingMemory) and changes nothing.
constexpr int64_t kMinWorkBudgetBytes = int64_t(64) << 10;
constexpr int64_t kMaxWorkBudgetBytes = int64_t(1) << 30;
size_t WorkBudget();
Status SetWorkBudget(int64_t bytes);

// How many of `entries` batch entries a piece should hold when each entry
// needs `per_entry` bytes of scratch and `fixed` more bytes are needed once
// per piece: as many as fit in the budget left in this thread's workspace,
// at least 1, at most `entries`.
size_t WorkPieceEntries(size_t entries, size_t per_entry, size_t fixed = 0);

// Figures of the calling thread's workspace, for tests and memory reports.
struct WorkspaceStats {
  size_t in_use = 0;    // bytes taken by open scopes now
  size_t held = 0;      // bytes allocated (in use or kept for reuse)
  size_t peak = 0;      // most bytes in use at once since the last ResetPeak
};
WorkspaceStats GetWorkspaceStats();
void ResetWorkspacePeak();

class ScratchScope {
 public:
  ScratchScope();
  ~ScratchScope();
  ScratchScope(const ScratchScope&) = delete;
  ScratchScope& operator=(const ScratchScope&) = delete;

  // n elements of T (contents unspecified), 64-byte aligned; `what` names the
  // buffer in the out-of-memory message. n = 0 gives a valid pointer.
  template <class T>
  Status Take(size_t n, const char* what, T** out) {
    void* p = nullptr;
    AW_RETURN_IF_ERROR(TakeBytes(n, sizeof(T), what, &p));
    *out = static_cast<T*>(p);
    return Status::OK();
  }

 private:
  Status TakeBytes(size_t n, size_t elem, const char* what, void** out);
  size_t mark_block_;   // the workspace's position when the scope began
  size_t mark_offset_;
};

}  // namespace aw
