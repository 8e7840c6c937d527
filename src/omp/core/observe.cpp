// The out-of-line side of observe.hpp: OpenMP threads as rows of canopy's
// traces, and the spans of constructs.
#include "observe.hpp"

#include <atomic>
#include <exception>
#include <string>

namespace canopy::omp {

namespace {

int trace_group = 0;  // set once by observe_init (make_runtime), before any thread state
std::atomic<int> next_row{0};

// Filled by the ABI layers' static initialisers (before any thread of the
// program can run OpenMP code), read-only afterwards.
struct CodeOfEntry {
  void (*wrapper)(void*);
  CodeOf code_of;
};
constexpr int kCodeOf = 8;
CodeOfEntry code_of_table[kCodeOf];
int code_of_count = 0;

}  // namespace

void observe_init() {
  try {
    trace_group = detail::trace_register_group("canopy OpenMP runtime");
  } catch (const std::exception& e) {
    fatal("%s", e.what());
  }
}

void observe_thread(ThreadState& ts, bool initial) {
  const int row = next_row.fetch_add(1, std::memory_order_relaxed);
  const std::string name = "OpenMP thread " + std::to_string(row) + (initial ? " (initial)" : "");
  try {
    detail::trace_register_thread(&ts.observe, trace_group, row, name.c_str());
  } catch (const std::exception& e) {
    fatal("trace: %s", e.what());
  }
}

void register_code_of(void (*wrapper)(void*), CodeOf code_of) {
  if (code_of_count == kCodeOf) fatal("register_code_of: more than %d wrappers", kCodeOf);
  code_of_table[code_of_count++] = {wrapper, code_of};
}

const void* code_of(void (*fn)(void*), void* data) {
  for (int i = 0; i < code_of_count; ++i)
    if (code_of_table[i].wrapper == fn) return code_of_table[i].code_of(data);
  return reinterpret_cast<const void*>(fn);
}

std::uint64_t obs_now(const ThreadState& ts) noexcept {
  return detail::trace_ring(ts.observe) ? detail::trace_clock() : 0;
}

void obs_span(ThreadState& ts, detail::TraceOmpConstruct c, std::uint64_t t0, const void* code,
              std::uint64_t b) noexcept {
  if (t0 == 0) return;
  if (detail::TraceRing* r = detail::trace_ring(ts.observe))
    detail::trace_put(r, detail::kTraceOmp, t0, detail::trace_clock(), reinterpret_cast<std::uint64_t>(code), b, 0,
                      c);
}

}  // namespace canopy::omp
