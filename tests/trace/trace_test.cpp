// Tracing: traces of known programs on 2 workers, read back with
// independent readers (a check against the Trace Event Format's rules for
// the JSON, otf2-print for OTF2): the right tasks with their labels, on the
// right workers, steals (victim -> thief, with the arrow's two ends),
// nesting, data-flow releases, graph nodes and placements; a full buffer;
// bad options and variables.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "canopy/auto_affinity.hpp"
#include "canopy/data.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/error.hpp"
#include "canopy/runtime.hpp"
#include "canopy/taskgraph.hpp"
#include "canopy/topology.hpp"
#include "diamond.hpp"
#include "canopy/trace.hpp"
#include "canopy_runtime.h"
#include "counters/run_counters.hpp"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

canopy::RuntimeOptions two_workers() {
  canopy::RuntimeOptions o;
  o.num_threads = 2;
  o.bind = canopy::BindMode::None;
  return o;
}

fs::path temp_dir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("canopy_trace_" + std::to_string(getpid()) + "_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

json read_json(const fs::path& p) {
  std::ifstream f(p);
  EXPECT_TRUE(f.good()) << p;
  return json::parse(f);
}

// The rules of Google's Trace Event Format (JSON Object Format) for the
// phases canopy writes: every event has a string name, a phase and integer
// pid and tid; all but metadata have a numeric ts (microseconds); complete
// events ("X") a non-negative dur; instants ("i") a scope t, p or g; flow
// events ("s", "f") an id, and "f" binds to the enclosing slice ("bp": "e");
// counter events ("C") numeric args; metadata ("M") names a process or
// thread in args.name. Returns the first
// violation, or "".
std::string format_violation(const json& doc) {
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array())
    return "no traceEvents array";
  for (const json& e : doc["traceEvents"]) {
    const std::string where = e.dump();
    if (!e.contains("name") || !e["name"].is_string()) return "no name: " + where;
    if (!e.contains("ph") || !e["ph"].is_string()) return "no ph: " + where;
    if (!e.contains("pid") || !e["pid"].is_number_integer()) return "no integer pid: " + where;
    if (!e.contains("tid") || !e["tid"].is_number_integer()) return "no integer tid: " + where;
    const std::string ph = e["ph"];
    if (ph == "M") {
      const std::string n = e["name"];
      if (n != "process_name" && n != "thread_name" && n != "thread_sort_index") return "unknown metadata: " + where;
      if (!e.contains("args")) return "metadata without args: " + where;
      continue;
    }
    if (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0) return "bad ts: " + where;
    if (ph == "X") {
      if (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0) return "bad dur: " + where;
    } else if (ph == "i") {
      if (!e.contains("s") || (e["s"] != "t" && e["s"] != "p" && e["s"] != "g")) return "bad instant scope: " + where;
    } else if (ph == "C") {
      // Counter events: each arg a numeric series value.
      if (!e.contains("args") || !e["args"].is_object() || e["args"].empty()) return "counter without args: " + where;
      for (const auto& [k, v] : e["args"].items())
        if (!v.is_number()) return "counter value not a number: " + where;
    } else if (ph == "s" || ph == "f") {
      if (!e.contains("id")) return "flow event without id: " + where;
      if (ph == "f" && (!e.contains("bp") || e["bp"] != "e")) return "flow end not bound to its slice: " + where;
    } else {
      return "phase canopy does not write: " + where;
    }
  }
  return "";
}

std::vector<json> events(const json& doc, const std::string& ph, const std::string& name_part = "") {
  std::vector<json> out;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == ph && e["name"].get<std::string>().find(name_part) != std::string::npos) out.push_back(e);
  return out;
}

double end_of(const json& e) { return e["ts"].get<double>() + e["dur"].get<double>(); }

// ---- the known programs: diamond.hpp ----

