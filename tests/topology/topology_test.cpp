// Topology loading and the tree canopy builds from hwloc, on synthetic and
// XML machines (never this machine's own core count).
#include "canopy/topology.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "canopy/error.hpp"

using canopy::Topology;

TEST(Topology, SyntheticLevelsAndCounts) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:8 pu:2");
  EXPECT_EQ(t.num_pus(), 64);
  EXPECT_EQ(t.num_cores(), 32);
  EXPECT_EQ(t.num_numa_nodes(), 4);
  ASSERT_EQ(t.num_levels(), 5);  // machine, package, group+numa, core, pu
  EXPECT_EQ(t.level(1).max_arity, 2);
  EXPECT_TRUE(t.level(2).numa);
  EXPECT_EQ(t.level(2).max_arity, 8);
  EXPECT_EQ(t.level(3).max_arity, 2);
  EXPECT_EQ(t.level(4).num_nodes, 64);
  for (int p = 0; p < 64; ++p) {
    EXPECT_EQ(t.pu(p).core, p / 2);
    EXPECT_EQ(t.pu(p).numa, p / 16);
    EXPECT_EQ(t.pu(p).os_index, p);
  }
  EXPECT_EQ(t.numa_node(1).pus.size(), 16u);
  EXPECT_EQ(t.core(3).pus, (std::vector<int>{6, 7}));
}

TEST(Topology, DistancesFollowTheTree) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:8 pu:2");
  EXPECT_EQ(t.distance(0, 0), 0);
  EXPECT_EQ(t.distance(0, 1), 1);   // same core
  EXPECT_EQ(t.distance(0, 2), 2);   // same NUMA node
  EXPECT_EQ(t.distance(0, 16), 3);  // same package
  EXPECT_EQ(t.distance(0, 32), 4);  // machine
  EXPECT_EQ(t.hops(0, 32), 8);
  EXPECT_EQ(t.common_level(5, 9), 2);
}

TEST(Topology, SingleChildLevelsAreMerged) {
  // No SMT: core and PU merge; one NUMA node per package merges too.
  Topology t = Topology::from_synthetic("pack:2 l3:1 core:4 pu:1");
  EXPECT_EQ(t.num_pus(), 8);
  EXPECT_EQ(t.num_cores(), 8);
  ASSERT_EQ(t.num_levels(), 3);
  EXPECT_EQ(t.level(2).max_arity, 0);
  EXPECT_NE(t.level(1).name.find("Package"), std::string::npos);
  EXPECT_NE(t.level(1).name.find("L3"), std::string::npos);
  EXPECT_NE(t.level(2).name.find("PU"), std::string::npos);
}

TEST(Topology, UnbalancedTreeFromRestriction) {
  // A KNL-like imbalance: 3 and 2 cores under two NUMA nodes.
  Topology full = Topology::from_synthetic("numa:2 core:3 pu:2");
  Topology t = full.restricted({0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  EXPECT_EQ(t.num_pus(), 10);
  EXPECT_EQ(t.num_cores(), 5);
  EXPECT_EQ(t.level(1).min_arity, 2);
  EXPECT_EQ(t.level(1).max_arity, 3);
  EXPECT_EQ(t.numa_node(1).pus.size(), 4u);
  for (int p = 0; p < t.num_pus(); ++p) EXPECT_EQ(t.node(t.pu(p).node).level, t.leaf_level());
}

TEST(Topology, XmlRoundTrip) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:3 pu:2");
  auto path = std::filesystem::temp_directory_path() / "canopy_topology_test.xml";
  {
    std::ofstream f(path);
    f << t.to_xml();
  }
  Topology u = Topology::load(path.string());
  EXPECT_EQ(u.num_pus(), t.num_pus());
  EXPECT_EQ(u.num_numa_nodes(), 4);
  EXPECT_EQ(u.num_levels(), t.num_levels());
  std::filesystem::remove(path);
}

TEST(Topology, ThisMachineLoads) {
  Topology t = Topology::this_machine();
  EXPECT_GE(t.num_pus(), 1);
  EXPECT_GE(t.num_numa_nodes(), 1);
  EXPECT_TRUE(t.is_this_machine());
}

TEST(Topology, OsIndexLookup) {
  Topology t = Topology::from_synthetic("pack:2 core:2 pu:2").restricted({1, 2, 5, 6});
  EXPECT_EQ(t.num_pus(), 4);
  EXPECT_EQ(t.pu_by_os_index(5), 2);
  EXPECT_EQ(t.pu_by_os_index(0), -1);
  EXPECT_EQ(t.pu_by_os_index(99), -1);
  EXPECT_EQ(t.pu_by_os_index(-1), -1);
}

TEST(Topology, ExplicitSyntheticIndexesAreAccepted) {
  const Topology t = Topology::from_synthetic("core:2 pu:2(indexes=0,2,1,3)");
  EXPECT_EQ(t.num_pus(), 4);
}

TEST(Topology, CpusetStrings) {
  EXPECT_EQ(Topology::cpuset_list_string({0, 1, 2, 3, 8}), "0-3,8");
  EXPECT_EQ(Topology::cpuset_mask_string({0, 1, 2, 3}), "0x0000000f");
}

TEST(Topology, BadInputsAreClearErrors) {
  EXPECT_THROW(Topology::from_synthetic("pack:two core:1"), canopy::Error);
  EXPECT_THROW(Topology::from_synthetic(""), canopy::Error);
  EXPECT_THROW(Topology::from_synthetic("pack:100000 core:100000 pu:2"), canopy::Error);
  EXPECT_THROW(Topology::from_synthetic("3000 3000"), canopy::Error);  // bare arities count too
  EXPECT_THROW(Topology::from_synthetic("pack:1000 [numa(memory=1GB)] core:1000 pu"), canopy::Error);
  // hwloc itself aborts on this one (fuzz_synthetic): canopy refuses it first.
  EXPECT_THROW(Topology::from_synthetic("(indexes=numa:core)core:3 pu:1"), canopy::Error);
  EXPECT_THROW(Topology::from_synthetic("pack:2 core:2(indexes=core:pu) pu:2"), canopy::Error);
  EXPECT_THROW(Topology::from_xml_file("/nonexistent/machine.xml"), canopy::Error);
  auto path = std::filesystem::temp_directory_path() / "canopy_corrupt.xml";
  {
    std::ofstream f(path);
    f << "<?xml version=\"1.0\"?><topology><object type=\"Machine\"";
  }
  try {
    Topology::from_xml_file(path.string());
    FAIL() << "corrupt XML accepted";
  } catch (const canopy::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos);
  }
  std::filesystem::remove(path);
}
