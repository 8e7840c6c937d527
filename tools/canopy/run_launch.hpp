// `canopy run`: the environment that makes an OpenMP runtime put thread i
// where a placement puts task i, finding the program, and starting it --
// either by exec (canopy disappears, the program keeps its terminal and
// signals) or, for --report, as a child whose output canopy filters.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace canopy {
class Topology;
struct Placement;
}  // namespace canopy

namespace canopy::run {

// How the placement is handed to the runtime.
//  Auto: the OpenMP standard OMP_PLACES (one place per thread) with
//        OMP_PROC_BIND=close, which both libgomp and LLVM libomp honour.
//  Gomp: GOMP_CPU_AFFINITY (one CPU per thread; libgomp, and libomp too).
//  Llvm: KMP_AFFINITY=explicit,proclist=[...] (LLVM/Intel libomp only).
//  Canopy: as Auto, and the program runs on canopy's own OpenMP runtime:
//        LD_LIBRARY_PATH starts with the directory that holds it as
//        libgomp.so.1 (omp_runtime_dir), so a gcc-built program loads it
//        instead of GCC's libgomp.
enum class Runtime { Auto, Gomp, Llvm, Canopy };
Runtime parse_runtime(const std::string& name);  // throws canopy::Error

// One change to the program's environment: set (value) or unset (nullopt).
struct EnvChange {
  std::string name;
  std::optional<std::string> value;
};

// The variables to set and those to remove because they would override the
// ones set (libomp lets GOMP_CPU_AFFINITY and KMP_AFFINITY win over
// OMP_PLACES). `affinity_format` non-empty adds OMP_DISPLAY_AFFINITY=true
// with that OMP_AFFINITY_FORMAT. Throws canopy::Error when the runtime's
// variable cannot express the placement (GOMP_CPU_AFFINITY and core
// granularity).
// `canopy_dir` is omp_runtime_dir() for Runtime::Canopy (unused otherwise),
// `ld_library_path` the current LD_LIBRARY_PATH (kept after it).
std::vector<EnvChange> omp_environment(const Topology& topo, const Placement& p, Runtime runtime,
                                       const std::string& affinity_format, const std::string& canopy_dir = "",
                                       const char* ld_library_path = nullptr);

// The directory holding canopy's OpenMP runtime as libgomp.so.1:
// $CANOPY_OMP_DIR when set, else the one beside this canopy executable
// (<bindir>/../lib/canopy-omp in the build tree and the installed tree).
// Throws canopy::Error naming the places looked at when there is none.
std::string omp_runtime_dir(const char* env_dir, const std::string& executable);

// The executable `name` names: a path when it contains '/', else the first
// match in `path_env` (PATH; empty entries mean the current directory).
// Throws canopy::Error (bad input) naming the program when there is none,
// or when it is a directory or not executable.
std::string find_program(const std::string& name, const char* path_env);

// The path of this canopy executable (/proc/self/exe), to find what is
// installed beside it (the OpenMP runtime, libcanopy-mpi).
std::string self_executable();

// `s` single-quoted for a POSIX shell when it needs quoting.
std::string shell_quote(const std::string& s);

// Applies the changes to this process's environment.
void apply_environment(const std::vector<EnvChange>& changes);

// Replaces this process by the program. Returns only by throwing.
[[noreturn]] void exec_program(const std::string& path, const std::vector<std::string>& argv);

// Starts the program as a child with its stdout and stderr going through
// pipes: lines starting with `marker` go to on_marker_line (without their
// newline), everything else is passed on unchanged to canopy's own stdout
// and stderr. Returns the program's exit status (128 + N when killed by
// signal N, as shells do). Throws canopy::Error when it cannot start it.
int run_filtered(const std::string& path, const std::vector<std::string>& argv, const std::string& marker,
                 const std::function<void(std::string_view)>& on_marker_line);

// Splits a byte stream into "marker lines" and everything else, passing the
// rest on as soon as it is known not to start a marker line (so that a prompt
// without a newline still appears). Exposed for tests.
class LineFilter {
 public:
  LineFilter(std::string marker, std::function<void(std::string_view)> pass,
             std::function<void(std::string_view)> on_marker_line);
  void feed(std::string_view bytes);
  void finish();  // end of stream: flushes a partial line

 private:
  std::string marker_;
  std::function<void(std::string_view)> pass_;
  std::function<void(std::string_view)> on_marker_;
  std::string pending_;   // start of the current line, while it may still be a marker line
  bool passing_ = false;  // the current line is program output: pass bytes until the newline
};

}  // namespace canopy::run