TEST(Trace, DataflowDiamondOnTwoWorkers) {
  const fs::path dir = temp_dir("diamond");
  canopy::Runtime rt(two_workers());
  canopy::trace_start((dir / "t.json").string());
  EXPECT_TRUE(canopy::trace_active());
  diamond(rt);
  const canopy::TraceResult r = canopy::trace_stop();
  EXPECT_FALSE(canopy::trace_active());
  EXPECT_EQ(r.lost, 0u);
  EXPECT_GT(r.events, 0u);
  const json doc = read_json(dir / "t.json");
  ASSERT_EQ(format_violation(doc), "");
  // Both workers are named rows.
  std::set<int> named;
  for (const json& m : events(doc, "M", "thread_name")) named.insert(m["tid"].get<int>());
  EXPECT_EQ(named, (std::set<int>{0, 1}));
  // The three tasks, once each, labelled with their callable's type, on worker 0 or 1.
  const std::vector<json> produce = events(doc, "X", "Produce"), combine = events(doc, "X", "Combine");
  ASSERT_EQ(produce.size(), 2u);
  ASSERT_EQ(combine.size(), 1u);
  for (const json& t : {produce[0], produce[1], combine[0]}) {
    EXPECT_EQ(t["cat"], "task,dataflow");
    EXPECT_TRUE(t["tid"] == 0 || t["tid"] == 1) << t;
    const std::string name = t["name"];
    EXPECT_TRUE(name == "{anonymous}::Produce" || name == "{anonymous}::Combine") << "the callable's type: " << name;
  }
  // The release that made Combine ready came from a producer, which had ended.
  std::map<std::string, json> by_id;
  for (const json& t : {produce[0], produce[1], combine[0]}) by_id[t["args"]["id"]] = t;
  int to_combine = 0;
  for (const json& rel : events(doc, "i", "release")) {
    if (rel["args"]["to"] != combine[0]["args"]["id"]) continue;
    ++to_combine;
    ASSERT_TRUE(by_id.count(rel["args"]["from"])) << rel;
    const json& from = by_id[rel["args"]["from"]];
    EXPECT_NE(from["name"], combine[0]["name"]);
    EXPECT_LE(end_of(from), rel["ts"].get<double>() + 0.001);
    EXPECT_GE(combine[0]["ts"].get<double>() + 0.001, rel["ts"].get<double>());
  }
  EXPECT_EQ(to_combine, 1);
  EXPECT_EQ(doc["otherData"]["lost_events"], 0);
  fs::remove_all(dir);
}

struct StolenTask {
  std::atomic<int>* ran_on;
  void operator()() const { ran_on->store(canopy::detail::tls_worker->index); }
};
struct InnerTask {
  void operator()() const {}
};
struct OuterTask {
  canopy::Runtime* rt;
  void operator()() const {
    canopy::TaskGroup inner(*rt);
    const int me = canopy::detail::tls_worker->index;
    for (int i = 0; i < 3; ++i) inner.spawn(canopy::Affinity::worker(me, true), InnerTask{});
    inner.wait();
  }
};

TEST(Trace, StealsAndNesting) {
  const fs::path dir = temp_dir("steal");
  // Two packages of one core: the steal crosses packages (and NUMA nodes).
  canopy::Runtime rt(two_workers(), canopy::Topology::load("pack:2 numa:1 core:1 pu:1"));
  canopy::trace_start((dir / "t.json").string());
  std::atomic<int> ran_on{-1};
  rt.run([&] {
    // Worker 0 spawns a task and does not run it: worker 1 has to steal it.
    canopy::TaskGroup g(rt);
    g.spawn(StolenTask{&ran_on});
    while (ran_on.load() < 0) std::this_thread::yield();
    g.wait();
    // A task whose children are kept on its own worker: they run inside it.
    canopy::TaskGroup h(rt);
    h.spawn(OuterTask{&rt});
    h.wait();
  });
  canopy::trace_stop();
  ASSERT_EQ(ran_on.load(), 1);
  const json doc = read_json(dir / "t.json");
  ASSERT_EQ(format_violation(doc), "");
  const std::vector<json> stolen = events(doc, "X", "StolenTask");
  ASSERT_EQ(stolen.size(), 1u);
  EXPECT_EQ(stolen[0]["tid"], 1);
  // The steal: an instant on the thief naming the victim, and the arrow
  // from the victim's row to the thief's, before the task started.
  json steal;
  for (const json& s : events(doc, "i", "steal"))
    if (s["tid"] == 1 && s["args"]["victim"] == 0 && s["ts"].get<double>() <= stolen[0]["ts"].get<double>() + 0.001)
      steal = s;
  ASSERT_FALSE(steal.is_null()) << "no steal by worker 1 from worker 0";
  EXPECT_EQ(steal["args"]["distance"], "remote") << steal;
  std::set<std::string> starts, ends;
  for (const json& s : events(doc, "s", "steal"))
    if (s["tid"] == 0) starts.insert(s["id"].dump());
  for (const json& f : events(doc, "f", "steal"))
    if (f["tid"] == 1 && starts.count(f["id"].dump())) ends.insert(f["id"].dump());
  EXPECT_FALSE(ends.empty()) << "no arrow from worker 0 to worker 1";
  // Nesting: the 3 inner tasks ran on the outer task's worker, inside it.
  const std::vector<json> outer = events(doc, "X", "OuterTask"), inner = events(doc, "X", "InnerTask");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(inner.size(), 3u);
  for (const json& i : inner) {
    EXPECT_EQ(i["tid"], outer[0]["tid"]);
    EXPECT_GE(i["ts"].get<double>() + 0.001, outer[0]["ts"].get<double>());
    EXPECT_LE(end_of(i), end_of(outer[0]) + 0.001);
  }
  fs::remove_all(dir);
}

