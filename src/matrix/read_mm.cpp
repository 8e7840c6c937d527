// Reader for MatrixMarket coordinate files: the "%%MatrixMarket matrix
// coordinate <real|integer|pattern> <general|symmetric>" banner, '%'
// comments, a size line "n n entries", then one "i j [value]" line per entry
// with 1-based indexes (pattern files have no value: weight 1). The header is
// held to its word: more or fewer entries than announced, an index beyond
// the announced size or a non-square size is an error, and the announced
// count never decides an allocation.
#include <fmt/format.h>

#include <algorithm>

#include "matrix/text_input.hpp"

namespace canopy::matrix_detail {
namespace {

constexpr const char* kBanner = "%%MatrixMarket matrix coordinate real general";

std::int64_t parse_index(const LineReader& r, std::string_view tok, const char* what, std::int64_t n,
                         long size_line) {
  std::int64_t v = 0;
  Parse p = parse_int(tok, v);
  if (p == Parse::Bad) r.fail(fmt::format("bad {} index {}, expected an integer 1..{}", what, quote(tok), n));
  if (p == Parse::TooLarge || v < 1 || v > n)
    r.fail(fmt::format("{} index {} is beyond the announced size {} (line {}), expected 1..{}", what, quote(tok), n,
                       size_line, n));
  return v - 1;
}

}  // namespace

CommMatrix read_matrix_market(LineReader& r, MatrixReadInfo& info) {
  info.format = MatrixFormat::MatrixMarket;
  std::string_view line;
  if (!r.next(line)) r.fail(fmt::format("empty file, expected the header '{}'", kBanner));

  // Banner: %%MatrixMarket object format field symmetry (case-insensitive).
  std::string_view words[6];
  int nwords = 0;
  {
    Fields f(line, false);
    std::string_view w;
    while (nwords < 6 && f.next(w)) words[nwords++] = w;
  }
  if (nwords == 0 || !iequals(words[0], "%%MatrixMarket"))
    r.fail(fmt::format("missing MatrixMarket header, expected '{}'", kBanner));
  if (nwords != 5) r.fail(fmt::format("header has {} words, expected 5 as in '{}'", nwords, kBanner));
  if (!iequals(words[1], "matrix"))
    r.fail(fmt::format("unsupported object {}, expected 'matrix'", quote(words[1])));
  if (iequals(words[2], "array"))
    r.fail("array (dense) format is unsupported, expected 'coordinate' format (write dense matrices as plain rows)");
  if (!iequals(words[2], "coordinate"))
    r.fail(fmt::format("unsupported format {}, expected 'coordinate'", quote(words[2])));
  const bool pattern = iequals(words[3], "pattern");
  const bool integer = iequals(words[3], "integer");
  if (!pattern && !integer && !iequals(words[3], "real") && !iequals(words[3], "double"))
    r.fail(fmt::format("unsupported field {}, expected 'real', 'integer' or 'pattern'", quote(words[3])));
  const bool symmetric = iequals(words[4], "symmetric");
  if (!symmetric && !iequals(words[4], "general"))
    r.fail(fmt::format("unsupported symmetry {}, expected 'general' or 'symmetric'", quote(words[4])));

  // Size line: rows columns entries.
  bool have_size = false;
  while (r.next(line))
    if (!is_blank_or_comment(line, '%')) {
      have_size = true;
      break;
    }
  if (!have_size) r.fail("no size line, expected 'rows columns entries' after the header");
  const long size_line = r.line_no();
  std::int64_t size[3] = {0, 0, 0};
  {
    Fields f(line, false);
    std::string_view tok;
    int k = 0;
    while (f.next(tok)) {
      if (k == 3) r.fail("size line has more than 3 numbers, expected 'rows columns entries'");
      Parse p = parse_int(tok, size[k]);
      if (p == Parse::Bad || size[k] < 0)
        r.fail(fmt::format("bad size {}, expected 'rows columns entries' as non-negative integers", quote(tok)));
      if (p == Parse::TooLarge || (k < 2 && size[k] > kMaxTasks))
        r.fail(fmt::format("too many tasks: size {}, expected at most {}", quote(tok), kMaxTasks));
      ++k;
    }
    if (k != 3) r.fail(fmt::format("size line has {} numbers, expected 3: 'rows columns entries'", k));
  }
  const std::int64_t n = size[0], announced = size[2];
  if (size[0] != size[1])
    r.fail(fmt::format("non-square size {} x {}, expected a square matrix (tasks x tasks)", size[0], size[1]));
  // n ≤ 2^24, so n * n cannot overflow.
  const std::int64_t capacity = symmetric ? n * (n + 1) / 2 : n * n;
  if (announced > capacity)
    r.fail(fmt::format("{} entries announced but a {} x {} {} matrix holds at most {}, expected at most {}", announced,
                       n, n, symmetric ? "symmetric" : "general", capacity, capacity));

  std::vector<Edge> edges;
  edges.reserve(static_cast<std::size_t>(std::min<std::int64_t>(announced, 1 << 16)) * (symmetric ? 2 : 1));
  std::int64_t count = 0;
  const int want = pattern ? 2 : 3;
  while (r.next(line)) {
    if (is_blank_or_comment(line, '%')) continue;
    if (count == announced)
      r.fail(fmt::format("more entries than the {} announced at line {}, expected {}", announced, size_line,
                         announced));
    ++count;
    Fields f(line, false);
    std::string_view tok[3];
    int k = 0;
    for (std::string_view t; f.next(t); ++k)
      if (k < 3) tok[k] = t;
    if (k != want)
      r.fail(fmt::format("entry has {} fields, expected {}", k, pattern ? "'i j' (pattern matrix)" : "'i j value'"));
    std::int64_t i = parse_index(r, tok[0], "row", n, size_line);
    std::int64_t j = parse_index(r, tok[1], "column", n, size_line);
    double w = 1;
    if (integer) {
      std::int64_t v = 0;
      Parse p = parse_int(tok[2], v);
      if (p == Parse::Bad)
        r.fail(fmt::format("bad integer {} at row {}, column {}, expected an integer (integer matrix)", quote(tok[2]),
                           i + 1, j + 1));
      if (p == Parse::TooLarge)
        r.fail(fmt::format("entry {} at row {}, column {} is too large, expected a 64-bit integer", quote(tok[2]),
                           i + 1, j + 1));
      if (v < 0)
        r.fail(fmt::format("negative entry {} at row {}, column {}, expected a non-negative integer", v, i + 1, j + 1));
      w = static_cast<double>(v);
    } else if (!pattern) {
      w = parse_weight(r, tok[2], "at row {}, column {}", i + 1, j + 1);
    }
    if (w == 0) continue;
    if (i == j) {
      info.had_diagonal = true;
      continue;
    }
    edges.push_back({static_cast<int>(i), static_cast<int>(j), w});
    if (symmetric) edges.push_back({static_cast<int>(j), static_cast<int>(i), w});
  }
  if (count != announced)
    r.fail(fmt::format("{} entries but the header at line {} announced {}, expected {}", count, size_line, announced,
                       announced));
  return finish(r, n, edges, info);
}

}  // namespace canopy::matrix_detail
