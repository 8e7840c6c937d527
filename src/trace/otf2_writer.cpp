// OTF2 (the Open Trace Format 2 of Score-P, Vampir, otf2-print), written
// with Debian's libotf2: one location group per runtime (and one for the
// threads outside every runtime), one location per worker, one region per
// task label and one each for parked, searching, steal, release, migration
// and placement. Spans become Enter/Leave pairs, properly nested per
// location (a span that would end after its parent is cut at the parent's
// end); instants become a region entered and left at once, with their
// details as parameters (a steal's victim and distance, a release's tasks,
// a migration's handle, bytes and node, a placement's task and worker).
// Times are nanoseconds from the session's start (timer resolution 1e9).
// Counters are metrics: one metric class per counter (perf's name, an
// accumulated count), a Metric event with 0 at the start of each worker's
// location and its total at the end; the energy is one metric instance per
// domain (joules, scoped to the machine's system tree node) recorded on the
// first location, likewise.
//
// The archive: a path "dir/name.otf2" gives the anchor file dir/name.otf2
// and the directory dir/name/ of definitions and events (OTF2's layout); an
// existing archive of that name is an error (libotf2 does not overwrite).
#include <fmt/format.h>
#include <otf2/otf2.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "canopy/error.hpp"
#include "trace/trace_data.hpp"

namespace canopy::trace_impl {

namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
OTF2_FlushCallbacks flush_callbacks = {pre_flush, post_flush};

void check(OTF2_ErrorCode rc, const std::string& path, const char* what) {
  if (rc != OTF2_SUCCESS)
    throw Error(fmt::format("trace: writing the OTF2 archive '{}': {}: {}", path, what, OTF2_Error_GetDescription(rc)),
                ErrorKind::System);
}

// Strings and regions, numbered as they are first used.
struct Defs {
  std::vector<std::string> strings;
  std::map<std::string, OTF2_StringRef> string_ids;
  std::vector<std::pair<OTF2_StringRef, OTF2_RegionRole>> regions;  // name, role
  std::map<std::string, OTF2_RegionRef> region_ids;
  OTF2_StringRef str(const std::string& s) {
    auto [it, added] = string_ids.emplace(s, static_cast<OTF2_StringRef>(strings.size()));
    if (added) strings.push_back(s);
    return it->second;
  }
  OTF2_RegionRef region(const std::string& name, OTF2_RegionRole role) {
    auto [it, added] = region_ids.emplace(name, static_cast<OTF2_RegionRef>(regions.size()));
    if (added) regions.emplace_back(str(name), role);
    return it->second;
  }
};

enum Param : int { kVictim, kDistance, kFrom, kTo, kHandle, kBytes, kNode, kTask, kWorker, kGraph, kParams };
const char* const kParamNames[kParams] = {"victim worker", "distance", "from task", "to task", "handle",
                                          "bytes",         "node",     "task",      "worker",  "graph"};
const OTF2_ParameterType kParamTypes[kParams] = {
    OTF2_PARAMETER_TYPE_INT64,  OTF2_PARAMETER_TYPE_STRING, OTF2_PARAMETER_TYPE_UINT64, OTF2_PARAMETER_TYPE_UINT64,
    OTF2_PARAMETER_TYPE_UINT64, OTF2_PARAMETER_TYPE_UINT64, OTF2_PARAMETER_TYPE_INT64,  OTF2_PARAMETER_TYPE_UINT64,
    OTF2_PARAMETER_TYPE_INT64,  OTF2_PARAMETER_TYPE_UINT64};

bool is_span(detail::TraceKind k) {
  return k == detail::kTraceTask || k == detail::kTraceFlowTask || k == detail::kTraceGraphTask ||
         k == detail::kTracePark || k == detail::kTraceSearch || k == detail::kTraceOmp;
}

OTF2_RegionRole omp_role(unsigned construct) {
  switch (construct) {
    case detail::kOmpParallel: return OTF2_REGION_ROLE_PARALLEL;
    case detail::kOmpBarrier: return OTF2_REGION_ROLE_BARRIER;
    case detail::kOmpJoinBarrier: return OTF2_REGION_ROLE_IMPLICIT_BARRIER;
    case detail::kOmpTaskwait: return OTF2_REGION_ROLE_TASK_WAIT;
    case detail::kOmpTaskgroup: return OTF2_REGION_ROLE_TASK_WAIT;
    default: return OTF2_REGION_ROLE_TASK;
  }
}

const char* distance_name(unsigned d) {
  return d == detail::kStealSameCore ? "same core" : d == detail::kStealSameNuma ? "same NUMA node" : "remote";
}

}  // namespace

