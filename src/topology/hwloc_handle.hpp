// The hwloc topology behind a canopy::Topology (private to src/). Kept alive
// so that restrict(), XML export and thread binding can use it.
#pragma once
#include <hwloc.h>

#include "canopy/topology.hpp"

namespace canopy {

// Hidden in libcanopy.so although nested in the exported Topology: users
// only ever hold it through Topology's shared_ptr, never by name. GCC builds
// the shipped library (tests/install checks the exports); clang refuses a
// visibility that differs from the forward declaration's, so its builds
// (the fuzz targets) leave it default.
#if defined(__clang__)
#define CANOPY_HWLOC_HANDLE_VISIBILITY
#else
#define CANOPY_HWLOC_HANDLE_VISIBILITY __attribute__((visibility("hidden")))
#endif
struct CANOPY_HWLOC_HANDLE_VISIBILITY Topology::Hwloc {
  hwloc_topology_t topo = nullptr;
  explicit Hwloc(hwloc_topology_t t) : topo(t) {}
  ~Hwloc() {
    if (topo) hwloc_topology_destroy(topo);
  }
  Hwloc(const Hwloc&) = delete;
  Hwloc& operator=(const Hwloc&) = delete;
};

}  // namespace canopy
