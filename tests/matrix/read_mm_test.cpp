// MatrixMarket reader: the supported variants, and a header that lies.
#include <gtest/gtest.h>

#include "matrix_test_util.hpp"

using namespace canopy;
using canopy::test::read_error;
using canopy::test::read_text;

static void expect_error(const std::string& text, const std::string& prefix, const std::string& part) {
  std::string msg = read_error(text, MatrixFormat::MatrixMarket, "bad.mtx");
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
  EXPECT_NE(msg.find(part), std::string::npos) << msg;
  EXPECT_NE(msg.find(", expected "), std::string::npos) << msg;
}

TEST(ReadMatrixMarket, GeneralRealWithComments) {
  MatrixReadInfo info;
  auto m = read_text(
      "%%MatrixMarket matrix coordinate real general\n% a comment\n%\n\n3 3 5\n1 2 1.5\n2 1 1.5\n2 3 4\n3 2 4\n3 3 9\n",
      MatrixFormat::MatrixMarket, &info);
  EXPECT_EQ(info.format, MatrixFormat::MatrixMarket);
  EXPECT_TRUE(info.had_diagonal);
  EXPECT_FALSE(info.symmetrized);
  EXPECT_EQ(m.size(), 3);
  EXPECT_EQ(m.at(0, 1), 1.5);
  EXPECT_EQ(m.at(2, 1), 4);
  EXPECT_EQ(m.num_edges(), 2);
}

TEST(ReadMatrixMarket, SymmetricIntegerAndPattern) {
  auto sym = read_text("%%MatrixMarket matrix coordinate integer symmetric\n3 3 2\n2 1 7\n3 2 5\n",
                       MatrixFormat::MatrixMarket);
  EXPECT_EQ(sym, CommMatrix::from_dense({{0, 7, 0}, {7, 0, 5}, {0, 5, 0}}));
  auto pat = read_text("%%matrixmarket MATRIX Coordinate Pattern General\n3 3 2\n1 2\n3 1\n",
                       MatrixFormat::MatrixMarket);
  EXPECT_EQ(pat, CommMatrix::from_dense({{0, 1, 1}, {1, 0, 0}, {1, 0, 0}}));
}

TEST(ReadMatrixMarket, AsymmetricGeneralIsSymmetrized) {
  MatrixReadInfo info;
  auto m = read_text("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 2 3\n2 1 1\n",
                     MatrixFormat::MatrixMarket, &info);
  EXPECT_TRUE(info.symmetrized);
  EXPECT_EQ(m.at(0, 1), 4);
}

TEST(ReadMatrixMarket, HeaderThatLies) {
  const std::string h = "%%MatrixMarket matrix coordinate real general\n";
  expect_error(h + "3 3 4\n1 2 1\n2 3 2\n", "bad.mtx:4: ", "2 entries but the header at line 2 announced 4");
  expect_error(h + "3 3 1\n1 2 1\n2 3 2\n", "bad.mtx:4: ", "more entries than the 1 announced at line 2");
  expect_error(h + "3 3 1\n1 4 1\n", "bad.mtx:3: ", "column index '4' is beyond the announced size 3 (line 2)");
  expect_error(h + "3 3 1\n0 1 1\n", "bad.mtx:3: ", "row index '0' is beyond the announced size 3");
  expect_error(h + "3 4 1\n1 2 1\n", "bad.mtx:2: ", "non-square size 3 x 4");
  expect_error(h + "2 2 5\n", "bad.mtx:2: ", "5 entries announced but a 2 x 2 general matrix holds at most 4");
  expect_error(h + "1000000000000000000000000000000 1000000000000000000000000000000 1\n", "bad.mtx:2: ",
               "too many tasks");
  expect_error(h + "20000000 20000000 1\n", "bad.mtx:2: ", "too many tasks: size '20000000', expected at most");
  // An absurd entry count is an error, not an allocation.
  expect_error(h + "3 3 999999999999999999\n", "bad.mtx:2: ", "entries announced");
}

TEST(ReadMatrixMarket, UnsupportedVariants) {
  expect_error("%%MatrixMarket matrix array real general\n2 2\n0\n1\n1\n0\n", "bad.mtx:1: ",
               "array (dense) format is unsupported, expected 'coordinate'");
  expect_error("%%MatrixMarket matrix coordinate complex general\n", "bad.mtx:1: ", "unsupported field 'complex'");
  expect_error("%%MatrixMarket matrix coordinate real skew-symmetric\n", "bad.mtx:1: ",
               "unsupported symmetry 'skew-symmetric'");
  expect_error("%%MatrixMarket vector coordinate real general\n", "bad.mtx:1: ", "unsupported object 'vector'");
  expect_error("%%MatrixMarket matrix coordinate\n", "bad.mtx:1: ", "header has 3 words");
  expect_error("3 3 1\n1 2 1\n", "bad.mtx:1: ", "missing MatrixMarket header");
  expect_error("", "bad.mtx:1: ", "empty file");
}

TEST(ReadMatrixMarket, BadLines) {
  const std::string h = "%%MatrixMarket matrix coordinate real general\n";
  expect_error(h, "bad.mtx:1: ", "no size line");
  expect_error(h + "3 3\n", "bad.mtx:2: ", "size line has 2 numbers");
  expect_error(h + "3 3 x\n", "bad.mtx:2: ", "bad size 'x'");
  expect_error(h + "3 3 -1\n", "bad.mtx:2: ", "bad size '-1'");
  expect_error(h + "3 3 1\n1 2\n", "bad.mtx:3: ", "entry has 2 fields, expected 'i j value'");
  expect_error(h + "3 3 1\n1 2 3 4\n", "bad.mtx:3: ", "entry has 4 fields");
  expect_error(h + "3 3 1\n1 2 -3\n", "bad.mtx:3: ", "negative entry '-3' at row 1, column 2");
  expect_error(h + "3 3 1\n1 2 nan\n", "bad.mtx:3: ", "NaN entry");
  expect_error(h + "3 3 1\n1 2 -inf\n", "bad.mtx:3: ", "infinite entry '-inf'");
  expect_error(h + "3 3 1\n1 b 1\n", "bad.mtx:3: ", "bad column index 'b'");
  expect_error("%%MatrixMarket matrix coordinate integer general\n2 2 1\n1 2 1.5\n", "bad.mtx:3: ",
               "bad integer '1.5'");
  expect_error("%%MatrixMarket matrix coordinate pattern general\n2 2 1\n1 2 1\n", "bad.mtx:3: ",
               "entry has 3 fields, expected 'i j' (pattern matrix)");
}