void write_otf2(const std::string& path, const TraceData& d) {
  std::string dir = ".", name = path;
  if (const auto slash = path.rfind('/'); slash != std::string::npos) {
    dir = slash == 0 ? "/" : path.substr(0, slash);
    name = path.substr(slash + 1);
  }
  if (name.size() > 5 && name.compare(name.size() - 5, 5, ".otf2") == 0) name.resize(name.size() - 5);
  if (name.empty()) throw Error(fmt::format("trace: '{}': no archive name for OTF2", path), ErrorKind::BadInput);

  OTF2_Archive* archive = OTF2_Archive_Open(dir.c_str(), name.c_str(), OTF2_FILEMODE_WRITE, 1024 * 1024,
                                            4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
  if (!archive)
    throw Error(fmt::format("trace: cannot create the OTF2 archive '{}/{}.otf2' (does it exist already, or is the "
                            "directory missing?)",
                            dir, name),
                ErrorKind::System);
  struct Closer {
    OTF2_Archive* a;
    ~Closer() {
      if (a) OTF2_Archive_Close(a);
    }
  } closer{archive};
  check(OTF2_Archive_SetFlushCallbacks(archive, &flush_callbacks, nullptr), path, "flush callbacks");
  check(OTF2_Archive_SetSerialCollectiveCallbacks(archive), path, "collective callbacks");
  check(OTF2_Archive_SetCreator(archive, "canopy"), path, "creator");
  check(OTF2_Archive_OpenEvtFiles(archive), path, "event files");

  Defs defs;
  defs.str("");  // string 0: the empty string
  // Metrics: a class per counter some worker has, then a class and an
  // instance per energy domain (their refs share one space).
  std::vector<int> counter_class(counters::kNumCounters, -1);
  OTF2_MetricRef next_metric = 0;
  for (int c = 0; c < counters::kNumCounters; ++c)
    for (const TraceThread& t : d.threads)
      if (t.counters.has(c) && counter_class[c] < 0) counter_class[c] = static_cast<int>(next_metric++);
  const OTF2_MetricRef energy_classes = next_metric;
  next_metric += static_cast<OTF2_MetricRef>(d.energy.size());
  const OTF2_MetricRef energy_instances = next_metric;
  std::uint64_t t_end = d.duration_ns;
  for (const TraceRecord& r : d.records) t_end = std::max(t_end, r.t1);
  std::vector<std::uint64_t> events_per_location(d.threads.size(), 0);
  struct Open {
    OTF2_RegionRef region;
    std::uint64_t t1;
  };
  for (std::size_t loc = 0; loc < d.threads.size(); ++loc) {
    OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(archive, loc);
    if (!w) check(OTF2_ERROR_INVALID, path, "event writer");
    std::uint64_t n = 0;
    std::vector<Open> stack;
    auto leave_until = [&](std::uint64_t t) {
      while (!stack.empty() && stack.back().t1 <= t) {
        check(OTF2_EvtWriter_Leave(w, nullptr, stack.back().t1, stack.back().region), path, "leave");
        ++n;
        stack.pop_back();
      }
    };
    // This location's records, spans before instants at one time, and the
    // longer (outer) span first.
    std::vector<const TraceRecord*> recs;
    for (const TraceRecord& r : d.records)
      if (r.thread == static_cast<int>(loc)) recs.push_back(&r);
    std::stable_sort(recs.begin(), recs.end(), [](const TraceRecord* x, const TraceRecord* y) {
      if (x->t0 != y->t0) return x->t0 < y->t0;
      return x->t1 > y->t1;
    });
    // Counters (and, on the first location, the energy) at the start.
    auto metrics = [&](std::uint64_t t, bool end) {
      for (int c = 0; c < counters::kNumCounters; ++c) {
        if (!d.threads[loc].counters.has(c)) continue;
        const OTF2_Type type = OTF2_TYPE_UINT64;
        OTF2_MetricValue v;
        v.unsigned_int = end ? d.threads[loc].counters.value[c] : 0;
        check(OTF2_EvtWriter_Metric(w, nullptr, t, static_cast<OTF2_MetricRef>(counter_class[c]), 1, &type, &v), path,
              "metric");
        ++n;
      }
      for (std::size_t e = 0; loc == 0 && e < d.energy.size(); ++e) {
        const OTF2_Type type = OTF2_TYPE_DOUBLE;
        OTF2_MetricValue v;
        v.floating_point = end ? d.energy[e].joules : 0.0;
        check(OTF2_EvtWriter_Metric(w, nullptr, t, energy_instances + static_cast<OTF2_MetricRef>(e), 1, &type, &v),
              path, "metric");
        ++n;
      }
    };
    metrics(0, false);
    for (const TraceRecord* r : recs) {
      leave_until(r->t0);
      if (is_span(r->kind)) {
        std::string region = r->kind == detail::kTracePark     ? "parked"
                             : r->kind == detail::kTraceSearch ? "searching"
                                                               : d.labels[r->label];
        OTF2_RegionRole role = OTF2_REGION_ROLE_TASK;
        if (r->kind == detail::kTracePark || r->kind == detail::kTraceSearch) role = OTF2_REGION_ROLE_ARTIFICIAL;
        if (r->kind == detail::kTraceOmp) role = omp_role(r->d);
        const OTF2_RegionRef reg = defs.region(region, role);
        std::uint64_t t1 = r->t1;
        if (!stack.empty()) t1 = std::min(t1, stack.back().t1);
        check(OTF2_EvtWriter_Enter(w, nullptr, r->t0, reg), path, "enter");
        ++n;
        stack.push_back({reg, t1});
        continue;
      }
      const std::uint64_t t = r->t0;
      const OTF2_RegionRef reg = defs.region(kind_name(r->kind), OTF2_REGION_ROLE_ARTIFICIAL);
      check(OTF2_EvtWriter_Enter(w, nullptr, t, reg), path, "enter");
      ++n;
      auto pint = [&](Param p, std::int64_t v) {
        check(OTF2_EvtWriter_ParameterInt(w, nullptr, t, p, v), path, "parameter");
        ++n;
      };
      auto puint = [&](Param p, std::uint64_t v) {
        check(OTF2_EvtWriter_ParameterUnsignedInt(w, nullptr, t, p, v), path, "parameter");
        ++n;
      };
      switch (r->kind) {
        case detail::kTraceSteal:
          pint(kVictim, r->c);
          check(OTF2_EvtWriter_ParameterString(w, nullptr, t, kDistance, defs.str(distance_name(r->d))), path,
                "parameter");
          ++n;
          break;
        case detail::kTraceRelease:
          puint(kFrom, r->a);
          puint(kTo, r->b);
          break;
        case detail::kTraceMigration:
          puint(kHandle, r->c);
          puint(kBytes, r->b);
          pint(kNode, r->d);
          break;
        case detail::kTracePlacement:
          puint(kGraph, r->b);
          puint(kTask, r->c);
          pint(kWorker, static_cast<std::int64_t>(r->a));
          break;
        default:
          break;
      }
      check(OTF2_EvtWriter_Leave(w, nullptr, t, reg), path, "leave");
      ++n;
    }
    leave_until(~std::uint64_t{0});
    metrics(t_end, true);
    events_per_location[loc] = n;
    check(OTF2_Archive_CloseEvtWriter(archive, w), path, "close event writer");
  }
  check(OTF2_Archive_CloseEvtFiles(archive), path, "close event files");

  // Local definitions: none, but each location needs its (empty) file.
  check(OTF2_Archive_OpenDefFiles(archive), path, "definition files");
  for (std::size_t loc = 0; loc < d.threads.size(); ++loc) {
    OTF2_DefWriter* dw = OTF2_Archive_GetDefWriter(archive, loc);
    if (!dw) check(OTF2_ERROR_INVALID, path, "definition writer");
    check(OTF2_Archive_CloseDefWriter(archive, dw), path, "close definition writer");
  }
  check(OTF2_Archive_CloseDefFiles(archive), path, "close definition files");

  OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(archive);
  if (!g) check(OTF2_ERROR_INVALID, path, "global definition writer");
  check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1'000'000'000, 0, d.duration_ns + 1, OTF2_UNDEFINED_TIMESTAMP),
        path, "clock");
  // Strings used by the locations and groups, then all strings, regions, ...
  std::vector<OTF2_StringRef> loc_names;
  std::map<int, std::pair<OTF2_LocationGroupRef, OTF2_StringRef>> groups;  // runtime -> id, name
  for (const TraceThread& t : d.threads) {
    loc_names.push_back(defs.str(t.runtime == 0 ? std::string("threads outside the runtimes")
                                 : !t.name.empty() ? t.name
                                 : t.extra      ? fmt::format("outside thread (slot {})", t.worker)
                                                : fmt::format("worker {} (PU L#{} P#{}, core {}, NUMA {})", t.worker,
                                                              t.pu, t.pu_os, t.core, t.numa)));
    if (!groups.count(t.runtime))
      groups.emplace(t.runtime, std::pair{static_cast<OTF2_LocationGroupRef>(groups.size()),
                                          defs.str(t.runtime == 0         ? std::string("outside the runtimes")
                                                   : !t.process.empty() ? t.process
                                                                        : fmt::format("canopy runtime {}", t.runtime))});
  }
  const OTF2_StringRef machine = defs.str("machine"), node_class = defs.str("node");
  std::vector<OTF2_StringRef> metric_names, metric_descs;
  for (int c = 0; c < counters::kNumCounters; ++c) {
    metric_names.push_back(defs.str(d.counter_names.size() > static_cast<std::size_t>(c) ? d.counter_names[c]
                                                                                         : counters::counter_name(c)));
    metric_descs.push_back(defs.str(fmt::format("{} of the worker's thread ({})", counters::counter_name(c),
                                                c < counters::kNumOsCounters ? "perf_event software event or /proc"
                                                                             : "perf_event hardware event")));
  }
  std::vector<OTF2_StringRef> energy_names;
  for (const counters::EnergyReading& e : d.energy) energy_names.push_back(defs.str("energy " + e.domain));
  const OTF2_StringRef energy_desc = defs.str(
      fmt::format("energy of the machine's {} ({}), not only this program's", "RAPL domain", d.energy_source));
  const OTF2_StringRef unit_events = defs.str("#"), unit_joules = defs.str("J");
  std::vector<OTF2_StringRef> param_names;
  for (int p = 0; p < kParams; ++p) param_names.push_back(defs.str(kParamNames[p]));
  for (std::size_t s = 0; s < defs.strings.size(); ++s)
    check(OTF2_GlobalDefWriter_WriteString(g, static_cast<OTF2_StringRef>(s), defs.strings[s].c_str()), path,
          "string");
  for (std::size_t r = 0; r < defs.regions.size(); ++r)
    check(OTF2_GlobalDefWriter_WriteRegion(g, static_cast<OTF2_RegionRef>(r), defs.regions[r].first,
                                           defs.regions[r].first, 0, defs.regions[r].second, OTF2_PARADIGM_USER,
                                           OTF2_REGION_FLAG_NONE, 0, 0, 0),
          path, "region");
  for (int p = 0; p < kParams; ++p)
    check(OTF2_GlobalDefWriter_WriteParameter(g, static_cast<OTF2_ParameterRef>(p), param_names[p], kParamTypes[p]),
          path, "parameter");
  check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, node_class, OTF2_UNDEFINED_SYSTEM_TREE_NODE), path,
        "system tree");
  OTF2_MetricMemberRef member = 0;
  for (int c = 0; c < counters::kNumCounters; ++c) {
    if (counter_class[c] < 0) continue;
    check(OTF2_GlobalDefWriter_WriteMetricMember(g, member, metric_names[c], metric_descs[c], OTF2_METRIC_TYPE_OTHER,
                                                 OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0,
                                                 unit_events),
          path, "metric member");
    check(OTF2_GlobalDefWriter_WriteMetricClass(g, static_cast<OTF2_MetricRef>(counter_class[c]), 1, &member,
                                                OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_CPU),
          path, "metric class");
    ++member;
  }
  for (std::size_t e = 0; e < d.energy.size(); ++e) {
    check(OTF2_GlobalDefWriter_WriteMetricMember(g, member, energy_names[e], energy_desc, OTF2_METRIC_TYPE_OTHER,
                                                 OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_DOUBLE, OTF2_BASE_DECIMAL, 0,
                                                 unit_joules),
          path, "metric member");
    check(OTF2_GlobalDefWriter_WriteMetricClass(g, energy_classes + static_cast<OTF2_MetricRef>(e), 1, &member,
                                                OTF2_METRIC_ASYNCHRONOUS, OTF2_RECORDER_KIND_ABSTRACT),
          path, "metric class");
    ++member;
  }
  for (const auto& [runtime, group] : groups) {
    (void)runtime;
    check(OTF2_GlobalDefWriter_WriteLocationGroup(g, group.first, group.second, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                  OTF2_UNDEFINED_LOCATION_GROUP),
          path, "location group");
  }
  for (std::size_t loc = 0; loc < d.threads.size(); ++loc)
    check(OTF2_GlobalDefWriter_WriteLocation(g, loc, loc_names[loc], OTF2_LOCATION_TYPE_CPU_THREAD,
                                             events_per_location[loc], groups[d.threads[loc].runtime].first),
          path, "location");
  for (std::size_t e = 0; e < d.energy.size() && !d.threads.empty(); ++e)
    check(OTF2_GlobalDefWriter_WriteMetricInstance(g, energy_instances + static_cast<OTF2_MetricRef>(e),
                                                   energy_classes + static_cast<OTF2_MetricRef>(e), 0,
                                                   OTF2_SCOPE_SYSTEM_TREE_NODE, 0),
          path, "metric instance");
  closer.a = nullptr;
  check(OTF2_Archive_Close(archive), path, "close");
}

}  // namespace canopy::trace_impl
