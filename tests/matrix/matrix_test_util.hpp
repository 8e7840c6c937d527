// Helpers shared by the matrix tests: read a matrix from a string, and get
// the message of the canopy::Error that reading bad input must raise.
#pragma once
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"

namespace canopy::test {

inline CommMatrix read_text(const std::string& text, MatrixFormat format = MatrixFormat::Auto,
                            MatrixReadInfo* info = nullptr, const std::string& name = "input") {
  std::istringstream in(text);
  return read_matrix(in, name, format, info);
}

// The error message reading `text` raises; fails the test when it reads fine
// or throws anything other than canopy::Error.
inline std::string read_error(const std::string& text, MatrixFormat format, const std::string& name = "bad.txt") {
  try {
    read_text(text, format, nullptr, name);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return {};
}

}  // namespace canopy::test
