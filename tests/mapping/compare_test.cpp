// canopy::compare_policies: every registered policy appears once, in the
// registry's order, with a valid cost; the best has the lowest weighted cost
// and ratio 1; ratios are weighted / best; bad weights throw.
#include <gtest/gtest.h>

#include "canopy/comm_matrix.hpp"
#include "canopy/compare.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"

using namespace canopy;

namespace {

CommMatrix ring(int n) {
  std::vector<Edge> e;
  for (int i = 0; i < n; ++i) e.push_back({i, (i + 1) % n, 100.0 + i});
  return CommMatrix::from_edges(n, e);
}

}  // namespace

TEST(Compare, EveryPolicyOnceWithRatiosToTheBest) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  CommMatrix m = ring(16);
  Comparison c = compare_policies(t, m);
  ASSERT_EQ(c.results.size(), policies().size());
  ASSERT_GE(c.best, 0);
  EXPECT_EQ(c.weights, default_weights(t));
  const double best = c.results[c.best].cost.weighted;
  for (size_t i = 0; i < c.results.size(); ++i) {
    const PolicyResult& r = c.results[i];
    EXPECT_EQ(r.policy, policies()[i].name);
    EXPECT_EQ(r.error, "") << r.policy;
    EXPECT_GE(r.cost.weighted, best) << r.policy;
    EXPECT_DOUBLE_EQ(r.ratio, r.cost.weighted / best) << r.policy;
    // The cost is the one of the policy's own placement.
    Cost again = evaluate(t, m, map_tasks(t, m, r.policy), c.weights);
    EXPECT_DOUBLE_EQ(again.weighted, r.cost.weighted) << r.policy;
  }
  EXPECT_DOUBLE_EQ(c.results[c.best].ratio, 1.0);
}

TEST(Compare, UserWeightsAreResolvedAndChecked) {
  Topology t = Topology::from_synthetic("pack:2 core:2 pu:2");
  MapOptions opt;
  opt.weights = {4, 2, 1};  // one per level above the PUs: the PU level weighs 0
  EXPECT_EQ(compare_policies(t, ring(8), opt).weights, (std::vector<double>{4, 2, 1, 0}));
  opt.weights = {1, 2};
  EXPECT_THROW(compare_policies(t, ring(8), opt), Error);
}
