// Affinity hints: where one task should run — a worker, a NUMA node of the
// runtime, or the node holding a data handle — either strict (it runs
// there, every time; nobody else takes it) or loose (preferred; idle
// workers elsewhere may take it when they find no other work). The
// semantics of the OpenMP `affinity` clause proposed by libKOMP, which
// LLVM's runtime parses and drops.
//
//   canopy::TaskGroup g;
//   g.spawn(canopy::Affinity::worker(3, /*strict=*/true), [&] { ... });  // only on worker 3
//   g.spawn(canopy::Affinity::node(1), [&] { ... });                     // preferably on node 1
//   g.spawn(canopy::Affinity::near(handle), [&] { ... });                // where `handle` lives
//
// Ids wrap: a worker index modulo the runtime's workers, a node index modulo
// the runtime's NUMA nodes (the nodes its workers are on, numbered from 0 in
// the machine's order); a handle whose node is not known yet means node 0.
// DataAffinity is the default rule of data-flow tasks that have no hint
// (RuntimeOptions::data_affinity, CANOPY_DATA_AFFINITY).
#pragma once
#include <cstdint>
#include <string>

#include "canopy/data.hpp"

namespace canopy {

struct Affinity {
  enum class Kind : std::uint8_t { None, Worker, Node, Data };
  Kind kind = Kind::None;
  bool strict = false;
  int index = 0;  // Worker: worker index; Node: runtime NUMA node (both wrap)
  Data data{};    // Data: the handle whose home node the task should run on

  static Affinity worker(int w, bool strict = false) { return {Kind::Worker, strict, w, {}}; }
  static Affinity node(int n, bool strict = false) { return {Kind::Node, strict, n, {}}; }
  static Affinity near(Data d, bool strict = false) { return {Kind::Data, strict, 0, d}; }
  explicit operator bool() const { return kind != Kind::None; }
};

// Which accesses of a data-flow task without a hint decide where it runs:
// the node holding most of the bytes it writes (Write, the default: owner
// computes), most of the bytes it reads or writes (Read), or none (None:
// the task is spawned like any other).
enum class DataAffinity { Write, Read, None };

// Automatic affinity (docs/auto-affinity.md): None, today's behaviour; Auto:
// task graphs replayed several times are observed once, their task-to-task
// matrix (from the data the tasks declare) mapped onto the workers with the
// placement engine, and the placement applied to the following runs
// (RuntimeOptions::affinity, CANOPY_AFFINITY; TaskGraph::set_affinity).
enum class AutoAffinity { None, Auto };

// "none", "auto" (any case); anything else throws canopy::Error.
AutoAffinity parse_auto_affinity(const std::string& s);
std::string to_string(AutoAffinity a);

// "write", "read", "none" (any case); anything else throws canopy::Error.
DataAffinity parse_data_affinity(const std::string& s);
std::string to_string(DataAffinity a);
// "none", "worker 3 strict", "node 1", "near data #4".
std::string to_string(const Affinity& a);

}  // namespace canopy
