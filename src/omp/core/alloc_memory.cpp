// The memory behind OpenMP allocators' blocks: heap, locked private
// mappings (pinned) and NUMA-placed regions of canopy's data layer
// (partition nearest / blocked / interleaved). See alloc_memory.hpp.
//
// Why a placed block goes through the data layer: it maps whole pages
// (hwloc_alloc, an mmap), binds them strictly, touches them and asks the
// kernel where each one went (move_pages), refusing the region when one is
// elsewhere; so a partition the machine cannot honour becomes the
// allocator's fallback, never memory silently placed somewhere else. A block
// smaller than a page comes from the heap whatever its partition: it shares
// its page with other blocks, so it cannot have a placement of its own.
#include "alloc_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "canopy/error.hpp"
#include "data/machine.hpp"  // current_node: the data layer's getcpu, in its logical node numbers
#include "runtime.hpp"

namespace canopy::omp::alloc_memory {

namespace {

void say(char* why, std::size_t n, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(why, n, fmt, ap);
  va_end(ap);
}

std::size_t page_size() {
  static const std::size_t page = [] {
    const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? static_cast<std::size_t>(p) : std::size_t(4096);
  }();
  return page;
}

// The first address at or after `from` + sizeof(Header) aligned to `align`.
char* user_pointer(void* from, std::size_t align) {
  const std::uintptr_t b = reinterpret_cast<std::uintptr_t>(from) + sizeof(Header);
  return reinterpret_cast<char*>((b + align - 1) & ~(std::uintptr_t(align) - 1));
}

int log2_of(std::size_t align) {
  int l = 0;
  while ((std::size_t(1) << l) < align) ++l;
  return l;
}

void* finish(void* base, const Request& r, Kind kind, const MapRecord& rec) {
  void* from = base;
  if (kind != Kind::Heap) {
    *static_cast<MapRecord*>(base) = rec;
    from = static_cast<MapRecord*>(base) + 1;
  }
  char* p = user_pointer(from, r.align);
  Header* h = header_of(p);
  *h = Header{};
  h->base = base;
  h->size = r.size;
  h->allocator = r.allocator;
  h->align_log2 = static_cast<std::uint8_t>(log2_of(r.align));
  h->kind = kind;
  h->pinned = r.pinned;
  return p;
}

canopy::DataPlacement placement_for(Partition part, std::size_t bytes) {
  switch (part) {
    case Partition::Nearest: return canopy::DataPlacement::on_node(canopy::data_impl::current_node());
    case Partition::Interleaved: return canopy::DataPlacement::interleaved();
    case Partition::Blocked: {
      // One contiguous block per node, in node order (the last may be
      // shorter, and with fewer pages than nodes the last nodes get none).
      const std::size_t page = canopy::data_page_size();
      const std::size_t pages = (bytes + page - 1) / page;
      const std::size_t nodes = static_cast<std::size_t>(canopy::data_num_nodes());
      return canopy::DataPlacement::block_cyclic((pages + nodes - 1) / nodes * page);
    }
    case Partition::Environment: break;
  }
  return canopy::DataPlacement::first_touch();
}

void* obtain_placed(const Request& r, std::size_t fp, char* why, std::size_t why_size) {
  canopy::Data d;
  try {
    d = canopy::data_allocate(fp, placement_for(r.partition, fp));
  } catch (const std::exception& e) {
    say(why, why_size, "partition %s: %s", to_string(r.partition), e.what());
    return nullptr;
  }
  void* base = canopy::data_ptr(d);
  if (r.pinned && mlock(base, fp) != 0) {
    say(why, why_size, "pinned: mlock of %zu bytes: %s", fp, std::strerror(errno));
    canopy::data_free(d);
    return nullptr;
  }
  MapRecord rec;
  rec.region = d;
  return finish(base, r, Kind::Placed, rec);
}

void* obtain_pinned(const Request& r, std::size_t fp, char* why, std::size_t why_size) {
  const std::size_t page = page_size();
  const std::size_t len = (fp + page - 1) / page * page;
  void* base = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) {
    say(why, why_size, "pinned: mmap of %zu bytes: %s", len, std::strerror(errno));
    return nullptr;
  }
  // Its own pages: munlock at omp_free cannot unlock a neighbour's block.
  if (mlock(base, len) != 0) {
    say(why, why_size, "pinned: mlock of %zu bytes: %s (RLIMIT_MEMLOCK, see ulimit -l)", len, std::strerror(errno));
    munmap(base, len);
    return nullptr;
  }
  MapRecord rec;
  rec.mapped = len;
  return finish(base, r, Kind::Mapped, rec);
}

}  // namespace

const char* to_string(Partition p) {
  switch (p) {
    case Partition::Environment: return "environment";
    case Partition::Nearest: return "nearest";
    case Partition::Blocked: return "blocked";
    case Partition::Interleaved: return "interleaved";
  }
  return "?";
}

Kind kind_for(const Request& r) {
  if (r.partition != Partition::Environment && footprint(r.size, r.align, Kind::Placed) >= page_size())
    return Kind::Placed;
  return r.pinned ? Kind::Mapped : Kind::Heap;
}

std::size_t footprint(std::size_t size, std::size_t align, Kind kind) {
  // The heap and mappings give 16-byte aligned memory (and the header and
  // the record are multiples of 16): a larger alignment costs at most
  // align - 16 bytes of padding.
  const std::size_t pad = align > 16 ? align - 16 : 0;
  const std::size_t extra = sizeof(Header) + pad + (kind == Kind::Heap ? 0 : sizeof(MapRecord));
  return size > SIZE_MAX - extra ? 0 : size + extra;
}

void* obtain(const Request& r, bool& zeroed, char* why, std::size_t why_size) {
  zeroed = false;
  const Kind kind = kind_for(r);
  const std::size_t fp = footprint(r.size, r.align, kind);
  if (fp == 0) {
    say(why, why_size, "%zu bytes aligned to %zu: larger than the address space", r.size, r.align);
    return nullptr;
  }
  if (kind != Kind::Heap) {
    void* p = kind == Kind::Placed ? obtain_placed(r, fp, why, why_size) : obtain_pinned(r, fp, why, why_size);
    zeroed = p != nullptr;  // fresh mappings (data_allocate's pages too) start zeroed
    return p;
  }
  void* base = std::malloc(fp);
  if (!base) {
    say(why, why_size, "out of memory (malloc of %zu bytes)", fp);
    return nullptr;
  }
  return finish(base, r, Kind::Heap, {});
}

void give_back(Header* h) {
  switch (h->kind) {
    case Kind::Heap: std::free(h->base); return;
    case Kind::Mapped: munmap(h->base, static_cast<MapRecord*>(h->base)->mapped); return;
    case Kind::Placed: {
      // data_free unmaps, which unlocks pinned pages too.
      const canopy::Data d = static_cast<MapRecord*>(h->base)->region;
      try {
        canopy::data_free(d);
      } catch (const std::exception& e) {
        fatal("omp_free: the block's NUMA-placed region cannot be freed: %s", e.what());
      }
      return;
    }
  }
}

}  // namespace canopy::omp::alloc_memory
