// Cost weights: defaults, parsing of --weights and validation against the
// topology's levels, with error messages that say what was expected.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"

using namespace canopy;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Weights, DefaultsGrowWithDistance) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:8 pu:2");
  EXPECT_EQ(default_weights(t), (std::vector<double>{15, 7, 3, 1, 0}));
  Topology flat = Topology::from_synthetic("core:4 pu:1");
  EXPECT_EQ(default_weights(flat), (std::vector<double>{1, 0}));
}

TEST(Weights, Parse) {
  EXPECT_EQ(parse_weights("10,5,1"), (std::vector<double>{10, 5, 1}));
  EXPECT_EQ(parse_weights(" 10 , 5 ,1 "), (std::vector<double>{10, 5, 1}));
  EXPECT_EQ(parse_weights("1e3,0.5,0"), (std::vector<double>{1000, 0.5, 0}));
  EXPECT_EQ(parse_weights("7"), (std::vector<double>{7}));
}

TEST(Weights, ParseErrorsNameTheItem) {
  EXPECT_NE(error_of([] { parse_weights(""); }).find("comma-separated"), std::string::npos);
  EXPECT_NE(error_of([] { parse_weights("10,,1"); }).find("item 2 is empty"), std::string::npos);
  EXPECT_NE(error_of([] { parse_weights("1,2,"); }).find("item 3 is empty"), std::string::npos);
  EXPECT_NE(error_of([] { parse_weights("10,x,1"); }).find("item 2 'x' is not a number"), std::string::npos);
  EXPECT_NE(error_of([] { parse_weights("10,5x"); }).find("item 2 '5x' is not a number"), std::string::npos);
  EXPECT_NE(error_of([] { parse_weights("3,-1"); }).find("item 2 '-1' must be finite and non-negative"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_weights("nan"); }).find("finite"), std::string::npos);
  EXPECT_NE(error_of([] { parse_weights("1,inf"); }).find("finite"), std::string::npos);
  EXPECT_NE(error_of([] { parse_weights("1e999"); }).find("not a number"), std::string::npos);
}

TEST(Weights, Resolve) {
  Topology t = Topology::from_synthetic("pack:2 core:2 pu:2");  // 4 levels
  ASSERT_EQ(t.num_levels(), 4);
  EXPECT_EQ(resolve_weights(t, {}), default_weights(t));
  EXPECT_EQ(resolve_weights(t, {8, 4, 2, 1}), (std::vector<double>{8, 4, 2, 1}));
  EXPECT_EQ(resolve_weights(t, {8, 4, 2}), (std::vector<double>{8, 4, 2, 0}));
}

TEST(Weights, ResolveErrorsNameTheLevels) {
  Topology t = Topology::from_synthetic("pack:2 core:2 pu:2");
  std::string e = error_of([&] { resolve_weights(t, {1, 2}); });
  EXPECT_NE(e.find("2 values given"), std::string::npos) << e;
  EXPECT_NE(e.find("has 4 levels"), std::string::npos) << e;
  EXPECT_NE(e.find("Package"), std::string::npos) << e;
  EXPECT_NE(e.find("give 4 values, or 3"), std::string::npos) << e;
  EXPECT_FALSE(error_of([&] { resolve_weights(t, {1, 2, 3, 4, 5}); }).empty());
  e = error_of([&] { resolve_weights(t, {1, -2, 3}); });
  EXPECT_NE(e.find("level 1"), std::string::npos) << e;
  EXPECT_NE(error_of([&] { resolve_weights(t, {1, std::nan(""), 3}); }).find("finite"), std::string::npos);
  EXPECT_NE(
      error_of([&] { resolve_weights(t, {1, std::numeric_limits<double>::infinity(), 3}); }).find("finite"),
      std::string::npos);
}
