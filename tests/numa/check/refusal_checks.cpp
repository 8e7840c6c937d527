// NUMA checks of refusals: when the kernel will not place pages where a
// placement asks (here: the process is confined to node 0 by a cgroup v2
// cpuset), data_allocate fails with canopy::Error naming the placement,
// instead of accepting whatever the kernel did. Runs as root inside the VM
// (numavm, which sets NUMAVM); elsewhere it checks nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <fstream>
#include <string>

#include "canopy/data.hpp"
#include "canopy/error.hpp"
#include "numa_check.hpp"
#include "omp_alloc_api.hpp"

using namespace canopy;

namespace {

constexpr const char* kRoot = "/sys/fs/cgroup";
constexpr const char* kGroup = "/sys/fs/cgroup/canopy_numa_check";

bool write_file(const std::string& path, const std::string& value) {
  std::ofstream f(path);
  f << value;
  f.flush();
  return static_cast<bool>(f);
}

// Moves this process into a cgroup whose cpuset allows memory on node 0
// only, and back out when destroyed.
struct ConfinedToNodeZero {
  bool ok = false;
  ConfinedToNodeZero() {
    if (geteuid() != 0) return;
    write_file(std::string(kRoot) + "/cgroup.subtree_control", "+cpuset");
    ::mkdir(kGroup, 0755);
    ok = write_file(std::string(kGroup) + "/cpuset.mems", "0") &&
         write_file(std::string(kGroup) + "/cgroup.procs", std::to_string(getpid()));
  }
  ~ConfinedToNodeZero() {
    write_file(std::string(kRoot) + "/cgroup.procs", std::to_string(getpid()));
    ::rmdir(kGroup);
  }
};

// The message of the canopy::Error that data_allocate throws ("" if none).
std::string refusal(const DataPlacement& p) {
  const std::size_t bytes = 64 * data_page_size();
  try {
    Data d = data_allocate(bytes, p);
    data_free(d);
  } catch (const canopy::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

CANOPY_NUMA_CHECK(data_refused_placements_are_errors, 2) {
  // Only in the throw-away VM: on a real machine this would reconfigure
  // the host's cgroups.
  if (!std::getenv("NUMAVM")) return;
  ConfinedToNodeZero confined;
  numa_require(confined.ok, "cannot confine the process to node 0 with a cgroup v2 cpuset in the VM");
  // mbind to node 1 alone is refused by the kernel outright.
  const std::string on1 = refusal(DataPlacement::on_node(1));
  numa_require(on1.find("node 1") != std::string::npos, "on_node(1) confined to node 0: '{}'", on1);
  // Block-cyclic: the block bound to node 1 is refused.
  const std::string bc = refusal(DataPlacement::block_cyclic(data_page_size()));
  numa_require(bc.find("to node 1") != std::string::npos, "block_cyclic confined to node 0: '{}'", bc);
  // Interleave is narrowed by the kernel to node 0 without an error: the
  // page check must catch it.
  const std::string il = refusal(DataPlacement::interleaved());
  numa_require(il.find("did not honour the placement") != std::string::npos, "interleaved confined to node 0: '{}'",
               il);
  // Node 0 still works.
  numa_require(refusal(DataPlacement::on_node(0)).empty(), "on_node(0) confined to node 0 failed");
}

// The same refusals through canopy's OpenMP allocators: a partition the
// kernel does not honour is never memory placed elsewhere; the allocator's
// fallback decides (null_fb: NULL; default_mem_fb: ordinary memory) and
// canopy_omp_alloc_error says why.
CANOPY_NUMA_CHECK(omp_alloc_refused_partition_takes_the_fallback, 2) {
  if (!std::getenv("NUMAVM")) return;
  ConfinedToNodeZero confined;
  numa_require(confined.ok, "cannot confine the process to node 0 with a cgroup v2 cpuset in the VM");
  using namespace omp_alloc_api;
  const std::size_t bytes = 64 * data_page_size();
  for (std::uintptr_t partition : {kInterleaved, kBlocked}) {
    const std::uintptr_t strict = partition_allocator(partition, kNullFb);
    const std::uintptr_t lenient = partition_allocator(partition, kDefaultMemFb);
    numa_require(strict != 0 && lenient != 0, "omp_init_allocator refused partition {}", partition);
    void* p = omp_alloc(bytes, strict);
    const char* why = canopy_omp_alloc_error();
    numa_require(p == nullptr, "partition {} confined to node 0 with null_fb: got memory", partition);
    numa_require(why && std::string(why).find("partition") != std::string::npos,
                 "partition {} confined to node 0: the reason does not name the partition: '{}'", partition,
                 why ? why : "(none)");
    void* q = omp_alloc(bytes, lenient);
    numa_require(q != nullptr && canopy_omp_alloc_error() != nullptr,
                 "partition {} confined to node 0 with default_mem_fb: no memory or no reason", partition);
    omp_free(q, lenient);
    omp_destroy_allocator(strict);
    omp_destroy_allocator(lenient);
  }
  numa_note("interleaved and blocked refused, fallbacks taken");
}
