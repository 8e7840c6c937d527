// Private to src/: what moving pages and reading memory cost on this
// machine, measured once per process (migration_cost.cpp): the memory
// scheduler's model (src/runtime/memsched.cpp, docs/groups-memory.md).
#pragma once

namespace canopy::data_impl {

struct MigrationCost {
  bool measured = false;          // false on a machine of one node (nothing can move)
  double fixed_ns = 0;            // per move_pages(2) call, whatever its size
  double ns_per_byte = 0;         // per byte moved to another node
  double read_ns_per_byte = 0;    // per byte of a streaming read of local memory
};

// Measured at the first call (528 pages moved to the next node and back,
// twice: a few ms on a real machine, ~0.2 s in a TCG VM; 8 MiB read
// twice), then the same answer. Never throws: a kernel that refuses the
// test moves gives measured = false.
const MigrationCost& migration_cost();

}  // namespace canopy::data_impl
