// Target constructs on the host: there is no offload device, so a target
// region runs on the host (the fallback the specification describes) and
// data mapping is the identity on host memory.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "../core/runtime.hpp"
#include "../core/tasks.hpp"
#include "abi.hpp"

using namespace canopy::omp;

CANOPY_GOMP void GOMP_target_ext(int device, void (*fn)(void*), size_t mapnum, void** hostaddrs, size_t* sizes,
                                 unsigned short* kinds, unsigned flags, void** depend, void** args) {
  (void)device, (void)flags;
  // args: NULL-terminated; an element's low 7 bits name the device (0: all),
  // bits 8-15 the kind (2: thread_limit), the value is in bits 16+ or, with
  // bit 7 set, in the next element.
  int thread_limit = 0;
  for (void** a = args; a && *a; ++a) {
    const std::uintptr_t v = reinterpret_cast<std::uintptr_t>(*a);
    std::intptr_t value;
    if (v & 0x80) value = reinterpret_cast<std::intptr_t>(*++a);
    else value = static_cast<std::intptr_t>(v) >> 16;
    if ((v & 0x7f) == 0 && ((v >> 8) & 0xff) == 2 && value > 0) thread_limit = static_cast<int>(value);
  }
  if (depend) taskwait_depend(depend);  // nowait or not: the region runs now, after its dependences
  // The host fallback: the region's function receives the host addresses,
  // except that firstprivate data (map kind GOMP_MAP_FIRSTPRIVATE, 12; the
  // upper byte of a kind is log2 of the alignment) gets a private copy.
  std::vector<void*> addrs(hostaddrs, hostaddrs + mapnum);
  std::vector<std::unique_ptr<char[]>> copies;
  for (size_t i = 0; i < mapnum; ++i) {
    if ((kinds[i] & 0xff) != 12 || !hostaddrs[i]) continue;
    const size_t align = size_t(1) << (kinds[i] >> 8);
    copies.emplace_back(new char[sizes[i] + align]);
    auto p = (reinterpret_cast<std::uintptr_t>(copies.back().get()) + align - 1) & ~(std::uintptr_t(align) - 1);
    std::memcpy(reinterpret_cast<void*>(p), hostaddrs[i], sizes[i]);
    addrs[i] = reinterpret_cast<void*>(p);
  }
  run_as_initial_task(fn, addrs.data(), thread_limit);
}
CANOPY_GOMP void GOMP_target(int, void (*fn)(void*), const void*, size_t, void** hostaddrs, size_t*, unsigned char*) {
  run_as_initial_task(fn, hostaddrs);
}
CANOPY_GOMP void GOMP_target_data_ext(int, size_t, void**, size_t*, unsigned short*) {}
CANOPY_GOMP void GOMP_target_data(int, const void*, size_t, void**, size_t*, unsigned char*) {}
CANOPY_GOMP void GOMP_target_end_data() {}
CANOPY_GOMP void GOMP_target_update_ext(int, size_t, void**, size_t*, unsigned short*, unsigned, void** depend) {
  if (depend) taskwait_depend(depend);
}
CANOPY_GOMP void GOMP_target_update(int, const void*, size_t, void**, size_t*, unsigned char*) {}
CANOPY_GOMP void GOMP_target_enter_exit_data(int, size_t, void**, size_t*, unsigned short*, unsigned, void** depend) {
  if (depend) taskwait_depend(depend);
}
CANOPY_GOMP void GOMP_offload_register_ver(unsigned, const void*, int, const void*) {}
CANOPY_GOMP void GOMP_offload_unregister_ver(unsigned, const void*, int, const void*) {}
CANOPY_GOMP void GOMP_offload_register(const void*, int, const void*) {}
CANOPY_GOMP void GOMP_offload_unregister(const void*, int, const void*) {}
