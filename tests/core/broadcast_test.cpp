#include "core/broadcast.h"

#include <gtest/gtest.h>

namespace aw {
namespace {

TEST(Broadcast, ShapesRightAligned) {
  Shape out;
  ASSERT_TRUE(BroadcastShapes({2, 1, 5}, {3, 1}, &out));
  EXPECT_EQ(out, (Shape{2, 3, 5}));
  ASSERT_TRUE(BroadcastShapes({}, {4}, &out));
  EXPECT_EQ(out, (Shape{4}));
  EXPECT_FALSE(BroadcastShapes({2, 3}, {4, 3}, &out));
}

TEST(Broadcast, IntoWithoutEnlarging) {
  EXPECT_TRUE(BroadcastsInto({1, 7}, {2, 5, 7}));
  EXPECT_TRUE(BroadcastsInto({}, {2}));
  EXPECT_FALSE(BroadcastsInto({3, 1, 7}, {5, 7}));  // more dims than the target
  EXPECT_FALSE(BroadcastsInto({2, 7}, {5, 7}));
}

TEST(Broadcast, IndexMapsBlocks) {
  // in (2, 1) into out (2, 3): block = row index, column repeated.
  BroadcastIndex bi({2, 1}, {2, 3});
  int64_t want[] = {0, 0, 0, 1, 1, 1};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(bi.Block(i), want[i]) << i;
  // in (3,) into (2, 3): leading dim repeated.
  BroadcastIndex b2({3}, {2, 3});
  for (int i = 0; i < 6; ++i) EXPECT_EQ(b2.Block(i), i % 3) << i;
}

TEST(Broadcast, GroupedLastDim) {
  // Key heads 2 serving query heads 6: head h reads key head h / 3.
  BroadcastIndex bi({2}, {6}, 3);
  int64_t want[] = {0, 0, 0, 1, 1, 1};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(bi.Block(i), want[i]) << i;
}

}  // namespace
}  // namespace aw
