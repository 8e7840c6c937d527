// Format detection, parse_matrix_format, reading files, and round trips:
// every format written and read back gives the same matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <unistd.h>

#include "matrix_test_util.hpp"

using namespace canopy;
using canopy::test::read_text;

static const std::string kData = std::string(CANOPY_TEST_DATA) + "/matrices/";

TEST(MatrixFormat, Names) {
  EXPECT_EQ(parse_matrix_format("auto"), MatrixFormat::Auto);
  EXPECT_EQ(parse_matrix_format("dense"), MatrixFormat::Dense);
  EXPECT_EQ(parse_matrix_format("mm"), MatrixFormat::MatrixMarket);
  EXPECT_EQ(parse_matrix_format("MatrixMarket"), MatrixFormat::MatrixMarket);
  EXPECT_EQ(parse_matrix_format("edges"), MatrixFormat::EdgeList);
  EXPECT_EQ(parse_matrix_format("edgelist"), MatrixFormat::EdgeList);
  try {
    parse_matrix_format("csv");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown matrix format 'csv', expected auto, dense"), std::string::npos);
  }
}

TEST(MatrixFormat, AutoDetection) {
  MatrixReadInfo info;
  read_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1\n", MatrixFormat::Auto, &info);
  EXPECT_EQ(info.format, MatrixFormat::MatrixMarket);
  read_text("# edges of a ring\n0 1 1\n1 2 1\n", MatrixFormat::Auto, &info);
  EXPECT_EQ(info.format, MatrixFormat::EdgeList);
  read_text("\n# tasks 4\n0 1 1\n", MatrixFormat::Auto, &info);
  EXPECT_EQ(info.format, MatrixFormat::EdgeList);
  // Three columns of integers are still a dense 3 x 3 matrix without a marker.
  auto m = read_text("# a comment\n0 1 1\n1 0 2\n1 2 0\n", MatrixFormat::Auto, &info);
  EXPECT_EQ(info.format, MatrixFormat::Dense);
  EXPECT_EQ(m.size(), 3);
  // The extension decides for .mtx and .edges/.el/.edgelist.
  read_text("0 1 1\n", MatrixFormat::Auto, &info, "x.el");
  EXPECT_EQ(info.format, MatrixFormat::EdgeList);
  EXPECT_THROW(read_text("0 1\n1 0\n", MatrixFormat::Auto, &info, "x.MTX"), Error);
  read_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 2 1\n", MatrixFormat::Auto, &info, "x.edges");
  EXPECT_EQ(info.format, MatrixFormat::MatrixMarket);
  // The lines read while detecting are replayed: line numbers stay right.
  std::string msg = canopy::test::read_error("# c\n\n0 1\n1 -1\n", MatrixFormat::Auto);
  EXPECT_EQ(msg.rfind("bad.txt:4: negative entry", 0), 0u) << msg;
  msg = canopy::test::read_error("# edges\n0 1 1\n0 1 x\n", MatrixFormat::Auto);
  EXPECT_EQ(msg.rfind("bad.txt:3: bad number 'x'", 0), 0u) << msg;
}

TEST(MatrixFormat, BundledFilesAgree) {
  MatrixReadInfo info;
  auto dense = read_matrix(kData + "ring8.txt", MatrixFormat::Auto, &info);
  EXPECT_EQ(info.format, MatrixFormat::Dense);
  EXPECT_EQ(dense.size(), 8);
  EXPECT_EQ(dense.num_edges(), 9);
  EXPECT_EQ(dense.at(0, 4), 1.5);
  EXPECT_EQ(read_matrix(kData + "ring8.csv"), dense);
  EXPECT_EQ(read_matrix(kData + "ring8.mtx", MatrixFormat::Auto, &info), dense);
  EXPECT_EQ(info.format, MatrixFormat::MatrixMarket);
  EXPECT_EQ(read_matrix(kData + "ring8.edges", MatrixFormat::Auto, &info), dense);
  EXPECT_EQ(info.format, MatrixFormat::EdgeList);
  EXPECT_FALSE(info.symmetrized);
}

