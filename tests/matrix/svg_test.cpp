// matrix_svg: a well-formed standalone picture, log grey scale, and binning
// that keeps a 100,000-task matrix small.
#include <gtest/gtest.h>

#include <regex>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"

using namespace canopy;

static int count(const std::string& s, const std::string& what) {
  int c = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++c;
  return c;
}

TEST(MatrixSvg, SmallMatrix) {
  auto m = CommMatrix::from_dense({{0, 1000, 1}, {1000, 0, 0}, {1, 0, 0}});
  std::string svg = matrix_svg(m);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("</svg>\n"), std::string::npos);
  EXPECT_NE(svg.find("<title>communication matrix: 3 tasks, 2 edges</title>"), std::string::npos);
  EXPECT_EQ(count(svg, "<rect"), count(svg, "/>") - count(svg, "<stop"));  // every rect is closed
  // Both directions of both edges are drawn: 4 cells, black for 1000 and
  // light grey (not white) for 1.
  EXPECT_EQ(count(svg, "width=\"1\" height=\"1\""), 4);
  EXPECT_EQ(count(svg, "fill=\"#000000\""), 2);
  EXPECT_EQ(count(svg, "fill=\"#e0e0e0\""), 2);
  EXPECT_EQ(count(svg, "<text"), count(svg, "</text>"));
}

TEST(MatrixSvg, LogScaleOrdersGreys) {
  auto m = CommMatrix::from_edges(4, {{0, 1, 1}, {1, 2, 10}, {2, 3, 100}});
  std::string svg = matrix_svg(m);
  // 10 is halfway between 1 and 100 on a log scale: grey 112 = 0x70.
  EXPECT_EQ(count(svg, "fill=\"#707070\""), 2);
}

TEST(MatrixSvg, BinsLargeMatrices) {
  const int n = 100000;
  std::vector<Edge> edges;
  for (int t = 0; t + 1 < n; ++t) edges.push_back({t, t + 1, 1.0});
  auto m = CommMatrix::from_edges(n, edges);
  std::string svg = matrix_svg(m, 256);
  EXPECT_NE(svg.find("100000 tasks, 99999 edges (391 x 391 tasks per cell)"), std::string::npos);
  // A chain binned to 256 cells: the diagonal blocks and their neighbours.
  int cells = count(svg, "width=\"1\" height=\"1\"");
  EXPECT_GE(cells, 256);
  EXPECT_LE(cells, 3 * 256);
  EXPECT_LT(svg.size(), 100000u);
  EXPECT_NE(svg.find("log scale of the sum per cell"), std::string::npos);
  EXPECT_THROW(matrix_svg(m, 0), Error);
}

TEST(MatrixSvg, EmptyMatrix) {
  std::string svg = matrix_svg(CommMatrix(0));
  EXPECT_NE(svg.find("0 tasks, 0 edges"), std::string::npos);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
}
