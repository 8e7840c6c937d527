// C API: topology handles from this machine, XML, synthetic strings and the
// --input convention; restriction; accessors; formats; every error status.
#include "canopy/topology.hpp"
#include "capi_test_util.hpp"

using namespace capi_test;

TEST(CapiTopology, SyntheticMatchesTheCppTopology) {
  const char* desc = "pack:2 numa:2 core:4 pu:2";
  Topo t = synthetic(desc);
  canopy::Topology cpp = canopy::Topology::from_synthetic(desc);
  int pus = 0, cores = 0, numa = 0, levels = 0, here = -1;
  EXPECT_CANOPY_OK(canopy_topology_num_pus(t.get(), &pus));
  EXPECT_CANOPY_OK(canopy_topology_num_cores(t.get(), &cores));
  EXPECT_CANOPY_OK(canopy_topology_num_numa_nodes(t.get(), &numa));
  EXPECT_CANOPY_OK(canopy_topology_num_levels(t.get(), &levels));
  EXPECT_CANOPY_OK(canopy_topology_is_this_machine(t.get(), &here));
  EXPECT_EQ(pus, 32);
  EXPECT_EQ(cores, 16);
  EXPECT_EQ(numa, 4);
  EXPECT_EQ(levels, cpp.num_levels());
  EXPECT_EQ(here, 0);
  for (int pu = 0; pu < pus; ++pu) {
    int os = -1;
    EXPECT_CANOPY_OK(canopy_topology_pu_os_index(t.get(), pu, &os));
    EXPECT_EQ(os, cpp.pu(pu).os_index);
  }
  int d = -1;
  EXPECT_CANOPY_OK(canopy_topology_distance(t.get(), 0, 0, &d));
  EXPECT_EQ(d, 0);
  EXPECT_CANOPY_OK(canopy_topology_distance(t.get(), 0, 31, &d));
  EXPECT_EQ(d, cpp.distance(0, 31));
  EXPECT_GT(d, 0);
}

TEST(CapiTopology, ThisMachine) {
  canopy_topology_t* raw = nullptr;
  EXPECT_CANOPY_OK(canopy_topology_create(&raw));
  Topo t(raw);
  int pus = 0, here = 0;
  EXPECT_CANOPY_OK(canopy_topology_num_pus(t.get(), &pus));
  EXPECT_CANOPY_OK(canopy_topology_is_this_machine(t.get(), &here));
  EXPECT_GE(pus, 1);
  EXPECT_EQ(here, 1);
}

TEST(CapiTopology, InputConvention) {
  canopy_topology_t* raw = nullptr;
  int here = -1, pus = 0;
  EXPECT_CANOPY_OK(canopy_topology_create_from_input(&raw, nullptr));
  Topo a(raw);
  EXPECT_CANOPY_OK(canopy_topology_is_this_machine(a.get(), &here));
  EXPECT_EQ(here, 1);
  EXPECT_CANOPY_OK(canopy_topology_create_from_input(&raw, ""));
  Topo b(raw);
  EXPECT_CANOPY_OK(canopy_topology_create_from_input(&raw, "pack:3 core:2 pu:1"));
  Topo c(raw);
  EXPECT_CANOPY_OK(canopy_topology_num_pus(c.get(), &pus));
  EXPECT_EQ(pus, 6);
  EXPECT_CANOPY_ERROR(canopy_topology_create_from_input(&raw, "/nonexistent/machine.xml"), CANOPY_EIO,
                      "canopy_topology_create_from_input", "/nonexistent/machine.xml");
  EXPECT_EQ(raw, nullptr);
  EXPECT_CANOPY_ERROR(canopy_topology_create_from_input(&raw, "pack:two"), CANOPY_EPARSE,
                      "canopy_topology_create_from_input", "pack:two");
}

