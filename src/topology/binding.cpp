// Thread binding through hwloc (see canopy/binding.hpp). The hwloc topology
// used for binding is loaded lazily, once per process, and never changes
// afterwards: hwloc's binding calls only read it, so threads may bind
// concurrently without a lock.
#include "canopy/binding.hpp"

#include <fmt/format.h>
#include <hwloc.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "canopy/error.hpp"
#include "canopy/topology.hpp"

namespace canopy {

namespace {

struct BitmapDeleter {
  void operator()(hwloc_bitmap_s* b) const { hwloc_bitmap_free(b); }
};
using Bitmap = std::unique_ptr<hwloc_bitmap_s, BitmapDeleter>;

Bitmap new_bitmap() {
  Bitmap b(hwloc_bitmap_alloc());
  if (!b) throw std::bad_alloc();
  return b;
}

// The whole machine as hwloc sees it (not restricted: a thread may be bound
// to any CPU the OS lets it use, including ones outside the binding the
// process started with).
class BindingTopology {
 public:
  BindingTopology() {
    if (hwloc_topology_init(&topo_) != 0) throw Error("hwloc: cannot initialise a topology", ErrorKind::System);
    hwloc_topology_set_io_types_filter(topo_, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo_) != 0) {
      hwloc_topology_destroy(topo_);
      throw Error("hwloc: cannot load this machine's topology", ErrorKind::System);
    }
  }
  ~BindingTopology() { hwloc_topology_destroy(topo_); }
  BindingTopology(const BindingTopology&) = delete;
  BindingTopology& operator=(const BindingTopology&) = delete;
  hwloc_topology_t get() const { return topo_; }

 private:
  hwloc_topology_t topo_ = nullptr;
};

const BindingTopology& binding_topology() {
  // A function-local static: initialised once, thread-safely; a failed load
  // throws and is retried by the next call.
  static const BindingTopology t;
  return t;
}

std::string list_string(hwloc_const_bitmap_t set) {
  char* s = nullptr;
  if (hwloc_bitmap_list_asprintf(&s, set) < 0 || !s) return "?";
  std::string r = s;
  std::free(s);
  return r;
}

std::vector<int> to_vector(hwloc_const_bitmap_t set) {
  std::vector<int> r;
  for (int i = hwloc_bitmap_first(set); i >= 0; i = hwloc_bitmap_next(set, i)) r.push_back(i);
  return r;
}

}  // namespace

void bind_current_thread(const std::vector<int>& os_indexes) {
  if (os_indexes.empty()) throw Error("cannot bind a thread to an empty set of CPUs");
  hwloc_topology_t t = binding_topology().get();
  hwloc_const_cpuset_t complete = hwloc_topology_get_complete_cpuset(t);
  Bitmap set = new_bitmap();
  for (int os : os_indexes) {
    if (os < 0 || !hwloc_bitmap_isset(complete, static_cast<unsigned>(os)))
      throw Error(fmt::format("cannot bind a thread to CPU {}: this machine has CPUs {}", os, list_string(complete)));
    hwloc_bitmap_set(set.get(), static_cast<unsigned>(os));
  }
  // STRICT: fail rather than let hwloc silently bind to something else.
  if (hwloc_set_cpubind(t, set.get(), HWLOC_CPUBIND_THREAD | HWLOC_CPUBIND_STRICT) != 0) {
    int err = errno;
    throw Error(fmt::format("cannot bind the thread to CPUs {}: {}", list_string(set.get()), std::strerror(err)),
                ErrorKind::System);
  }
}

std::vector<int> current_thread_binding() {
  Bitmap set = new_bitmap();
  if (hwloc_get_cpubind(binding_topology().get(), set.get(), HWLOC_CPUBIND_THREAD) != 0) {
    int err = errno;
    throw Error(fmt::format("cannot read the thread's CPU binding: {}", std::strerror(err)), ErrorKind::System);
  }
  return to_vector(set.get());
}

int current_cpu() {
  Bitmap set = new_bitmap();
  if (hwloc_get_last_cpu_location(binding_topology().get(), set.get(), HWLOC_CPUBIND_THREAD) != 0) return -1;
  return hwloc_bitmap_first(set.get());
}

const Topology& process_topology() {
  static const Topology t = Topology::this_machine();
  return t;
}

}  // namespace canopy
