// canopy data handles: a small value (canopy::Data) naming a region of memory
// that tasks read and write, registered in one process-wide registry, and the
// NUMA placement of the regions canopy allocates itself (on one node,
// interleaved, block-cyclic over the nodes, or first touch).
//
// A handle is an index into the registry plus a generation: data_free bumps
// the slot's generation, so a handle used after it was freed is reported as
// such (canopy::Error), never a crash or a silent read of another region.
// Registry entries live in fixed chunks that never move, so the lookup that
// runtime hot paths use (detail::data_entry) is lock-free and O(1).
//
// Nodes are the logical NUMA nodes of this machine as hwloc numbers them
// (0 .. data_num_nodes()-1). The location of a region is what the kernel
// says, page by page (move_pages(2)); a placement the kernel did not honour
// is an error (data_check_placement), never a silent fallback.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "canopy/detail/flag.hpp"

namespace canopy {

// A data handle. Copy it freely: it is two integers. Generation 0 is the
// null handle ("no data"); every live handle has a generation >= 1.
struct Data {
  std::uint32_t index = 0;
  std::uint32_t generation = 0;
  explicit operator bool() const { return generation != 0; }
  friend bool operator==(const Data&, const Data&) = default;
};

enum class DataPlacementKind { FirstTouch, Node, Interleave, BlockCyclic };

// Where data_allocate puts the pages of a region.
struct DataPlacement {
  DataPlacementKind kind = DataPlacementKind::FirstTouch;
  int node = 0;           // Node: logical NUMA node of this machine (wraps modulo the node count; < 0 is an error)
  std::size_t block = 0;  // BlockCyclic: bytes per block (a multiple of the page size, else an error)

