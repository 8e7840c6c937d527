// canopy::Placement: where each task runs. Tasks map to logical PUs of a
// Topology; with --granularity core a task is bound to every PU of its core;
// with --helpers smt each task also keeps the hyperthread sibling of its PU
// for its helper/communication threads.
#pragma once
#include <string>
#include <vector>

namespace canopy {

class Topology;

enum class Granularity { PU, Core };
enum class Helpers { None, SMT };

struct Placement {
  std::string policy;             // the policy that computed it
  std::vector<int> task_pu;       // task -> logical PU
  std::vector<int> helper_pu;     // task -> logical PU for its helpers (-1 none); empty without --helpers
  Granularity granularity = Granularity::PU;

  int num_tasks() const { return static_cast<int>(task_pu.size()); }
  // The logical PUs task t is bound to (its PU, or every PU of its core).
  std::vector<int> binding(const Topology& topo, int task) const;
};

// Throws canopy::Error unless every task has a PU of `topo`, no PU holds more
// than ceil(T/P) tasks, and helper PUs (if any) exist and hold no task.
void validate_placement(const Topology& topo, const Placement& p);

Granularity parse_granularity(const std::string& s);
Helpers parse_helpers(const std::string& s);
std::string to_string(Granularity g);

}  // namespace canopy
