// write_matrix: the three formats read_matrix reads, written so that reading
// them back gives the same matrix. Weights use the shortest text that parses
// back to the same double. Dense output is produced one row at a time from
// the sparse rows (memory O(n) beyond the matrix, file O(n²) of course).
// Auto picks by the file extension (.mtx: MatrixMarket; .edges, .el,
// .edgelist: edge list; anything else, and streams: dense).
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "matrix/text_input.hpp"

namespace canopy {
namespace {

void flush(std::ostream& out, fmt::memory_buffer& buf) {
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  buf.clear();
}

void write_dense(std::ostream& out, const CommMatrix& m) {
  fmt::memory_buffer buf;
  const auto& col = m.cols();
  const auto& val = m.weights();
  for (int i = 0; i < m.size(); ++i) {
    std::int64_t k = m.row_begin(i), e = m.row_end(i);
    for (int j = 0; j < m.size(); ++j) {
      if (j) buf.push_back(' ');
      if (k < e && col[k] == j)
        fmt::format_to(std::back_inserter(buf), "{}", val[k++]);
      else
        buf.push_back('0');
    }
    buf.push_back('\n');
    flush(out, buf);
  }
}

// Symmetric coordinate file holding the lower triangle (row > column).
void write_mm(std::ostream& out, const CommMatrix& m) {
  fmt::memory_buffer buf;
  fmt::format_to(std::back_inserter(buf),
                 "%%MatrixMarket matrix coordinate real symmetric\n"
                 "% canopy communication matrix: {} tasks, {} edges\n{} {} {}\n",
                 m.size(), m.num_edges(), m.size(), m.size(), m.num_edges());
  for (int i = 0; i < m.size(); ++i) {
    for (std::int64_t k = m.row_begin(i); k < m.row_end(i) && m.cols()[k] < i; ++k)
      fmt::format_to(std::back_inserter(buf), "{} {} {}\n", i + 1, m.cols()[k] + 1, m.weights()[k]);
    if (buf.size() > (1 << 16)) flush(out, buf);
  }
  flush(out, buf);
}

void write_edges(std::ostream& out, const CommMatrix& m) {
  fmt::memory_buffer buf;
  fmt::format_to(std::back_inserter(buf), "# edges: i j weight, 0-based task ids, each pair once\n# tasks {}\n",
                 m.size());
  for (int i = 0; i < m.size(); ++i) {
    for (std::int64_t k = m.row_begin(i); k < m.row_end(i); ++k)
      if (m.cols()[k] > i) fmt::format_to(std::back_inserter(buf), "{} {} {}\n", i, m.cols()[k], m.weights()[k]);
    if (buf.size() > (1 << 16)) flush(out, buf);
  }
  flush(out, buf);
}

MatrixFormat format_for_path(const std::string& path) {
  auto ends = [&](std::string_view ext) {
    return path.size() > ext.size() &&
           matrix_detail::iequals(std::string_view(path).substr(path.size() - ext.size()), ext);
  };
  if (ends(".mtx")) return MatrixFormat::MatrixMarket;
  if (ends(".edges") || ends(".el") || ends(".edgelist")) return MatrixFormat::EdgeList;
  return MatrixFormat::Dense;
}

}  // namespace

void write_matrix(std::ostream& out, const CommMatrix& m, MatrixFormat format) {
  switch (format) {
    case MatrixFormat::MatrixMarket:
      write_mm(out, m);
      break;
    case MatrixFormat::EdgeList:
      write_edges(out, m);
      break;
    default:
      write_dense(out, m);
  }
  if (!out) throw Error("cannot write the matrix: output stream failed", ErrorKind::System);
}

void write_matrix(const std::string& path, const CommMatrix& m, MatrixFormat format) {
  if (format == MatrixFormat::Auto) format = format_for_path(path);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  write_matrix(out, m, format);
  out.close();
  if (!out) throw Error(fmt::format("{}: write failed: {}", path, std::strerror(errno)), ErrorKind::System);
}

}  // namespace canopy
