// The notifier's slow paths (see notifier.hpp for the protocol and why it
// loses no wake-up): registration under a mutex, futex sleep and wake, and
// the membarrier-based heavy barrier.
#include "runtime/notifier.hpp"

#include <linux/futex.h>
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace canopy::detail {

namespace {

long membarrier(int cmd) { return syscall(SYS_membarrier, cmd, 0, 0); }

void futex_wait(std::atomic<std::uint32_t>* word, std::uint32_t expected) {
  // Returns on a wake, a spurious wake-up, or EAGAIN when *word != expected.
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace

#if defined(__SANITIZE_THREAD__)
#define CANOPY_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CANOPY_TSAN 1
#endif
#endif

void full_fence() noexcept {
#ifdef CANOPY_TSAN
  static std::atomic<int> dummy{0};
  dummy.fetch_add(0, std::memory_order_seq_cst);
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

bool heavy_barrier_available() {
  static const bool ok = [] {
    const long cmds = membarrier(MEMBARRIER_CMD_QUERY);
    if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return false;
    return membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
  }();
  return ok;
}

std::atomic<bool> force_fence_mode{false};

Notifier::Notifier()
    : fence_mode_(force_fence_mode.load(std::memory_order_relaxed) || !heavy_barrier_available()) {
  if (fence_mode_) hint_.store(kFenceMode, std::memory_order_relaxed);
}

void Notifier::set_workers(std::vector<Worker*> workers, std::vector<std::vector<std::uint8_t>> distance) {
  std::lock_guard<std::mutex> lock(mutex_);
  workers_ = std::move(workers);
  distance_ = std::move(distance);
  set_flags_locked(fence_mode_ ? 1 : 0);
}

void Notifier::set_flags_locked(std::uint32_t value) {
  for (Worker* w : workers_) w->sleepers.store(value, std::memory_order_relaxed);
}

void Notifier::heavy_barrier() const {
  if (!fence_mode_ && heavy_barrier_available()) {
    membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
  } else {
    full_fence();
  }
}

std::uint32_t Notifier::prepare_wait(Worker* w) {
  std::uint32_t epoch;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (w->wait_pos < 0) {
      w->wait_pos = static_cast<int>(waiters_.size());
      waiters_.push_back(w);
      hint_.fetch_add(1, std::memory_order_seq_cst);
      // seq_cst: pairs with a pusher's queue CAS then load of this count.
      if (w->node_sleepers) w->node_sleepers->fetch_add(1, std::memory_order_seq_cst);
      if (waiters_.size() == 1 && !fence_mode_) set_flags_locked(1);
    }
    // seq_cst: pairs with the seq_cst RMW of a completing thief or a mail
    // poster that then loads `parked` (both sides are RMW + load).
    w->parked.exchange(1, std::memory_order_seq_cst);
    epoch = w->epoch.load(std::memory_order_acquire);
  }
  heavy_barrier();
  return epoch;
}

void Notifier::remove_locked(Worker* w) {
  if (w->wait_pos < 0) return;
  Worker* last = waiters_.back();
  waiters_[w->wait_pos] = last;
  last->wait_pos = w->wait_pos;
  waiters_.pop_back();
  w->wait_pos = -1;
  hint_.fetch_sub(1, std::memory_order_relaxed);
  if (w->node_sleepers) w->node_sleepers->fetch_sub(1, std::memory_order_relaxed);
  if (waiters_.empty() && !fence_mode_) set_flags_locked(0);
  w->parked.store(0, std::memory_order_relaxed);
}

void Notifier::cancel_wait(Worker* w) {
  std::lock_guard<std::mutex> lock(mutex_);
  remove_locked(w);
}

void Notifier::commit_wait(Worker* w, std::uint32_t epoch) {
  while (w->epoch.load(std::memory_order_acquire) == epoch) futex_wait(&w->epoch, epoch);
  cancel_wait(w);
}

bool Notifier::notify_one(const Worker* near) {
  Worker* w = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (waiters_.empty()) return false;
    w = waiters_.back();  // the latest to park: its caches are the warmest
    if (near && !distance_.empty()) {
      for (Worker* c : waiters_)
        if (distance_[near->index][c->index] < distance_[near->index][w->index]) w = c;
    }
    remove_locked(w);
    w->epoch.fetch_add(1, std::memory_order_release);
  }
  futex_wake(&w->epoch);
  return true;
}

void Notifier::notify_all() {
  std::vector<Worker*> woken;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    woken = waiters_;
    for (Worker* w : woken) {
      remove_locked(w);
      w->epoch.fetch_add(1, std::memory_order_release);
    }
  }
  for (Worker* w : woken) futex_wake(&w->epoch);
}

bool Notifier::wake_one_on_node(int node) {
  Worker* w = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (Worker* c : waiters_)
      if (c->numa_node == node) {
        w = c;
        break;
      }
    if (!w) return false;
    remove_locked(w);
    w->epoch.fetch_add(1, std::memory_order_release);
  }
  futex_wake(&w->epoch);
  return true;
}

void Notifier::wake(Worker* w) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    remove_locked(w);
    w->epoch.fetch_add(1, std::memory_order_release);
  }
  futex_wake(&w->epoch);
}

}  // namespace canopy::detail
