// The pages of OpenMP depend items under automatic affinity
// (CANOPY_AFFINITY=auto; docs/auto-affinity.md, "OpenMP tasks"): after a
// mapping, each written depend item whose size is known and at least a page
// (clang's `len`: an array section such as depend(inout: a[i*bs:bs])) has
// its pages moved to the NUMA node of the thread its writer is mapped to,
// with the data layer's move (data_try_move_to_node: whole pages, checked
// page by page, what the kernel refuses is counted, never an error). Items
// smaller than a page (depend(out: blk[0]), GCC's bare addresses) say
// nothing of the data they stand for and are left alone. A re-mapping moves
// only the items whose node (or size) changed.
//
// Also the byte counts CANOPY_STATS prints: the bytes of the items a
// mapped iteration's tasks name that are on the node of the thread each
// task is mapped to, asked from the kernel page by page.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace canopy::omp {

// A depend item of a mapped task: its range, whether the task writes it, and
// the node of the thread the task is mapped to.
struct MappedItem {
  std::uintptr_t addr;
  std::uint64_t bytes;
  bool out;
  int node;
};

struct PageMoves {
  std::uint64_t items = 0;  // written items whose pages were asked to move
  std::uint64_t moved = 0;  // pages that were elsewhere and are on their writer's node now
  std::uint64_t left = 0;   // pages the kernel would not move
  std::uint64_t unmapped = 0;  // items whose range is not all mapped in the process (left alone)
  std::string refusal;      // the first refusal ("0x7f..: mbind: ..."), when left > 0
};

struct LocalBytes {
  std::uint64_t local = 0, remote = 0;  // bytes on a known node (untouched pages are in neither)
};

// Bytes of an item (clang's len) worth moving: at least one page.
bool item_pages_movable(std::uint64_t bytes);

class DependPages {
 public:
  // Moves the written items' pages (items with out, at least a page) to
  // the node their writers' bytes are mostly on (several writers on several
  // nodes: the node with the most written bytes, ties to the lowest), each
  // item at most once per node it is sent to. Throws only what the data
  // layer throws for a machine it cannot read (the caller reports it).
  PageMoves move(const std::vector<MappedItem>& items);

 private:
  struct Home {
    std::uint64_t bytes;
    int node;
  };
  std::unordered_map<std::uintptr_t, Home> homes_;  // where each item was sent last
};

// The bytes of the items (all of them, in and out, with their size) on
// their task's node now (the kernel's page locations), and elsewhere.
LocalBytes local_bytes(const std::vector<MappedItem>& items);

// "48.0% of 12.6 MB local" (the data-flow runtime's CANOPY_STATS words).
std::string percent_local_text(const LocalBytes& b);

}  // namespace canopy::omp
