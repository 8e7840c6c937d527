// The registry of data handles: slot allocation with generations (so that a
// handle used after data_free is caught), the lock-free lookup that runtime
// hot paths use, and the plain accessors (data_ptr, data_size, ...).
//
// Invariants, kept under `mutex` for writers:
// - a chunk pointer goes from null to a chunk once (release) and never
//   changes again, so readers need no lock to reach a slot;
// - a slot's plain fields are written only while `live` is 0, then `live`
//   is set to the handle's generation with a release store; a reader that
//   loads that generation (acquire) sees the fields;
// - a freed slot gets a new generation (skipping 0), so every copy of the
//   old handle stops matching.
#include "data/registry.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <memory>

#include <fmt/format.h>

#include "canopy/error.hpp"

namespace canopy::data_impl {

namespace {

constexpr std::uint32_t kChunkBits = 9;  // 512 slots per chunk
constexpr std::uint32_t kChunkSize = 1u << kChunkBits;
constexpr std::uint32_t kMaxChunks = 8192;  // 4 Mi live handles at most

struct Registry {
  std::array<std::atomic<detail::DataEntry*>, kMaxChunks> chunks{};
  std::mutex mutex;
  std::uint32_t num_slots = 0;           // slots handed out so far (guarded by mutex)
  std::vector<std::uint32_t> free_slots;  // guarded by mutex
  std::atomic<std::size_t> live{0};
};

// Never destroyed: handles may be freed from static destructors of other
// translation units, and the chunks must outlive every lookup.
Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}

[[noreturn, gnu::cold, gnu::noinline]] void stale(Data d) {
  if (!d) throw Error("null data handle (a Data{} that no data_allocate or data_register returned)");
  throw Error(fmt::format("data handle #{} (generation {}) used after data_free", d.index, d.generation));
}

// The hot fields share the entry's first cache line (see DataEntry).
static_assert(alignof(detail::DataEntry) == 64);
static_assert(offsetof(detail::DataEntry, node_bytes) + sizeof(std::size_t) <= 64);

detail::DataEntry* slot_of(Registry& r, std::uint32_t index) {
  detail::DataEntry* chunk = r.chunks[index >> kChunkBits].load(std::memory_order_acquire);
  return chunk ? &chunk[index & (kChunkSize - 1)] : nullptr;
}

void store_location(detail::DataEntry& e, const std::vector<std::size_t>& node_bytes) {
  std::size_t placed = 0;
  for (int i = 0; i < detail::kDataMaxNodes; ++i) {
    const std::size_t b = i < static_cast<int>(node_bytes.size()) ? node_bytes[i] : 0;
    e.node_bytes[i].store(b, std::memory_order_relaxed);
    placed += b;
  }
  // (A test's location may name more bytes than the region has.)
  e.unplaced.store(placed < e.bytes ? e.bytes - placed : 0, std::memory_order_relaxed);
  e.home_node.store(home_node_of(node_bytes), std::memory_order_release);
}

}  // namespace

int home_node_of(const std::vector<std::size_t>& node_bytes) {
  int best = -1;
  std::size_t most = 0;
  for (std::size_t i = 0; i < node_bytes.size(); ++i)
    if (node_bytes[i] > most) {
      most = node_bytes[i];
      best = static_cast<int>(i);
    }
  return best;
}

Data registry_add(const NewEntry& ne) {
  if (ne.node_bytes.size() > static_cast<std::size_t>(detail::kDataMaxNodes))
    throw Error(fmt::format("a location over {} nodes: data handles track at most {}", ne.node_bytes.size(),
                            detail::kDataMaxNodes));
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::uint32_t index;
  if (!r.free_slots.empty()) {
    index = r.free_slots.back();
    r.free_slots.pop_back();
  } else {
    if (r.num_slots == kMaxChunks * kChunkSize)
      throw Error(fmt::format("too many live data handles ({}): free some with data_free", r.num_slots),
                  ErrorKind::System);
    index = r.num_slots;
    if ((index & (kChunkSize - 1)) == 0) {
      // Value-initialised: every slot free (live == 0), generation 1 next.
      auto* chunk = new detail::DataEntry[kChunkSize];
      // Each slot knows its index from the start (published with the chunk).
      for (std::uint32_t i = 0; i < kChunkSize; ++i) chunk[i].index = index + i;
      r.chunks[index >> kChunkBits].store(chunk, std::memory_order_release);
    }
    ++r.num_slots;
  }
  detail::DataEntry& e = *slot_of(r, index);
  e.ptr = ne.ptr;
  e.bytes = ne.bytes;
  e.placement = ne.placement;
  e.owned = ne.owned;
  e.alloc_bytes = ne.alloc_bytes;
  e.next_look_ns.store(0, std::memory_order_relaxed);
  e.idle_looks.store(0, std::memory_order_relaxed);
  e.touch_mark.store(0, std::memory_order_relaxed);
  store_location(e, ne.node_bytes);
  const std::uint32_t gen = e.next_generation;
  e.next_generation = gen == UINT32_MAX ? 1 : gen + 1;
  e.live.store(gen, std::memory_order_release);
  r.live.fetch_add(1, std::memory_order_relaxed);
  return Data{index, gen};
}

