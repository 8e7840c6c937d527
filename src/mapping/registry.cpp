// The policy registry: {name, description, function}, shared by the C++ API,
// the C API and the CLI. The built-ins are listed once, in kBuiltins below;
// a new built-in policy is one more line there (and one declaration in
// policies.hpp). register_policy() adds others at run time.
//
// Registration is meant for start-up: policies() hands out a reference to the
// list, so registering while another thread maps is not supported.
#include <fmt/format.h>

#include <mutex>

#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "mapping/canopy/canopy_policy.hpp"
#include "mapping/policies.hpp"

namespace canopy {

namespace {

struct Builtin {
  const char* name;
  const char* description;
  PolicyFunction::result_type (*map)(const Topology&, const CommMatrix&, const MapOptions&, const Slots&);
};

// The built-in policies, in the order they are listed.
const Builtin kBuiltins[] = {
    {"compact", "tasks in id order fill the PUs in tree order", policy::compact},
    {"scatter", "tasks round robin over the top-level branches, recursively (like KMP_AFFINITY=scatter)",
     policy::scatter},
    {"treematch", "bottom-up grouping by level arity keeping communication inside groups (Jeannot et al. 2014)",
     policy::treematch},
    {"eagermap", "greedy winner-partner grouping, level by level, single pass (Cruz et al. 2015)",
     policy::eagermap},
    {"choicemap", "mutual-preference pairing as stable roommates, level by level (Soomro et al. 2018)",
     policy::choicemap},
    {"canopy", policy::kCanopyDescription, policy::canopy},
};

std::mutex registry_mutex;

std::vector<Policy>& registry() {
  static std::vector<Policy> all = [] {
    std::vector<Policy> v;
    for (const Builtin& b : kBuiltins) v.push_back({b.name, b.description, b.map});
    return v;
  }();
  return all;
}

std::string known_names() {
  std::string s;
  for (const Policy& p : registry()) s += (s.empty() ? "" : ", ") + p.name;
  return s;
}

}  // namespace

const std::vector<Policy>& policies() { return registry(); }

const Policy& find_policy(const std::string& name) {
  for (const Policy& p : registry())
    if (p.name == name) return p;
  throw Error(fmt::format("unknown policy '{}': expected one of {}", name, known_names()));
}

void register_policy(Policy p) {
  std::lock_guard<std::mutex> lock(registry_mutex);
  if (p.name.empty()) throw Error("register_policy: the policy has no name");
  if (!p.map) throw Error(fmt::format("register_policy: policy '{}' has no function", p.name));
  for (const Policy& q : registry())
    if (q.name == p.name) throw Error(fmt::format("register_policy: a policy named '{}' already exists", p.name));
  registry().push_back(std::move(p));
}

std::string default_policy() { return "canopy"; }

}  // namespace canopy
