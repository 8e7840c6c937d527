// The task pool's slow paths (see canopy/detail/task.hpp): refilling a free
// list from the blocks other workers gave back, or from a new slab.
#include <cstdlib>
#include <new>

#include "canopy/detail/task.hpp"

namespace canopy::detail {

TaskPool::~TaskPool() {
  SlabHeader* s = slab_list_;
  while (s) {
    SlabHeader* next = s->next_slab;
    std::free(s);
    s = next;
  }
}

void* TaskPool::refill(int cls) {
  // Blocks freed by other workers first: take the whole stack (no ABA: the
  // owner never pops single blocks from it).
  if (FreeBlock* list = remote_[cls].exchange(nullptr, std::memory_order_acquire)) {
    free_[cls] = list->next;
    return list;
  }
  void* mem = std::aligned_alloc(kSlabBytes, kSlabBytes);
  if (!mem) throw std::bad_alloc();
  auto* s = ::new (mem) SlabHeader;
  s->owner = this;
  s->next_slab = slab_list_;
  s->size_class = cls;
  slab_list_ = s;
  ++slabs_;
  // Blocks start at the first multiple of the block size past the header,
  // and are handed out from there by alloc's bump pointer.
  const std::size_t block = kBlockBytes[cls];
  char* first = static_cast<char*>(mem) + (block > sizeof(SlabHeader) ? block : sizeof(SlabHeader));
  bump_[cls] = first + block;
  bump_end_[cls] = static_cast<char*>(mem) + kSlabBytes;
  return first;
}

void TaskPool::defer_remote(TaskPool* owner, void* p, int cls) {
  Deferred& d = deferred_[cls];
  if (d.owner != owner) {
    flush_deferred(cls);
    d.owner = owner;
  }
  auto* b = static_cast<FreeBlock*>(p);
  b->next = d.head;
  d.head = b;
  if (!d.tail) d.tail = b;
  if (++d.count == kDeferredBatch) flush_deferred(cls);
}

void TaskPool::flush_deferred(int cls) {
  Deferred& d = deferred_[cls];
  if (d.count) d.owner->give_back(d.head, d.tail, cls);
  d = Deferred{};
}

void TaskPool::flush_remote() {
  flush_deferred(0);
  flush_deferred(1);
}

void TaskPool::give_back(FreeBlock* head, FreeBlock* tail, int cls) {
  FreeBlock* old = remote_[cls].load(std::memory_order_relaxed);
  do {
    tail->next = old;
  } while (!remote_[cls].compare_exchange_weak(old, head, std::memory_order_release, std::memory_order_relaxed));
}

}  // namespace canopy::detail
