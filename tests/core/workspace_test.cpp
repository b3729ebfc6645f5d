// The workspace (src/core/workspace.h): scopes take and give back, nest, and
// the end of the outermost scope keeps at most kKeepScratchBytes; the budget
// and how many batch entries a piece gets. The layers that plan pieces with
// it: tests/layers/entry_pieces_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "core/workspace.h"

namespace aw {
namespace {

constexpr size_t kMiB = size_t(1) << 20;

// Restores the default budget when a test ends.
struct BudgetGuard {
  ~BudgetGuard() { EXPECT_TRUE(SetWorkBudget(int64_t(kDefaultWorkBudgetBytes)).ok()); }
};

TEST(Workspace, ScopesGiveBackWhatTheyTook) {
  ASSERT_EQ(GetWorkspaceStats().in_use, 0u);
  {
    ScratchScope outer;
    float* a = nullptr;
    ASSERT_TRUE(outer.Take(1000, "a", &a).ok());
    ASSERT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u) << "takes are cache-line aligned";
    std::memset(a, 1, 1000 * sizeof(float));
    const size_t after_a = GetWorkspaceStats().in_use;
    EXPECT_GE(after_a, 1000 * sizeof(float));
    {
      ScratchScope inner;
      double* b = nullptr;
      ASSERT_TRUE(inner.Take(5000, "b", &b).ok());
      EXPECT_GE(GetWorkspaceStats().in_use, after_a + 5000 * sizeof(double));
      for (int i = 0; i < 1000; ++i) ASSERT_EQ(reinterpret_cast<uint8_t*>(a)[i], 1) << "b overlaps a";
    }
    EXPECT_EQ(GetWorkspaceStats().in_use, after_a);
    // The same space is taken again by the next scope (a piece loop reuses it).
    float* c1 = nullptr;
    float* c2 = nullptr;
    { ScratchScope s; ASSERT_TRUE(s.Take(2000, "c", &c1).ok()); }
    { ScratchScope s; ASSERT_TRUE(s.Take(2000, "c", &c2).ok()); }
    EXPECT_EQ(c1, c2);
  }
  EXPECT_EQ(GetWorkspaceStats().in_use, 0u);
}

TEST(Workspace, TheEndOfACallKeepsOnlyASmallBlock) {
  {
    ScratchScope call;
    char* big = nullptr;
    ASSERT_TRUE(call.Take(3 * kKeepScratchBytes, "big", &big).ok());
    std::memset(big, 0, 3 * kKeepScratchBytes);
    EXPECT_GE(GetWorkspaceStats().held, 3 * kKeepScratchBytes);
  }
  EXPECT_EQ(GetWorkspaceStats().held, 0u) << "a large scratch must be freed when the call ends";
  {
    ScratchScope call;  // two takes in two blocks: consolidated into one for the next call
    char *p = nullptr, *q = nullptr;
    ASSERT_TRUE(call.Take(100 * 1024, "p", &p).ok());
    ASSERT_TRUE(call.Take(100 * 1024, "q", &q).ok());
  }
  {
    ScratchScope call;
    char* p = nullptr;
    ASSERT_TRUE(call.Take(150 * 1024, "p", &p).ok());
  }
  const size_t kept = GetWorkspaceStats().held;
  EXPECT_GT(kept, 0u) << "a small scratch is kept for the next call";
  EXPECT_LE(kept, kKeepScratchBytes);
  // Steady state: the same small call takes no new block.
  for (int i = 0; i < 3; ++i) {
    ScratchScope call;
    char* p = nullptr;
    ASSERT_TRUE(call.Take(150 * 1024, "p", &p).ok());
    EXPECT_EQ(GetWorkspaceStats().held, kept);
  }
}

TEST(Workspace, PeakCountsTheMostInUseAtOnce) {
  ResetWorkspacePeak();
  {
    ScratchScope call;
    for (int piece = 0; piece < 4; ++piece) {
      ScratchScope s;
      float* p = nullptr;
      ASSERT_TRUE(s.Take(kMiB / 4, "piece", &p).ok());  // 1 MiB each time, given back each time
    }
  }
  const WorkspaceStats st = GetWorkspaceStats();
  EXPECT_GE(st.peak, kMiB);
  EXPECT_LT(st.peak, 2 * kMiB) << "pieces that give their scratch back do not add up";
}

TEST(Workspace, AnImpossibleTakeIsAnErrorNotACrash) {
  ScratchScope s;
  float* p = nullptr;
  const Status st = s.Take(SIZE_MAX / 2, "huge", &p);
  EXPECT_EQ(st.code(), Code::kOutOfMemory);
  EXPECT_NE(st.message().find("huge"), std::string::npos) << st.message();
  // And the workspace keeps working.
  ASSERT_TRUE(s.Take(16, "after", &p).ok());
}

TEST(Workspace, BudgetRangeAndPieces) {
  BudgetGuard guard;
  EXPECT_EQ(WorkBudget(), kDefaultWorkBudgetBytes);
  Status st = SetWorkBudget(1000);
  EXPECT_EQ(st.code(), Code::kOutOfRange);
  EXPECT_EQ(st.message(), "workingMemory: expected an integer in [65536, 1073741824], got 1000");
  EXPECT_EQ(WorkBudget(), kDefaultWorkBudgetBytes) << "a refused budget changes nothing";
  ASSERT_TRUE(SetWorkBudget(int64_t(4 * kMiB)).ok());
  EXPECT_EQ(WorkBudget(), 4 * kMiB);
  EXPECT_EQ(WorkPieceEntries(100, kMiB), 4u);
  EXPECT_EQ(WorkPieceEntries(100, kMiB, 2 * kMiB), 2u);
  EXPECT_EQ(WorkPieceEntries(3, kMiB), 3u) << "at most the entries there are";
  EXPECT_EQ(WorkPieceEntries(100, 10 * kMiB), 1u) << "at least one entry, even over the budget";
  EXPECT_EQ(WorkPieceEntries(0, kMiB), 0u);
  {
    ScratchScope s;  // what is in use already counts against the budget
    char* p = nullptr;
    ASSERT_TRUE(s.Take(2 * kMiB, "p", &p).ok());
    EXPECT_EQ(WorkPieceEntries(100, kMiB), 2u);
  }
}

}  // namespace
}  // namespace aw
