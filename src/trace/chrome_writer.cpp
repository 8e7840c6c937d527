// The Chrome trace-event format (the "JSON Object Format" of Google's Trace
// Event Format document; Perfetto and chrome://tracing open it): one
// process per runtime (pid = its id; pid 0: threads outside every runtime),
// one thread per worker (tid = worker index), named by metadata events.
// Tasks, parks and searches are complete events ("X"), steals instants on
// the thief plus a flow arrow ("s" on the victim, "f" on the thief),
// releases, migrations and placements instants. Times are microseconds
// (with ns precision) from the session's start. Written as a stream: a
// trace of millions of events needs no document in memory. `otherData`
// keeps what `canopy trace` summarises beyond the events: the lost count,
// each worker's place, bytes and counters, the counters that have none and
// why, the session's energy. Counters are also counter events ("C"): per
// worker, 0 at the start and the session's totals at its end (Perfetto
// draws them as tracks of the runtime's process); the energy likewise, in
// joules, on process 0 (the machine, outside the runtimes).
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "canopy/error.hpp"
#include "trace/trace_data.hpp"

namespace canopy::trace_impl {

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20) {
      out += fmt::format("\\u{:04x}", ch);
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + "\"";
}

std::string us(std::uint64_t ns) { return fmt::format("{}.{:03}", ns / 1000, ns % 1000); }

const char* distance_name(unsigned d) {
  switch (d) {
    case detail::kStealSameCore: return "same core";
    case detail::kStealSameNuma: return "same NUMA node";
    default: return "remote";
  }
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

std::string label_text(const char* pretty) {
  if (!pretty) return "?";
  const char* p = std::strstr(pretty, "T = ");
  if (!p) return pretty;
  std::string s(p + 4);
  if (!s.empty() && s.back() == ']') s.pop_back();
  // GCC appends "; using ... = ..." for aliases it used: not part of the type.
  int depth = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char ch = s[i];
    if (ch == '<' || ch == '(' || ch == '[' || ch == '{') ++depth;
    if (ch == '>' || ch == ')' || ch == ']' || ch == '}') --depth;
    if (ch == ';' && depth == 0) return s.substr(0, i);
  }
  return s;
}

