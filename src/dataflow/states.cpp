// Where dependency States live: one Flow per runtime (found through a
// thread-local cache, created on first use and kept for the life of the
// process: a runtime's core may be freed, but a Flow is idle then and a new
// runtime at the same address simply inherits it), States of the top level
// in chunks indexed by Data::index, the children's domain of a task with a
// small open-addressing table, and the memory of nodes and domains (blocks
// of the calling worker's pool; the global heap only for big nodes).
#include <fmt/format.h>

#include <mutex>
#include <new>

#include "canopy/detail/affine.hpp"
#include "canopy/error.hpp"
#include "dataflow/flow.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy::detail::flow {

namespace {

std::mutex g_registry_mutex;
Flow* g_flows = nullptr;  // under g_registry_mutex; never freed

Flow* make_flow(RuntimeCore* rt) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  for (Flow* f = g_flows; f; f = f->next_flow)
    if (f->rt == rt) return f;
  auto* f = new Flow;
  f->rt = rt;
  f->root.flow = f;
  f->next_flow = g_flows;
  g_flows = f;
  return f;
}

}  // namespace

Flow* flow_of_slow(RuntimeCore* rt) {
  Flow* f = make_flow(rt);
  ThreadFlow& t = tls_flow;
  // The flow leaving the cache stays covered by the waits without a
  // runtime (scope.cpp) while it may hold this thread's submissions.
  if (t.cache_flow && t.cache_flow != f && !flow_clean(t.cache_flow)) remember_flow(t, t.cache_flow, nullptr);
  t.cache_rt = rt;
  t.cache_flow = f;
  return f;
}

Flow* find_flow(RuntimeCore* rt) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  for (Flow* f = g_flows; f; f = f->next_flow)
    if (f->rt == rt) return f;
  return nullptr;
}

void for_each_flow(void (*fn)(Flow*, void*), void* arg) {
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  for (Flow* f = g_flows; f; f = f->next_flow) fn(f, arg);
}

// ---- memory ----

void* alloc_heap(std::size_t bytes) { return ::operator new(bytes, std::align_val_t(64)); }
void free_heap(void* p) { ::operator delete(p, std::align_val_t(64)); }

// ---- top-level States ----

State* root_state_if_any(Flow* f, std::uint32_t index) {
  const std::uint32_t c = index >> Flow::kChunkBits;
  if (c >= Flow::kMaxChunks) return nullptr;
  State* chunk = f->chunks[c].load(std::memory_order_acquire);
  return chunk ? chunk + (index & (Flow::kChunk - 1)) : nullptr;
}

[[gnu::noinline]] static State* make_chunk(Flow* f, std::uint32_t c) {
  if (c >= Flow::kMaxChunks)
    throw Error(fmt::format("data-flow: data handle index {} beyond the {} handles tracked", c << Flow::kChunkBits,
                            Flow::kMaxChunks * Flow::kChunk));
  std::lock_guard<std::mutex> lock(g_registry_mutex);
  State* chunk = f->chunks[c].load(std::memory_order_acquire);
  if (!chunk) {
    chunk = new State[Flow::kChunk];
    f->chunks[c].store(chunk, std::memory_order_release);
  }
  return chunk;
}

State* make_root_state(Flow* f, std::uint32_t index) {
  return make_chunk(f, index >> Flow::kChunkBits) + (index & (Flow::kChunk - 1));
}

// ---- children's domains ----

Domain* new_child_domain(Node* owner, Worker* w) {
  std::int8_t cls;
  void* mem = alloc_bytes(w, sizeof(Domain), &cls);
  auto* d = ::new (mem) Domain;
  d->size_class = cls;
  d->flow = owner->domain->flow;
  d->owner = owner;
  return d;
}

namespace {

std::uint32_t hash_index(std::uint32_t index) { return index * 0x9E3779B1u; }

Domain::Entry* find_entry(Domain::Entry* table, std::uint32_t capacity, std::uint32_t index) {
  const std::uint32_t mask = capacity - 1;
  for (std::uint32_t i = hash_index(index) & mask;; i = (i + 1) & mask)
    if (table[i].key == index + 1 || table[i].key == 0) return &table[i];
}

void grow_table(Domain* d) {
  const std::uint32_t cap = d->capacity * 2;
  auto* table = new Domain::Entry[cap]();
  for (std::uint32_t i = 0; i < d->capacity; ++i)
    if (d->table[i].key != 0) *find_entry(table, cap, d->table[i].key - 1) = d->table[i];
  if (d->table != d->inline_table) delete[] d->table;
  d->table = table;
  d->capacity = cap;
}

}  // namespace

State* child_state(Domain* d, std::uint32_t index, Worker* w) {
  Domain::Entry* e = find_entry(d->table, d->capacity, index);
  if (e->key != 0) return e->state;
  if ((d->used + 1) * 4 > d->capacity * 3) {
    grow_table(d);
    e = find_entry(d->table, d->capacity, index);
  }
  std::int8_t cls;
  void* mem = alloc_bytes(w, sizeof(State), &cls);
  static_assert(sizeof(State) <= kBlockBytes[0]);
  e->key = index + 1;
  e->state = ::new (mem) State;
  ++d->used;
  return e->state;
}

State* child_state_if_any(Domain* d, std::uint32_t index) {
  Domain::Entry* e = find_entry(d->table, d->capacity, index);
  return e->key != 0 ? e->state : nullptr;
}

void free_child_domain(Domain* d, Worker* w) {
  // Every child finished: the States are idle (no queue, nothing active).
  for (std::uint32_t i = 0; i < d->capacity; ++i)
    if (d->table[i].key != 0) {
      d->table[i].state->~State();
      free_bytes(w, d->table[i].state, 0);
    }
  if (d->table != d->inline_table) delete[] d->table;
  if (ErrorBox* e = d->error.exchange(nullptr, std::memory_order_acquire)) delete e;
  const std::int8_t cls = d->size_class;
  d->~Domain();
  free_bytes(w, d, cls);
}

}  // namespace canopy::detail::flow