struct NodeA {
  void operator()() const {}
};
struct NodeB {
  void operator()() const {}
};

TEST(Trace, GraphNodesAndPlacements) {
  const fs::path dir = temp_dir("graph");
  canopy::Runtime rt(two_workers());
  canopy::Data a = canopy::data_allocate(4096), b = canopy::data_allocate(4096);
  canopy::TaskGraph g;
  g.add({canopy::write(a)}, NodeA{});
  g.add({canopy::read(a), canopy::write(b)}, NodeB{});
  g.add({canopy::read_write(a)}, NodeA{});
  g.run(rt);  // observed: durations for the placement
  canopy::trace_start((dir / "t.json").string());
  g.apply(rt, canopy::compute_placement(rt, g.matrix(), "compact"));
  g.run(rt);
  canopy::trace_stop();
  canopy::data_free(a);
  canopy::data_free(b);
  const json doc = read_json(dir / "t.json");
  ASSERT_EQ(format_violation(doc), "");
  std::multiset<int> nodes;
  for (const json& e : events(doc, "X"))
    if (e["cat"] == "task,graph") nodes.insert(e["args"]["node"].get<int>());
  EXPECT_EQ(nodes, (std::multiset<int>{0, 1, 2}));
  EXPECT_EQ(events(doc, "X", "NodeA").size(), 2u);
  EXPECT_EQ(events(doc, "X", "NodeB").size(), 1u);
  const std::vector<int> workers = g.task_workers();
  std::map<int, int> placed;
  for (const json& p : events(doc, "i", "placement")) {
    EXPECT_EQ(p["args"]["by"], "apply");
    placed[p["args"]["node"].get<int>()] = p["args"]["worker"].get<int>();
  }
  ASSERT_EQ(placed.size(), 3u);
  for (int t = 0; t < 3; ++t) EXPECT_EQ(placed[t], workers[t]) << "task " << t;
  fs::remove_all(dir);
}

TEST(Trace, AFullBufferDropsNewEventsAndCountsThem) {
  const fs::path dir = temp_dir("overflow");
  canopy::Runtime rt(two_workers());
  canopy::TraceOptions o;
  o.buffer_events = 16;
  o.events = "task";
  canopy::trace_start((dir / "t.json").string(), o);
  rt.run([&] {
    canopy::TaskGroup g(rt);
    for (int i = 0; i < 2000; ++i) g.spawn([] {});
    g.wait();
  });
  const canopy::TraceResult r = canopy::trace_stop();
  const json doc = read_json(dir / "t.json");
  ASSERT_EQ(format_violation(doc), "");
  const std::vector<json> tasks = events(doc, "X");
  EXPECT_EQ(r.events, tasks.size());
  EXPECT_EQ(r.lost + tasks.size(), 2000u);
  EXPECT_GT(r.lost, 0u);
  EXPECT_EQ(doc["otherData"]["lost_events"].get<std::uint64_t>(), r.lost);
  std::map<int, int> per_worker;
  for (const json& t : tasks) ++per_worker[t["tid"].get<int>()];
  for (auto [w, n] : per_worker) EXPECT_LE(n, 16) << "worker " << w;
  // A second session on the same runtime starts empty again.
  canopy::trace_start((dir / "u.json").string(), o);
  rt.run([&] {
    canopy::TaskGroup g(rt);
    for (int i = 0; i < 5; ++i) g.spawn([] {});
    g.wait();
  });
  const canopy::TraceResult r2 = canopy::trace_stop();
  EXPECT_EQ(r2.events, 5u);
  EXPECT_EQ(r2.lost, 0u);
  fs::remove_all(dir);
}

