// Private to src/data/: the process-wide registry of data handles. Slots
// live in chunks allocated on demand and never moved or freed (until exit),
// so a lookup is two loads and a compare, with no lock; adding and removing
// handles takes one mutex.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "canopy/data.hpp"

namespace canopy::data_impl {

// What a new handle is filled with before it is published.
struct NewEntry {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  DataPlacement placement{};
  bool owned = false;
  std::size_t alloc_bytes = 0;
  std::vector<std::size_t> node_bytes;  // last known location
};

Data registry_add(const NewEntry& e);
// Unpublishes the handle and returns what its slot held (so that the caller
// frees owned memory outside the lock). Throws for a stale or null handle.
NewEntry registry_remove(Data d);
// Stores a new last known location (and home node) for a live handle.
void registry_set_location(Data d, const std::vector<std::size_t>& node_bytes);

// The node with the most bytes, -1 when every count is 0; ties go to the
// lowest node.
int home_node_of(const std::vector<std::size_t>& node_bytes);

}  // namespace canopy::data_impl
