// Automatic affinity for OpenMP tasks with depend clauses (see
// depend_affinity.hpp). What a recurring task is: its function (clang's
// task entry, not the runtime's wrapper) and its depend items, sorted by
// address, each in or out (GCC cannot tell out from inout: both are
// writes here). The matrix of an iteration follows canopy's rules for the
// data its tasks declare (dataflow/recording.hpp, docs/auto-affinity.md
// "The matrix"), a depend address standing for a handle: clang's `len`
// bytes, or kUnitBytes for GCC's bare addresses. The work that balances
// the groups is the bytes (units) a task names: tasks are not timed.
//
// The machine the threads are mapped on: the machine restricted to the
// PUs the team's threads are pinned to (each to one PU or core); the
// pretend machine of CANOPY_OMP_TEST_NUMA=n (n NUMA nodes, thread t on
// node t mod n, as the node queues see it); or, for a team whose threads
// are not pinned (canopy leaves an oversubscribed team unpinned, and
// OMP_PLACES may give places larger than a core), one core per thread:
// groups by communication only (several threads on one PU of the real
// machine would get its group's tasks in turn, splitting neighbours).
#include "depend_affinity.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>

#include <canopy/auto_affinity.hpp>
#include <canopy/binding.hpp>
#include <canopy/mapping.hpp>
#include <canopy/topology.hpp>

#include "dataflow/iterations.hpp"
#include "dataflow/recording.hpp"
#include "depend_pages.hpp"
#include "observe.hpp"
#include "runtime.hpp"
#include "tasks.hpp"

namespace canopy::omp {

namespace flow = canopy::detail::flow;

namespace {

// GCC passes a depend item's address only: each counts as this many bytes.
constexpr std::uint64_t kUnitBytes = 1;
// Past this many distinct tasks (a program whose tasks never repeat) the
// team stops observing: memory stays bounded (a few MB).
constexpr std::size_t kMaxIds = std::size_t{1} << 17;

struct Item {
  std::uintptr_t addr;
  std::uint64_t bytes;
  bool out;
};

struct Signature {
  const void* code = nullptr;
  std::vector<Item> items;  // by address, one per address
};

std::uint64_t hash_of(const Signature& s) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  auto mix = [&h](std::uint64_t v) {
    h ^= v;
    h *= 0x100000001B3ull;
  };
  mix(reinterpret_cast<std::uintptr_t>(s.code));
  for (const Item& i : s.items) mix((i.addr << 1) | (i.out ? 1 : 0));
  return h;
}

bool same(const Signature& a, const Signature& b) {
  if (a.code != b.code || a.items.size() != b.items.size()) return false;
  for (std::size_t k = 0; k < a.items.size(); ++k)
    if (a.items[k].addr != b.items[k].addr || a.items[k].out != b.items[k].out) return false;
  return true;
}

const Topology* machine() {
  static const Topology* topo = []() -> const Topology* {
    try {
      return &process_topology();
    } catch (const std::exception&) {
      return nullptr;
    }
  }();
  return topo;
}

// The machine a team's tasks are mapped on and each thread's PU in it.
struct TeamMachine {
  Topology topo;
  std::vector<int> thread_pu;
  bool real = false;  // this machine, every thread pinned to one core: its NUMA nodes are real
};

TeamMachine team_machine(const TaskQueue& q, int nthreads) {
  TeamMachine m;
  m.thread_pu.resize(static_cast<std::size_t>(nthreads));
  const int test = affinity_settings().test_nodes;
  if (test > 0) {
    const int per = (nthreads + test - 1) / test;
    m.topo = Topology::from_synthetic("numa:" + std::to_string(test) + " core:" + std::to_string(per) + " pu:1");
    for (int t = 0; t < nthreads; ++t) m.thread_pu[t] = (t % test) * per + t / test;
    return m;
  }
  const Topology* topo = machine();
  bool bound = topo != nullptr && q.slot_pinned.size() >= static_cast<std::size_t>(nthreads);
  for (int t = 0; bound && t < nthreads; ++t) bound = q.slot_pinned[t] && q.slot_pu[t] >= 0;
  if (!bound) {
    m.topo = Topology::from_synthetic("core:" + std::to_string(nthreads) + " pu:1");
    for (int t = 0; t < nthreads; ++t) m.thread_pu[t] = t;
    return m;
  }
  std::vector<int> os;
  for (int t = 0; t < nthreads; ++t) os.push_back(topo->pu(q.slot_pu[t]).os_index);
  std::vector<int> distinct = os;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  m.topo = topo->restricted(distinct);
  for (int t = 0; t < nthreads; ++t) m.thread_pu[t] = m.topo.pu_by_os_index(os[t]);
  m.real = true;
  return m;
}

}  // namespace

