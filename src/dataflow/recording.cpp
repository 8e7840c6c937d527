// The task-to-task matrix of a recorded iteration (docs/auto-affinity.md,
// "The matrix"): one pass over the tasks in order, keeping per handle its
// last writer and the readers of the version before its first writer.
//   - a task that reads or overwrites a version gets an edge to the version's
//     writer worth the handle's bytes (an overwrite moves the same pages);
//   - the k readers of a version no task wrote (read-only data, or what a
//     graph run once reads before its first writer) share its bytes: each
//     pair gets bytes / (k - 1), so a reader's shared total is what it
//     read, for k <= kMaxSharers (a handle read by more tasks, a table of
//     constants, says nothing about who should sit with whom: no reader
//     pairs). The readers of a version a task wrote get no pairs: its pages
//     go to their writer's node (move_handles), so each reader's edge to the
//     writer is what crosses nodes, and pairs on top of it would count bytes
//     twice that are moved once (matmul's ring: with them, a copy task
//     placed with the next row's tasks looked as cheap as one placed with
//     its own, and read twice as many bytes remotely; docs/bench-apps.md);
//   - a write after reads moves nothing between them: no edge;
//   - cyclic (a graph replayed): the first readers of a handle read what its
//     last writer left in the previous run, and its first writer overwrites
//     it: both get their edge.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "dataflow/recording.hpp"

namespace canopy::detail::flow {

namespace {

constexpr std::size_t kMaxSharers = 32;

struct HandleState {
  std::uint64_t bytes = 0;
  int writer = -1;        // last writer so far
  int first_writer = -1;
  std::vector<int> initial_readers;  // of the version before the first writer (the only one they share)
};

std::uint64_t key_of(const RecAccess& a) { return (std::uint64_t{a.generation} << 32) | a.index; }

void edge(std::vector<Edge>& out, int a, int b, double w) {
  if (a == b || w <= 0) return;
  if (a > b) std::swap(a, b);  // one triangle only: from_edges adds the transpose
  out.push_back(Edge{a, b, w});
}

void share(std::vector<Edge>& out, const std::vector<int>& readers, std::uint64_t bytes) {
  const std::size_t k = readers.size();
  if (k < 2 || k > kMaxSharers) return;
  const double w = static_cast<double>(bytes) / static_cast<double>(k - 1);
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t j = i + 1; j < k; ++j) edge(out, readers[i], readers[j], w);
}

}  // namespace

std::string task_label(const Recording& r, std::size_t t) {
  std::string s = fmt::format("t{}:", t);
  for (std::uint32_t k = r.begin[t]; k < r.begin[t + 1]; ++k) {
    const RecAccess& a = r.accesses[k];
    s += fmt::format(" {}#{}", a.reads && a.writes ? "rw" : a.writes ? "w" : "r", a.index);
  }
  return s;
}

std::vector<double> robust_work(const Recording& r, std::vector<double> seconds) {
  const std::size_t n = r.tasks();
  if (seconds.size() != n) return seconds;
  // A task's shape: a hash of its accesses' (bytes, read, write), sorted.
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> classes;
  std::vector<std::uint64_t> shape;
  for (std::size_t t = 0; t < n; ++t) {
    shape.clear();
    for (std::uint32_t k = r.begin[t]; k < r.begin[t + 1]; ++k) {
      const RecAccess& a = r.accesses[k];
      shape.push_back(a.bytes << 2 | (a.reads ? 2u : 0u) | (a.writes ? 1u : 0u));
    }
    std::sort(shape.begin(), shape.end());
    std::uint64_t h = 0x9e3779b97f4a7c15ull ^ shape.size();
    for (std::uint64_t x : shape) h = (h ^ x) * 0x100000001b3ull + (h >> 29);
    classes[h].push_back(static_cast<std::uint32_t>(t));
  }
  std::vector<double> times;
  for (auto& [h, members] : classes) {
    (void)h;
    if (members.size() < 3) continue;  // no median to judge by
    times.clear();
    for (std::uint32_t t : members) times.push_back(seconds[t]);
    const auto mid = times.begin() + static_cast<long>(times.size() / 2);
    std::nth_element(times.begin(), mid, times.end());
    const double cap = kWorkOutlierFactor * *mid;
    for (std::uint32_t t : members) seconds[t] = std::min(seconds[t], cap);
  }
  return seconds;
}

