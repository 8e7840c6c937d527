// C API: matrix handles (empty, edges, dense, files), accessors, writing,
// and the status of each kind of bad input.
#include <cmath>
#include <limits>

#include "canopy/comm_matrix.hpp"
#include "capi_test_util.hpp"

using namespace capi_test;

TEST(CapiMatrix, EmptyMatrix) {
  Matrix m = empty_matrix(5);
  int n = 0;
  int64_t edges = -1;
  double w = -1;
  EXPECT_CANOPY_OK(canopy_matrix_size(m.get(), &n));
  EXPECT_CANOPY_OK(canopy_matrix_num_edges(m.get(), &edges));
  EXPECT_CANOPY_OK(canopy_matrix_get(m.get(), 1, 3, &w));
  EXPECT_EQ(n, 5);
  EXPECT_EQ(edges, 0);
  EXPECT_EQ(w, 0.0);
  canopy_matrix_t* raw = nullptr;
  EXPECT_CANOPY_OK(canopy_matrix_create(&raw, 0));
  canopy_matrix_destroy(raw);
  EXPECT_CANOPY_ERROR(canopy_matrix_create(&raw, -3), CANOPY_EINVAL, "canopy_matrix_create", "-3");
  EXPECT_CANOPY_ERROR(canopy_matrix_create(&raw, std::numeric_limits<int>::max()), CANOPY_ERANGE,
                      "canopy_matrix_create", "limit");
  EXPECT_CANOPY_ERROR(canopy_matrix_create(nullptr, 3), CANOPY_EINVAL, "canopy_matrix_create", "out is NULL");
  canopy_matrix_destroy(nullptr);
}

TEST(CapiMatrix, FromEdgesSymmetrizes) {
  const canopy_edge_t edges[] = {{0, 1, 2.0}, {1, 0, 4.0}, {2, 3, 3.0}, {3, 3, 9.0}};
  canopy_matrix_t* raw = nullptr;
  unsigned info = 0xdead;
  EXPECT_CANOPY_OK(canopy_matrix_create_from_edges(&raw, 4, edges, 4, &info));
  Matrix m(raw);
  EXPECT_EQ(info, CANOPY_MATRIX_SYMMETRIZED);
  double w = 0;
  EXPECT_CANOPY_OK(canopy_matrix_get(m.get(), 1, 0, &w));
  EXPECT_EQ(w, 6.0);  // C + Ct
  EXPECT_CANOPY_OK(canopy_matrix_get(m.get(), 3, 2, &w));
  EXPECT_EQ(w, 3.0);  // given in one direction: a listing of a symmetric matrix
  EXPECT_CANOPY_OK(canopy_matrix_get(m.get(), 3, 3, &w));
  EXPECT_EQ(w, 0.0);  // self-edges are dropped
  int64_t n = 0;
  EXPECT_CANOPY_OK(canopy_matrix_num_edges(m.get(), &n));
  EXPECT_EQ(n, 2);

  const canopy_edge_t symmetric[] = {{0, 1, 2.0}, {1, 0, 2.0}};
  EXPECT_CANOPY_OK(canopy_matrix_create_from_edges(&raw, 2, symmetric, 2, &info));
  EXPECT_EQ(info, 0u);
  canopy_matrix_destroy(raw);
  EXPECT_CANOPY_OK(canopy_matrix_create_from_edges(&raw, 3, nullptr, 0, nullptr));  // no edges at all
  canopy_matrix_destroy(raw);
}

TEST(CapiMatrix, FromEdgesErrors) {
  canopy_matrix_t* raw = nullptr;
  const canopy_edge_t out_of_range[] = {{0, 1, 1.0}, {1, 4, 1.0}};
  EXPECT_CANOPY_ERROR(canopy_matrix_create_from_edges(&raw, 4, out_of_range, 2, nullptr), CANOPY_ERANGE,
                      "canopy_matrix_create_from_edges", "edge 1: (1, 4) is outside [0, 4)");
  const canopy_edge_t negative[] = {{0, 1, -1.0}};
  EXPECT_CANOPY_ERROR(canopy_matrix_create_from_edges(&raw, 2, negative, 1, nullptr), CANOPY_EINVAL,
                      "canopy_matrix_create_from_edges", "-1");
  const canopy_edge_t nan[] = {{0, 1, std::nan("")}};
  EXPECT_EQ(canopy_matrix_create_from_edges(&raw, 2, nan, 1, nullptr), CANOPY_EINVAL);
  const canopy_edge_t inf[] = {{0, 1, std::numeric_limits<double>::infinity()}};
  EXPECT_EQ(canopy_matrix_create_from_edges(&raw, 2, inf, 1, nullptr), CANOPY_EINVAL);
  EXPECT_CANOPY_ERROR(canopy_matrix_create_from_edges(&raw, 2, nullptr, 3, nullptr), CANOPY_EINVAL,
                      "canopy_matrix_create_from_edges", "edges is NULL");
  EXPECT_EQ(raw, nullptr);
}

