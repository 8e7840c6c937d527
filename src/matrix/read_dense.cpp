// Reader for dense matrices: one row per line, values separated by blanks
// and/or commas (the format TreeMatch and BindMe read); blank lines and lines
// starting with '#' are skipped. The first row fixes n; the file must then
// hold exactly n rows of n values. Values go straight into a sparse list of
// non-zero entries, so a large dense file is never held twice.
#include <fmt/format.h>

#include "matrix/text_input.hpp"

namespace canopy::matrix_detail {

CommMatrix read_dense(LineReader& r, MatrixReadInfo& info) {
  info.format = MatrixFormat::Dense;
  std::vector<Edge> edges;
  std::int64_t n = -1;  // values per row, fixed by the first row
  std::int64_t row = 0;
  long first_line = 0;
  std::string_view line;
  while (r.next(line)) {
    if (is_blank_or_comment(line, '#')) continue;
    if (n >= 0 && row == n)
      r.fail(fmt::format("non-square matrix: more than {} rows of {} values, expected {} rows", n, n, n));
    Fields fields(line, true);
    std::string_view tok;
    std::int64_t col = 0;
    while (fields.next(tok)) {
      if (col == kMaxTasks)
        r.fail(fmt::format("too many tasks: row {} has more than {} values, expected at most {} tasks", row + 1,
                           kMaxTasks, kMaxTasks));
      if (tok.empty())
        r.fail(fmt::format("empty value in row {}, column {}, expected a number between the commas", row + 1, col + 1));
      if (n >= 0 && col == n) {
        std::int64_t count = col + 1;
        while (fields.next(tok)) ++count;
        r.fail(fmt::format("ragged row: row {} has {} values, expected {} values like row 1 (line {})", row + 1,
                           count, n, first_line));
      }
      double w = parse_weight(r, tok, "in row {}, column {}", row + 1, col + 1);
      if (w > 0) {
        if (col == row)
          info.had_diagonal = true;
        else
          edges.push_back({static_cast<int>(row), static_cast<int>(col), w});
      }
      ++col;
    }
    if (n < 0) {
      n = col;
      first_line = r.line_no();
    } else if (col != n) {
      r.fail(fmt::format("ragged row: row {} has {} values, expected {} values like row 1 (line {})", row + 1, col, n,
                         first_line));
    }
    ++row;
  }
  if (n < 0) r.fail("empty file (no matrix rows), expected rows of numbers");
  if (row != n)
    r.fail(fmt::format("non-square matrix: {} rows of {} values, expected {} rows", row, n, n));
  return finish(r, n, edges, info);
}

}  // namespace canopy::matrix_detail