// Runs a shell command, returns its exit status and output (stdout+stderr).
std::pair<int, std::string> sh(const std::string& command) {
  std::string out;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

std::size_t count_lines(const std::string& text, const std::string& a, const std::string& b) {
  std::size_t n = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) ++n;
    pos = end + 1;
  }
  return n;
}

TEST(Trace, Otf2ReadBackWithOtf2Print) {
  const fs::path dir = temp_dir("otf2");
  // Energy from a fake powercap zone: 2 J over the session.
  const fs::path zone = dir / "sys/class/powercap/intel-rapl:0";
  fs::create_directories(zone);
  std::ofstream(zone / "name") << "package-0\n";
  std::ofstream(zone / "max_energy_range_uj") << "1000000000\n";
  std::ofstream(zone / "energy_uj") << "1000000\n";
  canopy::counters::Probe probe;
  probe.sysfs_root = (dir / "sys").string();
  canopy::counters::set_test_probe(&probe);
  canopy::Runtime rt(two_workers());
  canopy::trace_start((dir / "t.otf2").string());
  diamond(rt);
  std::ofstream(zone / "energy_uj") << "3000000\n";
  canopy::trace_stop();
  canopy::counters::set_test_probe(nullptr);
  ASSERT_TRUE(fs::exists(dir / "t.otf2"));
  const auto [status, out] = sh("otf2-print " + (dir / "t.otf2").string());
  ASSERT_EQ(status, 0) << out;
  EXPECT_EQ(count_lines(out, "ENTER", "Produce"), 2u) << out;
  EXPECT_EQ(count_lines(out, "LEAVE", "Produce"), 2u) << out;
  EXPECT_EQ(count_lines(out, "ENTER", "Combine"), 1u) << out;
  EXPECT_EQ(count_lines(out, "ENTER", "\"release\""), 1u) << out;
  // Counters: a metric per counter, 0 at each worker's start, its total at
  // the end; the energy on the first location.
  EXPECT_EQ(count_lines(out, "METRIC ", "(\"page-faults\" <"), 4u) << out;
  EXPECT_EQ(count_lines(out, "METRIC ", "(\"energy package-0\" <"), 2u) << out;
  EXPECT_EQ(count_lines(out, "METRIC ", "DOUBLE; 2"), 1u) << out;
  // Definitions: the two workers' locations.
  const auto [st2, defs] = sh("otf2-print -G " + (dir / "t.otf2").string());
  ASSERT_EQ(st2, 0) << defs;
  EXPECT_EQ(count_lines(defs, "LOCATION ", "worker 0"), 1u) << defs;
  EXPECT_EQ(count_lines(defs, "LOCATION ", "worker 1"), 1u) << defs;
  EXPECT_EQ(count_lines(defs, "METRIC_MEMBER ", "\"page-faults\""), 1u) << defs;
  EXPECT_EQ(count_lines(defs, "METRIC_INSTANCE ", ""), 1u) << defs;
  // libotf2 does not overwrite an archive: a clear error.
  canopy::trace_start((dir / "t.otf2").string());
  EXPECT_THROW(canopy::trace_stop(), canopy::Error);
  EXPECT_FALSE(canopy::trace_active());
  fs::remove_all(dir);
}