TEST(CapiMatrix, FromDense) {
  const double values[] = {0, 1, 2,  //
                           1, 0, 5,  //
                           2, 5, 7};
  canopy_matrix_t* raw = nullptr;
  unsigned info = 77;
  EXPECT_CANOPY_OK(canopy_matrix_create_from_dense(&raw, 3, values, &info));
  Matrix m(raw);
  EXPECT_EQ(info, 0u);
  double w = 0;
  EXPECT_CANOPY_OK(canopy_matrix_get(m.get(), 2, 1, &w));
  EXPECT_EQ(w, 5.0);
  EXPECT_CANOPY_OK(canopy_matrix_get(m.get(), 2, 2, &w));
  EXPECT_EQ(w, 0.0);
  const double asym[] = {0, 1, 3, 0};
  EXPECT_CANOPY_OK(canopy_matrix_create_from_dense(&raw, 2, asym, &info));
  EXPECT_EQ(info, CANOPY_MATRIX_SYMMETRIZED);
  canopy_matrix_destroy(raw);
  const double bad[] = {0, -2, -2, 0};
  EXPECT_EQ(canopy_matrix_create_from_dense(&raw, 2, bad, nullptr), CANOPY_EINVAL);
  EXPECT_CANOPY_ERROR(canopy_matrix_create_from_dense(&raw, 2, nullptr, nullptr), CANOPY_EINVAL,
                      "canopy_matrix_create_from_dense", "values is NULL");
  EXPECT_CANOPY_OK(canopy_matrix_create_from_dense(&raw, 0, nullptr, nullptr));
  canopy_matrix_destroy(raw);
}

TEST(CapiMatrix, FileRoundTripInEveryFormat) {
  const canopy_edge_t edges[] = {{0, 1, 2.5}, {1, 2, 4.0}, {0, 3, 1.0}};
  canopy_matrix_t* raw = nullptr;
  ASSERT_EQ(canopy_matrix_create_from_edges(&raw, 4, edges, 3, nullptr), CANOPY_OK);
  Matrix m(raw);
  const struct {
    canopy_matrix_format_t format;
    const char* name;
  } formats[] = {{CANOPY_MATRIX_FORMAT_DENSE, "m.dense"},
                 {CANOPY_MATRIX_FORMAT_MATRIXMARKET, "m.mtx"},
                 {CANOPY_MATRIX_FORMAT_EDGELIST, "m.edges"}};
  for (const auto& f : formats) {
    TempFile file(f.name);
    EXPECT_CANOPY_OK(canopy_matrix_write_file(m.get(), file.path(), f.format));
    for (canopy_matrix_format_t read_as : {CANOPY_MATRIX_FORMAT_AUTO, f.format}) {
      unsigned info = 99;
      EXPECT_CANOPY_OK(canopy_matrix_create_from_file(&raw, file.path(), read_as, &info));
      Matrix back(raw);
      EXPECT_EQ(info, 0u) << f.name;
      int n = 0;
      EXPECT_CANOPY_OK(canopy_matrix_size(back.get(), &n));
      ASSERT_EQ(n, 4) << f.name;
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          double a = 0, b = 0;
          canopy_matrix_get(m.get(), i, j, &a);
          canopy_matrix_get(back.get(), i, j, &b);
          EXPECT_EQ(a, b) << f.name << " " << i << "," << j;
        }
    }
  }
}

