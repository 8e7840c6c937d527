// Per-thread cache of task blocks (see task_blocks.hpp).
#include "task_blocks.hpp"

#include <cstdlib>
#include <pthread.h>

#include "runtime.hpp"

namespace canopy::omp {

namespace {

constexpr std::size_t kGrain = 64;                  // block sizes are multiples of it, blocks aligned to it
constexpr std::size_t kClasses = 32;                // classes 1..32: 64 B .. 2 KiB (0: not cached)
constexpr std::size_t kCachedBytes = 256 * 1024;    // per thread

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

struct BlockCache {
  FreeBlock* lists[kClasses + 1] = {};
  std::size_t bytes = 0;
};

__attribute__((tls_model("initial-exec"))) thread_local BlockCache* tls_cache = nullptr;

void free_cache(void* p) {  // on the exiting thread
  auto* cache = static_cast<BlockCache*>(p);
  tls_cache = nullptr;  // a block freed later by this thread starts a new cache
  for (FreeBlock* head : cache->lists)
    while (head) {
      FreeBlock* next = head->next;
      std::free(head);
      head = next;
    }
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

BlockCache& this_cache() {
  BlockCache* cache = tls_cache;
  if (!cache) {
    cache = new BlockCache;
    pthread_setspecific(cache_key(), cache);
    tls_cache = cache;
  }
  return *cache;
}

}  // namespace

void* task_block_alloc(std::size_t size, std::size_t align, std::uint8_t* size_class) {
  *size_class = 0;
  if (kCache && align <= kGrain && size <= kClasses * kGrain) {
    const std::size_t cls = (size + kGrain - 1) / kGrain;
    *size_class = static_cast<std::uint8_t>(cls);
    BlockCache& cache = this_cache();
    if (FreeBlock* b = cache.lists[cls]) {
      cache.lists[cls] = b->next;
      cache.bytes -= cls * kGrain;
      return b;
    }
    size = cls * kGrain;
    align = kGrain;
  }
  size = (size + align - 1) / align * align;
  void* block = std::aligned_alloc(align, size);
  if (!block) fatal("cannot allocate a task of %zu bytes", size);
  return block;
}

void task_block_free(void* block, std::uint8_t size_class) {
  if (size_class != 0) {
    BlockCache& cache = this_cache();
    const std::size_t bytes = size_class * kGrain;
    if (cache.bytes + bytes <= kCachedBytes) {
      auto* b = static_cast<FreeBlock*>(block);
      b->next = cache.lists[size_class];
      cache.lists[size_class] = b;
      cache.bytes += bytes;
      return;
    }
  }
  std::free(block);
}

}  // namespace canopy::omp
