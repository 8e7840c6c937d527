// Where the bytes a task (or an OpenMP loop chunk) accesses live, measured
// the same way for every version of an application: while logging is on,
// the code calls record(ptr, bytes) for each region it reads or writes (the
// regions a canopy task declares, the same regions in the OpenMP version),
// and the log keeps the region with the NUMA node of the CPU the thread ran
// on (getcpu(2)). summarize() then asks the kernel where each page of those
// regions is (move_pages(2) with no target nodes) and counts each region's
// bytes on the thread's node as local and the others as remote — canopy's
// own definition (CANOPY_STATS, docs/dataflow.md "Locality"), but from the
// kernel's answer at the end rather than the runtime's last known location,
// so that it applies to OpenMP's first touch too. Pages never touched count
// as untouched. On a machine of one node everything touched is local.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace apps {

struct LocalitySummary {
  std::uint64_t local_bytes = 0, remote_bytes = 0, untouched_bytes = 0;
  std::uint64_t records = 0;
  int nodes = 1;  // NUMA nodes with memory that the pages were found on, at least 1
  double local_share() const {
    const std::uint64_t all = local_bytes + remote_bytes;
    return all ? static_cast<double>(local_bytes) / static_cast<double>(all) : 1.0;
  }
};

// Logging on or off for every thread (off at start). Turn it on only while
// nothing else runs that should not be counted.
void locality_enable(bool on);
bool locality_enabled();
// Keeps (ptr, bytes, this thread's node) when logging is on; one relaxed
// load when off.
void locality_record(const void* ptr, std::size_t bytes);
// Counts every record kept so far and forgets them.
LocalitySummary locality_summarize();
// Prints "LOCALITY bench=... impl=... threads=... local_bytes=... remote_bytes=... untouched_bytes=... nodes=..."
void locality_print(const char* bench, const char* impl, int threads, const LocalitySummary& s);

}  // namespace apps