  // Each page goes to the node of the thread that first writes it (the
  // kernel's default); canopy does not touch the pages.
  static DataPlacement first_touch() { return {}; }
  // Every page on one node (hwloc's BIND policy, strict: never elsewhere).
  static DataPlacement on_node(int node) { return {DataPlacementKind::Node, node, 0}; }
  // Pages round-robin over every node (the kernel's interleave policy).
  static DataPlacement interleaved() { return {DataPlacementKind::Interleave, 0, 0}; }
  // Block b (bytes [b*block, (b+1)*block)) on node b mod the node count, the
  // distribution libKOMP used for tiled Cholesky.
  static DataPlacement block_cyclic(std::size_t block_bytes) {
    return {DataPlacementKind::BlockCyclic, 0, block_bytes};
  }
};

// "first-touch", "node 1", "interleaved", "block-cyclic 8192 bytes".
std::string to_string(const DataPlacement& p);

// Allocates `bytes` (rounded up to whole pages; page-aligned) with the given
// placement and registers the region. Node, Interleave and BlockCyclic
// pages are bound with hwloc and touched at once, then checked: when the
// kernel put one elsewhere, the region is freed and canopy::Error says
// which pages and nodes. The memory starts zeroed.
Data data_allocate(std::size_t bytes, DataPlacement placement = {});
// Registers an existing region (not copied, not moved, never freed by
// canopy). Its location is read from the kernel at once.
Data data_register(void* ptr, std::size_t bytes);
// Unregisters the handle; frees the memory when data_allocate allocated it.
// The handle, and every copy of it, is then stale: using it throws.
// Data-flow tasks of any runtime that still list it are waited for first
// (helping). Inside a data-flow task, throws canopy::Error naming the
// handle (and leaves it) when the task or a task it is a child of lists it,
// or when tasks elsewhere still use it: waiting there could wait for itself.
// (Not seen: a child's access to a handle none of its ancestors lists, and
// TaskGraph tasks, which hold no reference to handles.)
void data_free(Data d);

void* data_ptr(Data d);
std::size_t data_size(Data d);
// What was asked at data_allocate (first_touch for a registered region).
DataPlacement data_placement(Data d);
// True when data_allocate allocated it (data_free will free it).
bool data_owned(Data d);

// NUMA nodes of this machine (>= 1), as hwloc counts them.
int data_num_nodes();
// The system page size, the unit of placement.
std::size_t data_page_size();

// The node holding most of the region's bytes at the last look (register,
// allocate, data_refresh_location, or canopy learning a first-touch
// location, see below), -1 when no page of it has been touched yet. Ties go
// to the lowest node. When the last look found pages not touched yet, this
// call looks again first (first-touch learning).
int data_home_node(Data d);
// Bytes of the region on each node at the last look (data_num_nodes()
// entries, more only after detail::data_set_location_for_testing named more
// nodes; bytes of untouched pages are in none of them). Looks again first
// when the last look found pages not touched yet, as data_home_node.
std::vector<std::size_t> data_bytes_per_node(Data d);

// What the data layer did since the process started (CANOPY_STATS prints it):
// first-touch learning (docs/groups-memory.md) and migrations.
struct DataStats {
  std::uint64_t looks = 0;           // kernel looks taken to learn an incomplete location
  std::uint64_t learned = 0;         // of those, looks that found a handle's first pages (home node -1 -> known)
  std::uint64_t pages_migrated = 0;  // pages canopy moved to another node (data_move_to_node and friends)
  std::uint64_t bytes_migrated = 0;  // the same in bytes
  std::uint64_t pages_not_moved = 0; // pages canopy asked to move that the kernel left where they were
  // Next-touch / next-write (data_mark_next_touch): marks a task claimed, and
  // what those claims moved (also counted in the three fields above).
  std::uint64_t touch_claims = 0;
  std::uint64_t touch_pages_migrated = 0;
  std::uint64_t touch_bytes_migrated = 0;
  std::uint64_t touch_pages_not_moved = 0;
};
DataStats data_stats();
// Asks the kernel again where each page is (pages may have been touched or
// moved since) and updates the home node and the bytes per node.
void data_refresh_location(Data d);
// The kernel's answer, one entry per page the region spans (a registered
// region may start and end inside a page): the logical node, -1 when the
// page has not been touched yet.
std::vector<int> data_page_nodes(Data d);

// The node each page of a region of `bytes` bytes should be on under
// placement `p` on a machine of `num_nodes` nodes: a pure function, the
// rule data_check_placement applies. -1 = any node (first touch).
// Interleave cannot be known page by page (the kernel starts the round
// robin at an offset of its own): its pages are -2, "the next node after
// the previous page's" (see data_check_placement).
inline constexpr int kAnyNode = -1;
inline constexpr int kNextNode = -2;
std::vector<int> data_expected_page_nodes(const DataPlacement& p, std::size_t bytes, std::size_t page_size,
                                          int num_nodes);

// How a region's pages compare with its placement.
struct DataPlacementReport {
  std::size_t pages = 0;        // pages the region spans
  std::size_t untouched = 0;    // pages with no node yet (not counted as misplaced)
  std::size_t misplaced = 0;    // touched pages on a node the placement does not allow
  std::vector<std::size_t> first_misplaced;  // up to 8 page indexes, for the message
  std::vector<int> expected_nodes;           // node expected for each of those (-2: next after previous)
  std::vector<int> actual_nodes;             // node found for each of those
  bool ok() const { return misplaced == 0; }
};
// Compares page nodes (the kernel's answer, -1 untouched) with the expected
// nodes of data_expected_page_nodes: a pure function.
DataPlacementReport data_compare_placement(const std::vector<int>& expected, const std::vector<int>& actual,
                                           int num_nodes);
// The report for a handle (asks the kernel now).
DataPlacementReport data_placement_report(Data d);
// Moves the region's whole pages to logical NUMA node `node` (the pages it
// shares with a neighbour stay where they are) and binds them there, so
// that pages not touched yet go there too; then checks page by page that
// every touched whole page is on `node` (else canopy::Error, kind System,
// naming how many stayed, where, and the kernel's reason) and refreshes the
// handle's location. Returns the pages that were elsewhere before. A node
// outside 0 .. data_num_nodes()-1 is an error. The handle's
// data_placement() is not changed.
std::size_t data_move_to_node(Data d, int node);

// What data_try_move_to_node did.
struct DataMoveResult {
  std::size_t moved = 0;        // whole pages that were on another node and are on `node` now
  std::size_t left = 0;         // touched whole pages the kernel would not move (still elsewhere)
  std::size_t first_left = 0;   // the first of those (index in data_page_nodes), when left > 0
  int first_left_node = -1;     // and its node
  std::string reason;           // the kernel's refusal, when it gave one (e.g. "mbind: Input/output error")
};
// A process-wide counter bumped each time canopy starts moving pages
// (data_move_to_node, data_try_move_to_node): a cache of page locations
// (the OpenMP runtime's for the affinity clause) that remembers the value
// it saw knows its entries may be stale when the value changed.
std::uint64_t data_move_generation();

// data_move_to_node that moves what the kernel lets it move and reports the
// rest instead of throwing (automatic affinity uses it: an optimisation that
// cannot move a page leaves it where it is). Still an error: a bad handle or
// node, or a kernel that cannot tell where pages are.
DataMoveResult data_try_move_to_node(Data d, int node);

// Next-touch and next-write (docs/groups-memory.md). Linux has no
// next-touch policy; canopy implements it with what the runtime knows: the
// accesses data-flow tasks (submit, TaskGraph) declare. A marked handle's
// whole pages move, once, to the NUMA node of the first task that starts
// with a declared access to it (next-touch: any mode; next-write: Write or
// ReadWrite, readers leave the mark), and the mark is consumed by that task:
// the claim is one atomic exchange on the handle, so of two tasks starting
// at once on two nodes exactly one moves the pages (the first to claim), the
// other runs without waiting. The unit is the handle, as in declarations: to
// move blocks of a region separately, register each block as a handle
// (data_register of a sub-range) and mark those. Moved as data_try_move_to_node
// moves (pages shared with a neighbouring region stay); a page the kernel
// did not move is counted (DataStats::touch_pages_not_moved, CANOPY_STATS)
// and reported once on stderr. Marking again before the claim replaces the
// mark (touch <-> write); data_free drops it.
enum class DataTouchMark : std::uint8_t { None = 0, NextTouch = 1, NextWrite = 2 };
void data_mark_next_touch(Data d);
void data_mark_next_write(Data d);
// Drops the mark (no-op when not marked).
void data_clear_touch_mark(Data d);
// The handle's mark now (None once a task claimed it).
DataTouchMark data_touch_mark(Data d);

// Throws canopy::Error (kind System) naming the handle, its placement, the
// number of misplaced pages and the first of them with the nodes asked for
// and found, when the kernel did not honour the placement. With
// `require_touched`, untouched pages are an error too.
void data_check_placement(Data d, bool require_touched = false);

}  // namespace canopy