static std::string file_error(const std::string& path) {
  try {
    read_matrix(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

TEST(MatrixFormat, FileErrorsNameTheFile) {
  EXPECT_EQ(file_error(kData + "ragged.txt").rfind(kData + "ragged.txt:3: ragged row: row 3 has 2 values", 0), 0u);
  EXPECT_EQ(file_error(kData + "lying_header.mtx").rfind(kData + "lying_header.mtx:4: 2 entries but the header", 0), 0u);
  EXPECT_EQ(file_error(kData + "no-such-file").rfind(kData + "no-such-file: cannot open", 0), 0u);
  EXPECT_NE(file_error(kData).find("is a directory"), std::string::npos);
}

// A random sparse asymmetric-looking matrix with awkward weights.
static CommMatrix random_matrix(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> task(0, n - 1);
  std::uniform_real_distribution<double> exp(-20, 20);
  std::vector<Edge> edges;
  for (int k = 0; k < 3 * n; ++k) edges.push_back({task(rng), task(rng), std::pow(10.0, exp(rng)) / 3.0});
  edges.push_back({0, n - 1, 0.1});
  edges.push_back({1, 2, 1e300});
  edges.push_back({2, 3, 5e-324});  // smallest subnormal
  return CommMatrix::from_edges(n, edges);
}

TEST(MatrixFormat, RoundTripsInEveryFormat) {
  for (int n : {1, 2, 7, 50}) {
    CommMatrix m = n < 4 ? CommMatrix::from_edges(n, n > 1 ? std::vector<Edge>{{0, 1, 2.5}} : std::vector<Edge>{})
                         : random_matrix(n, 42 + n);
    for (auto f : {MatrixFormat::Dense, MatrixFormat::MatrixMarket, MatrixFormat::EdgeList}) {
      std::ostringstream out;
      write_matrix(out, m, f);
      MatrixReadInfo info;
      // Auto-detection must recognise what canopy writes.
      auto back = read_text(out.str(), MatrixFormat::Auto, &info);
      EXPECT_EQ(info.format, f) << "n=" << n;
      EXPECT_FALSE(info.symmetrized);
      EXPECT_EQ(back, m) << "n=" << n << " format " << static_cast<int>(f) << "\n" << out.str();
    }
  }
}

TEST(MatrixFormat, EdgeListKeepsIsolatedTasks) {
  auto m = CommMatrix::from_edges(10, {{0, 1, 1}});
  std::ostringstream out;
  write_matrix(out, m, MatrixFormat::EdgeList);
  EXPECT_EQ(read_text(out.str()).size(), 10);
}

TEST(MatrixFormat, WritesFilesByExtension) {
  auto m = random_matrix(20, 7);
  auto dir = std::filesystem::temp_directory_path() / ("canopy_matrix_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* name : {"m.txt", "m.mtx", "m.edges"}) {
    std::string path = (dir / name).string();
    write_matrix(path, m, MatrixFormat::Auto);
    EXPECT_EQ(read_matrix(path), m) << name;
  }
  std::ifstream mtx(dir / "m.mtx");
  std::string first;
  std::getline(mtx, first);
  EXPECT_EQ(first, "%%MatrixMarket matrix coordinate real symmetric");
  EXPECT_THROW(write_matrix((dir / "no/such/dir.txt").string(), m, MatrixFormat::Dense), Error);
  std::filesystem::remove_all(dir);
}

TEST(MatrixFormat, DenseOutputLooksLikeTreeMatch) {
  std::ostringstream out;
  write_matrix(out, CommMatrix::from_dense({{0, 5, 0.25}, {5, 0, 0}, {0.25, 0, 0}}), MatrixFormat::Dense);
  EXPECT_EQ(out.str(), "0 5 0.25\n5 0 0\n0.25 0 0\n");
}
