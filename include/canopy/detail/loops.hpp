// parallel_for and parallel_reduce (declared in canopy/runtime.hpp): ranges
// split in halves with canopy::invoke, the right half queued, the left half
// run at once, so a thief always takes the largest piece left (the top of a
// deque).
//  - grain 0 (adaptive): a loop starts with about 2 pieces per worker, and a
//    piece that was stolen splits once more (stealing is the sign that the
//    load is uneven), as oneTBB's auto_partitioner does;
//  - grain > 0: split down to chunks of `grain`, always the same way;
//  - affinity: fixed chunks; a piece whose first chunk ran on worker k last
//    time is mailed to k (and still queued here, so nothing waits on k).
#pragma once
#include <algorithm>
#include <optional>

#include "canopy/error.hpp"

namespace canopy::detail {

int num_workers(const RuntimeCore* rt);
// The slot `index` of the runtime `w` belongs to, when it can take mail
// (held by a thread, not w itself); else nullptr.
Worker* mail_target(Worker* w, int index);
[[noreturn]] void throw_bad_grain(std::int64_t grain);

inline RuntimeCore* current_core() {
  Worker* w = tls_worker;
  return w ? w->rt : default_core();
}

inline int ceil_log2(int x) {
  int d = 0;
  while ((1 << d) < x) ++d;
  return d;
}

template <class F>
void pfor_adaptive(std::int64_t lo, std::int64_t hi, int depth, Worker* parent, const F& body) {
  Worker* w = tls_worker;
  if (w != parent) ++depth;  // stolen
  if (hi - lo > 1 && depth > 0) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    invoke([=, &body] { pfor_adaptive(mid, hi, depth - 1, w, body); },
           [=, &body] { pfor_adaptive(lo, mid, depth - 1, w, body); });
  } else {
    body(lo, hi);
  }
}

template <class F>
void pfor_grain(std::int64_t lo, std::int64_t hi, std::int64_t grain, const F& body) {
  if (hi - lo > grain) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    invoke([=, &body] { pfor_grain(mid, hi, grain, body); }, [=, &body] { pfor_grain(lo, mid, grain, body); });
  } else {
    body(lo, hi);
  }
}

struct AffinityLoop {
  std::int64_t begin, end, grain;
  std::int16_t* last;
};

template <class F>
void pfor_affinity(std::int64_t c0, std::int64_t c1, const AffinityLoop& loop, const F& body) {
  Worker* w = tls_worker;
  TaskGroup g;
  while (c1 - c0 > 1) {
    const std::int64_t cm = c0 + (c1 - c0) / 2;
    auto piece = [cm, c1, &loop, &body] { pfor_affinity(cm, c1, loop, body); };
    const int target = loop.last[cm];
    if (target >= 0 && target != w->index)
      g.spawn_hinted(target, piece);
    else
      g.spawn(piece);
    c1 = cm;
  }
  // Chunks never run concurrently with a read of their own entry: a piece
  // reads last[cm] before spawning the piece that holds chunk cm.
  loop.last[c0] = static_cast<std::int16_t>(w->index);
  const std::int64_t lo = loop.begin + c0 * loop.grain;
  body(lo, std::min(loop.end, lo + loop.grain));
  g.wait();
}

template <class T, class F, class R>
T preduce(std::int64_t lo, std::int64_t hi, std::int64_t grain, const T& identity, const F& f, const R& reduce) {
  if (hi - lo <= grain) return f(lo, hi, identity);
  const std::int64_t mid = lo + (hi - lo) / 2;
  std::optional<T> left, right;
  invoke([&] { right.emplace(preduce(mid, hi, grain, identity, f, reduce)); },
         [&] { left.emplace(preduce(lo, mid, grain, identity, f, reduce)); });
  return reduce(std::move(*left), std::move(*right));
}

// The grain a loop uses when the caller gave 0 and the split must be fixed:
// about 4 chunks per worker.
inline std::int64_t fixed_grain(std::int64_t n, int workers) {
  const std::int64_t chunks = 4 * static_cast<std::int64_t>(workers);
  return std::max<std::int64_t>(1, (n + chunks - 1) / chunks);
}

}  // namespace canopy::detail

namespace canopy {

template <class F>
void TaskGroup::spawn_hinted(int target, F&& f) {
  detail::Worker* w = detail::tls_worker;
  detail::Worker* to = (w == g_.owner) ? detail::mail_target(w, target) : nullptr;
  if (!to) {
    spawn(std::forward<F>(f));
    return;
  }
  detail::ProxyHeader* p = detail::spawn_proxy(w, &g_, std::forward<F>(f));
  ++g_.pending;
  detail::post_to_mailbox(to, p);
}

template <class F>
void parallel_for(Range r, F&& body) {
  if (r.grain < 0) detail::throw_bad_grain(r.grain);
  if (r.end <= r.begin) return;
  detail::RuntimeScope scope(detail::current_core());
  if (r.grain == 0) {
    const int depth = detail::ceil_log2(detail::num_workers(scope.worker()->rt)) + 1;
    detail::pfor_adaptive(r.begin, r.end, depth, scope.worker(), body);
  } else {
    detail::pfor_grain(r.begin, r.end, r.grain, body);
  }
}

template <class F>
void parallel_for(std::int64_t begin, std::int64_t end, F&& body) {
  parallel_for(Range{begin, end, 0}, [&body](std::int64_t lo, std::int64_t hi) {
    for (std::int64_t i = lo; i < hi; ++i) body(i);
  });
}

template <class F>
void parallel_for(Range r, F&& body, AffinityPartitioner& ap) {
  if (r.grain < 0) detail::throw_bad_grain(r.grain);
  if (r.end <= r.begin) return;
  detail::RuntimeScope scope(detail::current_core());
  detail::RuntimeCore* rt = scope.worker()->rt;
  const std::int64_t n = r.end - r.begin;
  std::int64_t grain = r.grain > 0 ? r.grain : detail::fixed_grain(n, detail::num_workers(rt));
  grain = std::max(grain, (n + 65535) / 65536);  // at most 65536 chunks to remember
  const std::int64_t chunks = (n + grain - 1) / grain;
  if (ap.begin_ != r.begin || ap.end_ != r.end || ap.grain_ != grain || ap.runtime_ != rt ||
      ap.num_chunks() != chunks) {
    ap.last_.assign(static_cast<std::size_t>(chunks), -1);
    ap.begin_ = r.begin;
    ap.end_ = r.end;
    ap.grain_ = grain;
    ap.runtime_ = rt;
  }
  const detail::AffinityLoop loop{r.begin, r.end, grain, ap.last_.data()};
  detail::pfor_affinity(0, chunks, loop, body);
}

template <class T, class F, class R>
T parallel_reduce(Range r, T identity, F&& f, R&& reduce) {
  if (r.grain < 0) detail::throw_bad_grain(r.grain);
  if (r.end <= r.begin) return identity;
  detail::RuntimeScope scope(detail::current_core());
  const std::int64_t grain =
      r.grain > 0 ? r.grain : detail::fixed_grain(r.end - r.begin, detail::num_workers(scope.worker()->rt));
  return detail::preduce(r.begin, r.end, grain, identity, f, reduce);
}

}  // namespace canopy