struct DependAffinity {
  std::mutex m;
  // The team the mapping is for: a new thread count or placement starts over.
  int nthreads = 0;
  unsigned epoch = 0;
  bool disabled = false;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_hash;
  std::vector<Signature> sigs;  // by id
  std::vector<int> thread_of;   // by id: its thread (-1: none)
  flow::IterationFinder finder;
  int mappings = 0;
  DependPages pages;  // where the written items' pages were sent
  bool pages_failed = false;
  // The last mapping (automatic, or loaded by canopy_omp_affinity_load): its
  // matrix with labels, placement, machine and rows (recurring task ids),
  // for canopy_omp_affinity_save / _load and CANOPY_AFFINITY_DUMP.
  struct Last {
    TaskMatrix tm;
    Placement p;
    TeamMachine team;
    std::vector<std::uint32_t> row_ids;
    std::vector<int> workers;
  };
  std::unique_ptr<Last> last;

  std::uint32_t id_of(Signature&& s) {
    std::vector<std::uint32_t>& bucket = by_hash[hash_of(s)];
    for (std::uint32_t id : bucket)
      if (same(sigs[id], s)) return id;
    if (sigs.size() >= kMaxIds) return ~std::uint32_t{0};
    const auto id = static_cast<std::uint32_t>(sigs.size());
    sigs.push_back(std::move(s));
    thread_of.push_back(-1);
    finder.add_id();
    bucket.push_back(id);
    return id;
  }

  // The matrix of a mapping as the files show it: each recurring task
  // labelled with its depend items (by index in the iteration, in or out)
  // and the bytes they name; no work (bytes, not seconds).
  TaskMatrix labelled(const TaskMatrix& tm, const std::vector<std::uint32_t>& row_ids,
                      const std::unordered_map<std::uintptr_t, std::uint32_t>& handle_of) const {
    TaskMatrix out;
    out.matrix = tm.matrix;
    for (std::size_t r = 0; r < row_ids.size(); ++r) {
      // (Appends only: GCC 12 warns, wrongly, of overlapping copies in
      // `"literal" + std::string`, -Wrestrict.)
      std::string label = "o";
      label += std::to_string(r);
      label += ':';
      std::uint64_t bytes = 0;
      for (const Item& i : sigs[row_ids[r]].items) {
        label += i.out ? " w#" : " r#";
        label += std::to_string(handle_of.at(i.addr));
        bytes += i.bytes;
      }
      label += ", ";
      label += std::to_string(bytes);
      label += " bytes";
      out.labels.push_back(std::move(label));
    }
    return out;
  }

  // The matrix and placement files of the last mapping (as canopy's own
  // runtime writes them: `canopy map`, `eval`, `matrix` read them).
  void save(const std::string& dir, const std::string& name) const {
    flow::write_affinity_files(dir, name, last->team.topo, last->tm, last->p, last->workers, "thread");
  }

  // CANOPY_AFFINITY_DUMP: each mapping's files.
  void dump() const {
    static std::atomic<int> serial{0};  // several teams in one process: one file name each
    const std::string& dir = affinity_settings().dump;
    try {
      save(dir, "omp-tasks-map-" + std::to_string(serial.fetch_add(1) + 1));
    } catch (const std::exception& e) {
      fatal("CANOPY_AFFINITY_DUMP='%s': %s", dir.c_str(), e.what());
    }
  }

  // The written depend items' pages to their writers' nodes, on this
  // machine only (a pretend or unpinned team's nodes say nothing of where
  // its threads run); the CANOPY_STATS line.
  PageMoves place_pages(const TaskQueue& q, const TeamMachine& team, const std::vector<std::uint32_t>& row_ids,
                        const std::vector<int>& workers) {
    const bool stats = affinity_settings().stats;
    PageMoves moved;
    if (!team.real) {
      if (stats)
        std::fprintf(stderr, "canopy affinity: OpenMP tasks: mapping %d: pages not placed (machine '%s': %s)\n",
                     mappings, team.topo.source().c_str(),
                     affinity_settings().test_nodes > 0 ? "pretend NUMA nodes" : "threads not pinned to one core each");
      return moved;
    }
    if (pages_failed) return moved;
    try {
      std::vector<MappedItem> items;
      for (std::size_t r = 0; r < row_ids.size(); ++r)
        for (const Item& i : sigs[row_ids[r]].items)
          items.push_back(MappedItem{i.addr, i.bytes, i.out, q.slot_node[static_cast<std::size_t>(workers[r])]});
      LocalBytes before;
      if (stats) before = local_bytes(items);
      moved = pages.move(items);
      if (stats)
        std::fprintf(stderr,
                     "canopy affinity: OpenMP tasks: mapping %d: before the placement %s, after it %s (depend items of "
                     "a page or more, on the node of their task's thread); %llu pages moved, %llu left\n",
                     mappings, percent_local_text(before).c_str(), percent_local_text(local_bytes(items)).c_str(),
                     static_cast<unsigned long long>(moved.moved), static_cast<unsigned long long>(moved.left));
    } catch (const std::exception& e) {
      // The data layer cannot read this machine: the tasks are still placed.
      std::fprintf(stderr, "canopy affinity: OpenMP tasks: cannot move the depend items' pages (%s); not moving them\n",
                   e.what());
      pages_failed = true;
    }
    return moved;
  }

