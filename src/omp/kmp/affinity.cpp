// The affinity clause in the libomp ABI: clang passes the task's locator
// list between allocating and queueing it; the task goes to the NUMA node
// holding most bytes of it (core/task_affinity.hpp). GCC drops the clause
// at compile time (canopy_omp.h's canopy_omp_task_node is the way there).
#include <vector>

#include "../core/task_affinity.hpp"
#include "task.hpp"

using namespace canopy::omp;
using namespace canopy::omp::kmp;

namespace {
// libomp's kmp_task_affinity_info_t (the flags are unused by libomp 14 too).
struct kmp_task_affinity_info_t {
  std::intptr_t base_addr;
  std::size_t len;
  kmp_uint32 flags;
};
constexpr int kStackRanges = 16;
}  // namespace

CANOPY_KMP kmp_int32 __kmpc_omp_reg_task_with_affinity(ident_t*, kmp_int32, kmp_task_t* new_task, kmp_int32 naffins,
                                                       kmp_task_affinity_info_t* affin_list) {
  if (naffins <= 0 || !affin_list) return 0;
  ByteRange small[kStackRanges];
  std::vector<ByteRange> many;
  ByteRange* ranges = small;
  if (naffins > kStackRanges) {
    many.resize(static_cast<std::size_t>(naffins));
    ranges = many.data();
  }
  for (kmp_int32 i = 0; i < naffins; ++i)
    ranges[i] = {reinterpret_cast<const void*>(affin_list[i].base_addr), affin_list[i].len};
  const int node = locator_node(ranges, naffins);
  if (node >= 0) head_of(new_task)->core->affinity_node = node;
  return 0;
}
