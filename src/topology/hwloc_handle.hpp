// The hwloc topology behind a canopy::Topology (private to src/). Kept alive
// so that restrict(), XML export and thread binding can use it.
#pragma once
#include <hwloc.h>

#include "canopy/topology.hpp"

namespace canopy {

// Hidden in libcanopy.so although nested in the exported Topology: users
// only ever hold it through Topology's shared_ptr, never by name.
struct __attribute__((visibility("hidden"))) Topology::Hwloc {
  hwloc_topology_t topo = nullptr;
  explicit Hwloc(hwloc_topology_t t) : topo(t) {}
  ~Hwloc() {
    if (topo) hwloc_topology_destroy(topo);
  }
  Hwloc(const Hwloc&) = delete;
  Hwloc& operator=(const Hwloc&) = delete;
};

}  // namespace canopy