  // Maps the confirmed iteration onto the team's threads.
  void map(const TaskQueue& q) {
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<std::uint32_t>& iteration = finder.confirmed;
    flow::Recording rec;
    std::vector<int> rows;
    std::vector<std::uint32_t> row_ids;
    std::unordered_map<std::uint32_t, int> row_of;
    std::unordered_map<std::uintptr_t, std::uint32_t> handle_of;  // depend address -> handle index
    std::vector<flow::RecAccess> acc;
    for (std::uint32_t id : iteration) {
      auto [it, fresh] = row_of.try_emplace(id, static_cast<int>(row_ids.size()));
      if (fresh) row_ids.push_back(id);
      rows.push_back(it->second);
      acc.clear();
      for (const Item& i : sigs[id].items) {
        const auto index = handle_of.try_emplace(i.addr, static_cast<std::uint32_t>(handle_of.size())).first->second;
        acc.push_back(flow::RecAccess{index, 0, i.bytes, !i.out, i.out});
      }
      rec.add_task(acc.data(), acc.size());
    }
    const std::size_t R = row_ids.size();
    // Work: the bytes (units) each recurring task names, in the unit
    // balancing expects (a "second" a GB, as for canopy's streams).
    std::vector<double> work(R, 0.0);
    for (int r : rows) {
      std::uint64_t bytes = 0;
      for (const Item& i : sigs[row_ids[static_cast<std::size_t>(r)]].items) bytes += i.bytes;
      work[static_cast<std::size_t>(r)] += static_cast<double>(bytes) * 1e-9;
    }
    const TaskMatrix tm = flow::build_task_matrix(rec, true, std::move(work), false, &rows, static_cast<int>(R));
    const TeamMachine team = team_machine(q, nthreads);
    const std::string& policy = affinity_settings().policy;
    const Placement p = flow::place_tasks(team.topo, tm, policy.empty() ? default_policy() : policy);
    const std::vector<int> workers = flow::workers_of_placement(team.topo, team.thread_pu, p);
    for (std::size_t r = 0; r < R; ++r) thread_of[row_ids[r]] = workers[r];
    const std::size_t length = iteration.size();
    finder.map_confirmed();
    ++mappings;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const AffinitySettings& set = affinity_settings();
    const PageMoves moved = place_pages(q, team, row_ids, workers);
    last.reset(new Last{labelled(tm, row_ids, handle_of), p, team, row_ids, workers});
    if (!set.dump.empty()) dump();
    if (!set.display) return;
    std::vector<std::pair<int, int>> where;
    for (int pu : team.thread_pu) where.emplace_back(team.topo.pu(pu).os_index, team.topo.pu(pu).numa);
    char head[640];
    std::snprintf(head, sizeof head,
                  "canopy affinity: OpenMP tasks: %zu recurring tasks (iterations of %zu tasks) on %d threads, "
                  "policy %s, work bytes, mapped in %.2f ms (mapping %d, machine '%s'), %llu pages moved%s\n",
                  R, length, nthreads, p.policy.c_str(), ms, mappings, team.topo.source().c_str(),
                  static_cast<unsigned long long>(moved.moved),
                  moved.left == 0 ? "" : (", " + std::to_string(moved.left) + " left (first: " + moved.refusal + ")").c_str());
    const std::string text = head + flow::describe_groups("thread", where, tm, workers);
    std::fputs(text.c_str(), stderr);
  }
};

void attach_depend_affinity(TaskQueue& q) { q.depend_affinity.reset(new DependAffinity); }

void destroy_depend_affinity(DependAffinity* d) { delete d; }

