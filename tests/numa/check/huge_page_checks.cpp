// NUMA checks of automatic affinity on transparent huge pages (the guest's
// default THP "always"; the region here also asks for them with
// MADV_HUGEPAGE): 64 handles of 32 KiB share one 2 MiB huge page, as small
// handles of one program do. Moving one of them to another node can be
// refused by the kernel (mbind with MPOL_MF_STRICT said EIO); automatic
// affinity must then leave those pages where they are and report them
// (AffinityReport::pages_left), never abort the run; data_try_move_to_node
// moves what it can and reports the rest.
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "canopy/data.hpp"
#include "canopy/error.hpp"
#include "canopy/runtime.hpp"
#include "canopy/taskgraph.hpp"
#include "numa_check.hpp"

using namespace canopy;

namespace {

constexpr std::size_t kHuge = 2u << 20;
constexpr std::size_t kHandleBytes = 32u << 10;

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  std::getline(f, s);
  return s.empty() ? "unknown" : s;
}

// A 2 MiB-aligned region of one huge page (when the kernel gives one),
// cut into 64 registered handles; touched by this thread, or left for the
// tasks to touch first (as the applications' first run does).
struct HugeRegion {
  void* map = MAP_FAILED;
  std::size_t map_bytes = 2 * kHuge;
  char* base = nullptr;
  std::vector<Data> handles;
  explicit HugeRegion(bool touch) {
    map = mmap(nullptr, map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    numa_require(map != MAP_FAILED, "mmap of {} bytes failed", map_bytes);
    base = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(map) + kHuge - 1) / kHuge * kHuge);
    madvise(base, kHuge, MADV_HUGEPAGE);  // a refusal (THP never) leaves small pages: still a valid run
    if (touch) std::memset(base, 1, kHuge);
    for (std::size_t off = 0; off < kHuge; off += kHandleBytes) handles.push_back(data_register(base + off, kHandleBytes));
  }
  ~HugeRegion() {
    for (Data d : handles) data_free(d);
    munmap(map, map_bytes);
  }
  // Is the region's first page part of a huge page? (AnonHugePages of its mapping.)
  static bool huge_backed(const void* p) {
    std::ifstream f("/proc/self/smaps");
    std::string line;
    bool in = false;
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    while (std::getline(f, line)) {
      std::uintptr_t lo = 0, hi = 0;
      if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {
        in = lo <= a && a < hi;
      } else if (in && line.rfind("AnonHugePages:", 0) == 0) {
        unsigned long kb = 0;
        std::sscanf(line.c_str() + 14, "%lu", &kb);
        return kb > 0;
      }
    }
    return false;
  }
};

}  // namespace

CANOPY_NUMA_CHECK(huge_pages_try_move_moves_or_reports_every_page, 2) {
  HugeRegion r(true);
  const bool huge = HugeRegion::huge_backed(r.base);
  const int n = data_num_nodes();
  const std::size_t pages = kHandleBytes / data_page_size();
  std::size_t moved = 0, left = 0;
  std::string reason;
  for (std::size_t i = 0; i < r.handles.size(); ++i) {
    const int node = static_cast<int>(i % static_cast<std::size_t>(n));
    const DataMoveResult m = data_try_move_to_node(r.handles[i], node);
    moved += m.moved;
    left += m.left;
    if (reason.empty()) reason = m.reason;
    // Every whole page is on the node or counted as left.
    std::size_t elsewhere = 0;
    for (int pn : data_page_nodes(r.handles[i])) elsewhere += pn >= 0 && pn != node;
    numa_require(elsewhere == m.left, "handle {}: {} pages off node {} but {} reported left", i, elsewhere, node,
                 m.left);
    numa_require(m.left <= pages, "handle {}: {} pages left of {}", i, m.left, pages);
  }
  numa_note(fmt::format("THP {}, region {}huge-backed: {} pages moved, {} left{}", thp_mode(), huge ? "" : "not ",
                        moved, left, reason.empty() ? "" : " (" + reason + ")"));
}

