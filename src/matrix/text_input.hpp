// Shared pieces of the matrix readers: a line reader that knows the file name
// and line number (every error is "<file>:<line>: <problem>, expected
// <what>"), can replay the lines it read while the format was being guessed,
// and never holds more than one line of the input; a field cursor that splits
// a line without allocating; and number parsing that tells a bad token from
// an out-of-range one. Internal to src/matrix/.
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "canopy/comm_matrix.hpp"

namespace canopy::matrix_detail {

class LineReader {
 public:
  LineReader(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}
  // Next line without its end-of-line ('\n', and '\r' before it); false at
  // the end of the input. Throws on a read error.
  bool next(std::string_view& line);
  // Line number (1-based) of the line last returned; 0 before the first.
  long line_no() const { return line_no_; }
  const std::string& name() const { return name_; }
  // Keep the lines read from now on, so that rewind() can replay them.
  void record() { recording_ = true; }
  // Replay the recorded lines from the start, then continue with the stream.
  void rewind();
  // Throws canopy::Error "<name>:<line>: <message>".
  [[noreturn]] void fail(const std::string& message) const { fail_at(line_no_, message); }
  [[noreturn]] void fail_at(long line, const std::string& message) const;

 private:
  std::istream& in_;
  std::string name_;
  std::string current_;
  std::vector<std::string> recorded_;
  std::size_t replay_ = 0;
  bool recording_ = false;
  bool replaying_ = false;
  long line_no_ = 0;
};

// The line with leading and trailing blanks removed.
std::string_view trim(std::string_view s);
// A line that holds nothing or starts (after blanks) with `comment`.
bool is_blank_or_comment(std::string_view line, char comment);

// Walks the fields of a line. Fields are separated by blanks; with
// `commas`, also by one comma (with optional blanks around it), so that
// "1, 2,3" has three fields and "1,,3" has an empty second field.
class Fields {
 public:
  Fields(std::string_view line, bool commas) : rest_(line), commas_(commas) {}
  // Next field; false when the line is exhausted. An empty field (two commas
  // in a row, or a trailing comma) is returned as an empty view.
  bool next(std::string_view& field);

 private:
  std::string_view rest_;
  bool commas_;
  bool expect_field_ = false;  // a comma was consumed: a (possibly empty) field follows
};

// A token quoted for an error message: at most 40 characters, with
// non-printable bytes escaped so that the message stays one readable line.
std::string quote(std::string_view token);

enum class Parse { Ok, Bad, TooLarge };
// A decimal number (optional sign, fraction, exponent; also inf/nan, which
// the caller rejects by name). Too small to represent reads as 0.
Parse parse_double(std::string_view token, double& out);
// A decimal integer with optional sign.
Parse parse_int(std::string_view token, std::int64_t& out);

// Parses a matrix entry and checks it is finite and non-negative. The error
// message is completed by `where` formatted with a and b ("in row {}, column
// {}"), only when there is an error: this runs once per value of a file.
double parse_weight(const LineReader& r, std::string_view token, const char* where, std::int64_t a, std::int64_t b);

// Case-insensitive ASCII comparison.
bool iequals(std::string_view a, std::string_view b);

// Builds the matrix from the entries a reader collected, naming the input in
// the (rare) error from_edges can still raise (weights summing to infinity).
CommMatrix finish(const LineReader& r, std::int64_t n, const std::vector<Edge>& edges, MatrixReadInfo& info);

// The readers, one per format (read_<format>.cpp).
CommMatrix read_dense(LineReader& r, MatrixReadInfo& info);
CommMatrix read_matrix_market(LineReader& r, MatrixReadInfo& info);
CommMatrix read_edge_list(LineReader& r, MatrixReadInfo& info);

}  // namespace canopy::matrix_detail
