// Runs the canopy binary in a child process (fork/exec, standard output and
// error captured in temporary files, so no pipe can fill up and block) and
// compares outputs with golden files (see cli_runner.hpp).
#include "cli_runner.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace canopy::test {

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> r;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) r.push_back(line);
  return r;
}

std::string temp_dir() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "canopy-cli-test-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return "/tmp";
  return tmpl;
}

CliResult run_cli(const std::vector<std::string>& args, const std::string& input,
                  const std::vector<std::string>& prefix) {
  std::string dir = temp_dir();
  std::string in_path = dir + "/stdin", out_path = dir + "/stdout", err_path = dir + "/stderr";
  std::ofstream(in_path, std::ios::binary) << input;

  std::vector<std::string> argv_s = prefix;
  argv_s.push_back(CANOPY_CLI);
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);

  CliResult r;
  pid_t pid = fork();
  if (pid == 0) {
    int in = open(in_path.c_str(), O_RDONLY);
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0 || err < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(127);
    if (chdir(CANOPY_TEST_DATA) != 0) _exit(127);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) r.status = WEXITSTATUS(status);
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  std::filesystem::remove_all(dir);
  return r;
}

std::string check_golden(const std::string& name, const std::string& actual) {
  const std::string path = std::string(CANOPY_SOURCE_DIR) + "/tests/cli/golden/" + name;
  const char* update = std::getenv("CANOPY_UPDATE_GOLDEN");
  if (update && std::string(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << actual;
    return {};
  }
  if (!std::filesystem::exists(path))
    return "no golden file " + path + " (run with CANOPY_UPDATE_GOLDEN=1 to create it, then review it)";
  std::string expected = read_text(path);
  if (expected == actual) return {};
  auto e = lines(expected), a = lines(actual);
  size_t i = 0;
  while (i < e.size() && i < a.size() && e[i] == a[i]) ++i;
  std::ostringstream msg;
  msg << name << " differs from the golden file at line " << i + 1 << ":\n  expected: "
      << (i < e.size() ? e[i] : "<end of file>") << "\n  actual:   " << (i < a.size() ? a[i] : "<end of output>")
      << "\n(" << e.size() << " expected lines, " << a.size()
      << " actual; if the change is deliberate, rerun with CANOPY_UPDATE_GOLDEN=1 and review the diff)";
  return msg.str();
}

}  // namespace canopy::test