NewEntry registry_remove(Data d) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  detail::DataEntry& e = detail::data_entry(d);  // throws when stale
  e.live.store(0, std::memory_order_release);
  // A mark nobody claimed goes with the handle (exchange: a task claiming it
  // at this moment and this free count it out once).
  if (e.touch_mark.exchange(0, std::memory_order_relaxed) != 0)
    detail::touch_marks_live.fetch_sub(1, std::memory_order_relaxed);
  NewEntry out;
  out.ptr = e.ptr;
  out.bytes = e.bytes;
  out.placement = e.placement;
  out.owned = e.owned;
  out.alloc_bytes = e.alloc_bytes;
  r.free_slots.push_back(d.index);
  r.live.fetch_sub(1, std::memory_order_relaxed);
  return out;
}

void registry_set_location(Data d, const std::vector<std::size_t>& node_bytes) {
  if (node_bytes.size() > static_cast<std::size_t>(detail::kDataMaxNodes))
    throw Error(fmt::format("a location over {} nodes: data handles track at most {}", node_bytes.size(),
                            detail::kDataMaxNodes));
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  store_location(detail::data_entry(d), node_bytes);
}

}  // namespace canopy::data_impl

namespace canopy::detail {

DataEntry& data_entry(Data d) {
  using namespace canopy::data_impl;
  if (d.generation == 0) stale(d);
  if ((d.index >> kChunkBits) >= kMaxChunks) stale(d);
  DataEntry* e = slot_of(registry(), d.index);
  if (!e || e->live.load(std::memory_order_acquire) != d.generation) stale(d);
  return *e;
}

void data_set_location_for_testing(Data d, const std::vector<std::size_t>& bytes_per_node) {
  data_impl::registry_set_location(d, bytes_per_node);
  // The test's location is the whole truth: nothing for first-touch
  // learning to complete (it would replace it with the kernel's answer).
  data_entry(d).unplaced.store(0, std::memory_order_relaxed);
}

std::size_t data_live_count() { return data_impl::registry().live.load(std::memory_order_relaxed); }

}  // namespace canopy::detail

namespace canopy {

void* data_ptr(Data d) { return detail::data_entry(d).ptr; }
std::size_t data_size(Data d) { return detail::data_entry(d).bytes; }
DataPlacement data_placement(Data d) { return detail::data_entry(d).placement; }
bool data_owned(Data d) { return detail::data_entry(d).owned; }
namespace {

// The public location queries learn a first-touch location the last look
// left incomplete (no interval: they are not hot paths).
detail::DataEntry& learned_entry(Data d) {
  detail::DataEntry& e = detail::data_entry(d);
  if (e.unplaced.load(std::memory_order_relaxed) != 0) detail::data_learn_location(e, true);
  return e;
}

}  // namespace

int data_home_node(Data d) { return learned_entry(d).home_node.load(std::memory_order_acquire); }

std::vector<std::size_t> data_bytes_per_node(Data d) {
  const detail::DataEntry& e = learned_entry(d);
  // This machine's nodes, or more when a test set a location over more.
  int n = data_num_nodes();
  for (int i = n; i < detail::kDataMaxNodes; ++i)
    if (e.bytes_on_node(i) != 0) n = i + 1;
  std::vector<std::size_t> out(n);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = e.bytes_on_node(static_cast<int>(i));
  return out;
}

}  // namespace canopy
