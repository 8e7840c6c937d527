// The rare parts of the one-worker inline path (inline.hpp): waiting while
// worker 0 runs a task inline, taking back what a check that failed half-way
// added, and the endings that are not the plain one (a body that threw, a
// body that left children).
#include <new>
#include <thread>

#include "canopy/detail/affine.hpp"
#include "dataflow/inline.hpp"

namespace canopy::detail::flow {

void wait_inline(Flow* f) {
  // (seq_cst: the caller's count came first; see inline.hpp.) A body may run
  // long: spin briefly, then let the worker have the CPU.
  for (unsigned k = 0; f->inline_running.load(std::memory_order_seq_cst) != 0; ++k) {
    if (k < 256)
      SpinLock::pause();
    else
      std::this_thread::yield();
  }
}

namespace {

// The State of an access that passed the check (its chunk exists).
State* state_of(Flow* f, const Access& a) {
  return f->chunks[a.data.index >> Flow::kChunkBits].load(std::memory_order_relaxed) +
         (a.data.index & (Flow::kChunk - 1));
}

void sub(std::atomic<std::uint64_t>& v, std::uint64_t x) {
  v.store(v.load(std::memory_order_relaxed) - x, std::memory_order_relaxed);
}

}  // namespace

void claim_touch_marks_inline(const Access* acc, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    // (inline_check found every handle live, and none can be freed before the body ends)
    DataEntry* e = nullptr;
    try {
      e = &data_entry(acc[i].data);
    } catch (...) {
      continue;
    }
    data_touch_claim(*e, acc[i].mode != AccessMode::Read);
  }
}

void inline_undo(Flow* f, const Access* acc, std::size_t failed_at, const std::uint64_t* local,
                 const std::uint64_t* remote, int nodes) {
  for (std::size_t i = 0; i < failed_at; ++i) {
    State* s = state_of(f, acc[i]);
    sub(s->local_bytes, local[i]);
    if (nodes != 1) sub(s->remote_bytes, remote[i]);
    sub(s->accesses, 1);
  }
  f->inline_running.store(0, std::memory_order_release);
}

// noexcept: a body that left children has given them its node (the
// thread's tls_flow.inline_node) as their owner; the node that replaces it must
// exist, so running out of memory here ends the program.
void inline_end_slow(Worker* w, Flow* f, const Access* acc, std::size_t n, int nodes, bool failed) noexcept {
  Domain* d = &f->root;
  Node* self = &tls_flow.inline_node;
  if (Domain* c = self->children) {
    if ((c->count.load(std::memory_order_acquire) & ~kWaiting) == 1) {
      // Every child has finished already: the task finishes now, as if it
      // had none (a child's exception its body did not catch fails it).
      self->children = nullptr;
      if (ErrorBox* e = c->error.exchange(nullptr, std::memory_order_acq_rel)) {
        failed = true;
        record_error(d, std::move(e->error));
        delete e;
      }
      free_child_domain(c, w);
    } else {
      // It finishes when they have, so its dependents must find it
      // registered. Nothing has registered since it started (the flag is
      // still held and the count was 1), so its States are idle and each
      // access becomes active at once. The node holds the header and the
      // records (no callable: it was destroyed after the body, as run_node
      // does); its totals were counted already, so it counts as not run
      // (run_node -1) for its release.
      const std::size_t bytes = sizeof(Node) + n * sizeof(AccessRec);
      std::int8_t cls;
      void* mem = alloc_bytes(w, bytes, &cls);
      Node* p = ::new (mem) Node(d, nullptr, Affinity{}, static_cast<std::uint32_t>(bytes), cls);
      AccessRec* recs = p->recs();
      for (std::size_t i = 0; i < n; ++i) {
        AccessRec* r = ::new (&recs[i]) AccessRec;
        State* s = state_of(f, acc[i]);
        r->state = s;
        r->entry = s->entry.load(std::memory_order_relaxed);
        r->index = acc[i].data.index;
        r->slot = static_cast<std::uint16_t>(i);
        r->mode = acc[i].mode == AccessMode::Read ? kModeRead : kModeWrite;
        r->kind = kRecTask;
        s->lock.lock();
        ++s->active;
        s->active_write = r->mode;
        s->lock.unlock();
      }
      p->naccess = static_cast<std::uint16_t>(n);
      p->failed = failed ? 1 : 0;
      p->nodes = static_cast<std::uint8_t>(nodes);
      p->children = c;
      self->children = nullptr;
      // Before the body's share of the children's count goes
      // (end_inline_parent): the last child's finisher reads the owner
      // after its own decrement.
      c->owner = p;
      d->count.fetch_add(1, std::memory_order_relaxed);
      f->inline_running.store(0, std::memory_order_release);
      end_inline_parent(p, w);
      return;
    }
  }
  if (failed) {
    // Its writes poison: later readers and writers are cancelled (the same
    // as release_general's poisoning).
    const std::uint32_t epoch = d->error_epoch.load(std::memory_order_relaxed);
    for (std::size_t i = 0; i < n; ++i) {
      if (acc[i].mode == AccessMode::Read) continue;
      State* s = state_of(f, acc[i]);
      s->lock.lock();
      s->poison = epoch;
      note_poison(d, epoch);
      s->lock.unlock();
    }
  }
  f->inline_running.store(0, std::memory_order_release);
}

}  // namespace canopy::detail::flow
