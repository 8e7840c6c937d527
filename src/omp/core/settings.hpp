// The OpenMP runtime's initial settings: the internal control variables
// (ICVs) that OpenMP 5.1 sets from the environment (OMP_*, GOMP_CPU_AFFINITY,
// GOMP_SPINCOUNT) before the program starts, plus the places list resolved
// to OS CPU numbers on the machine canopy sees.
//
// Parsing follows OpenMP's custom, not canopy's: the program cannot be
// changed, so a bad OMP_* value gets one warning line naming the variable,
// the value and what was expected, and the specification's default is used.
// Nothing here depends on the running teams: it is pure parsing and
// formatting, testable on synthetic topologies.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace canopy {
class Topology;
}

namespace canopy::omp {

// OMP_PROC_BIND values (false/true are the boolean forms).
enum class ProcBind { False, True, Primary, Close, Spread };

// Loop schedule kinds with libgomp's numbering (omp_sched_t): static 1,
// dynamic 2, guided 3, auto 4.
enum class ScheduleKind { Static = 1, Dynamic = 2, Guided = 3, Auto = 4 };

struct Schedule {
  ScheduleKind kind = ScheduleKind::Dynamic;  // libgomp's default run-sched-var
  bool monotonic = false;                     // "monotonic:" modifier given
  int chunk = 0;                              // 0: the kind's default
  bool nonmonotonic = false;                  // "nonmonotonic:" modifier given
  bool operator==(const Schedule&) const = default;
};

enum class WaitPolicy { Unset, Active, Passive };

// OMP_TARGET_OFFLOAD (canopy has no devices; parsed so that it displays).
enum class TargetOffload { Default, Mandatory, Disabled };

// libgomp's cap on max-active-levels (OMP_MAX_ACTIVE_LEVELS, OMP_NESTED=true).
inline constexpr int kSupportedActiveLevels = 255;

// One place: the OS indexes of its CPUs (sorted, distinct).
struct Place {
  std::vector<int> os_cpus;
};

// The initial ICVs. Empty lists / nullopt mean "not set by the environment"
// (the runtime then chooses: one thread per core, canopy's placement).
struct Settings {
  std::vector<int> num_threads;                  // OMP_NUM_THREADS (nthreads-var list)
  std::vector<ProcBind> proc_bind;               // OMP_PROC_BIND (bind-var list)
  std::vector<Place> places;                     // OMP_PLACES, or GOMP_CPU_AFFINITY (one CPU per place)
  std::string places_source;                     // what gave the places ("cores", "{0,1},{2,3}", ...), for display
  bool dynamic = false;                          // OMP_DYNAMIC
  std::optional<int> max_active_levels;          // OMP_MAX_ACTIVE_LEVELS, or from OMP_NESTED / list lengths
  std::optional<bool> nested;                    // OMP_NESTED (deprecated, still honoured)
  int thread_limit = 0;                          // OMP_THREAD_LIMIT (0: unlimited)
  Schedule run_sched;                            // OMP_SCHEDULE (run-sched-var)
  bool run_sched_set = false;
  std::size_t stacksize = 0;                     // OMP_STACKSIZE in bytes (0: the system's default)
  WaitPolicy wait_policy = WaitPolicy::Unset;    // OMP_WAIT_POLICY
  bool display_env = false;                      // OMP_DISPLAY_ENV=true|verbose
  bool display_env_verbose = false;
  bool display_affinity = false;                 // OMP_DISPLAY_AFFINITY
  std::string affinity_format = "level %L thread %i affinity %A";  // OMP_AFFINITY_FORMAT (libgomp's default)
  bool cancellation = false;                     // OMP_CANCELLATION
  int max_task_priority = 0;                     // OMP_MAX_TASK_PRIORITY
  int default_device = 0;                        // OMP_DEFAULT_DEVICE
  std::string allocator = "omp_default_mem_alloc";  // OMP_ALLOCATOR (a predefined allocator's name)
  int num_teams = 0;                             // OMP_NUM_TEAMS (0: unset)
  int teams_thread_limit = 0;                    // OMP_TEAMS_THREAD_LIMIT (0: unset)
  std::optional<std::uint64_t> spin_count;       // GOMP_SPINCOUNT

  // Additions (settings layer):
  bool places_implied = false;                   // places = threads because OMP_PROC_BIND binds and no places were given (libgomp)
  bool proc_bind_implied = false;                // proc_bind = {True} because places were set and OMP_PROC_BIND was not (libgomp)
  int default_num_threads = 1;                   // what nthreads-var is when OMP_NUM_THREADS is unset (machine's cores; the runtime may overwrite)
  TargetOffload target_offload = TargetOffload::Default;  // OMP_TARGET_OFFLOAD
  std::string gomp_cpu_affinity;                 // GOMP_CPU_AFFINITY's text when it gave the places
};

// The spin count the runtime uses: GOMP_SPINCOUNT, else libgomp's defaults
// (300000; 30000000000 for OMP_WAIT_POLICY=active; 0 for passive).
std::uint64_t effective_spin_count(const Settings& s);
// max-active-levels-var as the runtime starts with it (1 when unset).
int effective_max_active_levels(const Settings& s);
// A places list as libgomp prints it: "{0:2},{2:2},{5,7}" (runs as start:length).
std::string places_string(const std::vector<Place>& places);
// OS CPU numbers as a range list: "0-3,8" ("" for none).
std::string cpu_list_string(const std::vector<int>& os_cpus);
// Why an affinity format is malformed (unknown field, "0" without ".", a
// modifier without a width, unterminated "%{"), or nullopt when it is fine.
std::optional<std::string> affinity_format_error(const std::string& format);

// Reads a variable; returns nullopt when it is unset. Tests pass a map.
using Getenv = std::function<std::optional<std::string>(const char* name)>;
Getenv process_getenv();

// Parses every variable above. `machine` resolves abstract place names
// (threads, cores, ll_caches, numa_domains, sockets) and checks CPU numbers;
// one line per bad value goes to `warnings`, and that variable keeps its
// default. Never throws for bad OMP_* values.
Settings parse_settings(const Getenv& getenv, const Topology& machine, std::ostream& warnings);

// The OMP_DISPLAY_ENV block (OPENMP DISPLAY ENVIRONMENT BEGIN ... END), in
// the specification's format, naming canopy and its version.
void display_env(const Settings& s, bool verbose, std::ostream& out);

// What OMP_AFFINITY_FORMAT's field specifiers (%t %T %L %n %N %a %H %P
// %i %A, short and {long} names, with 0 / . / width modifiers) expand to for
// one thread. %i prints native_thread_id as libgomp does (hex, "0x..."). A
// malformed specifier is copied to the output as written (libgomp aborts the
// program instead; see affinity_format_error).
struct AffinityFields {
  int team_num = 0, num_teams = 1, nesting_level = 0, thread_num = 0, num_threads = 1, ancestor_tnum = -1;
  std::string host;
  long pid = 0;
  long native_thread_id = 0;
  std::vector<int> os_cpus;  // the thread's affinity (printed as a list such as "0-3,8")
};
std::string format_affinity(const std::string& format, const AffinityFields& fields);

}  // namespace canopy::omp
