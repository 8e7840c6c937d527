// display_env: the OMP_DISPLAY_ENV block, compared whole with golden text in
// GCC 12 libgomp's format (variable order, TRUE/FALSE, MASTER, places as
// {start:len}), plus the lines that name canopy.
#include <gtest/gtest.h>

#include <sstream>

#include "env_fixture.hpp"

using namespace canopy::omp;
using omp_test::parse;

namespace {
std::string shown(const Settings& s, bool verbose) {
  std::ostringstream out;
  display_env(s, verbose, out);
  return out.str();
}
}  // namespace

TEST(OmpDisplayEnv, DefaultsAsLibgompShowsThem) {
  EXPECT_EQ(shown(parse({}).settings, false),
            "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n"
            "  _OPENMP = '201511'\n"
            "  OMP_DYNAMIC = 'FALSE'\n"
            "  OMP_NESTED = 'FALSE'\n"
            "  OMP_NUM_THREADS = '16'\n"
            "  OMP_SCHEDULE = 'DYNAMIC'\n"
            "  OMP_PROC_BIND = 'FALSE'\n"
            "  OMP_PLACES = ''\n"
            "  OMP_STACKSIZE = '0'\n"
            "  OMP_WAIT_POLICY = 'PASSIVE'\n"
            "  OMP_THREAD_LIMIT = '4294967295'\n"
            "  OMP_MAX_ACTIVE_LEVELS = '1'\n"
            "  OMP_NUM_TEAMS = '0'\n"
            "  OMP_TEAMS_THREAD_LIMIT = '0'\n"
            "  OMP_CANCELLATION = 'FALSE'\n"
            "  OMP_DEFAULT_DEVICE = '0'\n"
            "  OMP_MAX_TASK_PRIORITY = '0'\n"
            "  OMP_DISPLAY_AFFINITY = 'FALSE'\n"
            "  OMP_AFFINITY_FORMAT = 'level %L thread %i affinity %A'\n"
            "  OMP_ALLOCATOR = 'omp_default_mem_alloc'\n"
            "  OMP_TARGET_OFFLOAD = 'DEFAULT'\n"
            "  CANOPY_RUNTIME = 'canopy'\n"
            "  CANOPY_VERSION = '" CANOPY_TEST_VERSION "'\n"
            "OPENMP DISPLAY ENVIRONMENT END\n");
}

