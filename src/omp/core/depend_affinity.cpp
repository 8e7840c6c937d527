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
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <string>
#include <unordered_map>

#include <canopy/auto_affinity.hpp>
#include <canopy/binding.hpp>
#include <canopy/mapping.hpp>
#include <canopy/topology.hpp>

#include "dataflow/iterations.hpp"
#include "dataflow/recording.hpp"
#include "observe.hpp"
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
    if (!affinity_settings().display) return;
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::vector<std::pair<int, int>> where;
    for (int pu : team.thread_pu) where.emplace_back(team.topo.pu(pu).os_index, team.topo.pu(pu).numa);
    char head[320];
    std::snprintf(head, sizeof head,
                  "canopy affinity: OpenMP tasks: %zu recurring tasks (iterations of %zu tasks) on %d threads, "
                  "policy %s, work bytes, mapped in %.2f ms (mapping %d, machine '%s')\n",
                  R, length, nthreads, p.policy.c_str(), ms, mappings, team.topo.source().c_str());
    const std::string text = head + flow::describe_groups("thread", where, tm, workers);
    std::fputs(text.c_str(), stderr);
  }
};

void attach_depend_affinity(TaskQueue& q) { q.depend_affinity.reset(new DependAffinity); }

void destroy_depend_affinity(DependAffinity* d) { delete d; }

void depend_affinity_task(Team& team, Task* t, const std::vector<Dep>& deps, const std::size_t* len) {
  if (team.nthreads < 2) return;  // a detached task's dependences in a team of one: nowhere to place
  DependAffinity& d = *team.tasks->depend_affinity;
  Signature sig;
  sig.code = code_of(t->fn, t->arg);
  sig.items.reserve(deps.size());
  for (std::size_t k = 0; k < deps.size(); ++k)
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

}  // namespace canopy::omp
