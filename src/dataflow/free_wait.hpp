// Between src/data/ and src/dataflow/: data_free first waits for the
// data-flow tasks of every runtime that still use the handle (or, inside a
// data-flow task, refuses to free it while they do: wait.cpp).
#pragma once
#include "canopy/data.hpp"

namespace canopy::detail::flow {

// Returns once no unfinished top-level data-flow task of any runtime lists
// d; throws canopy::Error naming the handle when called inside a task that
// lists d (or whose ancestor does), or inside a task while other tasks
// still use it. A null or stale handle: returns (data_free reports it).
void before_data_free(Data d);

}  // namespace canopy::detail::flow