namespace canopy::detail {

// The most nodes whose byte counts a registry entry keeps. A machine with
// more NUMA nodes than this is refused at the first use of the registry.
inline constexpr int kDataMaxNodes = 64;

// One registry slot. The fields a hot path reads are atomics or are written
// only while the slot is not live (before the release store of `live`), so
// readers that saw the generation with an acquire load see them.
//
// Laid out for the data-flow hot path: a submission checks `live` and reads
// the bytes on node 0 (one-node machines), a task body reads ptr/bytes, and
// owner computes reads the first few node counts: all on the entry's first
// cache line (entries are 64-byte aligned); what only the registry mutex's
// holders read (next generation, placement, ownership) comes last.
struct alignas(64) DataEntry {
  // The generation of the live handle, 0 while the slot is free. Written
  // under the registry mutex (release), read lock-free (acquire).
  std::atomic<std::uint32_t> live{0};
  // Last known location: written by register/allocate/refresh (under the
  // registry mutex), read lock-free with relaxed loads; a reader may see a
  // mix of two refreshes, which only blurs a heuristic.
  std::atomic<int> home_node{-1};
  // Written under the registry mutex before `live` is published.
  void* ptr = nullptr;
  std::size_t bytes = 0;
  std::atomic<std::size_t> node_bytes[kDataMaxNodes] = {};
  // The generation the slot's next handle gets (registry mutex only).
  std::uint32_t next_generation = 1;
  bool owned = false;           // allocated by data_allocate (freed by data_free)
  DataPlacement placement{};
  std::size_t alloc_bytes = 0;  // what was allocated (whole pages) when owned
  std::uint32_t index = 0;      // Data::index of this slot (fixed), so learning can name the handle

