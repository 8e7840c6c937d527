// taskgroup and task reductions of the libomp ABI. A taskgroup's
// task_reduction (and a taskloop's reduction) registers its items with
// __kmpc_taskred_init: each gets one private copy per thread of the team,
// initialised by the compiler's routine; __kmpc_task_reduction_get_th_data
// maps an item (or any thread's copy of it) to the calling thread's copy;
// the end of the taskgroup combines the copies into the item. With the
// task modifier (reduction(task, ...) on parallel or a work share) every
// thread of the team registers its own private variable as the item, the
// first one allocates the copies and the others share them; the last thread
// to end combines them into its own item, which the ordinary reduction then
// combines with the others'.
#include <algorithm>
#include <cstdlib>
#include <type_traits>
#include <cstring>
#include <vector>

#include "../core/futex.hpp"
#include "../core/runtime.hpp"
#include "../core/tasks.hpp"
#include "abi.hpp"

using namespace canopy::omp;
using namespace canopy::omp::kmp;

namespace {

// The compiler's item descriptions: the old one (initialiser without omp_orig) and the new one.
struct kmp_task_red_input_t {
  void* reduce_shar;
  std::size_t reduce_size;
  void* reduce_init;
  void* reduce_fini;
  void* reduce_comb;
  kmp_uint32 flags;
};
struct kmp_taskred_input_t {
  void* reduce_shar;
  void* reduce_orig;
  std::size_t reduce_size;
  void* reduce_init;
  void* reduce_fini;
  void* reduce_comb;
  kmp_uint32 flags;
};

struct Item {
  void* shar;
  std::size_t size;  // one copy, rounded up to a cache line (no false sharing between threads)
  char* priv;        // nthreads copies
  char* pend;
  void (*comb)(void*, void*);
  void (*fini)(void*);
};

struct Reductions {
  std::vector<Item> items;
  int modifier = -1;  // with the task modifier: 0 parallel, 1 work share (the copies are the team's)
};

Item make_item(void* shar, std::size_t size, void* fini, void* comb, int nth) {
  Item it{shar, (std::max<std::size_t>(size, 1) + 63) / 64 * 64, nullptr, nullptr,
          reinterpret_cast<void (*)(void*, void*)>(comb), reinterpret_cast<void (*)(void*)>(fini)};
  if (!it.comb) fatal("task reduction: an item without a combiner");
  it.priv = static_cast<char*>(std::aligned_alloc(64, it.size * nth));
  if (!it.priv) fatal("task reduction: cannot allocate %zu bytes of private copies", it.size * nth);
  std::memset(it.priv, 0, it.size * nth);
  it.pend = it.priv + it.size * nth;
  return it;
}

template <class In>
Reductions* new_reductions(int num, const In* data, int nth) {
  auto* r = new Reductions;
  for (int i = 0; i < num; ++i) {
    const In& d = data[i];
    Item it = make_item(d.reduce_shar, d.reduce_size, d.reduce_fini, d.reduce_comb, nth);
    if (d.reduce_init) {
      for (int j = 0; j < nth; ++j) {
        if constexpr (std::is_same_v<In, kmp_taskred_input_t>)
          reinterpret_cast<void (*)(void*, void*)>(d.reduce_init)(it.priv + j * it.size,
                                                                   d.reduce_orig ? d.reduce_orig : d.reduce_shar);
        else
          reinterpret_cast<void (*)(void*)>(d.reduce_init)(it.priv + j * it.size);
      }
    }
    r->items.push_back(it);
  }
  return r;
}

template <class In>
void* taskred_init(int num, const In* data) {
  ThreadState& ts = this_thread();
  TaskGroup* g = ts.task->group;
  if (!g) fatal("task reduction registered outside a taskgroup (__kmpc_taskred_init)");
  if (ts.team->nthreads > 1 && num > 0) g->kmp_reductions = new_reductions(num, data, ts.team->nthreads);
  return g;
}

void combine_and_free(Reductions& r, int nth) {
  for (Item& it : r.items) {
    for (int j = 0; j < nth; ++j) {
      it.comb(it.shar, it.priv + j * it.size);
      if (it.fini) it.fini(it.priv + j * it.size);
    }
    std::free(it.priv);
  }
}

template <class In>
void* modifier_init(int is_ws, int num, const In* data) {
  taskgroup_start();
  ThreadState& ts = this_thread();
  Team& team = *ts.team;
  TaskGroup* g = ts.task->group;
  const int nth = team.nthreads;
  if (nth == 1 || num <= 0) return g;
  const int k = is_ws ? 1 : 0;
  void* expected = nullptr;
  void* const kBusy = reinterpret_cast<void*>(1);
  Reductions* mine;
  if (team.kmp_task_red[k].compare_exchange_strong(expected, kBusy, std::memory_order_acq_rel)) {
    mine = new_reductions(num, data, nth);
    team.kmp_task_red[k].store(new Reductions(*mine), std::memory_order_release);
  } else {
    void* shared;
    while ((shared = team.kmp_task_red[k].load(std::memory_order_acquire)) == kBusy || !shared) cpu_relax();
    mine = new Reductions(*static_cast<Reductions*>(shared));
    for (int i = 0; i < num; ++i) mine->items[i].shar = data[i].reduce_shar;  // its own private variable
  }
  mine->modifier = k;
  g->kmp_reductions = mine;
  return g;
}

}  // namespace