TEST(CapiTopology, XmlRoundTripAndErrors) {
  Topo t = synthetic("pack:2 core:3 pu:2");
  size_t needed = 0;
  ASSERT_EQ(canopy_topology_format(t.get(), "xml", nullptr, 0, &needed), CANOPY_OK);
  std::string xml(needed, '\0');
  ASSERT_EQ(canopy_topology_format(t.get(), "xml", xml.data(), xml.size(), nullptr), CANOPY_OK);
  xml.resize(needed - 1);
  TempFile file("machine.xml", xml);
  canopy_topology_t* raw = nullptr;
  EXPECT_CANOPY_OK(canopy_topology_create_from_xml(&raw, file.path()));
  Topo back(raw);
  int pus = 0, cores = 0;
  EXPECT_CANOPY_OK(canopy_topology_num_pus(back.get(), &pus));
  EXPECT_CANOPY_OK(canopy_topology_num_cores(back.get(), &cores));
  EXPECT_EQ(pus, 12);
  EXPECT_EQ(cores, 6);
  // The same file through the --input convention.
  EXPECT_CANOPY_OK(canopy_topology_create_from_input(&raw, file.path()));
  canopy_topology_destroy(raw);

  EXPECT_CANOPY_ERROR(canopy_topology_create_from_xml(&raw, "/nonexistent/m.xml"), CANOPY_EIO,
                      "canopy_topology_create_from_xml", "/nonexistent/m.xml");
  EXPECT_CANOPY_ERROR(canopy_topology_create_from_xml(&raw, ::testing::TempDir().c_str()), CANOPY_EIO,
                      "canopy_topology_create_from_xml", "directory");
  TempFile junk("junk.xml", "<topology> this is not hwloc");
  EXPECT_CANOPY_ERROR(canopy_topology_create_from_xml(&raw, junk.path()), CANOPY_EPARSE,
                      "canopy_topology_create_from_xml", junk.path());
  EXPECT_EQ(raw, nullptr);
  EXPECT_CANOPY_ERROR(canopy_topology_create_from_xml(&raw, nullptr), CANOPY_EINVAL,
                      "canopy_topology_create_from_xml", "path is NULL");
}

TEST(CapiTopology, SyntheticErrors) {
  canopy_topology_t* raw = reinterpret_cast<canopy_topology_t*>(0x1);
  EXPECT_CANOPY_ERROR(canopy_topology_create_from_synthetic(&raw, "pack:2 banana:3"), CANOPY_EPARSE,
                      "canopy_topology_create_from_synthetic", "banana");
  EXPECT_EQ(raw, nullptr);  // *out is cleared on failure
  EXPECT_CANOPY_ERROR(canopy_topology_create_from_synthetic(&raw, "pack:100000 core:100000 pu:4"), CANOPY_EPARSE,
                      "canopy_topology_create_from_synthetic", "limit");
  EXPECT_CANOPY_ERROR(canopy_topology_create_from_synthetic(&raw, ""), CANOPY_EPARSE,
                      "canopy_topology_create_from_synthetic", "empty");
  EXPECT_CANOPY_ERROR(canopy_topology_create_from_synthetic(&raw, nullptr), CANOPY_EINVAL,
                      "canopy_topology_create_from_synthetic", "description is NULL");
  EXPECT_CANOPY_ERROR(canopy_topology_create_from_synthetic(nullptr, "pack:2"), CANOPY_EINVAL,
                      "canopy_topology_create_from_synthetic", "out is NULL");
  EXPECT_CANOPY_ERROR(canopy_topology_create(nullptr), CANOPY_EINVAL, "canopy_topology_create", "out is NULL");
}

