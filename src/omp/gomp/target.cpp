// Target constructs on the host: there is no offload device, so a target
// region runs on the host (the fallback the specification describes) and
// data mapping is the identity on host memory.
#include <cstddef>

#include "../core/runtime.hpp"
#include "../core/tasks.hpp"
#include "abi.hpp"

using namespace canopy::omp;

CANOPY_GOMP void GOMP_target_ext(int device, void (*fn)(void*), size_t mapnum, void** hostaddrs, size_t* sizes,
                                 unsigned short* kinds, unsigned flags, void** depend, void** args) {
  (void)device, (void)mapnum, (void)sizes, (void)kinds, (void)args;
  if ((flags & 2 /* GOMP_TARGET_FLAG_NOWAIT */) == 0 && depend) taskwait_depend(depend);
  // The host fallback: the region's function receives the host addresses.
  Icvs saved = current_icvs();
  fn(hostaddrs);
  current_icvs() = saved;
}
CANOPY_GOMP void GOMP_target(int, void (*fn)(void*), const void*, size_t, void** hostaddrs, size_t*, unsigned char*) {
  fn(hostaddrs);
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
