// The access log of locality.hpp. Each thread appends to its own vector
// (registered once, under a mutex), so recording takes no lock; the
// summary runs when no thread records.
#include "locality.hpp"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace apps {
namespace {

struct Record {
  const char* ptr;
  std::size_t bytes;
  int node;
};

std::atomic<bool> g_enabled{false};
std::mutex g_mutex;
std::vector<std::unique_ptr<std::vector<Record>>>& all_logs() {
  static std::vector<std::unique_ptr<std::vector<Record>>> logs;
  return logs;
}

std::vector<Record>& my_log() {
  thread_local std::vector<Record>* log = nullptr;
  if (!log) {
    std::lock_guard<std::mutex> lock(g_mutex);
    all_logs().push_back(std::make_unique<std::vector<Record>>());
    log = all_logs().back().get();
  }
  return *log;
}

int current_node() {
  unsigned cpu = 0, node = 0;
  if (syscall(SYS_getcpu, &cpu, &node, nullptr) != 0) return 0;
  return static_cast<int>(node);
}

}  // namespace

void locality_enable(bool on) { g_enabled.store(on, std::memory_order_seq_cst); }
bool locality_enabled() { return g_enabled.load(std::memory_order_relaxed); }

void locality_record(const void* ptr, std::size_t bytes) {
  if (!g_enabled.load(std::memory_order_relaxed) || bytes == 0) return;
  my_log().push_back({static_cast<const char*>(ptr), bytes, current_node()});
}

LocalitySummary locality_summarize() {
  std::lock_guard<std::mutex> lock(g_mutex);
  const std::uintptr_t page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  // Every page any record spans, asked once.
  std::vector<std::uintptr_t> pages;
  for (auto& log : all_logs())
    for (const Record& r : *log) {
      const auto b = reinterpret_cast<std::uintptr_t>(r.ptr);
      for (std::uintptr_t p = b / page * page; p < b + r.bytes; p += page) pages.push_back(p);
    }
  std::sort(pages.begin(), pages.end());
  pages.erase(std::unique(pages.begin(), pages.end()), pages.end());
  std::unordered_map<std::uintptr_t, int> node_of;
  node_of.reserve(pages.size());
  LocalitySummary s;
  int max_node = 0;
  constexpr std::size_t kBatch = 4096;
  std::vector<void*> addrs(kBatch);
  std::vector<int> status(kBatch);
  for (std::size_t i = 0; i < pages.size(); i += kBatch) {
    const std::size_t n = std::min(kBatch, pages.size() - i);
    for (std::size_t k = 0; k < n; ++k) addrs[k] = reinterpret_cast<void*>(pages[i + k]);
    // nodes == nullptr: no move, status[k] = the page's node or -errno
    // (-ENOENT: not touched yet).
    if (syscall(SYS_move_pages, 0, n, addrs.data(), nullptr, status.data(), 0) != 0)
      std::fill(status.begin(), status.begin() + static_cast<long>(n), 0);  // no NUMA support: one node
    for (std::size_t k = 0; k < n; ++k) {
      node_of.emplace(pages[i + k], status[k]);
      max_node = std::max(max_node, status[k]);
    }
  }
  s.nodes = max_node + 1;
  for (auto& log : all_logs()) {
    for (const Record& r : *log) {
      ++s.records;
      const auto b = reinterpret_cast<std::uintptr_t>(r.ptr), e = b + r.bytes;
      for (std::uintptr_t p = b / page * page; p < e; p += page) {
        const std::uint64_t bytes = std::min(e, p + page) - std::max(b, p);
        const int node = node_of[p];
        if (node < 0)
          s.untouched_bytes += bytes;
        else if (node == r.node)
          s.local_bytes += bytes;
        else
          s.remote_bytes += bytes;
      }
    }
    log->clear();
  }
  return s;
}

void locality_print(const char* bench, const char* impl, int threads, const LocalitySummary& s) {
  std::printf("LOCALITY bench=%s impl=%s threads=%d local_bytes=%llu remote_bytes=%llu untouched_bytes=%llu "
              "records=%llu nodes=%d\n",
              bench, impl, threads, static_cast<unsigned long long>(s.local_bytes),
              static_cast<unsigned long long>(s.remote_bytes), static_cast<unsigned long long>(s.untouched_bytes),
              static_cast<unsigned long long>(s.records), s.nodes);
  std::fflush(stdout);
}

}  // namespace apps
