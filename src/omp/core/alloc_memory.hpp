// Where the memory of an OpenMP allocator's block comes from (api/alloc.cpp
// decides which allocator and fallback; this file only obtains and gives
// back bytes): the heap, a private mapping locked in RAM (the pinned trait),
// or, for the partition traits nearest / blocked / interleaved, a region of
// canopy's NUMA data layer (canopy/data.hpp), whose pages are bound, touched
// and checked page by page before the block is handed out.
//
// Every block starts with a Header just before the pointer the program
// gets, so that omp_free and omp_realloc need no allocator argument.
#pragma once
#include <cstddef>
#include <cstdint>

#include "canopy/data.hpp"

namespace canopy::omp::alloc_memory {

enum class Partition : std::uint8_t { Environment, Nearest, Blocked, Interleaved };

const char* to_string(Partition p);

// Where a block's bytes come from.
enum class Kind : std::uint8_t {
  Heap,    // malloc
  Mapped,  // a private mapping of its own, locked (pinned)
  Placed,  // a region of the data layer (partition nearest / blocked / interleaved)
};

// The header before every block: 32 bytes, as libgomp's, so that pools
// hold as many blocks as programs written against libgomp expect (GCC's
// tests count on it). A multiple of 16, so that a block with the heap's
// 16-byte alignment needs no padding.
struct alignas(16) Header {
  void* base = nullptr;          // what give_back returns: heap pointer or mapping start
  std::size_t size = 0;          // bytes the program asked for
  std::uintptr_t allocator = 0;  // the handle of the allocator that provided the block
  std::uint8_t align_log2 = 4;   // the block's alignment (footprint)
  Kind kind = Kind::Heap;
  bool pinned = false;
};
static_assert(sizeof(Header) == 32);

// Mapped and placed blocks start their mapping with this record (the header
// is right before the program's pointer, further on).
struct MapRecord {
  canopy::Data region{};   // placed: the data-layer region
  std::size_t mapped = 0;  // mapped: bytes of the mapping
};
static_assert(sizeof(MapRecord) == 16);

inline Header* header_of(void* p) { return static_cast<Header*>(p) - 1; }

struct Request {
  std::size_t size = 0;
  std::size_t align = 16;  // power of two, at least 16
  Partition partition = Partition::Environment;
  bool pinned = false;
  std::uintptr_t allocator = 0;  // recorded in the header
};

// Where obtain will take a block for `r` from (placed only when the block
// is at least a page: a smaller one shares its page with other blocks, so
// it cannot have a placement of its own).
Kind kind_for(const Request& r);

// The bytes a block of `size` bytes aligned to `align` takes from `kind`:
// the size, the header, the worst-case alignment padding and, for a
// mapping, its record. This is what a pool counts. 0 when the sum
// overflows.
std::size_t footprint(std::size_t size, std::size_t align, Kind kind);
inline std::size_t footprint(const Header& h) {
  return footprint(h.size, std::size_t(1) << h.align_log2, h.kind);
}

// A block for `r` from kind_for(r), its header filled in, or nullptr with
// the reason in `why` (a buffer of why_size bytes): the kernel refused to
// bind or lock, or did not put a page where asked, or memory ran out.
// `zeroed` tells whether the bytes are known to be zero (fresh mappings).
void* obtain(const Request& r, bool& zeroed, char* why, std::size_t why_size);

// Returns the block's memory (unlocks, unbinds, unmaps or frees).
void give_back(Header* h);

}  // namespace canopy::omp::alloc_memory
