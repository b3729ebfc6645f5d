// ParseDouble (core/parse_double.h): integers of up to 15 digits converted here, exactly; every other number the
// host's (natively strtod, which these cases check against; in wasm JavaScript's Number(), checked by
// tests/js/json_numbers.test.mjs against JSON.parse).
#include "core/parse_double.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace aw {
namespace {

TEST(ParseDoubleTest, IntegersUpTo15DigitsAreExact) {
  EXPECT_EQ(ParseDouble("0"), 0.0);
  EXPECT_TRUE(std::signbit(ParseDouble("-0")));
  EXPECT_EQ(ParseDouble("7"), 7.0);
  EXPECT_EQ(ParseDouble("-12"), -12.0);
  EXPECT_EQ(ParseDouble("999999999999999"), 999999999999999.0);   // 15 digits
  EXPECT_EQ(ParseDouble("-999999999999999"), -999999999999999.0);
}

TEST(ParseDoubleTest, EveryOtherNumberIsTheNearestDouble) {
  // Past 15 digits, fractions, exponents, halfway cases, subnormals, the range's ends.
  const char* cases[] = {"9007199254740993", "1234567890123456789", "0.1", "0.5", "1e-6", "9.999999747378752e-06",
                         "1.0000000000000002", "2.2250738585072011e-308", "4.9e-324", "1.7976931348623157e308",
                         "123456.789e-2", "1E5", "-3.25E-2", "0.30000000000000004", "100000000000000000000000"};
  for (const char* c : cases) EXPECT_EQ(ParseDouble(c), std::strtod(c, nullptr)) << c;
  EXPECT_TRUE(std::isinf(ParseDouble("1e400")));
  EXPECT_EQ(ParseDouble("1e-400"), 0.0);
}

}  // namespace
}  // namespace aw
