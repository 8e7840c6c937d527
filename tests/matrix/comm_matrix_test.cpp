// CommMatrix construction: CSR layout, duplicates, diagonal, the
// symmetrization rule, queries, bad edges, and memory in proportion to edges.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"

using canopy::CommMatrix;
using canopy::Edge;

TEST(CommMatrix, EmptyAndSized) {
  CommMatrix empty;
  EXPECT_EQ(empty.size(), 0);
  EXPECT_EQ(empty.num_edges(), 0);
  CommMatrix m(5);
  EXPECT_EQ(m.size(), 5);
  EXPECT_EQ(m.num_edges(), 0);
  EXPECT_EQ(m.at(1, 3), 0.0);
  EXPECT_EQ(m.row_sum(4), 0.0);
  EXPECT_EQ(m.total(), 0.0);
  EXPECT_THROW(CommMatrix(-1), canopy::Error);
  EXPECT_THROW(CommMatrix(static_cast<int>(canopy::kMaxTasks + 1)), canopy::Error);
}

TEST(CommMatrix, CsrStoresBothDirectionsSorted) {
  // Edges in scrambled order and direction.
  auto m = CommMatrix::from_edges(4, {{3, 0, 2}, {1, 0, 5}, {2, 1, 1}, {0, 2, 7}});
  EXPECT_EQ(m.num_edges(), 4);
  ASSERT_EQ(m.cols().size(), 8u);
  EXPECT_EQ(m.row_ptr(), (std::vector<std::int64_t>{0, 3, 5, 7, 8}));
  EXPECT_EQ(m.cols(), (std::vector<int>{1, 2, 3, 0, 2, 0, 1, 0}));
  EXPECT_EQ(m.weights(), (std::vector<double>{5, 7, 2, 5, 1, 7, 1, 2}));
  EXPECT_EQ(m.at(0, 1), 5);
  EXPECT_EQ(m.at(1, 0), 5);
  EXPECT_EQ(m.at(1, 3), 0);
  EXPECT_EQ(m.row_sum(0), 14);
  EXPECT_EQ(m.total(), 15);
  auto e = m.edges();
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(e[0].i, 0);
  EXPECT_EQ(e[0].j, 1);
  EXPECT_EQ(e[3].i, 1);
  EXPECT_EQ(e[3].j, 2);
  for (const Edge& x : e) EXPECT_LT(x.i, x.j);
}

TEST(CommMatrix, DuplicatesAddUpDiagonalAndZerosDropped) {
  bool sym = true;
  auto m = CommMatrix::from_edges(3, {{0, 1, 2}, {0, 1, 3}, {1, 1, 9}, {1, 2, 0}}, &sym);
  EXPECT_EQ(m.at(0, 1), 5);
  EXPECT_EQ(m.at(1, 1), 0);
  EXPECT_EQ(m.num_edges(), 1);  // the zero-weight edge is no edge
  EXPECT_FALSE(sym);           // one direction only: a listing, not asymmetric traffic
}

TEST(CommMatrix, SymmetricInputKeptAsIs) {
  bool sym = true;
  auto m = CommMatrix::from_dense({{0, 5, 1}, {5, 0, 0}, {1, 0, 0}}, &sym);
  EXPECT_FALSE(sym);
  EXPECT_EQ(m.at(0, 1), 5);  // not 10: a symmetric matrix means what it says
  EXPECT_EQ(m.at(2, 0), 1);
  EXPECT_EQ(m.total(), 6);
}

TEST(CommMatrix, AsymmetricBecomesCPlusCTransposed) {
  bool sym = false;
  auto m = CommMatrix::from_dense({{0, 5, 0}, {3, 0, 4}, {0, 4, 0}}, &sym);
  EXPECT_TRUE(sym);
  EXPECT_EQ(m.at(0, 1), 8);
  EXPECT_EQ(m.at(1, 0), 8);
  // Once the matrix is asymmetric, C + Cᵀ holds for every pair, equal ones too.
  EXPECT_EQ(m.at(1, 2), 8);
  EXPECT_EQ(m.dense(), (std::vector<std::vector<double>>{{0, 8, 0}, {8, 0, 8}, {0, 8, 0}}));
}

TEST(CommMatrix, TriangularInputIsAListingOfASymmetricMatrix) {
  bool sym = true;
  auto m = CommMatrix::from_dense({{0, 5, 2}, {0, 0, 4}, {0, 0, 0}}, &sym);
  EXPECT_FALSE(sym);
  EXPECT_EQ(m, CommMatrix::from_dense({{0, 5, 2}, {5, 0, 4}, {2, 4, 0}}));
}

