// KvCache::Reorder (beam search's parents): every row b ends with what row parents[b] held before the call, in
// every layer's keys and values, for the first len positions; rows that continue themselves (kept in place)
// and rows that feed others while they move, identity, cycles and fan-out; the ids a causal LM keeps, too.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "layers/kv_cache.h"

namespace aw {
namespace {

float Mark(size_t l, bool key, size_t b, size_t pos, size_t c) { return float(l * 100000 + (key ? 0 : 50000) + b * 1000 + pos * 10 + c); }

TEST(KvCacheReorder, EveryRowTakesItsParentsHistory) {
  const size_t layers = 2, batch = 5, capacity = 6, width = 3, len = 4;
  const std::vector<std::vector<int32_t>> cases = {
      {0, 1, 2, 3, 4},  // identity: nothing moves
      {0, 0, 2, 2, 4},  // rows 1 and 3 take their neighbours', which stay
      {1, 0, 2, 4, 3},  // swaps around a kept row
      {1, 2, 3, 4, 0},  // a cycle: every row moves
      {3, 3, 3, 3, 3},  // fan-out from a row that keeps its own
      {2, 1, 2, 0, 4},  // row 2 feeds rows 0 and 2 (itself kept), row 0 feeds row 3
  };
  for (const auto& parents : cases) {
    KvCache c;
    ASSERT_TRUE(c.Init(layers, batch, capacity, width).ok());
    c.len = len;
    c.ids.assign(batch * capacity, -1);
    for (size_t l = 0; l < layers; ++l)
      for (size_t b = 0; b < batch; ++b)
        for (size_t p = 0; p < capacity; ++p)
          for (size_t j = 0; j < width; ++j) {
            c.keys(l, b, p)[j] = Mark(l, true, b, p, j);
            c.values(l, b, p)[j] = Mark(l, false, b, p, j);
          }
    for (size_t b = 0; b < batch; ++b)
      for (size_t p = 0; p < capacity; ++p) c.ids[b * capacity + p] = int32_t(b * 100 + p);
    ASSERT_TRUE(c.Reorder(parents.data(), batch).ok());
    for (size_t l = 0; l < layers; ++l)
      for (size_t b = 0; b < batch; ++b)
        for (size_t p = 0; p < len; ++p)
          for (size_t j = 0; j < width; ++j) {
            const size_t from = size_t(parents[b]);
            ASSERT_EQ(c.keys(l, b, p)[j], Mark(l, true, from, p, j)) << "layer " << l << " row " << b << " pos " << p;
            ASSERT_EQ(c.values(l, b, p)[j], Mark(l, false, from, p, j)) << "layer " << l << " row " << b << " pos " << p;
          }
    for (size_t b = 0; b < batch; ++b)
      for (size_t p = 0; p < len; ++p) ASSERT_EQ(c.ids[b * capacity + p], int32_t(size_t(parents[b]) * 100 + p)) << b;
  }
}

}  // namespace
}  // namespace aw
