// Irving's stable roommates on classic instances: a stable matching is found
// when one exists (checked for stability), the unsolvable instance is broken
// into a matching, and for preferences derived from symmetric weights the
// matching is the greedy heaviest-first one (the unique stable matching).
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <tuple>

#include "mapping/roommates.hpp"

using canopy::grouping::stable_roommates;

namespace {

// No pair (x, y) both prefer to their partners (an unmatched person prefers anyone acceptable).
bool stable(const std::vector<std::vector<int>>& prefs, const std::vector<int>& partner) {
  const int n = static_cast<int>(prefs.size());
  auto rank = [&](int x, int y) {
    for (size_t k = 0; k < prefs[x].size(); ++k)
      if (prefs[x][k] == y) return static_cast<int>(k);
    return 1 << 30;
  };
  for (int x = 0; x < n; ++x)
    for (int y : prefs[x]) {
      if (partner[x] == y) continue;
      bool x_wants = partner[x] < 0 || rank(x, y) < rank(x, partner[x]);
      bool y_wants = partner[y] < 0 || rank(y, x) < rank(y, partner[y]);
      if (x_wants && y_wants) return false;
    }
  return true;
}

void expect_matching(const std::vector<int>& partner) {
  for (size_t x = 0; x < partner.size(); ++x)
    if (partner[x] >= 0) {
      EXPECT_EQ(partner[partner[x]], static_cast<int>(x));
    }
}

}  // namespace

TEST(Roommates, SixPersonsNeedPhaseTwo) {
  // Complete lists whose unique stable matching {0-5, 1-4, 2-3} (found by
  // brute force) is reached only after phase 2 eliminates rotations.
  std::vector<std::vector<int>> prefs{{3, 5, 1, 4, 2}, {5, 2, 4, 0, 3}, {3, 4, 0, 1, 5},
                                      {1, 5, 2, 4, 0}, {3, 0, 1, 2, 5}, {4, 0, 3, 1, 2}};
  auto r = stable_roommates(prefs);
  EXPECT_EQ(r.partner, (std::vector<int>{5, 4, 3, 2, 1, 0}));
  EXPECT_TRUE(stable(prefs, r.partner));
  EXPECT_GT(r.rotations, 0);
  EXPECT_EQ(r.broken, 0);
}

TEST(Roommates, NoStableMatchingIsBroken) {
  // A:(B,C,D) B:(C,A,D) C:(A,B,D) D:(A,B,C) has no stable matching.
  std::vector<std::vector<int>> prefs{{1, 2, 3}, {2, 0, 3}, {0, 1, 3}, {0, 1, 2}};
  auto r = stable_roommates(prefs);
  expect_matching(r.partner);
  EXPECT_GT(r.broken, 0);
  // The odd cycle A->B->C->A is broken by fixing A-B; C and D stay out.
  EXPECT_EQ(r.partner, (std::vector<int>{1, 0, -1, -1}));
}

// Whether some perfect matching of persons `left` is stable (brute force).
bool exists_stable(const std::vector<std::vector<int>>& prefs, std::vector<int>& partner, std::vector<int> left) {
  if (left.empty()) return stable(prefs, partner);
  const int a = left.front();
  for (size_t k = 1; k < left.size(); ++k) {
    const int b = left[k];
    std::vector<int> rest;
    for (size_t i = 1; i < left.size(); ++i)
      if (i != k) rest.push_back(left[i]);
    partner[a] = b;
    partner[b] = a;
    if (exists_stable(prefs, partner, rest)) return true;
  }
  partner[a] = -1;
  return false;
}

TEST(Roommates, RandomInstancesAgainstBruteForce) {
  // Random (not weight-derived) complete preferences: always a matching; when
  // a stable matching exists, one is found and no cycle is broken.
  std::mt19937 rng(17);
  int with = 0, without = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 2 + 2 * (trial % 4);  // 2..8 persons
    std::vector<std::vector<int>> prefs(n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j)
        if (j != i) prefs[i].push_back(j);
      std::shuffle(prefs[i].begin(), prefs[i].end(), rng);
    }
    auto r = stable_roommates(prefs);
    expect_matching(r.partner);
    std::vector<int> scratch(n, -1);
    std::vector<int> everyone(n);
    std::iota(everyone.begin(), everyone.end(), 0);
    if (exists_stable(prefs, scratch, everyone)) {
      ++with;
      EXPECT_EQ(r.broken, 0) << "trial " << trial;
      EXPECT_TRUE(stable(prefs, r.partner)) << "trial " << trial;
      for (int p : r.partner) EXPECT_GE(p, 0) << "trial " << trial;
    } else {
      ++without;
    }
  }
  EXPECT_GT(with, 100);
  EXPECT_GT(without, 10);
}

TEST(Roommates, IncompleteLists) {
  // 0-1 mutual favourites; 2 accepts only 0; 3 accepts nobody.
  std::vector<std::vector<int>> prefs{{1, 2}, {0}, {0}, {}};
  auto r = stable_roommates(prefs);
  EXPECT_EQ(r.partner, (std::vector<int>{1, 0, -1, -1}));
}

TEST(Roommates, SymmetricWeightsGiveTheGreedyMatching) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 50; ++trial) {
    const int n = 2 + trial % 17;
    std::vector<std::vector<double>> w(n, std::vector<double>(n, 0));
    std::uniform_int_distribution<int> d(0, 4);  // many ties and zeros
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j) w[i][j] = w[j][i] = d(rng);
    std::vector<std::vector<int>> prefs(n);
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j)
        if (j != i && w[i][j] > 0) prefs[i].push_back(j);
      std::stable_sort(prefs[i].begin(), prefs[i].end(), [&](int a, int b) { return w[i][a] > w[i][b]; });
    }
    auto r = stable_roommates(prefs);
    EXPECT_EQ(r.broken, 0);
    EXPECT_TRUE(stable(prefs, r.partner));
    // Greedy: edges by weight desc, then (min, max) id.
    std::vector<std::tuple<double, int, int>> edges;
    for (int i = 0; i < n; ++i)
      for (int j = i + 1; j < n; ++j)
        if (w[i][j] > 0) edges.push_back({-w[i][j], i, j});
    std::sort(edges.begin(), edges.end());
    std::vector<int> greedy(n, -1);
    for (auto [nw, i, j] : edges)
      if (greedy[i] < 0 && greedy[j] < 0) {
        greedy[i] = j;
        greedy[j] = i;
      }
    EXPECT_EQ(r.partner, greedy) << "trial " << trial;
  }
}
