// canopy::Error: the one exception type of the C++ API. Its message names the
// input (file, line, value) and what was expected, so that the CLI can print
// it as is and the C API can keep it for canopy_last_error().
#pragma once
#include <stdexcept>
#include <string>

namespace canopy {

// What kind of failure: bad input from the user (CLI exit 2) or a failure of
// the system or of canopy itself (CLI exit 1).
enum class ErrorKind { BadInput, System };

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, ErrorKind kind = ErrorKind::BadInput)
      : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const noexcept { return kind_; }

 private:
  ErrorKind kind_;
};

}  // namespace canopy