TEST(OmpDisplayEnv, EverySetVariableVerbose) {
  auto p = parse({{"OMP_DYNAMIC", "true"},
                  {"OMP_NUM_THREADS", "4,2"},
                  {"OMP_SCHEDULE", "monotonic:guided,5"},
                  {"OMP_PROC_BIND", "spread,master"},
                  {"OMP_PLACES", "{0:2}:3:4,{30,31,29}"},
                  {"OMP_STACKSIZE", "2M"},
                  {"OMP_WAIT_POLICY", "active"},
                  {"OMP_THREAD_LIMIT", "16"},
                  {"OMP_MAX_ACTIVE_LEVELS", "3"},
                  {"OMP_NUM_TEAMS", "2"},
                  {"OMP_TEAMS_THREAD_LIMIT", "4"},
                  {"OMP_CANCELLATION", "true"},
                  {"OMP_DEFAULT_DEVICE", "1"},
                  {"OMP_MAX_TASK_PRIORITY", "9"},
                  {"OMP_DISPLAY_AFFINITY", "true"},
                  {"OMP_AFFINITY_FORMAT", "%0.3n %A"},
                  {"OMP_ALLOCATOR", "omp_low_lat_mem_alloc"},
                  {"OMP_TARGET_OFFLOAD", "disabled"},
                  {"GOMP_SPINCOUNT", "2k"}});
  ASSERT_TRUE(p.warnings.empty()) << p.warnings[0];
  EXPECT_EQ(shown(p.settings, true),
            "\nOPENMP DISPLAY ENVIRONMENT BEGIN\n"
            "  _OPENMP = '201511'\n"
            "  OMP_DYNAMIC = 'TRUE'\n"
            "  OMP_NESTED = 'TRUE'\n"
            "  OMP_NUM_THREADS = '4,2'\n"
            "  OMP_SCHEDULE = 'MONOTONIC:GUIDED,5'\n"
            "  OMP_PROC_BIND = 'SPREAD,MASTER'\n"
            "  OMP_PLACES = '{0:2},{4:2},{8:2},{29:3}'\n"
            "  OMP_STACKSIZE = '2097152'\n"
            "  OMP_WAIT_POLICY = 'ACTIVE'\n"
            "  OMP_THREAD_LIMIT = '16'\n"
            "  OMP_MAX_ACTIVE_LEVELS = '3'\n"
            "  OMP_NUM_TEAMS = '2'\n"
            "  OMP_TEAMS_THREAD_LIMIT = '4'\n"
            "  OMP_CANCELLATION = 'TRUE'\n"
            "  OMP_DEFAULT_DEVICE = '1'\n"
            "  OMP_MAX_TASK_PRIORITY = '9'\n"
            "  OMP_DISPLAY_AFFINITY = 'TRUE'\n"
            "  OMP_AFFINITY_FORMAT = '%0.3n %A'\n"
            "  OMP_ALLOCATOR = 'omp_low_lat_mem_alloc'\n"
            "  OMP_TARGET_OFFLOAD = 'DISABLED'\n"
            "  GOMP_CPU_AFFINITY = ''\n"
            "  GOMP_STACKSIZE = '2097152'\n"
            "  GOMP_SPINCOUNT = '2000'\n"
            "  CANOPY_RUNTIME = 'canopy'\n"
            "  CANOPY_VERSION = '" CANOPY_TEST_VERSION "'\n"
            "OPENMP DISPLAY ENVIRONMENT END\n");
}

TEST(OmpDisplayEnv, ScheduleSpellings) {
  auto sched = [](const char* v) {
    std::string out = shown(parse({{"OMP_SCHEDULE", v}}).settings, false);
    auto at = out.find("OMP_SCHEDULE = '");
    return out.substr(at + 16, out.find('\'', at + 16) - at - 16);
  };
  EXPECT_EQ(sched("static"), "STATIC");
  EXPECT_EQ(sched("static,4"), "STATIC,4");
  EXPECT_EQ(sched("monotonic:static"), "STATIC");  // static is monotonic anyway
  EXPECT_EQ(sched("nonmonotonic:static,2"), "NONMONOTONIC:STATIC,2");
  EXPECT_EQ(sched("dynamic,1"), "DYNAMIC");
  EXPECT_EQ(sched("nonmonotonic:dynamic,3"), "DYNAMIC,3");
  EXPECT_EQ(sched("monotonic:dynamic"), "MONOTONIC:DYNAMIC");
  EXPECT_EQ(sched("auto"), "AUTO");
}

TEST(OmpDisplayEnv, VerboseShowsGompCpuAffinityAndSpinDefaults) {
  auto p = parse({{"GOMP_CPU_AFFINITY", "0-3:2"}, {"OMP_WAIT_POLICY", "passive"}});
  std::string out = shown(p.settings, true);
  EXPECT_NE(out.find("  OMP_PROC_BIND = 'TRUE'\n"), std::string::npos);
  EXPECT_NE(out.find("  OMP_PLACES = '{0},{2}'\n"), std::string::npos);
  EXPECT_NE(out.find("  GOMP_CPU_AFFINITY = '0-3:2'\n"), std::string::npos);
  EXPECT_NE(out.find("  GOMP_SPINCOUNT = '0'\n"), std::string::npos);
}

TEST(OmpDisplayEnv, ListStrings) {
  EXPECT_EQ(cpu_list_string({}), "");
  EXPECT_EQ(cpu_list_string({8, 0, 1, 2, 3}), "0-3,8");
  EXPECT_EQ(cpu_list_string({1, 3, 5, 6}), "1,3,5-6");
  EXPECT_EQ(places_string({{{0, 1, 2, 3}}, {{5}}, {{0, 2, 3}}}), "{0:4},{5},{0,2:2}");
}
