// `canopy run --report`: the OMP_AFFINITY_FORMAT canopy asks the OpenMP
// runtime to print with, the parser of those lines, and the comparison of
// where each thread was bound against where the placement put it.
//
// OpenMP 5 runtimes print one line per thread when OMP_DISPLAY_AFFINITY is
// true (libgomp on stderr, LLVM libomp on stdout), in the format of
// OMP_AFFINITY_FORMAT; %A is the set of CPUs the runtime bound the thread
// to. canopy's lines start with a marker that carries canopy's pid, so that
// they cannot be mistaken for the program's own output.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace canopy::run {

// "canopy-affinity-<nonce>:"
std::string affinity_marker(long nonce);
// marker + " pid=%P level=%L thread=%n cpus=%A"
std::string affinity_format(const std::string& marker);

struct AffinityLine {
  long pid = 0;
  int level = 0;   // nesting level: 1 for the outermost parallel region
  int thread = 0;  // omp_get_thread_num() in that region
  std::vector<int> cpus;
};

// The line (without its newline) when it starts with `marker`; nullopt for
// other lines. Throws canopy::Error naming the line when it starts with the
// marker but does not parse.
std::optional<AffinityLine> parse_affinity_line(std::string_view line, std::string_view marker);

// "0-3,5", "0,1", "{0,1}", "7": sorted CPU numbers without duplicates.
// Throws canopy::Error naming the text on anything else.
std::vector<int> parse_cpu_list(std::string_view text);
// Shortest form: "0-3,5".
std::string cpu_list_string(const std::vector<int>& cpus);

enum class ThreadStatus { Ok, Mismatch, NotSeen, Unplaced };

struct ThreadRow {
  long pid = 0;                // 0 when the runtime printed nothing for it
  int thread = 0;
  std::vector<int> expected;   // empty for a thread beyond the placement
  std::vector<int> bound;      // as reported by the runtime (the last line, or the first that differed)
  ThreadStatus status = ThreadStatus::NotSeen;
};

struct Report {
  std::vector<ThreadRow> rows;  // by pid (in order of appearance), then thread
  int mismatches = 0;
  int not_seen = 0;
  int processes = 0;  // distinct pids that printed affinity lines
};

// expected[i]: the OS CPUs of thread i. Only lines of the outermost parallel
// regions (level 1) are compared: nested teams are not placed by canopy.
Report compare(const std::vector<std::vector<int>>& expected, const std::vector<AffinityLine>& lines);

// The table printed on stderr: thread, expected CPUs, where the runtime bound
// it, ok/MISMATCH, and a closing line.
std::string format_report(const Report& r);

}  // namespace canopy::run
