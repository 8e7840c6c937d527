// C API of data handles (canopy_data.h) over canopy/data.hpp, with the guard
// of the other C entry points (capi.hpp): no exception crosses the boundary,
// every failure has a status and a message for canopy_last_error().
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "canopy/data.hpp"
#include "canopy_data.h"
#include "capi/capi.hpp"

using namespace canopy;
using namespace canopy::capi;

namespace {

Data from_c(canopy_data_t d) { return Data{d.index, d.generation}; }
canopy_data_t to_c(Data d) { return canopy_data_t{d.index, d.generation}; }

DataPlacement placement_from_c(const canopy_data_placement_t& c) {
  // Read as an int: a C caller may store any value in the enum, and loading
  // an out-of-range enum is undefined in C++.
  int kind = 0;
  static_assert(sizeof kind == sizeof c.kind);
  std::memcpy(&kind, &c.kind, sizeof kind);
  switch (kind) {
    case CANOPY_DATA_FIRST_TOUCH: return DataPlacement::first_touch();
    case CANOPY_DATA_NODE: return DataPlacement::on_node(c.node);
    case CANOPY_DATA_INTERLEAVE: return DataPlacement::interleaved();
    case CANOPY_DATA_BLOCK_CYCLIC: return DataPlacement::block_cyclic(c.block);
  }
  fail(CANOPY_EINVAL, fmt::format("placement kind {}: expected CANOPY_DATA_FIRST_TOUCH, _NODE, _INTERLEAVE or "
                                  "_BLOCK_CYCLIC",
                                  kind));
}

}  // namespace

extern "C" {

canopy_status_t canopy_data_allocate(canopy_data_t* out, size_t bytes, const canopy_data_placement_t* placement) {
  return guard("canopy_data_allocate", CANOPY_EINVAL, [&] {
    need(out, "out") = canopy_data_t{0, 0};
    *out = to_c(data_allocate(bytes, placement ? placement_from_c(*placement) : DataPlacement{}));
  });
}

canopy_status_t canopy_data_register(canopy_data_t* out, void* ptr, size_t bytes) {
  return guard("canopy_data_register", CANOPY_EINVAL, [&] {
    need(out, "out") = canopy_data_t{0, 0};
    *out = to_c(data_register(ptr, bytes));
  });
}

canopy_status_t canopy_data_free(canopy_data_t d) {
  return guard("canopy_data_free", CANOPY_EINVAL, [&] { data_free(from_c(d)); });
}

canopy_status_t canopy_data_ptr(canopy_data_t d, void** out) {
  return guard("canopy_data_ptr", CANOPY_EINVAL, [&] { need(out, "out") = data_ptr(from_c(d)); });
}

canopy_status_t canopy_data_size(canopy_data_t d, size_t* out) {
  return guard("canopy_data_size", CANOPY_EINVAL, [&] { need(out, "out") = data_size(from_c(d)); });
}

canopy_status_t canopy_data_num_nodes(int* out) {
  return guard("canopy_data_num_nodes", CANOPY_EINVAL, [&] { need(out, "out") = data_num_nodes(); });
}

canopy_status_t canopy_data_page_size(size_t* out) {
  return guard("canopy_data_page_size", CANOPY_EINVAL, [&] { need(out, "out") = data_page_size(); });
}

canopy_status_t canopy_data_home_node(canopy_data_t d, int* out) {
  return guard("canopy_data_home_node", CANOPY_EINVAL, [&] { need(out, "out") = data_home_node(from_c(d)); });
}

canopy_status_t canopy_data_bytes_per_node(canopy_data_t d, size_t* out, size_t capacity, size_t* count) {
  return guard("canopy_data_bytes_per_node", CANOPY_EINVAL,
               [&] { copy_array(data_bytes_per_node(from_c(d)), out, capacity, count); });
}

canopy_status_t canopy_data_refresh_location(canopy_data_t d) {
  return guard("canopy_data_refresh_location", CANOPY_EINVAL, [&] { data_refresh_location(from_c(d)); });
}

canopy_status_t canopy_data_page_nodes(canopy_data_t d, int* out, size_t capacity, size_t* count) {
  return guard("canopy_data_page_nodes", CANOPY_EINVAL,
               [&] { copy_array(data_page_nodes(from_c(d)), out, capacity, count); });
}

canopy_status_t canopy_data_check_placement(canopy_data_t d, int require_touched) {
  return guard("canopy_data_check_placement", CANOPY_EINVAL,
               [&] { data_check_placement(from_c(d), require_touched != 0); });
}

canopy_status_t canopy_data_mark(canopy_data_t d, int mark) {
  return guard("canopy_data_mark", CANOPY_EINVAL, [&] {
    switch (mark) {
      case CANOPY_DATA_MARK_NONE: data_clear_touch_mark(from_c(d)); return;
      case CANOPY_DATA_MARK_NEXT_TOUCH: data_mark_next_touch(from_c(d)); return;
      case CANOPY_DATA_MARK_NEXT_WRITE: data_mark_next_write(from_c(d)); return;
    }
    fail(CANOPY_EINVAL, fmt::format("mark {}: expected CANOPY_DATA_MARK_NONE, _NEXT_TOUCH or _NEXT_WRITE", mark));
  });
}

canopy_status_t canopy_data_touch_mark(canopy_data_t d, int* out) {
  return guard("canopy_data_touch_mark", CANOPY_EINVAL,
               [&] { need(out, "out") = static_cast<int>(data_touch_mark(from_c(d))); });
}

}  // extern "C"