TEST(CapiMatrix, FileErrors) {
  canopy_matrix_t* raw = nullptr;
  EXPECT_CANOPY_ERROR(canopy_matrix_create_from_file(&raw, "/nonexistent/comm.mat", CANOPY_MATRIX_FORMAT_AUTO, nullptr),
                      CANOPY_EIO, "canopy_matrix_create_from_file", "/nonexistent/comm.mat");
  EXPECT_CANOPY_ERROR(
      canopy_matrix_create_from_file(&raw, ::testing::TempDir().c_str(), CANOPY_MATRIX_FORMAT_AUTO, nullptr),
      CANOPY_EIO, "canopy_matrix_create_from_file", "directory");
  TempFile ragged("ragged.mat", "0 1 2\n1 0\n2 1 0\n");
  EXPECT_CANOPY_ERROR(canopy_matrix_create_from_file(&raw, ragged.path(), CANOPY_MATRIX_FORMAT_DENSE, nullptr),
                      CANOPY_EPARSE, "canopy_matrix_create_from_file", std::string(ragged.path()) + ":2");
  TempFile negative("negative.mat", "0 -1\n-1 0\n");
  EXPECT_CANOPY_ERROR(canopy_matrix_create_from_file(&raw, negative.path(), CANOPY_MATRIX_FORMAT_AUTO, nullptr),
                      CANOPY_EPARSE, "canopy_matrix_create_from_file", negative.path());
  TempFile ok("ok.mat", "0 1\n1 0\n");
  EXPECT_CANOPY_ERROR(
      canopy_matrix_create_from_file(&raw, ok.path(), static_cast<canopy_matrix_format_t>(9), nullptr),
      CANOPY_EINVAL, "canopy_matrix_create_from_file", "format 9");
  EXPECT_CANOPY_ERROR(canopy_matrix_create_from_file(&raw, nullptr, CANOPY_MATRIX_FORMAT_AUTO, nullptr),
                      CANOPY_EINVAL, "canopy_matrix_create_from_file", "path is NULL");
  EXPECT_EQ(raw, nullptr);
  // A diagonal in a file is reported, not an error.
  TempFile diagonal("diagonal.mat", "5 1\n1 0\n");
  unsigned info = 0;
  EXPECT_CANOPY_OK(canopy_matrix_create_from_file(&raw, diagonal.path(), CANOPY_MATRIX_FORMAT_DENSE, &info));
  EXPECT_EQ(info, CANOPY_MATRIX_HAD_DIAGONAL);
  canopy_matrix_destroy(raw);
}

TEST(CapiMatrix, WriteAndAccessorErrors) {
  Matrix m = empty_matrix(3);
  EXPECT_CANOPY_ERROR(canopy_matrix_write_file(m.get(), "/nonexistent/dir/m.mat", CANOPY_MATRIX_FORMAT_DENSE),
                      CANOPY_EIO, "canopy_matrix_write_file", "/nonexistent/dir/m.mat");
  TempFile file("w.mat");
  EXPECT_CANOPY_ERROR(canopy_matrix_write_file(m.get(), file.path(), CANOPY_MATRIX_FORMAT_AUTO), CANOPY_EINVAL,
                      "canopy_matrix_write_file", "format 0");
  EXPECT_CANOPY_ERROR(canopy_matrix_write_file(nullptr, file.path(), CANOPY_MATRIX_FORMAT_DENSE), CANOPY_EINVAL,
                      "canopy_matrix_write_file", "matrix is NULL");
  EXPECT_CANOPY_ERROR(canopy_matrix_write_file(m.get(), nullptr, CANOPY_MATRIX_FORMAT_DENSE), CANOPY_EINVAL,
                      "canopy_matrix_write_file", "path is NULL");
  double w = 0;
  EXPECT_CANOPY_ERROR(canopy_matrix_get(m.get(), 0, 3, &w), CANOPY_ERANGE, "canopy_matrix_get",
                      "task 3 is outside [0, 3)");
  EXPECT_CANOPY_ERROR(canopy_matrix_get(m.get(), 0, 1, nullptr), CANOPY_EINVAL, "canopy_matrix_get",
                      "weight is NULL");
  int n = 0;
  int64_t e = 0;
  EXPECT_CANOPY_ERROR(canopy_matrix_size(nullptr, &n), CANOPY_EINVAL, "canopy_matrix_size", "matrix is NULL");
  EXPECT_CANOPY_ERROR(canopy_matrix_num_edges(nullptr, &e), CANOPY_EINVAL, "canopy_matrix_num_edges",
                      "matrix is NULL");
}
