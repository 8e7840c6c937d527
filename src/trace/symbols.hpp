// Private to src/trace/: function names of code addresses (symbols.cpp).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace canopy::trace_impl {

// The function symbols of the objects loaded in this process, read as
// they are needed. Not thread-safe (one per decoding).
class CodeSymbols {
 public:
  struct Symbol {
    std::uint64_t start = 0, size = 0;
    std::string name;
  };
  // The (demangled) name of the function holding `addr`, or "" if no
  // symbol covers it.
  std::string name_of(std::uint64_t addr);

 private:
  std::map<std::string, std::vector<Symbol>> objects_;
};

}  // namespace canopy::trace_impl
