// Small text tools shared by the OMP_* parsers: a cursor over a value that
// skips blanks the way OpenMP allows them (around every token), case-blind
// keyword matching, and decimal numbers with overflow checks (no strtoul:
// it accepts signs and wraps negative numbers silently).
#pragma once
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace canopy::omp::text {

inline bool is_blank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

inline std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

inline char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

struct Cursor {
  std::string_view s;
  std::size_t pos = 0;

  void skip_blanks() {
    while (pos < s.size() && is_blank(s[pos])) ++pos;
  }
  bool at_end() const { return pos >= s.size(); }
  char peek() const { return at_end() ? '\0' : s[pos]; }
  // Consumes `c` (after blanks) when it is next.
  bool eat(char c) {
    skip_blanks();
    if (peek() != c) return false;
    ++pos;
    return true;
  }
  // Consumes a keyword (case-blind, after blanks) when it is next.
  bool eat_word(std::string_view w) {
    skip_blanks();
    if (s.size() - pos < w.size() || !iequals(s.substr(pos, w.size()), w)) return false;
    pos += w.size();
    return true;
  }
  // An unsigned decimal number no larger than `max`; nullopt (cursor kept)
  // when there are no digits or the number is larger.
  std::optional<std::uint64_t> number(std::uint64_t max) {
    skip_blanks();
    std::size_t p = pos;
    std::uint64_t v = 0;
    bool big = false;
    while (p < s.size() && s[p] >= '0' && s[p] <= '9') {
      unsigned d = static_cast<unsigned>(s[p] - '0');
      if (v > (max - d) / 10) big = true;
      else v = v * 10 + d;
      ++p;
    }
    if (p == pos || big) return std::nullopt;
    pos = p;
    return v;
  }
  // A decimal number with an optional sign, |value| <= max.
  std::optional<std::int64_t> signed_number(std::int64_t max) {
    skip_blanks();
    std::size_t save = pos;
    bool neg = false;
    if (peek() == '-' || peek() == '+') {
      neg = peek() == '-';
      ++pos;
    }
    auto v = number(static_cast<std::uint64_t>(max));
    if (!v) {
      pos = save;
      return std::nullopt;
    }
    return neg ? -static_cast<std::int64_t>(*v) : static_cast<std::int64_t>(*v);
  }
  bool done() {
    skip_blanks();
    return at_end();
  }
};

}  // namespace canopy::omp::text
