// Private to src/runtime/: the scheduler's side of bubbles (bubbles.cpp):
// building the domains' queues at start, taking a task of a bubble of the
// worker's own domains, taking a whole bubble from another domain, and the
// sleep re-check's part.
#pragma once
#include <cstdint>
#include <vector>

#include "canopy/detail/affine_queue.hpp"

namespace canopy {
class Topology;
}

namespace canopy::detail {

struct RuntimeCore;
struct Worker;

void build_bubble_domains(RuntimeCore* rt, const Topology& topo, const std::vector<int>& worker_pu);
// A task of a bubble queued on one of w's domains (smallest first).
AffineTask* take_bubble_task(Worker* w, bool* busy);
// A whole bubble from another domain (closest first), moved to w's
// smallest domain that holds its share, and one of its tasks: when the
// victim domain has two bubbles queued or more and w has been idle for
// many_ns, or one and one_ns.
AffineTask* steal_bubble(Worker* w, bool* busy, std::int64_t idle_ns, std::int64_t one_ns, std::int64_t many_ns);
// The sleep re-check: bubbles queued anywhere (seq_cst).
bool bubble_work_visible(RuntimeCore* rt, const Worker* w);

}  // namespace canopy::detail
