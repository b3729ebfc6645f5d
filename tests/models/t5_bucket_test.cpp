// T5's relative position buckets (models/t5.h T5Bucket) against transformers v4.40.2's
// T5Attention._relative_position_bucket, run on torch 1.13 at these relative positions (key − query) for three
// bucket counts and distances, both directions: the exact range, the logarithmic range past it (float32 arithmetic,
// truncated), the clamp at the last bucket, and the causal side's zeros for keys after the query.
#include <gtest/gtest.h>

#include <vector>

#include "models/t5.h"

namespace aw {
namespace {

TEST(T5Bucket, MatchesTransformers) {
  const std::vector<int64_t> rel = {-300, -128, -127, -100, -64, -63, -33, -32, -31, -17, -16, -15, -9, -8, -7, -4, -3,
                                    -1,   0,    1,    3,    4,   7,   8,   9,   15,  16,  17,  31,  32, 33, 63, 64, 100,
                                    127,  128,  300};
  struct Case {
    bool bidirectional;
    int64_t buckets, max_distance;
    std::vector<int32_t> want;
  };
  const std::vector<Case> cases = {
      {true, 32, 128, {15, 15, 15, 15, 14, 13, 12, 12, 11, 10, 10, 9, 8, 8, 7, 4, 3, 1, 0, 17, 19, 20, 23, 24, 24, 25, 26, 26, 27, 28, 28, 29, 30, 31, 31, 31, 31}},
      {true, 8, 20, {3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2, 1, 0, 5, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}},
      {true, 6, 7, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 0, 4, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}},
      {false, 32, 128, {31, 31, 31, 30, 26, 26, 21, 21, 21, 16, 16, 15, 9, 8, 7, 4, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
      {false, 8, 20, {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 6, 5, 5, 4, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
      {false, 6, 7, {5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 4, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
  };
  for (const Case& c : cases)
    for (size_t i = 0; i < rel.size(); ++i)
      EXPECT_EQ(T5Bucket(rel[i], c.bidirectional, c.buckets, c.max_distance), c.want[i])
          << "rel " << rel[i] << ", bidirectional " << c.bidirectional << ", buckets " << c.buckets << ", max_distance "
          << c.max_distance;
}

}  // namespace
}  // namespace aw
