// The memory scheduler's measured costs (migration_cost.hpp). Moving pages:
// move_pages(2) of 16 pages and of 512 other pages from this thread's node
// to the next one, each timed, then back, twice (the least time of each):
// the slope is the cost per byte, what is left at 16 pages the fixed cost
// of a call (no slope under noise: the big move's time per byte, no fixed
// cost). Reading: a sum over 8 MiB of this thread's node, the second of
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
  // Two rounds there and back; the least time of each size (the others
  // were slowed by something else).
  double small = -1, big = -1;
  bool ok = true;
  for (int round = 0; round < 2 && ok; ++round)
    for (int os : {there_os, here_os}) {
      const double s = timed_move(base, page, 0, kSmall, os), b = timed_move(base, page, kSmall, kBig, os);
      if (s < 0 || b < 0) {
        ok = false;
        break;
      }
      small = small < 0 ? s : std::min(small, s);
      big = big < 0 ? b : std::min(big, b);
    }
  munmap(mem, bytes);
  if (!ok) return c;
  c.ns_per_byte = std::max(big - small, 0.0) / static_cast<double>((kBig - kSmall) * page);
  if (c.ns_per_byte <= 0) {  // noise hid the slope: all of the big move's time per byte, no fixed cost
    c.ns_per_byte = big / static_cast<double>(kBig * page);
    small = 0;
  }
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