void depend_affinity_task(Team& team, Task* t, const Dep* deps, std::size_t ndeps, const std::size_t* len) {
  if (team.nthreads < 2) return;  // a detached task's dependences in a team of one: nowhere to place
  DependAffinity& d = *team.tasks->depend_affinity;
  Signature sig;
  sig.code = code_of(t->fn, t->arg);
  sig.items.reserve(ndeps);
  for (std::size_t k = 0; k < ndeps; ++k)
    sig.items.push_back(Item{reinterpret_cast<std::uintptr_t>(deps[k].addr), len ? len[k] : kUnitBytes, deps[k].out});
  std::sort(sig.items.begin(), sig.items.end(), [](const Item& a, const Item& b) { return a.addr < b.addr; });
  std::size_t n = 0;
  for (const Item& i : sig.items) {  // an address named twice: one item, out if either is
    if (n > 0 && sig.items[n - 1].addr == i.addr) {
      sig.items[n - 1].out = sig.items[n - 1].out || i.out;
      sig.items[n - 1].bytes = std::max(sig.items[n - 1].bytes, i.bytes);
      continue;
    }
    sig.items[n++] = i;
  }
  sig.items.resize(n);

  const TaskQueue& q = *team.tasks;
  std::lock_guard<std::mutex> lock(d.m);
  if (d.disabled) return;
  if (d.nthreads != team.nthreads || d.epoch != q.epoch) {
    // Another team shape or placement: what was mapped does not hold.
    d.nthreads = team.nthreads;
    d.epoch = q.epoch;
    d.finder.restart();
    std::fill(d.thread_of.begin(), d.thread_of.end(), -1);
  }
  const std::uint32_t id = d.id_of(std::move(sig));
  if (id == ~std::uint32_t{0}) {
    d.disabled = true;
    return;
  }
  if (d.finder.observe(id)) {
    try {
      d.map(q);
    } catch (const std::exception& e) {
      // An optimisation never stops the program: say why once, observe no more.
      std::fprintf(stderr, "canopy affinity: OpenMP tasks: cannot map the recurring tasks (%s); not placing them\n",
                   e.what());
      d.disabled = true;
      return;
    }
  }
  const int thread = d.thread_of[id];
  if (thread >= 0 && thread < team.nthreads && t->affinity_thread < 0 && t->affinity_node < 0)
    t->affinity_thread = thread;
}

namespace {

// The team's recogniser when its last mapping still holds (same threads,
// same placement), else null.
DependAffinity* mapped_affinity(Team* team) {
  if (!team || !team->tasks || !team->tasks->depend_affinity) return nullptr;
  return team->tasks->depend_affinity.get();
}

bool holds(const DependAffinity& d, const Team& team) {
  return !d.disabled && d.last && d.nthreads == team.nthreads && d.epoch == team.tasks->epoch;
}

}  // namespace

int depend_affinity_save(Team* team, const char* dir, const char* name) {
  DependAffinity* d = mapped_affinity(team);
  if (!d) return 0;
  std::lock_guard<std::mutex> lock(d->m);
  if (!holds(*d, *team)) return 0;
  try {
    d->save(dir ? dir : ".", name && *name ? name : "omp-tasks");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "canopy_omp_affinity_save: %s\n", e.what());
    return -1;
  }
  return 1;
}

int depend_affinity_load(Team* team, const char* path) {
  DependAffinity* d = mapped_affinity(team);
  if (!d) return 0;
  std::lock_guard<std::mutex> lock(d->m);
  if (!holds(*d, *team)) return 0;
  DependAffinity::Last& last = *d->last;
  // One OS CPU per task, `#` starts a comment (`canopy map --of list`, the saved file).
  std::ifstream in(path ? path : "");
  if (!in) {
    std::fprintf(stderr, "canopy_omp_affinity_load: cannot read '%s'\n", path ? path : "(null)");
    return -1;
  }
  Placement p;
  p.policy = "file";
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      char* end = nullptr;
      const long cpu = std::strtol(w.c_str(), &end, 10);
      const int pu = *end == 0 && cpu >= 0 && cpu <= INT32_MAX ? last.team.topo.pu_by_os_index(static_cast<int>(cpu)) : -1;
      if (pu < 0) {
        std::fprintf(stderr, "canopy_omp_affinity_load: %s:%d: '%s' is not an OS CPU of the team's machine '%s'\n", path,
                     number, w.c_str(), last.team.topo.source().c_str());
        return -1;
      }
      p.task_pu.push_back(pu);
    }
  }
  if (p.task_pu.size() != last.row_ids.size()) {
    std::fprintf(stderr, "canopy_omp_affinity_load: %s: %zu tasks, the mapped iteration has %zu\n", path,
                 p.task_pu.size(), last.row_ids.size());
    return -1;
  }
  const std::vector<int> workers = flow::workers_of_placement(last.team.topo, last.team.thread_pu, p);
  for (std::size_t r = 0; r < last.row_ids.size(); ++r) d->thread_of[last.row_ids[r]] = workers[r];
  last.p = std::move(p);
  last.workers = workers;
  d->place_pages(*team->tasks, last.team, last.row_ids, workers);
  return 1;
}

}  // namespace canopy::omp
