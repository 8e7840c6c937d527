// What the calling thread's waits without a runtime cover: each thread keeps
// a short record of the flows (runtimes' top levels) it may have unfinished
// submissions in (ThreadFlow::seen, plus the flow it used last, which the
// flow cache holds), so that wait_all() and wait(Data) also wait for tasks
// submitted to an explicit runtime, and never make the default runtime just
// to find nothing there. The record is kept off the submission's hot path:
// an entry is added only when the thread's flow cache changes runtime
// (flow_of_slow) or when a data-flow body submits to another runtime (a
// call that enters that runtime anyway). Entries whose flow is idle without
// an exception are dropped whenever the record is full or a wait ends.
#include <fmt/format.h>

#include "canopy/error.hpp"
#include "dataflow/flow.hpp"

namespace canopy::detail::flow {

void prune_seen(ThreadFlow& t) {
  int k = 0;
  for (int i = 0; i < t.nseen; ++i)
    if (!flow_clean(t.seen[i].flow)) t.seen[k++] = t.seen[i];
  t.nseen = static_cast<std::uint8_t>(k);
}

void remember_flow(ThreadFlow& t, Flow* f, Node* body) {
  const std::uint32_t seq = body ? body->seq : 0;
  for (int i = 0; i < t.nseen; ++i)
    if (t.seen[i].flow == f && t.seen[i].body == body && t.seen[i].body_seq == seq) return;
  if (t.nseen == ThreadFlow::kSeen) prune_seen(t);
  if (t.nseen == ThreadFlow::kSeen) {
    if (body)
      throw Error(fmt::format("submit: this thread has unfinished data-flow tasks in {} runtimes (at most {} at "
                              "once from inside a task): wait for some with wait_all(rt) first",
                              t.nseen, ThreadFlow::kSeen));
    t.seen_overflow = true;  // the next top-level wait covers every flow
    return;
  }
  t.seen[t.nseen++] = ThreadFlow::Seen{f, body, seq};
}

}  // namespace canopy::detail::flow
