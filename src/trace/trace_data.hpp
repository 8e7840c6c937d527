// Private to src/trace/: a finished session's events, decoded (times in ns
// from the session's start, labels as text), what the writers turn into a
// file.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "canopy/detail/trace.hpp"
#include "canopy/trace.hpp"
#include "counters/energy.hpp"
#include "counters/thread_counters.hpp"

namespace canopy::trace_impl {

// One row of the timeline: a worker slot of a runtime (runtime ids count
// from 1 in the order runtimes were made), or, with runtime 0, the threads
// outside every runtime (data moves from the main thread).
struct TraceThread {
  int runtime = 0;
  int worker = 0;
  bool extra = false;  // an extra slot (an outside thread that called in)
  // Rows of a registered thread group (canopy's OpenMP runtime): the
  // process's and the row's names (empty: a runtime's worker).
  std::string process, name;
  int pu = -1, pu_os = -1, core = -1, numa = -1;
  // Bytes that data-flow tasks run by this worker accessed on its NUMA node
  // and on others during the session (WorkerStats).
  std::uint64_t bytes_local = 0, bytes_remote = 0;
  // The thread's counters over the session (workers of runtimes whose
  // counters are open; counters/thread_counters.hpp).
  counters::Sample counters;
};

struct TraceRecord {
  detail::TraceKind kind;
  int thread = 0;        // index in TraceData::threads
  std::uint64_t t0 = 0;  // ns since the session started
  std::uint64_t t1 = 0;
  int label = -1;        // index in TraceData::labels (spans of tasks, OpenMP constructs)
  int code = -1;         // OpenMP constructs: the function's name in TraceData::labels (-1: none)
  std::uint64_t a = 0, b = 0;  // ids as recorded (see detail::TraceKind)
  std::uint32_t c = 0;
  std::uint16_t d = 0;
};

struct TraceData {
  std::vector<TraceThread> threads;
  std::vector<std::string> labels;
  std::vector<TraceRecord> records;  // sorted by thread, then start time
  std::uint64_t lost = 0;
  std::uint64_t duration_ns = 0;
  std::uint64_t buffer_events = 0;
  // Counters: each counter's column name (":u" when user space only), the
  // counters without a count and why ({names, why}), where the OS counters
  // came from when perf_event refused them.
  std::vector<std::string> counter_names;
  std::vector<std::pair<std::string, std::string>> counters_missing;
  std::vector<std::string> counters_notes;
  // Energy over the session (machine-wide), or why there is none ("" and
  // no readings: not asked for, CANOPY_COUNTERS).
  std::vector<counters::EnergyReading> energy;
  std::string energy_missing;
  std::string energy_source;
};

// The type in a trace_label() pretty name ("... [with T = X]" -> "X").
std::string label_text(const char* pretty);

// OpenMP constructs (kTraceOmp): the span's name ("parallel", "barrier",
// ...) and its trace-event category.
const char* omp_construct_name(unsigned construct);
const char* omp_construct_category(unsigned construct);

// "task", "steal", ... (the CANOPY_TRACE_EVENTS words).
const char* kind_name(detail::TraceKind k);

// The writers (chrome_writer.cpp, otf2_writer.cpp). Throw canopy::Error
// (kind System) when the file cannot be written.
void write_chrome_json(const std::string& path, const TraceData& data);
void write_otf2(const std::string& path, const TraceData& data);

}  // namespace canopy::trace_impl
