// The loop work share set-up shared by loop.cpp and loop_ull.cpp (see loop_common.hpp).
#include "loop_common.hpp"

namespace canopy::omp {

LoopSpec loop_spec(std::uint64_t count, int kind, std::uint64_t chunk, bool ordered, std::uint64_t base,
                   std::uint64_t step) {
  if (kind == 0) runtime_schedule(kind, chunk);
  LoopSpec s;
  s.count = count;
  s.kind = kind == 4 ? 1 : kind;
  s.chunk = chunk;
  s.ordered = ordered;
  s.base = base;
  s.step = step;
  return s;
}

void loop_begin(LoopSpec spec, std::uintptr_t* reductions, void** mem) {
  spec.reductions = reductions;
  if (mem) spec.mem_size = reinterpret_cast<std::uintptr_t>(*mem);
  loop_enter(spec);
  if (mem) *mem = loop_mem();
}

void doacross_begin(const std::vector<std::uint64_t>& dims, int kind, std::uint64_t chunk,
                    std::uintptr_t* reductions, void** mem) {
  LoopSpec spec = loop_spec(dims[0], kind, chunk, false);
  spec.ndims = static_cast<unsigned>(dims.size());
  spec.dims = dims.data();  // the first thread to enter copies them into the work share
  loop_begin(spec, reductions, mem);
}

}  // namespace canopy::omp
