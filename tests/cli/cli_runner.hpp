// Running the built `canopy` binary from tests, and golden files.
//
// Commands run with the working directory tests/data, so that the inputs
// are named by short relative paths ("topologies/two-socket.xml") and the
// outputs, which repeat those names, do not depend on where the source tree
// lives.
//
// Golden files live in tests/cli/golden/. To regenerate them after a
// deliberate change of an output:
//   CANOPY_UPDATE_GOLDEN=1 ctest -L cli      (or run canopy_cli_tests)
// then review `git diff tests/cli/golden` line by line: a golden file is a
// claim that the output is right, not a record of what came out.
#pragma once
#include <string>
#include <vector>

namespace canopy::test {

struct CliResult {
  int status = -1;  // exit status (-1: did not exit normally)
  std::string out;  // standard output
  std::string err;  // standard error
};

// Runs CANOPY_CLI with `args` (no shell involved), `input` on its standard
// input, in tests/data. `prefix` (e.g. {"taskset", "-c", "0"}) runs the CLI
// through another program.
CliResult run_cli(const std::vector<std::string>& args, const std::string& input = "",
                  const std::vector<std::string>& prefix = {});

// Compares `actual` with tests/cli/golden/<name>; with CANOPY_UPDATE_GOLDEN=1
// in the environment, writes it instead. Returns an empty string when they
// match, else a description of the first difference.
std::string check_golden(const std::string& name, const std::string& actual);

// Reads a whole file (empty string when it cannot be opened).
std::string read_text(const std::string& path);

// Lines of a text, without their '\n'.
std::vector<std::string> lines(const std::string& text);

// A fresh temporary directory for one test, removed by the caller or left
// under /tmp.
std::string temp_dir();

}  // namespace canopy::test
