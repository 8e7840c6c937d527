// The memory scheduler's measured costs (migration_cost.hpp). Moving pages:
// move_pages(2) of 16 pages and of 512 other pages from this thread's node
// to the next one, each timed, then back (the lower time of the two ways):
// the slope is the cost per byte, what is left at 16 pages the fixed cost
// of a call. Reading: a sum over 8 MiB of this thread's node, the second of
// two passes (the first faults the pages in). The scratch memory is mmap'd
// here and never registered: these moves are not canopy's migrations and do
// not count in data_stats().
#include "data/migration_cost.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include "data/machine.hpp"

namespace canopy::data_impl {
namespace {

using Clock = std::chrono::steady_clock;

double ns_since(Clock::time_point t0) { return std::chrono::duration<double, std::nano>(Clock::now() - t0).count(); }

// Moves pages [first, first + count) of `base` to OS node `os_node`; the
// time taken, or a negative value when a page did not move.
double timed_move(char* base, std::size_t page, std::size_t first, std::size_t count, int os_node) {
  std::vector<void*> addrs(count);
  for (std::size_t i = 0; i < count; ++i) addrs[i] = base + (first + i) * page;
  std::vector<int> nodes(count, os_node), status(count, -1);
  constexpr int kMoveFlag = 1 << 1;  // MPOL_MF_MOVE
  const auto t0 = Clock::now();
  const long rc = syscall(SYS_move_pages, 0, static_cast<unsigned long>(count), addrs.data(), nodes.data(),
                          status.data(), kMoveFlag);
  const double t = ns_since(t0);
  if (rc != 0) return -1;
  for (int s : status)
    if (s != os_node) return -1;
  return t;
}

MigrationCost measure() {
  MigrationCost c;
  const Machine& m = machine();
  if (m.num_nodes < 2) return c;
  const std::size_t page = m.page_size;
  constexpr std::size_t kSmall = 16, kBig = 512;
  const std::size_t bytes = (kSmall + kBig) * page;
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return c;
  char* base = static_cast<char*>(mem);
  madvise(base, bytes, MADV_NOHUGEPAGE);  // page by page, as the migrations of 4 KiB pages it predicts
  std::memset(base, 1, bytes);
  int here = 0;
  try {
    here = current_node();
  } catch (...) {
    munmap(mem, bytes);
    return c;
  }
  const int there_os = m.os_of_logical[static_cast<std::size_t>((here + 1) % m.num_nodes)];
  const int here_os = m.os_of_logical[static_cast<std::size_t>(here)];
  const double s1 = timed_move(base, page, 0, kSmall, there_os);
  const double b1 = timed_move(base, page, kSmall, kBig, there_os);
  const double s2 = timed_move(base, page, 0, kSmall, here_os);
  const double b2 = timed_move(base, page, kSmall, kBig, here_os);
  munmap(mem, bytes);
  if (s1 < 0 || b1 < 0 || s2 < 0 || b2 < 0) return c;
  const double small = std::min(s1, s2), big = std::min(b1, b2);
  c.ns_per_byte = std::max(big - small, 0.0) / static_cast<double>((kBig - kSmall) * page);
  c.fixed_ns = std::max(small - c.ns_per_byte * static_cast<double>(kSmall * page), 0.0);

  constexpr std::size_t kRead = 8u << 20;
  std::vector<std::uint64_t> buf(kRead / sizeof(std::uint64_t), 1);
  volatile std::uint64_t sink = 0;
  double t = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const auto t0 = Clock::now();
    std::uint64_t sum = 0;
    for (std::uint64_t x : buf) sum += x;
    sink = sink + sum;
    t = ns_since(t0);
  }
  c.read_ns_per_byte = t / static_cast<double>(kRead);
  c.measured = true;
  return c;
}

}  // namespace

const MigrationCost& migration_cost() {
  static const MigrationCost c = measure();
  return c;
}

}  // namespace canopy::data_impl