// Counters and energy in a trace: per worker, counter events ("C", zero at
// the start, the totals at the end) and otherData; every counter either
// counted or listed as unavailable with a reason; the session's energy from
// a fake powercap tree (with a wrap-around); `canopy trace` summarises them;
// a bad CANOPY_COUNTERS is an error of trace_start.
TEST(Trace, CountersAndEnergy) {
  const fs::path dir = temp_dir("counters");
  const fs::path zone = dir / "sys/class/powercap/intel-rapl:0";
  fs::create_directories(zone);
  std::ofstream(zone / "name") << "package-0\n";
  std::ofstream(zone / "max_energy_range_uj") << "1000000000\n";
  std::ofstream(zone / "energy_uj") << "999000000\n";
  canopy::counters::Probe probe;
  probe.sysfs_root = (dir / "sys").string();
  canopy::counters::set_test_probe(&probe);
  {
    canopy::Runtime rt(two_workers());
    canopy::trace_start((dir / "t.json").string());
    diamond(rt);
    canopy::TaskGroup g(rt);
    for (int i = 0; i < 16; ++i)
      g.spawn([] {
        // 64 fresh pages: 64 page faults on whichever worker runs it.
        const std::size_t bytes = 64 * 4096;
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(p, MAP_FAILED);
        madvise(p, bytes, MADV_NOHUGEPAGE);
        std::memset(p, 1, bytes);
        munmap(p, bytes);
      });
    g.wait();
    std::ofstream(zone / "energy_uj") << "2500000\n";  // wrapped: 1 J to the top, 2.5 J after
    canopy::trace_stop();
  }
  canopy::counters::set_test_probe(nullptr);
  const json doc = read_json(dir / "t.json");
  EXPECT_EQ(format_violation(doc), "");
  const json& other = doc["otherData"];
  std::set<std::string> counted;
  for (int w = 0; w < 2; ++w) {
    const std::vector<json> c = events(doc, "C", "worker " + std::to_string(w) + " counters");
    ASSERT_EQ(c.size(), 2u) << w;
    EXPECT_EQ(c[0]["ts"].get<double>(), 0.0);
    EXPECT_GT(c[1]["ts"].get<double>(), 0.0);
    EXPECT_EQ(c[1]["args"]["context-switches"], other["workers"][w]["counters"]["context-switches"]);
    EXPECT_EQ(c[0]["args"]["page-faults"].get<std::uint64_t>(), 0u);
    for (const auto& [name, v] : other["workers"][w]["counters"].items()) counted.insert(name);
  }
  std::uint64_t faults = 0;
  for (int w = 0; w < 2; ++w) faults += other["workers"][w]["counters"]["page-faults"].get<std::uint64_t>();
  EXPECT_GE(faults, 16u * 64u) << other.dump();
  std::string unavailable;
  for (const json& m : other["counters_unavailable"]) {
    EXPECT_FALSE(m["why"].get<std::string>().empty());
    unavailable += m["counters"].get<std::string>() + ", ";
  }
  for (int k = 0; k < canopy::counters::kNumCounters; ++k) {
    const std::string n = canopy::counters::counter_name(k);
    EXPECT_TRUE(counted.count(n) || counted.count(n + ":u") || unavailable.find(n) != std::string::npos)
        << n << " neither counted nor explained: " << other.dump();
  }
  EXPECT_NEAR(other["energy"]["package-0"].get<double>(), 3.5, 1e-9);
  EXPECT_EQ(other["energy_source"], "powercap");
  ASSERT_EQ(events(doc, "C", "energy").size(), 2u);

  const auto [st, out] = sh(std::string(CANOPY_CLI) + " trace " + (dir / "t.json").string());
  ASSERT_EQ(st, 0) << out;
  EXPECT_NE(out.find("counters over the session"), std::string::npos) << out;
  EXPECT_NE(out.find("page-faults"), std::string::npos) << out;
  EXPECT_NE(out.find("energy: package-0 3.500 J over the session (powercap"), std::string::npos) << out;
  for (const json& m : other["counters_unavailable"])
    EXPECT_NE(out.find("counters " + m["counters"].get<std::string>() + " unavailable: "), std::string::npos) << out;

  // No energy to read: the trace and the summary say why.
  canopy::counters::Probe empty;
  empty.sysfs_root = (dir / "nothing").string();
  canopy::counters::set_test_probe(&empty);
  {
    canopy::Runtime rt(two_workers());
    canopy::trace_start((dir / "none.json").string());
    diamond(rt);
    canopy::trace_stop();
  }
  canopy::counters::set_test_probe(nullptr);
  const json none = read_json(dir / "none.json");
  EXPECT_NE(none["otherData"].value("energy_unavailable", "").find("no powercap driver"), std::string::npos)
      << none["otherData"].dump();
  const auto [st2, out2] = sh(std::string(CANOPY_CLI) + " trace " + (dir / "none.json").string());
  EXPECT_NE(out2.find("energy unavailable: "), std::string::npos) << out2;

  setenv("CANOPY_COUNTERS", "os,cycles", 1);
  try {
    canopy::trace_start((dir / "never.json").string());
    ADD_FAILURE() << "accepted CANOPY_COUNTERS=os,cycles";
    canopy::trace_stop();
  } catch (const canopy::Error& e) {
    EXPECT_NE(std::string(e.what()).find("CANOPY_COUNTERS='os,cycles': unknown word 'cycles'"), std::string::npos)
        << e.what();
  }
  unsetenv("CANOPY_COUNTERS");
  EXPECT_FALSE(canopy::trace_active());
  fs::remove_all(dir);
}

