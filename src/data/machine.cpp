// This machine's NUMA nodes for the data layer (hwloc, loaded once), binding
// a range of pages to nodes, and asking the kernel where pages are.
#include "data/machine.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

#include <fmt/format.h>

#include "canopy/data.hpp"
#include "canopy/error.hpp"

namespace canopy::data_impl {

namespace {

Machine load_machine() {
  Machine m;
  const long ps = sysconf(_SC_PAGESIZE);
  m.page_size = ps > 0 ? static_cast<std::size_t>(ps) : 4096;
  if (hwloc_topology_init(&m.topo) != 0) throw Error("hwloc_topology_init failed", ErrorKind::System);
  if (hwloc_topology_load(m.topo) != 0) {
    hwloc_topology_destroy(m.topo);
    throw Error(fmt::format("hwloc cannot load this machine's topology: {}", std::strerror(errno)),
                ErrorKind::System);
  }
  const int n = hwloc_get_nbobjs_by_type(m.topo, HWLOC_OBJ_NUMANODE);
  m.num_nodes = std::max(n, 1);
  if (m.num_nodes > detail::kDataMaxNodes) {
    hwloc_topology_destroy(m.topo);
    throw Error(fmt::format("this machine has {} NUMA nodes; canopy's data handles track at most {}", m.num_nodes,
                            detail::kDataMaxNodes),
                ErrorKind::System);
  }
  m.os_of_logical.assign(m.num_nodes, 0);
  for (int i = 0; i < n; ++i) {
    hwloc_obj_t o = hwloc_get_obj_by_type(m.topo, HWLOC_OBJ_NUMANODE, i);
    const int os = static_cast<int>(o->os_index);
    m.os_of_logical[i] = os;
    if (os >= static_cast<int>(m.logical_of_os.size())) m.logical_of_os.resize(os + 1, -1);
    m.logical_of_os[os] = i;
  }
  if (m.logical_of_os.empty()) m.logical_of_os.assign(1, 0);
  return m;
}

// Logical node of a kernel node number (the OS index), -1 when hwloc does
// not know it (a node outside this process's allowed set).
int logical_of(const Machine& m, int os) {
  return (os >= 0 && os < static_cast<int>(m.logical_of_os.size())) ? m.logical_of_os[os] : -1;
}

std::uintptr_t page_floor(const void* p, std::size_t page) {
  return reinterpret_cast<std::uintptr_t>(p) & ~(static_cast<std::uintptr_t>(page) - 1);
}

// One node: a resident page can only be on node 0. mincore(2) needs the
// range page-aligned and reports resident pages of anonymous memory.
std::vector<int> resident_pages(const void* ptr, std::size_t bytes, std::size_t page) {
  const std::size_t n = pages_spanned(ptr, bytes, page);
  std::vector<unsigned char> vec(n);
  const std::uintptr_t start = page_floor(ptr, page);
  if (mincore(reinterpret_cast<void*>(start), n * page, vec.data()) != 0)
    throw Error(fmt::format("cannot ask the kernel which pages of {} bytes at {} are resident: mincore: {}", bytes,
                            ptr, std::strerror(errno)),
                ErrorKind::System);
  std::vector<int> nodes(n);
  for (std::size_t i = 0; i < n; ++i) nodes[i] = (vec[i] & 1) ? 0 : -1;
  return nodes;
}

}  // namespace

const Machine& machine() {
  // A function-local static: hwloc loads once, on first use, thread-safely;
  // a failed load throws and is retried by the next call.
  static const Machine m = load_machine();
  return m;
}

std::size_t pages_spanned(const void* ptr, std::size_t bytes, std::size_t page_size) {
  if (bytes == 0) return 0;
  const std::uintptr_t first = page_floor(ptr, page_size);
  const std::uintptr_t last = page_floor(static_cast<const char*>(ptr) + bytes - 1, page_size);
  return (last - first) / page_size + 1;
}

std::size_t bytes_in_page(const void* ptr, std::size_t bytes, std::size_t page_size, std::size_t page) {
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(ptr);
  const std::uintptr_t end = begin + bytes;
  const std::uintptr_t lo = page_floor(ptr, page_size) + page * page_size;
  const std::uintptr_t hi = lo + page_size;
  const std::uintptr_t a = std::max(lo, begin), b = std::min(hi, end);
  return b > a ? b - a : 0;
}

std::vector<int> query_page_nodes(const void* ptr, std::size_t bytes) {
  const Machine& m = machine();
  const std::size_t page = m.page_size;
  const std::size_t n = pages_spanned(ptr, bytes, page);
  const std::uintptr_t start = page_floor(ptr, page);
  std::vector<int> nodes(n, -1);
  // move_pages with nodes == NULL only reports: status[i] is the node of
  // page i, or -ENOENT (not present) / -EFAULT (zero page, unmapped).
  // Batches keep the temporary arrays small for large regions.
  constexpr std::size_t kBatch = 4096;
  std::vector<void*> addrs;
  std::vector<int> status;
  for (std::size_t first = 0; first < n; first += kBatch) {
    const std::size_t count = std::min(kBatch, n - first);
    addrs.resize(count);
    status.assign(count, -1);
    for (std::size_t i = 0; i < count; ++i) addrs[i] = reinterpret_cast<void*>(start + (first + i) * page);
    const long rc = syscall(SYS_move_pages, 0, static_cast<unsigned long>(count), addrs.data(), nullptr,
                            status.data(), 0);
    if (rc != 0) {
      const int err = errno;
      // Without the syscall (seccomp, old kernels), one node still has an
      // answer: every resident page is on it.
      if (m.num_nodes == 1 && (err == ENOSYS || err == EPERM)) return resident_pages(ptr, bytes, page);
      throw Error(fmt::format("cannot ask the kernel where the pages of {} bytes at {} are: move_pages: {}", bytes,
                              ptr, std::strerror(err)),
                  ErrorKind::System);
    }
    for (std::size_t i = 0; i < count; ++i) nodes[first + i] = status[i] >= 0 ? logical_of(m, status[i]) : -1;
  }
  return nodes;
}

int current_node() {
  const Machine& m = machine();
  if (m.num_nodes == 1) return 0;
  unsigned cpu = 0, node = 0;
  if (syscall(SYS_getcpu, &cpu, &node, nullptr) != 0)
    throw Error(fmt::format("cannot ask the kernel which NUMA node this thread runs on: getcpu: {}", std::strerror(errno)),
                ErrorKind::System);
  const int l = logical_of(m, static_cast<int>(node));
  if (l < 0)
    throw Error(fmt::format("this thread runs on CPU {} of NUMA node {} (OS index), a node hwloc does not list", cpu, node),
                ErrorKind::System);
  return l;
}

void check_mapped(const void* ptr, std::size_t bytes) {
  const std::size_t page = machine().page_size;
  if (reinterpret_cast<std::uintptr_t>(ptr) > UINTPTR_MAX - bytes)
    throw Error(fmt::format("region of {} bytes at {} runs past the end of the address space", bytes, ptr));
  const std::size_t n = pages_spanned(ptr, bytes, page);
  std::vector<unsigned char> vec(n);
  if (mincore(reinterpret_cast<void*>(page_floor(ptr, page)), n * page, vec.data()) != 0 && errno == ENOMEM)
    throw Error(fmt::format("region of {} bytes at {}: not (all) mapped memory of this process", bytes, ptr));
}

bool bind_area(void* ptr, std::size_t bytes, const std::vector<int>& logical_nodes, hwloc_membind_policy_t policy) {
  const Machine& m = machine();
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (!set) {
    errno = ENOMEM;
    return false;
  }
  for (int l : logical_nodes) hwloc_bitmap_set(set, static_cast<unsigned>(m.os_of_logical.at(l)));
  const int rc = hwloc_set_area_membind(m.topo, ptr, bytes, set, policy,
                                        HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT);
  const int err = errno;
  hwloc_bitmap_free(set);
  errno = err;
  return rc == 0;
}

}  // namespace canopy::data_impl
