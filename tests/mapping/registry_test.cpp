// The policy registry: built-ins in order, lookups, errors, registration of
// a new policy that map_tasks then runs like the others.
#include <gtest/gtest.h>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"

using namespace canopy;

TEST(Registry, BuiltinsInOrder) {
  std::vector<std::string> names;
  for (const Policy& p : policies()) {
    names.push_back(p.name);
    EXPECT_FALSE(p.description.empty()) << p.name;
    EXPECT_TRUE(static_cast<bool>(p.map)) << p.name;
  }
  std::vector<std::string> builtins{"compact", "scatter", "treematch", "eagermap", "choicemap"};
  ASSERT_GE(names.size(), builtins.size());
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + builtins.size()), builtins);
}

TEST(Registry, DefaultIsRegistered) { EXPECT_NO_THROW(find_policy(default_policy())); }

TEST(Registry, UnknownPolicyListsKnownOnes) {
  try {
    find_policy("nosuch");
    FAIL();
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("unknown policy 'nosuch'"), std::string::npos) << m;
    EXPECT_NE(m.find("compact, scatter, treematch, eagermap, choicemap"), std::string::npos) << m;
  }
}

TEST(Registry, RegisterAndRun) {
  // A policy that puts the tasks in reverse PU order.
  register_policy({"test-reverse", "reverse compact", [](const Topology& topo, const CommMatrix&,
                                                          const MapOptions&, const Slots& s) {
                     std::vector<int> out;
                     for (int p = topo.num_pus() - 1; p >= 0; --p) out.insert(out.end(), s.capacity[p], p);
                     return out;
                   }});
  EXPECT_EQ(find_policy("test-reverse").name, "test-reverse");
  Topology t = Topology::from_synthetic("core:4 pu:1");
  Placement p = map_tasks(t, CommMatrix(4), "test-reverse");
  EXPECT_EQ(p.policy, "test-reverse");
  EXPECT_EQ(p.task_pu, (std::vector<int>{3, 2, 1, 0}));
  EXPECT_THROW(register_policy({"test-reverse", "again", policies().front().map}), Error);
  EXPECT_THROW(register_policy({"compact", "clash", policies().front().map}), Error);
  EXPECT_THROW(register_policy({"", "no name", policies().front().map}), Error);
  EXPECT_THROW(register_policy({"test-nofn", "no function", nullptr}), Error);
}

TEST(Registry, BrokenPolicyIsCaught) {
  // A policy that ignores the slots is a bug: map_tasks says so.
  register_policy({"test-broken", "all on PU 0",
                   [](const Topology&, const CommMatrix& m, const MapOptions&, const Slots&) {
                     return std::vector<int>(m.size(), 0);
                   }});
  Topology t = Topology::from_synthetic("core:4 pu:1");
  try {
    map_tasks(t, CommMatrix(4), "test-broken");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::System);
    EXPECT_NE(std::string(e.what()).find("test-broken"), std::string::npos);
  }
}