  // First-touch learning (src/data/learn.cpp). Bytes of the region that
  // were on no node at the last look (pages not touched yet); 0 means the
  // location is complete and is never looked at again except by a refresh
  // or a migration. Written with the location (registry mutex), read
  // lock-free.
  std::atomic<std::size_t> unplaced{0};
  // The earliest time (steady clock, ns) a hot path may look again;
  // kLearnBusy while one thread is looking. Raced for with a CAS.
  std::atomic<std::int64_t> next_look_ns{0};
  // Looks in a row that found nothing new (the wait before the next grows).
  std::atomic<std::uint32_t> idle_looks{0};

  // Next-touch / next-write mark (a DataTouchMark), claimed by exchange:
  // data_touch_claim.
  std::atomic<std::uint8_t> touch_mark{0};

  // Bytes of the region on node n at the last look, 0 for a node outside
  // [0, kDataMaxNodes).
  std::size_t bytes_on_node(int n) const {
    return (n >= 0 && n < kDataMaxNodes) ? node_bytes[n].load(std::memory_order_relaxed) : 0;
  }
};

// First-touch learning: when the entry's last look left bytes on no node
// (a first-touch region not fully written yet), asks the kernel again where
// its pages are, at most once per interval per handle (1 ms, doubling up
// to 64 ms while looks find nothing new) and by one thread at a time;
// otherwise does nothing. Never throws (a handle freed meanwhile is left
// alone). The runtime calls it where it needs a handle's node: resolving
// Affinity::near, owner computes, the locality counts of a finished task.
void data_learn_location(DataEntry& e, bool force = false) noexcept;
inline void data_learn_if_unplaced(DataEntry& e) noexcept {
  if (e.unplaced.load(std::memory_order_relaxed) != 0) [[unlikely]]
    data_learn_location(e);
}
// data_learn_location at a given time (tests drive the clock); `force`
// ignores the interval (data_home_node, data_bytes_per_node).
void data_learn_location_at(DataEntry& e, std::int64_t now_ns, bool force) noexcept;
inline constexpr std::int64_t kLearnBusy = INT64_MAX;
inline constexpr std::int64_t kLearnFirstWaitNs = 1'000'000;
inline constexpr std::uint32_t kLearnMaxDoublings = 6;

// Marked handles in the process now (next-touch / next-write). While 0,
// starting a data-flow task costs a compare and a branch for them (flag.hpp).
extern std::atomic<std::uint32_t> touch_marks_live;
// The claim of one declared access (`writes`: Write or ReadWrite) by the
// task about to run on this thread: when the handle carries a mark the
// access satisfies, takes it (exchange) and moves the handle's pages to
// this thread's NUMA node. Never throws (a failure is counted and reported).
void data_touch_claim(DataEntry& e, bool writes) noexcept;
inline bool touch_marks_pending() noexcept { return nonzero_relaxed(touch_marks_live); }

// O(1), lock-free: the entry of a live handle. Throws canopy::Error
// "null data handle" or "data handle #<index> used after data_free" (also
// for an index that was never handed out).
DataEntry& data_entry(Data d);

// Test seam: sets a handle's last known location as if the kernel had said
// so (bytes_per_node.size() nodes, at most kDataMaxNodes, may exceed this
// machine's node count), so that owner-computes and affinity can be tested on
// a one-node machine. The home node follows the usual rule.
void data_set_location_for_testing(Data d, const std::vector<std::size_t>& bytes_per_node);

// Test seam (fault injection): while on, data_try_move_to_node asks the
// kernel nothing and reports every touched whole page off the target node
// as left, reason "refused for testing" (data_move_to_node then throws), as
// when the kernel refuses, so that the callers' handling of refusals can be
// tested wherever pages are not refused.
void data_refuse_moves_for_testing(bool on);

// Live handles right now (tests: nothing leaks).
std::size_t data_live_count();

}  // namespace canopy::detail
