// Task affinity: settings, the page-location cache, the next task's
// affinity (see task_affinity.hpp).
#include "task_affinity.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include <canopy/affinity.hpp>
#include <canopy/data.hpp>
#include <canopy/error.hpp>
#include <canopy/mapping.hpp>

#include "data/machine.hpp"  // query_page_nodes: the data layer's move_pages, in its logical node numbers
#include "runtime.hpp"
#include "runtime/env.hpp"  // parse_env_bool: canopy's runtime's words for booleans

namespace canopy::omp {

namespace {

AffinitySettings read_affinity_settings() {
  AffinitySettings s;
  if (const char* v = std::getenv("CANOPY_OMP_AFFINITY"); v && *v) {
    const std::string mode = v;
    if (mode == "strict") s.strict = true;
    else if (mode != "loose") fatal("CANOPY_OMP_AFFINITY='%s': expected loose (the default) or strict", v);
  }
  if (const char* v = std::getenv("CANOPY_OMP_TEST_NUMA"); v && *v) {
    char* end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (*end || n < 1 || n > 64) fatal("CANOPY_OMP_TEST_NUMA='%s': expected a number of pretend NUMA nodes, 1 to 64", v);
    s.test_nodes = static_cast<int>(n);
  }
  if (const char* v = std::getenv("CANOPY_AFFINITY"); v && *v) {
    try {
      s.auto_affinity = parse_auto_affinity(v) == AutoAffinity::Auto;
    } catch (const Error&) {
      fatal("CANOPY_AFFINITY='%s': expected auto or none", v);
    }
  }
  if (!s.auto_affinity) return s;
  if (const char* v = std::getenv("CANOPY_POLICY"); v && *v) {
    std::string name = v;
    name.erase(0, name.find_first_not_of(" \t"));
    name.erase(name.find_last_not_of(" \t") + 1);
    try {
      find_policy(name);
    } catch (const Error& e) {
      fatal("CANOPY_POLICY='%s': %s", v, e.what());
    }
    s.policy = name;
  }
  if (const char* v = std::getenv("CANOPY_DISPLAY_AFFINITY"); v && *v) {
    try {
      s.display = detail::parse_env_bool("CANOPY_DISPLAY_AFFINITY", v);
    } catch (const Error& e) {
      fatal("%s", e.what());
    }
  }
  if (const char* v = std::getenv("CANOPY_STATS"); v && *v) {
    try {
      s.stats = detail::parse_env_bool("CANOPY_STATS", v);
    } catch (const Error& e) {
      fatal("%s", e.what());
    }
  }
  if (const char* v = std::getenv("CANOPY_AFFINITY_DUMP"); v && *v) s.dump = v;  // checked when written
  return s;
}

std::size_t page_size() {
  static const std::size_t size = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// The node of each page of a page range, remembered until canopy moves pages.
struct CachedRange {
  std::uint64_t generation;
  std::vector<int> nodes;
};
std::mutex g_cache_m;
std::unordered_map<std::uint64_t, CachedRange>& cache() {
  static auto* c = new std::unordered_map<std::uint64_t, CachedRange>;  // never destroyed: tasks may run at exit
  return *c;
}
constexpr std::size_t kMaxCachedRanges = 1 << 16;

// Nodes of the pages [first, first + count) (page numbers); -1 untouched.
std::vector<int> page_nodes(std::uintptr_t first, std::size_t count) {
  const int test = affinity_settings().test_nodes;
  if (test > 0) {
    std::vector<int> nodes(count);
    for (std::size_t i = 0; i < count; ++i) nodes[i] = static_cast<int>((first + i) % static_cast<unsigned>(test));
    return nodes;
  }
  const std::uint64_t key = (static_cast<std::uint64_t>(first) << 16) ^ count;
  const std::uint64_t gen = data_move_generation();
  {
    std::lock_guard<std::mutex> lock(g_cache_m);
    auto it = cache().find(key);
    if (it != cache().end() && it->second.generation == gen && it->second.nodes.size() == count) return it->second.nodes;
  }
  std::vector<int> nodes;
  try {
    nodes = data_impl::query_page_nodes(reinterpret_cast<const void*>(first * page_size()), count * page_size());
  } catch (const std::exception&) {
    return std::vector<int>(count, -1);  // the kernel cannot tell (unmapped range): no affinity
  }
  // An untouched page may be touched later: only fully known ranges are kept.
  if (std::find(nodes.begin(), nodes.end(), -1) == nodes.end()) {
    std::lock_guard<std::mutex> lock(g_cache_m);
    if (cache().size() >= kMaxCachedRanges) cache().clear();
    cache()[key] = CachedRange{gen, nodes};
  }
  return nodes;
}

struct NextAffinity {
  int node = -1, thread = -1;
};
thread_local NextAffinity tls_next;

}  // namespace

const AffinitySettings& affinity_settings() {
  static const AffinitySettings s = read_affinity_settings();
  return s;
}

int locator_node(const ByteRange* ranges, int n) {
  std::vector<std::size_t> bytes;
  const std::size_t ps = page_size();
  for (int r = 0; r < n; ++r) {
    if (!ranges[r].addr || ranges[r].len == 0) continue;
    const auto begin = reinterpret_cast<std::uintptr_t>(ranges[r].addr);
    const std::uintptr_t end = begin + ranges[r].len;
    const std::uintptr_t first = begin / ps, last = (end - 1) / ps;
    const std::vector<int> nodes = page_nodes(first, last - first + 1);
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (nodes[i] < 0) continue;
      const std::uintptr_t lo = std::max(begin, (first + i) * ps), hi = std::min(end, (first + i + 1) * ps);
      if (static_cast<std::size_t>(nodes[i]) >= bytes.size()) bytes.resize(nodes[i] + 1, 0);
      bytes[nodes[i]] += hi - lo;
    }
  }
  int best = -1;
  for (std::size_t k = 0; k < bytes.size(); ++k)
    if (bytes[k] > 0 && (best < 0 || bytes[k] > bytes[best])) best = static_cast<int>(k);
  return best;
}

void set_next_task_affinity(int node, int thread) { tls_next = {node, thread}; }

bool take_next_task_affinity(int& node, int& thread) {
  NextAffinity& n = tls_next;
  if (n.node < 0 && n.thread < 0) return false;
  node = n.node;
  thread = n.thread;
  n = {};
  return true;
}

}  // namespace canopy::omp