CANOPY_KMP void __kmpc_taskgroup(ident_t*, kmp_int32) { taskgroup_start(); }

CANOPY_KMP void __kmpc_end_taskgroup(ident_t*, kmp_int32) {
  ThreadState& ts = this_thread();
  TaskGroup* g = ts.task->group;
  auto* r = g ? static_cast<Reductions*>(g->kmp_reductions) : nullptr;
  taskgroup_end();  // every task of the group is complete: no copy is in use
  if (!r) return;
  Team& team = *ts.team;
  const int nth = team.nthreads;
  if (r->modifier < 0) {
    combine_and_free(*r, nth);
  } else if (team.kmp_task_red_done[r->modifier].fetch_add(1, std::memory_order_acq_rel) == nth - 1) {
    // The last thread: combine into its own item, free the team's copies.
    const int k = r->modifier;
    combine_and_free(*r, nth);
    delete static_cast<Reductions*>(team.kmp_task_red[k].load(std::memory_order_acquire));
    team.kmp_task_red_done[k].store(0, std::memory_order_relaxed);
    team.kmp_task_red[k].store(nullptr, std::memory_order_release);
  }
  delete r;
}

CANOPY_KMP void* __kmpc_taskred_init(int, int num, void* data) {
  return taskred_init(num, static_cast<const kmp_taskred_input_t*>(data));
}
CANOPY_KMP void* __kmpc_task_reduction_init(int, int num, void* data) {
  return taskred_init(num, static_cast<const kmp_task_red_input_t*>(data));
}
CANOPY_KMP void* __kmpc_taskred_modifier_init(ident_t*, int, int is_ws, int num, void* data) {
  return modifier_init(is_ws, num, static_cast<const kmp_taskred_input_t*>(data));
}
CANOPY_KMP void* __kmpc_task_reduction_modifier_init(ident_t*, int, int is_ws, int num, void* data) {
  return modifier_init(is_ws, num, static_cast<const kmp_task_red_input_t*>(data));
}
CANOPY_KMP void __kmpc_task_reduction_modifier_fini(ident_t* loc, int gtid, int) { __kmpc_end_taskgroup(loc, gtid); }

// The calling thread's copy of `data`: an item of the given taskgroup (or
// the current task's) or of an enclosing one, or some thread's copy of it.
CANOPY_KMP void* __kmpc_task_reduction_get_th_data(int, void* tskgrp, void* data) {
  ThreadState& ts = this_thread();
  if (ts.team->nthreads == 1) return data;
  for (auto* g = tskgrp ? static_cast<TaskGroup*>(tskgrp) : ts.task->group; g; g = g->outer) {
    auto* r = static_cast<Reductions*>(g->kmp_reductions);
    if (!r) continue;
    for (Item& it : r->items)
      if (data == it.shar || (data >= static_cast<void*>(it.priv) && data < static_cast<void*>(it.pend)))
        return it.priv + static_cast<std::size_t>(ts.num) * it.size;
  }
  fatal("in_reduction: no task reduction in the enclosing taskgroups matches the item at %p", data);
}