void write_chrome_json(const std::string& path, const TraceData& d) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "w"));
  if (!file)
    throw Error(fmt::format("trace: cannot open '{}' for writing: {}", path, std::strerror(errno)), ErrorKind::System);
  std::FILE* f = file.get();
  fmt::memory_buffer buf;
  auto flush = [&] {
    if (std::fwrite(buf.data(), 1, buf.size(), f) != buf.size())
      throw Error(fmt::format("trace: writing '{}': {}", path, std::strerror(errno)), ErrorKind::System);
    buf.clear();
  };
  bool first = true;
  auto sep = [&] {
    fmt::format_to(std::back_inserter(buf), "{}\n", first ? "" : ",");
    first = false;
  };
  fmt::format_to(std::back_inserter(buf), "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[");
  // Metadata: process and thread names, rows in worker order.
  int last_runtime = -1;
  for (const TraceThread& t : d.threads) {
    const int pid = t.runtime;
    if (pid != last_runtime) {
      sep();
      fmt::format_to(std::back_inserter(buf),
                     "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":{}}}}}", pid,
                     json_string(pid == 0             ? std::string("outside the runtimes")
                                 : !t.process.empty() ? t.process
                                                      : fmt::format("canopy runtime {}", pid)));
      last_runtime = pid;
    }
    std::string name = pid == 0          ? std::string("threads outside the runtimes")
                       : !t.name.empty() ? t.name
                       : t.extra ? fmt::format("outside thread (slot {})", t.worker)
                                 : fmt::format("worker {} (PU L#{} P#{}, core {}, NUMA {})", t.worker, t.pu, t.pu_os,
                                               t.core, t.numa);
    sep();
    fmt::format_to(std::back_inserter(buf),
                   "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}", pid,
                   t.worker, json_string(name));
    sep();
    fmt::format_to(std::back_inserter(buf),
                   "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"sort_index\":{}}}}}",
                   pid, t.worker, t.worker);
  }
  // Counters: one counter event per worker at the start (zeros) and at the
  // end (totals), so that a viewer draws the growth over the session.
  auto counter_args = [&](const counters::Sample& c, bool zero) {
    std::string args;
    for (int k = 0; k < counters::kNumCounters; ++k)
      if (c.has(k))
        args += fmt::format("{}{}:{}", args.empty() ? "" : ",", json_string(d.counter_names[k]), zero ? 0 : c.value[k]);
    return args;
  };
  for (const TraceThread& t : d.threads) {
    if (t.counters.have == 0) continue;
    for (int end = 0; end < 2; ++end) {
      sep();
      fmt::format_to(std::back_inserter(buf),
                     "{{\"name\":{},\"cat\":\"counters\",\"ph\":\"C\",\"ts\":{},\"pid\":{},\"tid\":{},\"args\":{{{}}}}}",
                     json_string(fmt::format("worker {} counters", t.worker)), end ? us(d.duration_ns) : "0",
                     t.runtime, t.worker, counter_args(t.counters, !end));
    }
  }
  if (!d.energy.empty()) {
    bool named = false;
    for (const TraceThread& t : d.threads) named |= t.runtime == 0;
    if (!named) {
      sep();
      fmt::format_to(std::back_inserter(buf),
                     "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"tid\":0,\"args\":{{\"name\":\"outside the "
                     "runtimes\"}}}}");
    }
    for (int end = 0; end < 2; ++end) {
      std::string args;
      for (const counters::EnergyReading& e : d.energy)
        args += fmt::format("{}{}:{:.6f}", args.empty() ? "" : ",", json_string(e.domain), end ? e.joules : 0.0);
      sep();
      fmt::format_to(std::back_inserter(buf),
                     "{{\"name\":\"energy (J)\",\"cat\":\"energy\",\"ph\":\"C\",\"ts\":{},\"pid\":0,\"tid\":0,"
                     "\"args\":{{{}}}}}",
                     end ? us(d.duration_ns) : "0", args);
    }
  }
  std::uint64_t flow_id = 0;
  for (const TraceRecord& r : d.records) {
    const TraceThread& t = d.threads[r.thread];
    const int pid = t.runtime, tid = t.worker;
    const std::string ts = us(r.t0);
    sep();
    switch (r.kind) {
      case detail::kTraceTask:
        fmt::format_to(std::back_inserter(buf),
                       "{{\"name\":{},\"cat\":\"task\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{}}}",
                       json_string(d.labels[r.label]), ts, us(r.t1 - r.t0), pid, tid);
        break;
      case detail::kTraceFlowTask:
        fmt::format_to(std::back_inserter(buf),
                       "{{\"name\":{},\"cat\":\"task,dataflow\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},"
                       "\"tid\":{},\"args\":{{\"id\":\"{:#x}\"}}}}",
                       json_string(d.labels[r.label]), ts, us(r.t1 - r.t0), pid, tid, r.b);
        break;
      case detail::kTraceGraphTask:
        fmt::format_to(std::back_inserter(buf),
                       "{{\"name\":{},\"cat\":\"task,graph\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},"
                       "\"tid\":{},\"args\":{{\"graph\":\"{:#x}\",\"node\":{}}}}}",
                       json_string(d.labels[r.label]), ts, us(r.t1 - r.t0), pid, tid, r.b, r.c);
        break;
      case detail::kTracePark:
      case detail::kTraceSearch:
        fmt::format_to(std::back_inserter(buf),
                       "{{\"name\":\"{}\",\"cat\":\"{}\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{}}}",
                       r.kind == detail::kTracePark ? "parked" : "searching", kind_name(r.kind), ts, us(r.t1 - r.t0),
                       pid, tid);
        break;
      case detail::kTraceSteal:
        ++flow_id;
        fmt::format_to(std::back_inserter(buf),
                       "{{\"name\":\"steal\",\"cat\":\"steal\",\"ph\":\"i\",\"s\":\"t\",\"ts\":{},\"pid\":{},"
                       "\"tid\":{},\"args\":{{\"victim\":{},\"distance\":\"{}\"}}}},\n"
                       "{{\"name\":\"steal\",\"cat\":\"steal\",\"ph\":\"s\",\"id\":{},\"ts\":{},\"pid\":{},\"tid\":{}}},\n"
                       "{{\"name\":\"steal\",\"cat\":\"steal\",\"ph\":\"f\",\"bp\":\"e\",\"id\":{},\"ts\":{},\"pid\":{},"
                       "\"tid\":{}}}",
                       ts, pid, tid, r.c, distance_name(r.d), flow_id, ts, pid, r.c, flow_id, ts, pid, tid);
        break;
      case detail::kTraceRelease:
        fmt::format_to(std::back_inserter(buf),
                       "{{\"name\":\"release\",\"cat\":\"release\",\"ph\":\"i\",\"s\":\"t\",\"ts\":{},\"pid\":{},"
                       "\"tid\":{},\"args\":{{\"from\":\"{:#x}\",\"to\":\"{:#x}\"}}}}",
                       ts, pid, tid, r.a, r.b);
        break;
      case detail::kTraceMigration:
        fmt::format_to(std::back_inserter(buf),
                       "{{\"name\":\"migration\",\"cat\":\"migration\",\"ph\":\"i\",\"s\":\"t\",\"ts\":{},\"pid\":{},"
                       "\"tid\":{},\"args\":{{\"handle\":{},\"bytes\":{},\"node\":{}}}}}",
                       ts, pid, tid, r.c, r.b, r.d);
        break;
      case detail::kTracePlacement:
        fmt::format_to(std::back_inserter(buf),
                       "{{\"name\":\"placement\",\"cat\":\"placement\",\"ph\":\"i\",\"s\":\"t\",\"ts\":{},\"pid\":{},"
                       "\"tid\":{},\"args\":{{\"graph\":\"{:#x}\",\"node\":{},\"worker\":{},\"by\":\"{}\"}}}}",
                       ts, pid, tid, r.b, r.c, static_cast<std::int64_t>(r.a), r.d ? "apply" : "automatic affinity");
        break;
      case detail::kTraceOmp:
        fmt::format_to(std::back_inserter(buf),
                       "{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"ts\":{},\"dur\":{},\"pid\":{},\"tid\":{},"
                       "\"args\":{{\"construct\":\"{}\"",
                       json_string(d.labels[r.label]), omp_construct_category(r.d), ts, us(r.t1 - r.t0), pid, tid,
                       omp_construct_name(r.d));
        if (r.code >= 0) fmt::format_to(std::back_inserter(buf), ",\"fn\":{}", json_string(d.labels[r.code]));
        if (r.d == detail::kOmpParallel) fmt::format_to(std::back_inserter(buf), ",\"threads\":{}", r.b);
        fmt::format_to(std::back_inserter(buf), "}}}}");
        break;
      default:
        break;
    }
    if (buf.size() > (1u << 20)) flush();
  }
  fmt::format_to(std::back_inserter(buf), "\n],\"otherData\":{{\"producer\":\"canopy\",\"lost_events\":{},"
                                          "\"buffer_events\":{},\"duration_ns\":{},\"workers\":[",
                 d.lost, d.buffer_events, d.duration_ns);
  for (std::size_t i = 0; i < d.threads.size(); ++i) {
    const TraceThread& t = d.threads[i];
    fmt::format_to(std::back_inserter(buf),
                   "{}\n{{\"pid\":{},\"tid\":{},\"extra\":{},\"pu\":{},\"pu_os\":{},\"core\":{},\"numa\":{},"
                   "\"bytes_local\":{},\"bytes_remote\":{},\"counters\":{{{}}}}}",
                   i ? "," : "", t.runtime, t.worker, t.extra, t.pu, t.pu_os, t.core, t.numa, t.bytes_local,
                   t.bytes_remote, counter_args(t.counters, false));
  }
  fmt::format_to(std::back_inserter(buf), "],\n\"counters_unavailable\":[");
  for (std::size_t i = 0; i < d.counters_missing.size(); ++i)
    fmt::format_to(std::back_inserter(buf), "{}{{\"counters\":{},\"why\":{}}}", i ? "," : "",
                   json_string(d.counters_missing[i].first), json_string(d.counters_missing[i].second));
  fmt::format_to(std::back_inserter(buf), "],\n\"counters_notes\":[");
  for (std::size_t i = 0; i < d.counters_notes.size(); ++i)
    fmt::format_to(std::back_inserter(buf), "{}{}", i ? "," : "", json_string(d.counters_notes[i]));
  fmt::format_to(std::back_inserter(buf), "],\n\"energy\":{{");
  for (std::size_t i = 0; i < d.energy.size(); ++i)
    fmt::format_to(std::back_inserter(buf), "{}{}:{:.6f}", i ? "," : "", json_string(d.energy[i].domain),
                   d.energy[i].joules);
  fmt::format_to(std::back_inserter(buf), "}}");
  if (!d.energy.empty()) fmt::format_to(std::back_inserter(buf), ",\"energy_source\":{}", json_string(d.energy_source));
  if (!d.energy_missing.empty())
    fmt::format_to(std::back_inserter(buf), ",\"energy_unavailable\":{}", json_string(d.energy_missing));
  fmt::format_to(std::back_inserter(buf), "}}}}\n");
  flush();
  if (std::fflush(f) != 0 || std::ferror(f))
    throw Error(fmt::format("trace: writing '{}': {}", path, std::strerror(errno)), ErrorKind::System);
}

}  // namespace canopy::trace_impl
