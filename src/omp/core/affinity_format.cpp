// OMP_AFFINITY_FORMAT (OpenMP 5.1 section 6.14): the field specifiers, short
// (%n) and long (%{thread_num}), with the "0" (zero padding, libgomp wants
// it followed by "."), "." (right justify) and width modifiers, as libgomp
// prints them: numbers in decimal, %i as "0x" and hex digits (zero padding
// goes after the 0x), %A as a range list such as "0-3,8", %H the host name.
// A malformed specifier is copied out as written; affinity_format_error
// says what is wrong with it so that OMP_AFFINITY_FORMAT can be refused.
#include <cstdio>
#include <string_view>

#include "omp/core/settings.hpp"

namespace canopy::omp {
namespace {

constexpr std::size_t kMaxWidth = 65536;  // larger widths are refused, not allocated

struct Spec {
  bool ok = false;
  std::string why;     // when !ok
  std::size_t end = 0; // index just after the specifier
  bool zero = false, right = false;
  std::size_t width = 0;  // 0: none
  char field = 0;
};

char long_field(std::string_view name) {
  static const struct {
    const char* name;
    char field;
  } names[] = {{"team_num", 't'},      {"num_teams", 'T'},     {"nesting_level", 'L'}, {"thread_num", 'n'},
               {"num_threads", 'N'},   {"ancestor_tnum", 'a'}, {"host", 'H'},          {"process_id", 'P'},
               {"native_thread_id", 'i'}, {"thread_affinity", 'A'}};
  for (const auto& n : names)
    if (name == n.name) return n.field;
  return 0;
}

// The specifier whose '%' is at f[pos] (not "%%").
Spec parse_spec(std::string_view f, std::size_t pos) {
  Spec s;
  std::size_t i = pos + 1;
  auto bad = [&](std::string why, std::size_t end) {
    s.ok = false;
    s.why = std::move(why) + " in '" + std::string(f.substr(pos, end - pos)) + "'";
    s.end = end;
    return s;
  };
  if (i < f.size() && f[i] == '0') {
    s.zero = true;
    ++i;
    if (i >= f.size() || f[i] != '.') return bad("'0' must be followed by '.'", i);
  }
  if (i < f.size() && f[i] == '.') {
    s.right = true;
    ++i;
  }
  if (i < f.size() && f[i] >= '1' && f[i] <= '9') {
    std::size_t w = 0;
    while (i < f.size() && f[i] >= '0' && f[i] <= '9') {
      w = w * 10 + static_cast<std::size_t>(f[i] - '0');
      ++i;
      if (w > kMaxWidth) {
        while (i < f.size() && f[i] >= '0' && f[i] <= '9') ++i;
        return bad("a width above " + std::to_string(kMaxWidth), i);
      }
    }
    s.width = w;
  } else if (s.zero || s.right) {
    return bad("'0' and '.' need a width", i);
  }
  if (i >= f.size()) return bad("a field type is missing", i);
  if (f[i] == '{') {
    std::size_t close = f.find('}', i + 1);
    if (close == std::string_view::npos) return bad("an unterminated '%{'", f.size());
    s.field = long_field(f.substr(i + 1, close - i - 1));
    if (s.field == 0) return bad("an unknown field name", close + 1);
    s.end = close + 1;
  } else {
    static constexpr std::string_view kShort = "tTLnNaHPiA";
    if (kShort.find(f[i]) == std::string_view::npos) return bad("an unknown field type", i + 1);
    s.field = f[i];
    s.end = i + 1;
  }
  s.ok = true;
  return s;
}

void pad(std::string& out, std::size_t n, char c) { out.append(n, c); }

// Numbers: zero padding after the sign or the "0x"; else right or left justified.
void put_number(std::string& out, const Spec& s, const std::string& digits) {
  if (s.width <= digits.size()) {
    out += digits;
    return;
  }
  std::size_t fill = s.width - digits.size();
  if (s.zero) {
    std::size_t prefix = 0;
    if (!digits.empty() && digits[0] == '-') prefix = 1;
    else if (digits.size() > 1 && digits[0] == '0' && digits[1] == 'x') prefix = 2;
    out += digits.substr(0, prefix);
    pad(out, fill, '0');
    out += digits.substr(prefix);
  } else if (s.right) {
    pad(out, fill, ' ');
    out += digits;
  } else {
    out += digits;
    pad(out, fill, ' ');
  }
}

// Text (host, affinity): never zero padded.
void put_text(std::string& out, const Spec& s, const std::string& text) {
  Spec t = s;
  t.zero = false;  // "0." still right justifies (the "." part), with blanks
  put_number(out, t, text);
}

}  // namespace

std::optional<std::string> affinity_format_error(const std::string& format) {
  std::string_view f = format;
  for (std::size_t i = f.find('%'); i != std::string_view::npos; i = f.find('%', i)) {
    if (i + 1 < f.size() && f[i + 1] == '%') {
      i += 2;
      continue;
    }
    Spec s = parse_spec(f, i);
    if (!s.ok) return s.why;
    i = s.end;
  }
  return std::nullopt;
}

std::string format_affinity(const std::string& format, const AffinityFields& fields) {
  std::string_view f = format;
  std::string out;
  std::size_t i = 0;
  while (i < f.size()) {
    std::size_t pct = f.find('%', i);
    if (pct == std::string_view::npos) {
      out += f.substr(i);
      break;
    }
    out += f.substr(i, pct - i);
    if (pct + 1 < f.size() && f[pct + 1] == '%') {
      out += '%';
      i = pct + 2;
      continue;
    }
    Spec s = parse_spec(f, pct);
    if (!s.ok) {
      out += f.substr(pct, s.end - pct);
      i = s.end;
      continue;
    }
    switch (s.field) {
      case 't': put_number(out, s, std::to_string(fields.team_num)); break;
      case 'T': put_number(out, s, std::to_string(fields.num_teams)); break;
      case 'L': put_number(out, s, std::to_string(fields.nesting_level)); break;
      case 'n': put_number(out, s, std::to_string(fields.thread_num)); break;
      case 'N': put_number(out, s, std::to_string(fields.num_threads)); break;
      case 'a': put_number(out, s, std::to_string(fields.ancestor_tnum)); break;
      case 'P': put_number(out, s, std::to_string(fields.pid)); break;
      case 'i': {
        char buf[32];
        std::snprintf(buf, sizeof buf, "0x%lx", static_cast<unsigned long>(fields.native_thread_id));
        put_number(out, s, buf);
        break;
      }
      case 'H': put_text(out, s, fields.host); break;
      case 'A': put_text(out, s, cpu_list_string(fields.os_cpus)); break;
    }
    i = s.end;
  }
  return out;
}

}  // namespace canopy::omp
