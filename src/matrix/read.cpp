// read_matrix: opens the input, detects the format (rule in comm_matrix.hpp)
// and hands the lines to the reader of that format; parse_matrix_format.
#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "canopy/error.hpp"
#include "matrix/text_input.hpp"

namespace canopy {
namespace {

using matrix_detail::LineReader;

bool has_extension(const std::string& name, std::string_view ext) {
  return name.size() > ext.size() && matrix_detail::iequals(std::string_view(name).substr(name.size() - ext.size()), ext);
}

// The first word of a '#' comment, lower-cased, without a trailing ':'.
std::string comment_keyword(std::string_view line) {
  line = matrix_detail::trim(line);
  line.remove_prefix(1);
  line = matrix_detail::trim(line);
  std::string word(line.substr(0, line.find_first_of(" \t:=")));
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return word;
}

MatrixFormat detect(LineReader& r) {
  const std::string& name = r.name();
  if (has_extension(name, ".mtx")) return MatrixFormat::MatrixMarket;
  // Look at the lines before the first data line, then replay them. The
  // MatrixMarket banner wins over the other extensions.
  r.record();
  MatrixFormat f = MatrixFormat::Dense;
  if (has_extension(name, ".edges") || has_extension(name, ".el") || has_extension(name, ".edgelist"))
    f = MatrixFormat::EdgeList;
  std::string_view line;
  for (bool first = true; r.next(line); first = false) {
    if (first && line.size() >= 14 && matrix_detail::iequals(line.substr(0, 14), "%%MatrixMarket")) {
      f = MatrixFormat::MatrixMarket;
      break;
    }
    if (f == MatrixFormat::EdgeList) break;
    std::string_view t = matrix_detail::trim(line);
    if (t.empty()) continue;
    if (t.front() != '#') break;
    std::string word = comment_keyword(t);
    if (word == "edges" || word == "tasks") {
      f = MatrixFormat::EdgeList;
      break;
    }
  }
  r.rewind();
  return f;
}

}  // namespace

CommMatrix read_matrix(std::istream& in, const std::string& name, MatrixFormat format, MatrixReadInfo* info) {
  MatrixReadInfo local;
  MatrixReadInfo& out = info ? *info : local;
  out = MatrixReadInfo{};
  LineReader r(in, name);
  if (format == MatrixFormat::Auto) format = detect(r);
  switch (format) {
    case MatrixFormat::MatrixMarket:
      return matrix_detail::read_matrix_market(r, out);
    case MatrixFormat::EdgeList:
      return matrix_detail::read_edge_list(r, out);
    default:
      return matrix_detail::read_dense(r, out);
  }
}

CommMatrix read_matrix(const std::string& path, MatrixFormat format, MatrixReadInfo* info) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw Error(fmt::format("{}: is a directory, expected a matrix file", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open matrix file: {}", path, std::strerror(errno)));
  return read_matrix(in, path, format, info);
}

MatrixFormat parse_matrix_format(const std::string& name) {
  using matrix_detail::iequals;
  if (iequals(name, "auto")) return MatrixFormat::Auto;
  if (iequals(name, "dense")) return MatrixFormat::Dense;
  if (iequals(name, "mm") || iequals(name, "matrixmarket")) return MatrixFormat::MatrixMarket;
  if (iequals(name, "edges") || iequals(name, "edgelist")) return MatrixFormat::EdgeList;
  throw Error(fmt::format("unknown matrix format {}, expected auto, dense, mm, matrixmarket, edges or edgelist",
                          matrix_detail::quote(name)));
}

}  // namespace canopy
