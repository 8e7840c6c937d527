// The counters of one runtime: one ThreadCounters per worker (worker 0 is
// the thread that made the runtime, counted from then on, also while it is
// outside the runtime; extra slots are not counted), opened only when
// CANOPY_STATS or a trace session asks (at the runtime's start, or when a
// session starts), finished by each worker thread as it ends, and the
// energy of the run for CANOPY_STATS. Nothing here runs per task.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "counters/energy.hpp"
#include "counters/thread_counters.hpp"

namespace canopy::counters {

struct RunCounters {
  unsigned sets = 0;
  std::vector<std::unique_ptr<ThreadCounters>> workers;  // per worker; null: its thread was not known
  bool energy_on = false;
  EnergyMeter energy;
  std::chrono::steady_clock::time_point energy_start;
};

// For tests: every runtime opens its counters with this probe (nullptr:
// the real perf_event_open and /proc).
void set_test_probe(const Probe* probe);
const Probe& current_probe();

// The counters that have no count among `asked` (CounterSets) for these
// threads, grouped by reason: {"cycles, instructions", "why"}.
std::vector<std::pair<std::string, std::string>> missing_counters(const std::vector<ThreadCounters*>& threads,
                                                                  unsigned asked);
// The /proc fallback notes of these threads (one per distinct note).
std::vector<std::string> fallback_notes(const std::vector<ThreadCounters*>& threads);
// The column name of counter c: perf's name, ":u" when counted in user space only.
std::string column_name(int c, const std::vector<ThreadCounters*>& threads);

}  // namespace canopy::counters

namespace canopy::detail {

struct RuntimeCore;
struct Worker;

// Opens rt's counters if not yet (nullptr before the runtime's constructor
// has started its threads: it opens them itself then, if a session runs);
// `energy`: also measure the run's energy from now.
counters::RunCounters* open_run_counters(RuntimeCore* rt, bool energy);
// A worker thread that is ending keeps its counts (run by the thread).
void finish_worker_counters(Worker* w);
// Worker i's counts now (empty when rt's counters are not open).
counters::Sample worker_counters(RuntimeCore* rt, int i);
// The CANOPY_STATS lines of the counters and the energy.
void print_run_counters(RuntimeCore* rt, std::ostream& out);

}  // namespace canopy::detail