TEST(CapiTopology, Restricted) {
  Topo t = synthetic("pack:2 core:2 pu:2");
  const int keep[] = {1, 5, 6};
  canopy_topology_t* raw = nullptr;
  EXPECT_CANOPY_OK(canopy_topology_create_restricted(&raw, t.get(), keep, 3));
  Topo r(raw);
  int pus = 0, os = -1;
  EXPECT_CANOPY_OK(canopy_topology_num_pus(r.get(), &pus));
  EXPECT_EQ(pus, 3);
  EXPECT_CANOPY_OK(canopy_topology_pu_os_index(r.get(), 2, &os));
  EXPECT_EQ(os, 6);
  const int bad[] = {1, 99};
  EXPECT_CANOPY_ERROR(canopy_topology_create_restricted(&raw, t.get(), bad, 2), CANOPY_ERANGE,
                      "canopy_topology_create_restricted", "99");
  EXPECT_CANOPY_ERROR(canopy_topology_create_restricted(&raw, t.get(), keep, 0), CANOPY_EINVAL,
                      "canopy_topology_create_restricted", "no PU");
  EXPECT_CANOPY_ERROR(canopy_topology_create_restricted(&raw, t.get(), nullptr, 2), CANOPY_EINVAL,
                      "canopy_topology_create_restricted", "pu_os_indexes is NULL");
  EXPECT_CANOPY_ERROR(canopy_topology_create_restricted(&raw, nullptr, keep, 1), CANOPY_EINVAL,
                      "canopy_topology_create_restricted", "topo is NULL");
}

TEST(CapiTopology, AccessorErrors) {
  Topo t = synthetic("pack:1 core:2 pu:1");
  int v = 0;
  EXPECT_CANOPY_ERROR(canopy_topology_pu_os_index(t.get(), 2, &v), CANOPY_ERANGE, "canopy_topology_pu_os_index",
                      "PU 2 is outside [0, 2)");
  EXPECT_CANOPY_ERROR(canopy_topology_pu_os_index(t.get(), -1, &v), CANOPY_ERANGE, "canopy_topology_pu_os_index",
                      "-1");
  EXPECT_CANOPY_ERROR(canopy_topology_distance(t.get(), 0, 5, &v), CANOPY_ERANGE, "canopy_topology_distance", "5");
  EXPECT_CANOPY_ERROR(canopy_topology_num_pus(t.get(), nullptr), CANOPY_EINVAL, "canopy_topology_num_pus",
                      "out is NULL");
  EXPECT_CANOPY_ERROR(canopy_topology_num_cores(nullptr, &v), CANOPY_EINVAL, "canopy_topology_num_cores", "NULL");
  EXPECT_CANOPY_ERROR(canopy_topology_num_numa_nodes(nullptr, &v), CANOPY_EINVAL, "canopy_topology_num_numa_nodes",
                      "NULL");
  EXPECT_CANOPY_ERROR(canopy_topology_num_levels(nullptr, &v), CANOPY_EINVAL, "canopy_topology_num_levels", "NULL");
  EXPECT_CANOPY_ERROR(canopy_topology_is_this_machine(nullptr, &v), CANOPY_EINVAL, "canopy_topology_is_this_machine",
                      "NULL");
  EXPECT_CANOPY_ERROR(canopy_topology_pu_os_index(t.get(), 0, nullptr), CANOPY_EINVAL,
                      "canopy_topology_pu_os_index", "os_index is NULL");
  canopy_topology_destroy(nullptr);  // accepted, like free(NULL)
}

TEST(CapiTopology, Formats) {
  Topo t = synthetic("pack:2 core:2 pu:2");
  for (const char* f : {"text", "json", "svg", "xml"}) {
    size_t needed = 0;
    EXPECT_CANOPY_OK(canopy_topology_format(t.get(), f, nullptr, 0, &needed));
    EXPECT_GT(needed, 10u) << f;
  }
  char buf[64];
  EXPECT_CANOPY_ERROR(canopy_topology_format(t.get(), "png", buf, sizeof buf, nullptr), CANOPY_EINVAL,
                      "canopy_topology_format", "'png'");
  EXPECT_CANOPY_ERROR(canopy_topology_format(t.get(), nullptr, buf, sizeof buf, nullptr), CANOPY_EINVAL,
                      "canopy_topology_format", "format is NULL");
}
