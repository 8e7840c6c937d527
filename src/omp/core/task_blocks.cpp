// Per-thread cache of task blocks (see task_blocks.hpp).
#include "task_blocks.hpp"

#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <vector>

#include "runtime.hpp"

namespace canopy::omp {

namespace {

constexpr std::size_t kGrain = 64;                  // block sizes are multiples of it, blocks aligned to it
constexpr std::size_t kClasses = 32;                // classes 1..32: 64 B .. 2 KiB (0: not cached)
constexpr std::size_t kCachedBytes = 256 * 1024;    // per thread
constexpr std::size_t kDepotBytes = 8 * 1024 * 1024;  // in the depot, all threads together

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCache = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kCache = false;
#else
constexpr bool kCache = true;
#endif
#else
constexpr bool kCache = true;
#endif

struct FreeBlock {
  FreeBlock* next;
};

struct alignas(64) BlockCache {  // a line of its own: each thread writes its cache at every task
  FreeBlock* lists[kClasses + 1] = {};
  std::size_t counts[kClasses + 1] = {};  // blocks in each list
  std::size_t bytes = 0;
};

// The depot: whole lists of blocks that a thread freed beyond its cache,
// for a thread whose list of that class is empty. When one thread creates
// the tasks and another finishes them (a producer and a consumer), the
// blocks come back to the producer a list at a time, one lock per list,
// instead of one malloc and one free per task through glibc's arena.
struct Batch {
  FreeBlock* head;
  std::size_t count;
};
struct Depot {
  std::mutex m;
  std::vector<Batch> batches[kClasses + 1];
  std::size_t bytes = 0;
};
Depot& depot() {
  static Depot* d = new Depot;  // never destroyed: threads may free blocks during exit
  return *d;
}

void free_list(FreeBlock* head) {
  while (head) {
    FreeBlock* next = head->next;
    std::free(head);
    head = next;
  }
}

// Moves the cache's whole list of class `cls` to the depot (or frees it
// when the depot is full). Out of line, as refill and free_when_full: the
// hot paths stay leaf functions.
[[gnu::noinline]] void spill(BlockCache& cache, std::size_t cls) {
  const Batch b{cache.lists[cls], cache.counts[cls]};
  const std::size_t bytes = b.count * cls * kGrain;
  cache.lists[cls] = nullptr;
  cache.counts[cls] = 0;
  cache.bytes -= bytes;
  Depot& d = depot();
  {
    std::lock_guard<std::mutex> lock(d.m);
    if (d.bytes + bytes <= kDepotBytes) {
      d.batches[cls].push_back(b);
      d.bytes += bytes;
      return;
    }
  }
  free_list(b.head);
}

// Takes a list of class `cls` from the depot into the (empty) cache list.
[[gnu::noinline]] bool refill(BlockCache& cache, std::size_t cls) {
  Depot& d = depot();
  std::lock_guard<std::mutex> lock(d.m);
  if (d.batches[cls].empty()) return false;
  const Batch b = d.batches[cls].back();
  d.batches[cls].pop_back();
  const std::size_t bytes = b.count * cls * kGrain;
  d.bytes -= bytes;
  cache.lists[cls] = b.head;
  cache.counts[cls] = b.count;
  cache.bytes += bytes;
  return true;
}

__attribute__((tls_model("initial-exec"))) thread_local BlockCache* tls_cache = nullptr;

void free_cache(void* p) {  // on the exiting thread
  auto* cache = static_cast<BlockCache*>(p);
  tls_cache = nullptr;  // a block freed later by this thread starts a new cache
  for (FreeBlock* head : cache->lists) free_list(head);
  delete cache;
}

// The key whose destructor frees a thread's cache when the thread exits.
pthread_key_t cache_key() {
  static const pthread_key_t key = [] {
    pthread_key_t k;
    if (pthread_key_create(&k, free_cache) != 0) fatal("task blocks: cannot create a thread key");
    return k;
  }();
  return key;
}

[[gnu::noinline]] BlockCache* new_cache() {
  auto* cache = new BlockCache;
  pthread_setspecific(cache_key(), cache);
  tls_cache = cache;
  return cache;
}

BlockCache& this_cache() {
  BlockCache* cache = tls_cache;
  if (!cache) [[unlikely]] cache = new_cache();
  return *cache;
}

}  // namespace

void* task_block_alloc(std::size_t size, std::size_t align, std::uint8_t* size_class) {
  *size_class = 0;
  if (kCache && align <= kGrain && size <= kClasses * kGrain) {
    const std::size_t cls = (size + kGrain - 1) / kGrain;
    *size_class = static_cast<std::uint8_t>(cls);
    BlockCache& cache = this_cache();
    if (cache.lists[cls] || refill(cache, cls)) {
      FreeBlock* b = cache.lists[cls];
      cache.lists[cls] = b->next;
      --cache.counts[cls];
      cache.bytes -= cls * kGrain;
      return b;
    }
    size = cls * kGrain;
    align = kGrain;
  }
  size = (size + align - 1) & ~(align - 1);  // align: a power of two
  void* block = std::aligned_alloc(align, size);
  if (!block) fatal("cannot allocate a task of %zu bytes", size);
  return block;
}

namespace {

// The cache is full: this class's list goes to the depot if it is long
// enough to be worth a lock, and the block starts a new list (else the
// block goes back to the C allocator).
[[gnu::noinline]] void free_when_full(BlockCache& cache, void* block, std::size_t cls) {
  const std::size_t bytes = cls * kGrain;
  if (cache.counts[cls] * bytes < kCachedBytes / 4) {
    std::free(block);
    return;
  }
  spill(cache, cls);
  auto* b = static_cast<FreeBlock*>(block);
  b->next = nullptr;
  cache.lists[cls] = b;
  cache.counts[cls] = 1;
  cache.bytes += bytes;
}

}  // namespace

void task_block_free(void* block, std::uint8_t size_class) {
  if (size_class != 0) {
    BlockCache& cache = this_cache();
    const std::size_t bytes = size_class * kGrain;
    if (cache.bytes + bytes > kCachedBytes) [[unlikely]] {
      free_when_full(cache, block, size_class);
      return;
    }
    auto* b = static_cast<FreeBlock*>(block);
    b->next = cache.lists[size_class];
    cache.lists[size_class] = b;
    ++cache.counts[size_class];
    cache.bytes += bytes;
    return;
  }
  std::free(block);
}

}  // namespace canopy::omp
