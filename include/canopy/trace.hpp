// Tracing: what the runtime did, per worker, as a timeline for standard
// viewers (docs/trace.md). A session records task spans (labelled with the
// data-flow task's or graph node's callable type, or the spawned
// callable's), steals (victim -> thief, with the distance), parks and
// searches, data-flow dependency releases, data migrations and automatic
// affinity's placements, then writes them as Chrome trace-event JSON
// (Perfetto, chrome://tracing) or OTF2 (Vampir, Score-P's tools).
//
//   canopy::trace_start("run.json");     // every runtime, now and made later
//   ... work ...
//   canopy::TraceResult r = canopy::trace_stop();   // writes run.json
//
// Or with no code change: CANOPY_TRACE=run.json ./app (the file is written
// when the program exits). One session at a time per process.
#pragma once
#include <cstdint>
#include <string>

namespace canopy {

enum class TraceFormat { Auto, Json, Otf2 };

struct TraceOptions {
  // Auto: from the file name (.otf2: OTF2, anything else: JSON).
  TraceFormat format = TraceFormat::Auto;
  // Which events: a comma-separated list of task, steal, park, search,
  // release, migration, placement (or all); empty: all.
  std::string events;
  // Events kept per worker (a power of two at least; when a worker's buffer
  // is full its new events are dropped and counted as lost). 0: the
  // CANOPY_TRACE_BUFFER variable, else 262144 (10 MiB per worker). A
  // runtime keeps the size its buffers got in its first session.
  std::uint64_t buffer_events = 0;
};

struct TraceResult {
  std::string path;
  std::uint64_t events = 0;  // written
  std::uint64_t lost = 0;    // dropped because a worker's buffer was full
};

// Starts recording. Throws canopy::Error when a session is already
// recording, or for a bad option (the message names it).
void trace_start(const std::string& path, const TraceOptions& options = {});
// Stops the session and writes its file. Throws canopy::Error when no
// session records or the file cannot be written.
TraceResult trace_stop();
// Whether a session records now.
bool trace_active();

}  // namespace canopy
