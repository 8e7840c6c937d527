// C API of bubbles (canopy_bubble.h) over canopy/bubble.hpp, with the guard
// of the other C entry points (capi.hpp).
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "canopy/bubble.hpp"
#include "canopy_bubble.h"
#include "capi/capi.hpp"

using namespace canopy;
using namespace canopy::capi;

struct canopy_bubble {
  Bubble b;
  explicit canopy_bubble(Bubble&& x) : b(std::move(x)) {}
};

namespace {

BubbleOptions options_from_c(const canopy_bubble_options_t* c) {
  BubbleOptions o;
  if (!c) return o;
  o.work = c->work;
  if (!(c->passes >= 0)) fail(CANOPY_EINVAL, fmt::format("passes = {}: expected 0 or more", c->passes));
  o.passes = c->passes;
  if (c->num_data > 0 && !c->data) fail(CANOPY_EINVAL, fmt::format("data is NULL with num_data = {}", c->num_data));
  for (size_t i = 0; i < c->num_data; ++i) o.data.push_back(Data{c->data[i].index, c->data[i].generation});
  return o;
}

}  // namespace

extern "C" {

canopy_status_t canopy_bubble_create(canopy_bubble_t** out, canopy_runtime_t* rt,
                                     const canopy_bubble_options_t* options) {
  return guard("canopy_bubble_create", CANOPY_EINVAL, [&] {
    need(out, "out");
    *out = nullptr;
    Runtime& r = need(rt, "rt").rt;
    *out = new canopy_bubble(Bubble(r, options_from_c(options)));
  });
}

canopy_status_t canopy_bubble_split(canopy_bubble_t* parent, const canopy_bubble_options_t* children, size_t count,
                                    canopy_bubble_t** out) {
  return guard("canopy_bubble_split", CANOPY_EINVAL, [&] {
    Bubble& p = need(parent, "parent").b;
    if (count == 0) fail(CANOPY_EINVAL, "count = 0: expected at least one child");
    if (!children) fail(CANOPY_EINVAL, "children is NULL");
    if (!out) fail(CANOPY_EINVAL, "out is NULL");
    std::vector<BubbleOptions> opts;
    for (size_t i = 0; i < count; ++i) opts.push_back(options_from_c(&children[i]));
    std::vector<Bubble> made = p.split(opts);
    std::vector<std::unique_ptr<canopy_bubble>> boxes;
    for (Bubble& b : made) boxes.push_back(std::make_unique<canopy_bubble>(std::move(b)));
    for (size_t i = 0; i < count; ++i) out[i] = boxes[i].release();
  });
}

canopy_status_t canopy_bubble_spawn(canopy_bubble_t* bubble, void (*fn)(void*), void* arg) {
  return guard("canopy_bubble_spawn", CANOPY_EINVAL, [&] {
    Bubble& b = need(bubble, "bubble").b;
    if (!fn) fail(CANOPY_EINVAL, "fn is NULL");
    b.spawn([fn, arg] { fn(arg); });
  });
}

canopy_status_t canopy_bubble_wait(canopy_bubble_t* bubble) {
  return guard("canopy_bubble_wait", CANOPY_EINVAL, [&] { need(bubble, "bubble").b.wait(); });
}

canopy_status_t canopy_bubble_workers(const canopy_bubble_t* bubble, int* out, size_t capacity, size_t* count) {
  return guard("canopy_bubble_workers", CANOPY_EINVAL,
               [&] { copy_array(need(bubble, "bubble").b.workers(), out, capacity, count); });
}

void canopy_bubble_destroy(canopy_bubble_t* bubble) { delete bubble; }

}  // extern "C"
