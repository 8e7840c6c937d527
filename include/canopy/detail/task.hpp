// What a deque slot holds, the header of tasks that live elsewhere, and the
// per-worker pool those are allocated from (never the global heap on the
// hot path).
//
// A small callable that can be copied as bytes (a lambda capturing a few
// pointers or numbers) lives in the deque slot itself: spawning writes it
// there, running copies it out. Other callables live in a pool block (this
// header, then the callable) the slot points to. The pool hands out
// blocks of two sizes from 64 KiB slabs aligned to 64 KiB, so that the slab
// header (which pool owns the block) is found by masking the address. The
// owner allocates and frees with plain loads and stores; a block freed by
// another worker (a stolen task) goes back to its owner through a lock-free
// stack the owner takes whole when its own list runs dry (the scheme of
// oneTBB's small-object pool and mimalloc's thread-free lists). A thief
// gives blocks back in chains of up to 64 per CAS, so that stealing many
// small tasks does not bounce the owner's list on every one.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace canopy::detail {

struct Worker;
struct Group;

// A deque slot: one cache line of words. word[0] is the function that runs
// it, word[1] its group, word[2..7] the callable's bytes or a pointer to the
// task. The owner writes the words with relaxed atomic stores and thieves
// copy them with relaxed atomic loads (a slot may be rewritten, after the
// deque wrapped around, while a slow thief still copies it: the thief's CAS
// on `top` then fails and it drops the copy, but the accesses must not be a
// data race). The owner reads its own slots plainly.
struct alignas(64) TaskSlot {
  static constexpr int kWords = 8;
  static constexpr int kPayloadWords = 6;
  std::uint64_t word[kWords];
};

// Runs the task in `slot` on worker `w` (copying what it needs out of the
// slot first: the owner may reuse the slot as soon as the task spawns).
// Returns the group the caller must count the task for (a task its group's
// owner spawned), or nullptr when there is nothing to count: a foreign task
// counted itself, or a proxy whose other copy was claimed.
using SlotRun = Group* (*)(const TaskSlot* slot, Worker* w);

inline void store_word(TaskSlot* s, int i, std::uint64_t v) {
  std::atomic_ref<std::uint64_t>(s->word[i]).store(v, std::memory_order_relaxed);
}
inline SlotRun slot_run(const TaskSlot* s) { return reinterpret_cast<SlotRun>(s->word[0]); }
inline Group* slot_group(const TaskSlot* s) { return reinterpret_cast<Group*>(s->word[1]); }
template <class T>
inline T* slot_pointer(const TaskSlot* s) {
  return reinterpret_cast<T*>(s->word[2]);
}

// The header of a task that lives in a pool block or elsewhere (and of
// affinity proxies, which mailboxes hold).
struct Task {
  // Runs the task on worker `w`, destroys the callable and gives the block
  // back; returns what SlotRun returns.
  Group* (*run)(Task* self, Worker* w);
  Group* group;  // the group that waits for it
};

inline constexpr std::size_t kSlabBytes = 64 * 1024;
inline constexpr std::size_t kBlockBytes[2] = {64, 256};
// Size class of a task type: 0, 1, or -1 for the global heap (a callable of
// more than 240 bytes, or one that needs more than 64-byte alignment).
template <class T>
inline constexpr int kSizeClass = (alignof(T) > 64) ? -1
                                  : sizeof(T) <= kBlockBytes[0] ? 0
                                  : sizeof(T) <= kBlockBytes[1] ? 1
                                                                : -1;

struct FreeBlock {
  FreeBlock* next;
};

class TaskPool;

// First 64 bytes of every slab.
struct alignas(64) SlabHeader {
  TaskPool* owner;
  SlabHeader* next_slab;  // the owner's list of slabs, freed with the pool
  int size_class;
};

class TaskPool {
 public:
  TaskPool() = default;
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Owner thread only: the most recently freed block, else the next block
  // of the current slab (carved lazily), else a refill.
  void* alloc(int cls) {
    FreeBlock* b = free_[cls];
    if (b) [[likely]] {
      free_[cls] = b->next;
      return b;
    }
    char* p = bump_[cls];
    if (p != bump_end_[cls]) [[likely]] {
      bump_[cls] = p + kBlockBytes[cls];
      return p;
    }
    return refill(cls);
  }
  // The owner of this pool frees a block, whichever pool it came from: its
  // own go to its free list; another pool's are chained per owner and given
  // back in one CAS every kDeferredBatch blocks, or at flush_remote().
  void free(void* p, int cls) {
    SlabHeader* s = reinterpret_cast<SlabHeader*>(reinterpret_cast<std::uintptr_t>(p) & ~(kSlabBytes - 1));
    if (s->owner == this) [[likely]] {
      auto* b = static_cast<FreeBlock*>(p);
      b->next = free_[cls];
      free_[cls] = b;
    } else {
      defer_remote(s->owner, p, cls);
    }
  }
  // free(), then returns `r`: lets a caller end with a tail call, so that
  // its fast path needs no stack frame.
  template <class R>
  R free_and_return(void* p, int cls, R r) {
    SlabHeader* s = reinterpret_cast<SlabHeader*>(reinterpret_cast<std::uintptr_t>(p) & ~(kSlabBytes - 1));
    if (s->owner == this) [[likely]] {
      auto* b = static_cast<FreeBlock*>(p);
      b->next = free_[cls];
      free_[cls] = b;
      return r;
    }
    return defer_remote_and_return(s->owner, p, cls, r);
  }
  // Gives the blocks of other pools freed here back to their owners (before
  // a worker parks or a thread leaves the runtime).
  void flush_remote();
  // Blocks currently carved out of slabs (for tests: a leak shows as growth).
  std::size_t slab_count() const { return slabs_; }

 private:
  static constexpr int kDeferredBatch = 64;
  void* refill(int cls);
  void defer_remote(TaskPool* owner, void* p, int cls);
  void flush_deferred(int cls);
  // Another pool's thread gives back a chain of blocks (head .. tail).
  void give_back(FreeBlock* head, FreeBlock* tail, int cls);
  template <class R>
  [[gnu::noinline]] R defer_remote_and_return(TaskPool* owner, void* p, int cls, R r) {
    defer_remote(owner, p, cls);
    return r;
  }

  // Written by the owner only.
  FreeBlock* free_[2] = {nullptr, nullptr};
  char* bump_[2] = {nullptr, nullptr};      // the current slab's blocks not handed out yet
  char* bump_end_[2] = {nullptr, nullptr};
  struct Deferred {
    TaskPool* owner = nullptr;
    FreeBlock* head = nullptr;
    FreeBlock* tail = nullptr;
    int count = 0;
  };
  Deferred deferred_[2];  // blocks of another pool, freed here, not given back yet
  SlabHeader* slab_list_ = nullptr;
  std::size_t slabs_ = 0;
  // Written by other workers (remote frees); on its own cache line.
  alignas(64) std::atomic<FreeBlock*> remote_[2] = {nullptr, nullptr};
};

}  // namespace canopy::detail