CANOPY_NUMA_CHECK(huge_pages_auto_graph_never_aborts, 2) {
  RuntimeOptions o;
  o.num_threads = 0;
  o.bind = BindMode::Core;
  Runtime rt(o);
  const int W = rt.num_workers();
  HugeRegion r(false);  // first touched by the tasks of the first run
  // Handle i written by chain i % W: neighbours in the huge page go to
  // different workers, so to different nodes.
  TaskGraph g;
  g.set_affinity(AutoAffinity::Auto);
  std::atomic<long> ran{0};
  for (int k = 0; k < 4; ++k)
    for (std::size_t i = 0; i < r.handles.size(); ++i) {
      char* p = r.base + i * kHandleBytes;
      g.add({read_write(r.handles[i])}, [&ran, p] {
        for (std::size_t b = 0; b < kHandleBytes; b += 64) p[b] = static_cast<char>(p[b] + 1);
        ran.fetch_add(1);
      });
    }
  g.run(rt);  // observed (first touch), then mapped: the moves
  const bool huge = HugeRegion::huge_backed(r.base);
  for (int run = 1; run < 3; ++run) g.run(rt);  // placed runs
  numa_require(ran.load() == 3 * 4 * static_cast<long>(r.handles.size()), "{} tasks ran", ran.load());
  const AffinityReport a = g.affinity_report();
  numa_require(a.mappings == 1, "{} mappings", a.mappings);
  for (std::size_t i = 0; i < kHuge; i += 64)
    numa_require(r.base[i] == 3 * 4, "byte {} is {} after 3 runs of 4 increments each", i, int(r.base[i]));
  numa_note(fmt::format("THP {}, {}huge-backed after the moves, {} workers: {} pages moved, {} pages of {} handles left ({})",
                        thp_mode(), huge ? "" : "not ", W, a.pages_moved, a.pages_left, a.handles_left,
                        a.move_refusal.empty() ? "no refusal" : a.move_refusal));
}

// Whatever the kernel does with huge pages, a refusal is simulated here
// (the move layer's test seam): the automatic placement leaves every page
// where it is, counts them, and the runs go on; the explicit call throws.
CANOPY_NUMA_CHECK(huge_pages_refused_moves_are_counted_not_thrown, 2) {
  RuntimeOptions o;
  o.num_threads = 0;
  o.bind = BindMode::Core;
  Runtime rt(o);
  const int W = rt.num_workers();
  const std::size_t bytes = 8 * data_page_size();
  std::vector<Data> h(static_cast<std::size_t>(W));
  for (auto& d : h) {
    d = data_allocate(bytes, DataPlacement::on_node(0));
    std::memset(data_ptr(d), 0, bytes);
  }
  TaskGraph g;
  g.set_affinity(AutoAffinity::Auto);
  for (int k = 0; k < 8; ++k)
    for (int c = 0; c < W; ++c) {
      char* p = static_cast<char*>(data_ptr(h[c]));
      g.add({read_write(h[c])}, [p, bytes] {
        for (std::size_t i = 0; i < bytes; i += 64) p[i] = static_cast<char>(p[i] + 1);
      });
    }
  struct Seam {
    Seam() { detail::data_refuse_moves_for_testing(true); }
    ~Seam() { detail::data_refuse_moves_for_testing(false); }
  };
  AffinityReport a;
  std::size_t off_node = 0;
  bool threw = false;
  {
    Seam seam;
    g.run(rt);  // observed, mapped; every move refused
    g.run(rt);
    a = g.affinity_report();
    const std::vector<int> workers = g.task_workers();
    for (int c = 0; c < W; ++c)
      if (rt.placement()[workers[c]].numa != 0) off_node += bytes / data_page_size();
    try {
      data_move_to_node(h[0], data_num_nodes() - 1);
    } catch (const Error& e) {
      threw = std::string(e.what()).find("refused for testing") != std::string::npos;
    }
  }
  for (Data d : h) {
    for (int pn : data_page_nodes(d)) numa_require(pn == 0, "a page is on node {}: a refused move moved it", pn);
    numa_require(static_cast<const char*>(data_ptr(d))[0] == 16, "the tasks did not all run twice");
    data_free(d);
  }
  numa_require(a.mappings == 1, "{} mappings", a.mappings);
  numa_require(off_node > 0, "no chain was placed off node 0 (nothing to refuse)");
  numa_require(a.pages_left == off_node, "{} pages reported left, {} should have moved", a.pages_left, off_node);
  numa_require(a.pages_moved == 0, "{} pages reported moved", a.pages_moved);
  numa_require(a.move_refusal.find("refused for testing") != std::string::npos, "refusal '{}'", a.move_refusal);
  numa_require(threw, "data_move_to_node did not throw the refusal");
  numa_note(fmt::format("{} pages of {} handles left: {}", a.pages_left, a.handles_left, a.move_refusal));
}