TEST(Trace, BadOptionsAreErrorsThatNameThem) {
  canopy::TraceOptions o;
  o.events = "task,bogus";
  try {
    canopy::trace_start("/tmp/never.json", o);
    FAIL() << "accepted an unknown event";
  } catch (const canopy::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'bogus'"), std::string::npos) << e.what();
  }
  o.events = "";
  o.buffer_events = 3;
  EXPECT_THROW(canopy::trace_start("/tmp/never.json", o), canopy::Error);
  EXPECT_THROW(canopy::trace_start(""), canopy::Error);
  EXPECT_THROW(canopy::trace_stop(), canopy::Error);  // nothing records
  EXPECT_FALSE(canopy::trace_active());
  const fs::path dir = temp_dir("bad");
  canopy::trace_start((dir / "t.json").string());
  EXPECT_THROW(canopy::trace_start((dir / "u.json").string()), canopy::Error);  // one at a time
  canopy::trace_stop();
  // A file that cannot be written: the session still ends.
  canopy::trace_start((dir / "no/such/dir/t.json").string());
  try {
    canopy::trace_stop();
    FAIL() << "wrote into a missing directory";
  } catch (const canopy::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/t.json"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(canopy::trace_active());
  fs::remove_all(dir);
}

TEST(Trace, CApi) {
  EXPECT_EQ(canopy_trace_start(nullptr, nullptr, nullptr), CANOPY_EINVAL);
  EXPECT_EQ(canopy_trace_start("/tmp/x.json", "xml", nullptr), CANOPY_EINVAL);
  EXPECT_NE(std::string(canopy_last_error()).find("xml"), std::string::npos) << canopy_last_error();
  EXPECT_EQ(canopy_trace_start("/tmp/x.json", nullptr, "nope"), CANOPY_EINVAL);
  EXPECT_EQ(canopy_trace_stop(nullptr, nullptr), CANOPY_EINVAL);
  const fs::path dir = temp_dir("capi");
  canopy::Runtime rt(two_workers());
  ASSERT_EQ(canopy_trace_start((dir / "t.json").c_str(), "json", "task"), CANOPY_OK) << canopy_last_error();
  rt.run([&] {
    canopy::TaskGroup g(rt);
    for (int i = 0; i < 10; ++i) g.spawn([] {});
    g.wait();
  });
  std::uint64_t n = 0, lost = 1;
  ASSERT_EQ(canopy_trace_stop(&n, &lost), CANOPY_OK) << canopy_last_error();
  EXPECT_EQ(n, 10u);
  EXPECT_EQ(lost, 0u);
  EXPECT_EQ(format_violation(read_json(dir / "t.json")), "");
  fs::remove_all(dir);
}

TEST(Trace, EnvironmentVariables) {
  const fs::path dir = temp_dir("env");
  const std::string app = CANOPY_TRACE_APP;
  // CANOPY_TRACE alone: the file is written at exit.
  auto [st, out] = sh("CANOPY_TRACE=" + (dir / "app.json").string() + " " + app);
  ASSERT_EQ(st, 0) << out;
  json doc = read_json(dir / "app.json");
  ASSERT_EQ(format_violation(doc), "");
  EXPECT_EQ(events(doc, "X", "Produce").size(), 2u);
  EXPECT_EQ(events(doc, "X", "Combine").size(), 1u);
  // A filter: steals and parks only, no task spans.
  std::tie(st, out) = sh("CANOPY_TRACE=" + (dir / "f.json").string() + " CANOPY_TRACE_EVENTS=steal,park " + app);
  ASSERT_EQ(st, 0) << out;
  doc = read_json(dir / "f.json");
  for (const json& e : events(doc, "X")) EXPECT_EQ(e["cat"], "park") << e;
  // OTF2 by the extension, and forced by CANOPY_TRACE_FORMAT.
  std::tie(st, out) = sh("CANOPY_TRACE=" + (dir / "a.otf2").string() + " " + app);
  ASSERT_EQ(st, 0) << out;
  EXPECT_EQ(sh("otf2-print " + (dir / "a.otf2").string()).first, 0);
  std::tie(st, out) = sh("CANOPY_TRACE=" + (dir / "b").string() + " CANOPY_TRACE_FORMAT=otf2 " + app);
  ASSERT_EQ(st, 0) << out;
  EXPECT_EQ(sh("otf2-print " + (dir / "b.otf2").string()).first, 0);
  // Full buffers: one line on stderr says how many events were lost.
  std::tie(st, out) = sh("CANOPY_TRACE=" + (dir / "small.json").string() + " CANOPY_TRACE_BUFFER=16 " + app);
  ASSERT_EQ(st, 0) << out;
  EXPECT_NE(out.find("events lost"), std::string::npos) << out;
  // Bad values: the runtime refuses to start, naming the variable and value.
  for (const auto& [var, value] : std::vector<std::pair<std::string, std::string>>{
           {"CANOPY_TRACE_FORMAT", "xml"}, {"CANOPY_TRACE_EVENTS", "task,nope"}, {"CANOPY_TRACE_BUFFER", "abc"},
           {"CANOPY_TRACE_BUFFER", "8"}, {"CANOPY_TRACE_BUFFER", "-5"}}) {
    std::tie(st, out) = sh("CANOPY_TRACE=" + (dir / "bad.json").string() + " " + var + "=" + value + " " + app);
    EXPECT_EQ(st, 2) << var << "=" << value << ": " << out;
    EXPECT_NE(out.find(var + "='" + value + "'"), std::string::npos) << out;
  }
  // A file that cannot be written: one line at exit, the program's status kept.
  std::tie(st, out) = sh("CANOPY_TRACE=" + (dir / "missing/t.json").string() + " " + app);
  EXPECT_EQ(st, 0) << out;
  EXPECT_NE(out.find("missing/t.json"), std::string::npos) << out;
  fs::remove_all(dir);
}

TEST(Trace, CliSummary) {
  const fs::path dir = temp_dir("cli");
  const std::string app = CANOPY_TRACE_APP, cli = CANOPY_CLI;
  const std::string trace = (dir / "app.json").string();
  ASSERT_EQ(sh("CANOPY_TRACE=" + trace + " " + app).first, 0);
  auto [st, out] = sh(cli + " trace " + trace + " --svg " + (dir / "app.svg").string());
  ASSERT_EQ(st, 0) << out;
  // The diamond's critical path: a producer, then Combine.
  EXPECT_NE(out.find("critical path (data-flow, as observed): 2 tasks"), std::string::npos) << out;
  const std::size_t combine = out.rfind("Combine"), produce = out.rfind("Produce");
  EXPECT_NE(combine, std::string::npos) << out;
  EXPECT_LT(produce, combine) << out;
  // 3 data-flow tasks and 64 group tasks, on rows 0 and 1.
  EXPECT_NE(out.find("tasks: 67;"), std::string::npos) << out;
  EXPECT_NE(out.find("0 lost"), std::string::npos) << out;
  const std::string svg = [&] {
    std::ifstream f(dir / "app.svg");
    return std::string(std::istreambuf_iterator<char>(f), {});
  }();
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("Combine"), std::string::npos);
  // Bad input: exit 2, the file named.
  std::tie(st, out) = sh(cli + " trace " + (dir / "missing.json").string());
  EXPECT_EQ(st, 2);
  EXPECT_NE(out.find("missing.json: cannot open"), std::string::npos) << out;
  std::ofstream(dir / "other.json") << R"({"traceEvents":[]})";
  std::tie(st, out) = sh(cli + " trace " + (dir / "other.json").string());
  EXPECT_EQ(st, 2);
  EXPECT_NE(out.find("not written by canopy"), std::string::npos) << out;
  std::ofstream(dir / "broken.json") << R"({"traceEvents":[)";
  std::tie(st, out) = sh(cli + " trace " + (dir / "broken.json").string());
  EXPECT_EQ(st, 2);
  EXPECT_NE(out.find("broken.json: not JSON"), std::string::npos) << out;
  std::tie(st, out) = sh(cli + " trace " + trace + " --color bogus");
  EXPECT_EQ(st, 2) << out;
  fs::remove_all(dir);
}

}  // namespace