TEST(CommMatrix, EqualityIsCanonical) {
  auto a = CommMatrix::from_edges(3, {{0, 1, 1}, {1, 2, 2}});
  auto b = CommMatrix::from_edges(3, {{2, 1, 2}, {1, 0, 1}});
  auto c = CommMatrix::from_edges(3, {{1, 2, 2}, {2, 1, 2}, {0, 1, 1}, {1, 0, 1}});
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, c);
  EXPECT_NE(a, CommMatrix::from_edges(3, {{0, 1, 1}}));
}

static std::string edge_error(int n, std::vector<Edge> edges) {
  try {
    CommMatrix::from_edges(n, edges);
  } catch (const canopy::Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(CommMatrix, BadEdgesNameTheValue) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_NE(edge_error(3, {{0, 3, 1}}).find("task 3 is out of range, expected 0..2"), std::string::npos);
  EXPECT_NE(edge_error(3, {{-1, 0, 1}}).find("task -1"), std::string::npos);
  EXPECT_NE(edge_error(3, {{0, 1, -2}}).find("weight -2"), std::string::npos);
  EXPECT_NE(edge_error(3, {{0, 1, std::nan("")}}).find("weight nan"), std::string::npos);
  EXPECT_NE(edge_error(3, {{0, 1, inf}}).find("weight inf"), std::string::npos);
  EXPECT_NE(edge_error(-2, {}).find("-2"), std::string::npos);
  EXPECT_NE(edge_error(static_cast<int>(canopy::kMaxTasks) + 1, {}).find("too many tasks"), std::string::npos);
  const double big = std::numeric_limits<double>::max();
  EXPECT_NE(edge_error(2, {{0, 1, big}, {0, 1, big}}).find("add up to more than the largest double"),
            std::string::npos);
}

TEST(CommMatrix, FromDenseRejectsBadRows) {
  EXPECT_THROW(CommMatrix::from_dense({{0, 1}, {1}}), canopy::Error);
  EXPECT_THROW(CommMatrix::from_dense({{0, -1}, {1, 0}}), canopy::Error);
  try {
    CommMatrix::from_dense({{0, 1}, {1, 0, 2}});
    FAIL();
  } catch (const canopy::Error& e) {
    EXPECT_NE(std::string(e.what()).find("row 1 has 3 values, expected 2"), std::string::npos) << e.what();
  }
}

TEST(CommMatrix, QueriesRejectOutOfRange) {
  CommMatrix m(3);
  EXPECT_THROW(m.at(0, 3), canopy::Error);
  EXPECT_THROW(m.at(-1, 0), canopy::Error);
  EXPECT_THROW(m.row_sum(3), canopy::Error);
}

// A 100,000-task 2D 5-point stencil: memory must follow the 4n directed
// entries, never n² (which would be 80 GB of doubles).
TEST(CommMatrix, StencilMemoryIsProportionalToEdges) {
  const int side = 316, n = side * side;  // 99,856 tasks
  std::vector<Edge> edges;
  for (int y = 0; y < side; ++y)
    for (int x = 0; x < side; ++x) {
      int t = y * side + x;
      if (x + 1 < side) edges.push_back({t, t + 1, 1.0});
      if (y + 1 < side) edges.push_back({t, t + side, 2.0});
    }
  bool sym = true;
  auto m = CommMatrix::from_edges(n, edges, &sym);
  EXPECT_FALSE(sym);
  EXPECT_EQ(m.size(), n);
  EXPECT_EQ(m.num_edges(), static_cast<std::int64_t>(edges.size()));
  EXPECT_EQ(m.num_edges(), 2LL * side * (side - 1));
  EXPECT_LE(m.cols().capacity(), 4u * n);
  EXPECT_LE(m.weights().capacity(), 4u * n);
  EXPECT_EQ(m.row_ptr().size(), static_cast<std::size_t>(n) + 1);
  EXPECT_EQ(m.at(side + 1, side + 2), 1.0);
  EXPECT_EQ(m.at(side + 1, 1), 2.0);
  EXPECT_EQ(m.row_sum(side + 1), 6.0);  // interior task: 1 + 1 + 2 + 2
  EXPECT_EQ(m.total(), side * (side - 1) * 3.0);
}
