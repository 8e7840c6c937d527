// `canopy trace`: a Chrome trace-event JSON file that canopy wrote
// (CANOPY_TRACE, canopy::trace_start), read back into rows and spans, and
// what the summary and the SVG timeline compute from it.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace canopy::cli {

struct TraceSpan {
  double t0 = 0, t1 = 0;  // microseconds from the session's start
  std::string label;
  std::string category;   // task, task,dataflow, task,graph, park, search
  std::string id;         // data-flow tasks: the task's id
  bool is_task() const { return category.rfind("task", 0) == 0; }
};

struct TraceSteal {
  double t = 0;
  int victim = 0;  // row index of the victim (-1: not in the trace)
  std::string distance;
};

struct TraceRow {
  int pid = 0, tid = 0;
  std::string name;
  int numa = -1;
  std::uint64_t bytes_local = 0, bytes_remote = 0;
  // Counters over the session (otherData.workers[].counters), perf's names.
  std::map<std::string, std::uint64_t> counters;
  std::vector<TraceSpan> spans;    // by start time
  std::vector<TraceSteal> steals;  // this row was the thief
};

struct TraceRelease {
  double t = 0;
  int row = 0;
  std::string from, to;
};

struct TraceFile {
  std::vector<TraceRow> rows;  // runtime, then worker order
  std::vector<TraceRelease> releases;
  double duration_us = 0;
  std::uint64_t lost = 0;
  std::uint64_t events = 0;
  // Counters without a count ({names, why}), where the OS counters came
  // from instead of perf_event, the session's energy (joules per domain)
  // or why there is none.
  std::vector<std::pair<std::string, std::string>> counters_missing;
  std::vector<std::string> counters_notes;
  std::vector<std::pair<std::string, double>> energy;
  std::string energy_source, energy_missing;
};

// Throws canopy::Error naming the file (and what is wrong) for a file that
// cannot be read or is not a canopy trace in the JSON format.
TraceFile read_trace(const std::string& path);

// Per row: time in tasks (outermost spans), searching, parked, the rest.
struct RowTimes {
  double busy = 0, search = 0, parked = 0, idle = 0;
  std::size_t tasks = 0;
  std::map<std::string, std::size_t> steals;  // by distance
};
RowTimes row_times(const TraceRow& row, double duration_us);

// The observed critical path of the data-flow tasks: from the task that
// ended last, back through the task whose release made each one ready (the
// last of its predecessors to finish). Indexes (row, span), first task
// first.
std::vector<std::pair<int, int>> critical_path(const TraceFile& t);

std::string summary_text(const std::string& path, const TraceFile& t);

struct SvgOptions {
  int width = 1200;
  bool color_by_numa = false;
};
std::string timeline_svg(const TraceFile& t, const SvgOptions& o);

}  // namespace canopy::cli
