// Dense reader: blank/comma separators, comments, zeros skipped, and every
// bad input named by file, line and problem.
#include <gtest/gtest.h>

#include "matrix_test_util.hpp"

using namespace canopy;
using canopy::test::read_error;
using canopy::test::read_text;

static void expect_error(const std::string& text, const std::string& prefix, const std::string& part) {
  std::string msg = read_error(text, MatrixFormat::Dense);
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
  EXPECT_NE(msg.find(part), std::string::npos) << msg;
  EXPECT_NE(msg.find(", expected "), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
}

TEST(ReadDense, BlanksCommasAndComments) {
  MatrixReadInfo info;
  auto a = read_text("# comment\n\n0 2 0\n2 0 3\n\n  # indented comment\n0 3 0\n", MatrixFormat::Dense, &info);
  EXPECT_EQ(info.format, MatrixFormat::Dense);
  EXPECT_FALSE(info.symmetrized);
  EXPECT_FALSE(info.had_diagonal);
  auto b = read_text("0,2,0\r\n2 , 0,3\r\n0\t3\t0\r\n", MatrixFormat::Dense);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.size(), 3);
  EXPECT_EQ(a.num_edges(), 2);
  EXPECT_EQ(a.at(1, 2), 3);
  EXPECT_EQ(a.cols().size(), 4u);  // zeros are not stored
}

TEST(ReadDense, NumberSyntax) {
  auto m = read_text("0 1e3 +2.5\n1E3 0 .5\n2.5 0.5 -0\n", MatrixFormat::Dense);
  EXPECT_EQ(m.at(0, 1), 1000);
  EXPECT_EQ(m.at(0, 2), 2.5);
  EXPECT_EQ(m.at(1, 2), 0.5);
  // Too small to represent is no traffic, not an error.
  EXPECT_EQ(read_text("0 1e-400\n1e-400 0\n", MatrixFormat::Dense).num_edges(), 0);
}

TEST(ReadDense, DiagonalAndAsymmetryReported) {
  MatrixReadInfo info;
  auto m = read_text("7 1\n2 0\n", MatrixFormat::Dense, &info);
  EXPECT_TRUE(info.had_diagonal);
  EXPECT_TRUE(info.symmetrized);
  EXPECT_EQ(m.at(0, 1), 3);
  EXPECT_EQ(m.at(0, 0), 0);
}

TEST(ReadDense, RaggedRow) {
  expect_error("0 1 2\n1 0 3\n2 3\n", "bad.txt:3: ", "row 3 has 2 values, expected 3 values like row 1");
  expect_error("0 1\n1 0 3 4\n", "bad.txt:2: ", "row 2 has 4 values, expected 2");
  expect_error("# c\n0 1\n\n1 0 3\n", "bad.txt:4: ", "row 2 has 3 values");
}

TEST(ReadDense, NonSquare) {
  expect_error("0 1 2\n1 0 3\n", "bad.txt:2: ", "non-square matrix: 2 rows of 3 values, expected 3 rows");
  expect_error("0 1\n1 0\n1 1\n", "bad.txt:3: ", "non-square matrix");
}

TEST(ReadDense, BadEntriesNameValueAndColumn) {
  expect_error("0 1\n-1 0\n", "bad.txt:2: ", "negative entry '-1' in row 2, column 1");
  expect_error("0 nan\n1 0\n", "bad.txt:1: ", "NaN entry 'nan' in row 1, column 2");
  expect_error("0 1\n1 inf\n", "bad.txt:2: ", "infinite entry 'inf' in row 2, column 2");
  expect_error("0 1e999\n1 0\n", "bad.txt:1: ", "entry '1e999' in row 1, column 2 is too large");
  expect_error("0 x1\n1 0\n", "bad.txt:1: ", "bad number 'x1' in row 1, column 2");
  expect_error("0 1\n1 0,\n", "bad.txt:2: ", "empty value in row 2, column 3");
  expect_error("0,,1\n", "bad.txt:1: ", "empty value in row 1, column 2");
  expect_error("0 1\n1 +-1\n", "bad.txt:2: ", "bad number '+-1'");
  expect_error("0 1\n1 0x10\n", "bad.txt:2: ", "bad number '0x10'");
}

TEST(ReadDense, EmptyFile) {
  expect_error("", "bad.txt:1: ", "empty file");
  expect_error("# only\n\n# comments\n", "bad.txt:3: ", "empty file");
}

TEST(ReadDense, GarbageIsAnErrorNotACrash) {
  std::string bin("\x00\xff\x7f\x01 \x80\n\x1b[31m", 13);
  std::string msg = read_error(bin, MatrixFormat::Dense);
  EXPECT_EQ(msg.rfind("bad.txt:1: bad number '\\x00\\xff", 0), 0u) << msg;
  std::string longtok(1000, '9');
  msg = read_error("0 " + longtok + "x\n", MatrixFormat::Dense);
  EXPECT_NE(msg.find("..."), std::string::npos);  // the token is cut short
  EXPECT_LT(msg.size(), 200u);
}
