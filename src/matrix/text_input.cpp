// Line reading, field splitting and number parsing shared by the matrix
// readers (see text_input.hpp).
#include "matrix/text_input.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "canopy/error.hpp"

namespace canopy::matrix_detail {

bool LineReader::next(std::string_view& line) {
  if (replaying_) {
    if (replay_ < recorded_.size()) {
      ++line_no_;
      line = recorded_[replay_++];
      return true;
    }
    replaying_ = false;
    recorded_.clear();
    recorded_.shrink_to_fit();
  }
  if (!std::getline(in_, current_)) {
    if (in_.bad()) throw Error(fmt::format("{}:{}: read error", name_, line_no_ + 1), ErrorKind::System);
    return false;
  }
  ++line_no_;
  if (!current_.empty() && current_.back() == '\r') current_.pop_back();
  if (recording_) {
    recorded_.push_back(current_);
    line = recorded_.back();
  } else {
    line = current_;
  }
  return true;
}

void LineReader::rewind() {
  recording_ = false;
  replaying_ = true;
  replay_ = 0;
  line_no_ = 0;
}

void LineReader::fail_at(long line, const std::string& message) const {
  throw Error(fmt::format("{}:{}: {}", name_, line < 1 ? 1 : line, message));
}

namespace {
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r'; }
}  // namespace

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

bool is_blank_or_comment(std::string_view line, char comment) {
  line = trim(line);
  return line.empty() || line.front() == comment;
}

bool Fields::next(std::string_view& field) {
  while (!rest_.empty() && is_blank(rest_.front())) rest_.remove_prefix(1);
  if (rest_.empty()) {
    if (!expect_field_) return false;
    expect_field_ = false;  // "1,2," ends with an empty field
    field = {};
    return true;
  }
  if (commas_ && rest_.front() == ',') {  // a comma where a field starts: that field is empty
    rest_.remove_prefix(1);
    expect_field_ = true;
    field = {};
    return true;
  }
  std::size_t k = 0;
  while (k < rest_.size() && !is_blank(rest_[k]) && !(commas_ && rest_[k] == ',')) ++k;
  field = rest_.substr(0, k);
  rest_.remove_prefix(k);
  expect_field_ = false;
  while (!rest_.empty() && is_blank(rest_.front())) rest_.remove_prefix(1);
  if (commas_ && !rest_.empty() && rest_.front() == ',') {
    rest_.remove_prefix(1);
    expect_field_ = true;
  }
  return true;
}

std::string quote(std::string_view token) {
  std::string out = "'";
  std::size_t shown = 0;
  for (unsigned char c : token) {
    if (shown == 40) {
      out += "...";
      break;
    }
    if (std::isprint(c) && c != '\'' && c != '\\')
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
    ++shown;
  }
  return out + "'";
}

Parse parse_double(std::string_view token, double& out) {
  if (!token.empty() && token.front() == '+') {
    token.remove_prefix(1);
    if (!token.empty() && token.front() == '-') return Parse::Bad;  // "+-1"
  }
  if (token.empty() || token.front() == '+') return Parse::Bad;
  const char* end = token.data() + token.size();
  auto [p, ec] = std::from_chars(token.data(), end, out);
  if (p != end) return Parse::Bad;
  if (ec == std::errc::result_out_of_range) {
    // Overflow or underflow: strtod says which (it returns ±HUGE_VAL or ~0).
    std::string copy(token);
    double v = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(v)) return Parse::TooLarge;
    out = v;
    return Parse::Ok;
  }
  return ec == std::errc() ? Parse::Ok : Parse::Bad;
}

Parse parse_int(std::string_view token, std::int64_t& out) {
  if (!token.empty() && token.front() == '+') {
    token.remove_prefix(1);
    if (!token.empty() && token.front() == '-') return Parse::Bad;
  }
  if (token.empty() || token.front() == '+') return Parse::Bad;
  const char* end = token.data() + token.size();
  auto [p, ec] = std::from_chars(token.data(), end, out);
  if (p != end) return Parse::Bad;
  if (ec == std::errc::result_out_of_range) return Parse::TooLarge;
  return ec == std::errc() ? Parse::Ok : Parse::Bad;
}

double parse_weight(const LineReader& r, std::string_view token, const char* where_fmt, std::int64_t a,
                    std::int64_t b) {
  double w = 0;
  Parse p = parse_double(token, w);
  if (p == Parse::Ok && w >= 0 && w <= std::numeric_limits<double>::max()) return w == 0 ? 0.0 : w;  // -0 reads as 0
  const std::string where = fmt::format(fmt::runtime(where_fmt), a, b);
  switch (p) {
    case Parse::Bad:
      r.fail(fmt::format("bad number {} {}, expected a finite non-negative number", quote(token), where));
    case Parse::TooLarge:
      r.fail(fmt::format("entry {} {} is too large for a double, expected a finite non-negative number", quote(token),
                         where));
    case Parse::Ok:
      break;
  }
  if (std::isnan(w)) r.fail(fmt::format("NaN entry {} {}, expected a finite non-negative number", quote(token), where));
  if (std::isinf(w))
    r.fail(fmt::format("infinite entry {} {}, expected a finite non-negative number", quote(token), where));
  r.fail(fmt::format("negative entry {} {}, expected a finite non-negative number", quote(token), where));
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (std::tolower(static_cast<unsigned char>(a[k])) != std::tolower(static_cast<unsigned char>(b[k]))) return false;
  return true;
}

CommMatrix finish(const LineReader& r, std::int64_t n, const std::vector<Edge>& edges, MatrixReadInfo& info) {
  try {
    return CommMatrix::from_edges(static_cast<int>(n), edges, &info.symmetrized);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", r.name(), e.what()), e.kind());
  }
}

}  // namespace canopy::matrix_detail
