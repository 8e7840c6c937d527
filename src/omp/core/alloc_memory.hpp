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

// The header before every block (a multiple of 16 bytes, so that a block
// with the heap's 16-byte alignment needs no padding).
struct alignas(16) Header {
  void* base = nullptr;             // what give_back returns: heap pointer or mapping start
  std::size_t size = 0;             // bytes the program asked for
  std::size_t footprint = 0;        // bytes counted in the allocator's pool (see footprint())
  std::size_t mapped = 0;           // bytes of the private mapping (0: heap or data region)
  std::uintptr_t allocator = 0;     // the handle of the allocator that provided the block
  canopy::Data region{};            // the data-layer region of a placed block (null otherwise)
  bool pinned = false;
};
static_assert(sizeof(Header) % 16 == 0);

inline Header* header_of(void* p) { return static_cast<Header*>(p) - 1; }

// The bytes a block of `size` bytes aligned to `align` (a power of two)
// takes: the size, the header and the worst-case alignment padding. This
// is what a pool counts, whichever source the block comes from. 0 when the
// sum overflows.
std::size_t footprint(std::size_t size, std::size_t align);

struct Request {
  std::size_t size = 0;
  std::size_t align = 16;  // power of two
  Partition partition = Partition::Environment;
  bool pinned = false;
  std::uintptr_t allocator = 0;  // recorded in the header
};

// A block for `r`, its header filled in, or nullptr with the reason in
// `why` (a fixed buffer of why_size bytes): the kernel refused to bind or
// lock, or did not put a page where asked, or memory ran out. `zeroed`
// tells whether the bytes are known to be zero (fresh mappings).
void* obtain(const Request& r, bool& zeroed, char* why, std::size_t why_size);

// Returns the block's memory (unlocks, unbinds, unmaps or frees).
void give_back(Header* h);

}  // namespace canopy::omp::alloc_memory