TaskMatrix build_task_matrix(const Recording& r, bool cyclic, std::vector<double> work, bool labels,
                             const std::vector<int>* rows, int nrows) {
  const std::size_t n = r.tasks();
  std::vector<Edge> edges;
  edges.reserve(r.accesses.size() * 2);
  std::unordered_map<std::uint64_t, HandleState> handles;
  handles.reserve(r.accesses.size());
  for (std::size_t t = 0; t < n; ++t) {
    const int task = static_cast<int>(t);
    for (std::uint32_t k = r.begin[t]; k < r.begin[t + 1]; ++k) {
      const RecAccess& a = r.accesses[k];
      HandleState& h = handles[key_of(a)];
      h.bytes = a.bytes;
      const auto bytes = static_cast<double>(a.bytes);
      if (!a.writes) {
        if (h.writer >= 0)
          edge(edges, h.writer, task, bytes);
        else
          h.initial_readers.push_back(task);
        continue;
      }
      if (h.writer >= 0) {
        edge(edges, h.writer, task, bytes);  // its readers: no pairs (a version a task wrote)
      } else {
        h.first_writer = task;
        // The version before the first writer: no task wrote it when the
        // graph runs once; replayed, it is the last writer's (below).
        if (!cyclic) share(edges, h.initial_readers, h.bytes);
      }
      h.writer = task;
    }
  }
  for (auto& [key, h] : handles) {
    (void)key;
    if (h.writer < 0) {
      share(edges, h.initial_readers, h.bytes);  // read only: everyone reads the one version
      continue;
    }
    if (!cyclic) continue;
    const auto bytes = static_cast<double>(h.bytes);
    for (int reader : h.initial_readers) edge(edges, h.writer, reader, bytes);
    edge(edges, h.writer, h.first_writer, bytes);
  }
  TaskMatrix m;
  if (rows) {
    // Occurrences folded into their rows (repeated pairs add up in from_edges).
    std::size_t kept = 0;
    for (const Edge& e : edges) {
      int a = (*rows)[static_cast<std::size_t>(e.i)], b = (*rows)[static_cast<std::size_t>(e.j)];
      if (a == b) continue;
      if (a > b) std::swap(a, b);
      edges[kept++] = Edge{a, b, e.weight};
    }
    edges.resize(kept);
    m.matrix = CommMatrix::from_edges(nrows, edges);
    if (work.size() == static_cast<std::size_t>(nrows)) m.work = std::move(work);
    return m;
  }
  m.matrix = CommMatrix::from_edges(static_cast<int>(n), edges);
  if (labels) {
    m.labels.reserve(n);
    for (std::size_t t = 0; t < n; ++t) m.labels.push_back(task_label(r, t));
  }
  if (work.size() == n) m.work = std::move(work);
  return m;
}

namespace {

// Bytes per worker, and the last worker, of one kind of access to a handle.
struct Votes {
  std::vector<std::pair<int, std::uint64_t>> per_worker;  // (worker, bytes)
  std::uint64_t total = 0;
  int last = -1;
  void add(int w, std::uint64_t bytes) {
    auto pw = std::find_if(per_worker.begin(), per_worker.end(), [w](const auto& p) { return p.first == w; });
    if (pw == per_worker.end())
      per_worker.emplace_back(w, bytes);
    else
      pw->second += bytes;
    total += bytes;
    last = w;
  }
  // The worker with the most bytes (ties: the last one's), and its bytes.
  std::pair<int, std::uint64_t> best() const {
    int b = last;
    std::uint64_t bytes = 0;
    for (const auto& [w, n] : per_worker)
      if (w == last) bytes = n;
    for (const auto& [w, n] : per_worker)
      if (n > bytes) {
        b = w;
        bytes = n;
      }
    return {b, bytes};
  }
};

}  // namespace

std::vector<HandleWriter> handle_writers(const Recording& r, const std::vector<int>& task_worker) {
  struct HandleVotes {
    Data data;
    Votes writes, reads;
  };
  std::unordered_map<std::uint64_t, HandleVotes> votes;
  std::vector<std::uint64_t> order;  // first-seen order: the result is deterministic
  for (std::size_t t = 0; t < r.tasks() && t < task_worker.size(); ++t) {
    const int w = task_worker[t];
    if (w < 0) continue;
    for (std::uint32_t k = r.begin[t]; k < r.begin[t + 1]; ++k) {
      const RecAccess& a = r.accesses[k];
      auto [it, fresh] = votes.try_emplace(key_of(a));
      if (fresh) {
        it->second.data = a.data();
        order.push_back(key_of(a));
      }
      (a.writes ? it->second.writes : it->second.reads).add(w, a.bytes);
    }
  }
  std::vector<HandleWriter> out;
  out.reserve(order.size());
  for (std::uint64_t key : order) {
    const HandleVotes& v = votes[key];
    if (v.writes.total > 0) {
      out.push_back(HandleWriter{v.data, v.writes.best().first});
      continue;
    }
    // Read only (a table, coefficients): with the worker that reads at
    // least half of it; read evenly by more, it stays where it is (no node
    // is better than the others for it).
    const auto [w, bytes] = v.reads.best();
    if (2 * bytes >= v.reads.total) out.push_back(HandleWriter{v.data, w});
  }
  return out;
}

}  // namespace canopy::detail::flow
