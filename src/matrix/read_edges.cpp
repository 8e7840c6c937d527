// Reader for edge lists: one "i j weight" line per edge ("i j" alone means
// weight 1), 0-based task ids, blank lines and '#' comments skipped. The
// number of tasks is the largest id + 1 unless a "# tasks N" comment gives it
// (then every id must be below N). A "# edges ..." comment marks the file as
// an edge list for auto-detection and is otherwise a comment.
#include <fmt/format.h>

#include <cctype>

#include "matrix/text_input.hpp"

namespace canopy::matrix_detail {
namespace {

// "# tasks N" (also "tasks: N", "tasks=N"): returns true and sets n when the
// comment is one; a comment whose first word is "tasks" followed by something
// that does not start like a number is just a comment.
bool tasks_comment(const LineReader& r, std::string_view line, std::int64_t& n) {
  line = trim(line);
  line.remove_prefix(1);  // '#'
  line = trim(line);
  if (line.size() < 5 || !iequals(line.substr(0, 5), "tasks")) return false;
  line.remove_prefix(5);
  if (!line.empty() && (line.front() == ':' || line.front() == '=')) line.remove_prefix(1);
  line = trim(line);
  if (line.empty() || !(std::isdigit(static_cast<unsigned char>(line.front())) || line.front() == '-' ||
                        line.front() == '+'))
    return false;
  std::string_view tok = line.substr(0, line.find_first_of(" \t"));
  Parse p = parse_int(tok, n);
  if (p == Parse::Bad || n < 0)
    r.fail(fmt::format("bad task count {}, expected '# tasks N' with N a non-negative integer", quote(tok)));
  if (p == Parse::TooLarge || n > kMaxTasks)
    r.fail(fmt::format("too many tasks: {}, expected at most {}", quote(tok), kMaxTasks));
  return true;
}

std::int64_t parse_task(const LineReader& r, std::string_view tok) {
  std::int64_t v = 0;
  Parse p = parse_int(tok, v);
  if (p == Parse::Bad) r.fail(fmt::format("bad task id {}, expected a non-negative integer", quote(tok)));
  if (p == Parse::TooLarge || v >= kMaxTasks)
    r.fail(fmt::format("too many tasks: task id {}, expected ids below {}", quote(tok), kMaxTasks));
  if (v < 0) r.fail(fmt::format("negative task id {}, expected a non-negative integer", v));
  return v;
}

}  // namespace

CommMatrix read_edge_list(LineReader& r, MatrixReadInfo& info) {
  info.format = MatrixFormat::EdgeList;
  std::vector<Edge> edges;
  std::int64_t declared = -1, max_id = -1;
  long declared_line = 0, max_line = 0;
  std::string_view line;
  while (r.next(line)) {
    std::string_view t = trim(line);
    if (t.empty()) continue;
    if (t.front() == '#') {
      std::int64_t n = 0;
      if (tasks_comment(r, t, n)) {
        if (declared >= 0 && n != declared)
          r.fail(fmt::format("'# tasks {}' contradicts '# tasks {}' at line {}, expected one task count", n, declared,
                             declared_line));
        declared = n;
        declared_line = r.line_no();
      }
      continue;
    }
    Fields f(t, false);
    std::string_view tok[3];
    int k = 0;
    for (std::string_view x; f.next(x); ++k)
      if (k < 3) tok[k] = x;
    if (k != 2 && k != 3) r.fail(fmt::format("edge line has {} fields, expected 'i j weight'", k));
    std::int64_t i = parse_task(r, tok[0]), j = parse_task(r, tok[1]);
    double w = k == 3 ? parse_weight(r, tok[2], "for edge {} - {}", i, j) : 1.0;
    for (std::int64_t id : {i, j})
      if (id > max_id) {
        max_id = id;
        max_line = r.line_no();
      }
    if (w == 0) continue;
    if (i == j) {
      info.had_diagonal = true;
      continue;
    }
    edges.push_back({static_cast<int>(i), static_cast<int>(j), w});
  }
  if (r.line_no() == 0) r.fail("empty file, expected 'i j weight' lines");
  if (declared >= 0 && max_id >= declared)
    r.fail_at(max_line, fmt::format("task id {} is beyond the {} tasks announced at line {}, expected ids below {}", max_id,
                                    declared, declared_line, declared));
  if (declared < 0 && max_id < 0) r.fail("no edges and no '# tasks N' line, expected 'i j weight' lines");
  return finish(r, declared >= 0 ? declared : max_id + 1, edges, info);
}

}  // namespace canopy::matrix_detail
