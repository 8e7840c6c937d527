// Edge-list reader: ids, weights, the "# tasks N" header, and errors.
#include <gtest/gtest.h>

#include "matrix_test_util.hpp"

using namespace canopy;
using canopy::test::read_error;
using canopy::test::read_text;

static void expect_error(const std::string& text, const std::string& prefix, const std::string& part) {
  std::string msg = read_error(text, MatrixFormat::EdgeList, "bad.edges");
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
  EXPECT_NE(msg.find(part), std::string::npos) << msg;
  EXPECT_NE(msg.find(", expected "), std::string::npos) << msg;
}

TEST(ReadEdges, SizeFromLargestId) {
  MatrixReadInfo info;
  auto m = read_text("# a comment\n0 1 2.5\n\n1 3 1\n2 2 4\n", MatrixFormat::EdgeList, &info);
  EXPECT_EQ(info.format, MatrixFormat::EdgeList);
  EXPECT_TRUE(info.had_diagonal);
  EXPECT_FALSE(info.symmetrized);  // each pair once: a listing of a symmetric matrix
  EXPECT_EQ(m.size(), 4);
  EXPECT_EQ(m.at(1, 0), 2.5);
  EXPECT_EQ(m.at(3, 1), 1);
  EXPECT_EQ(m.num_edges(), 2);
}

TEST(ReadEdges, TasksHeaderAndUnweightedLines) {
  auto m = read_text("# tasks: 10\n0 1\n4 5 2\n", MatrixFormat::EdgeList);
  EXPECT_EQ(m.size(), 10);
  EXPECT_EQ(m.at(0, 1), 1);
  EXPECT_EQ(read_text("# tasks 6\n", MatrixFormat::EdgeList).size(), 6);
  // "tasks" followed by words is a plain comment.
  EXPECT_EQ(read_text("# tasks are MPI ranks\n0 2 1\n", MatrixFormat::EdgeList).size(), 3);
}

TEST(ReadEdges, BothDirectionsEqualIsASymmetricListing) {
  MatrixReadInfo info;
  auto m = read_text("0 1 3\n1 0 3\n", MatrixFormat::EdgeList, &info);
  EXPECT_FALSE(info.symmetrized);
  EXPECT_EQ(m.at(0, 1), 3);
}

TEST(ReadEdges, AsymmetricPairsAreAdded) {
  MatrixReadInfo info;
  auto m = read_text("0 1 3\n1 0 2\n", MatrixFormat::EdgeList, &info);
  EXPECT_TRUE(info.symmetrized);
  EXPECT_EQ(m.at(0, 1), 5);
  // Once the input is asymmetric it is read as directed traffic throughout:
  // a pair given both ways with equal weights adds up too (and is reported).
  m = read_text("0 1 3\n2 1 4\n1 2 4\n", MatrixFormat::EdgeList, &info);
  EXPECT_TRUE(info.symmetrized);
  EXPECT_EQ(m.at(1, 2), 8);
  EXPECT_EQ(m.at(0, 1), 3);
}

TEST(ReadEdges, Errors) {
  expect_error("# tasks 4\n0 1 1\n2 7 1\n", "bad.edges:3: ", "task id 7 is beyond the 4 tasks announced at line 1");
  expect_error("0 1 1\n1 -2 1\n", "bad.edges:2: ", "negative task id -2");
  expect_error("0 1 1\n1 2 -3\n", "bad.edges:2: ", "negative entry '-3' for edge 1 - 2");
  expect_error("0 1 nan\n", "bad.edges:1: ", "NaN entry");
  expect_error("0 1 inf\n", "bad.edges:1: ", "infinite entry");
  expect_error("0 1 1 1\n", "bad.edges:1: ", "edge line has 4 fields, expected 'i j weight'");
  expect_error("0\n", "bad.edges:1: ", "edge line has 1 fields");
  expect_error("0 a 1\n", "bad.edges:1: ", "bad task id 'a'");
  expect_error("0 1.5 1\n", "bad.edges:1: ", "bad task id '1.5'");
  expect_error("0 99999999 1\n", "bad.edges:1: ", "too many tasks: task id '99999999'");
  expect_error("0 1000000000000000000000000000000 1\n", "bad.edges:1: ", "too many tasks");
  expect_error("# tasks 1000000000000000000000000000000\n", "bad.edges:1: ", "too many tasks");
  expect_error("# tasks 3\n# tasks 4\n", "bad.edges:2: ", "contradicts '# tasks 3' at line 1");
  expect_error("# tasks -3\n", "bad.edges:1: ", "bad task count '-3'");
  expect_error("", "bad.edges:1: ", "empty file");
  expect_error("# nothing\n", "bad.edges:1: ", "no edges and no '# tasks N' line");
}
