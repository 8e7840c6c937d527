// Robustness: random strings (biased towards each grammar's characters, and
// mutations of valid values) in every variable must never crash or throw,
// give at most one warning line per variable, and leave settings that hold
// (places non-empty, sorted, on the machine). Seeded, so a failure repeats.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>

#include "env_fixture.hpp"

using namespace canopy::omp;
using omp_test::parse;

namespace {

const char* const kVariables[] = {
    "OMP_NUM_THREADS",     "OMP_PROC_BIND",        "OMP_PLACES",          "GOMP_CPU_AFFINITY",
    "OMP_DYNAMIC",         "OMP_MAX_ACTIVE_LEVELS", "OMP_NESTED",          "OMP_THREAD_LIMIT",
    "OMP_SCHEDULE",        "OMP_STACKSIZE",         "GOMP_STACKSIZE",      "OMP_WAIT_POLICY",
    "OMP_DISPLAY_ENV",     "OMP_DISPLAY_AFFINITY",  "OMP_AFFINITY_FORMAT", "OMP_CANCELLATION",
    "OMP_MAX_TASK_PRIORITY", "OMP_DEFAULT_DEVICE",  "OMP_ALLOCATOR",       "OMP_NUM_TEAMS",
    "OMP_TEAMS_THREAD_LIMIT", "GOMP_SPINCOUNT",     "OMP_TARGET_OFFLOAD"};

const char* const kSeeds[] = {"4,2,1", "spread,close", "{0:4}:4:4", "{0,1},!{0,1},{2:2:-1}", "cores(2)",
                              "0 3 1-2 4-15:2", "true", "monotonic:dynamic,4", "512K", "infinite",
                              "%0.4{thread_num} %A %%", "omp_high_bw_mem_alloc", "threads", "ll_caches(1)",
                              "0x1f-0x20:1", "verbose", "99999999999999999999", ""};

std::string random_value(std::mt19937& rng) {
  static const std::string alphabet = "0123456789{}:,!-()  \t%.xkKMGTtrufalsecoremidnhpbw_";
  std::uniform_int_distribution<int> kind(0, 2);
  std::string s;
  if (kind(rng) == 0) {  // pure noise
    std::uniform_int_distribution<int> len(0, 24), any(1, 255);
    for (int i = len(rng); i > 0; --i) s += static_cast<char>(any(rng));
    return s;
  }
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kSeeds) - 1);
  s = kSeeds[pick(rng)];
  std::uniform_int_distribution<int> edits(0, 4), ch(0, static_cast<int>(alphabet.size()) - 1);
  for (int e = edits(rng); e > 0; --e) {
    std::uniform_int_distribution<std::size_t> at(0, s.size());
    std::size_t i = at(rng);
    switch (edits(rng) % 3) {
      case 0: s.insert(i, 1, alphabet[static_cast<std::size_t>(ch(rng))]); break;
      case 1: if (i < s.size()) s.erase(i, 1); break;
      default: if (i < s.size()) s[i] = alphabet[static_cast<std::size_t>(ch(rng))];
    }
  }
  return s;
}

void check_settings(const Settings& s, const canopy::Topology& m) {
  for (const Place& p : s.places) {
    ASSERT_FALSE(p.os_cpus.empty());
    ASSERT_TRUE(std::is_sorted(p.os_cpus.begin(), p.os_cpus.end()));
    for (int cpu : p.os_cpus) ASSERT_GE(m.pu_by_os_index(cpu), 0);
  }
  for (int n : s.num_threads) ASSERT_GT(n, 0);
  std::ostringstream out;
  display_env(s, true, out);
  ASSERT_NE(out.str().find("OPENMP DISPLAY ENVIRONMENT END"), std::string::npos);
}

}  // namespace

TEST(OmpRobustness, RandomValuesInEveryVariable) {
  std::mt19937 rng(20261126);
  canopy::Topology two = canopy::Topology::from_xml_file(CANOPY_TEST_DATA "/topologies/two-socket.xml");
  for (int round = 0; round < 1000; ++round) {
    for (const char* name : kVariables) {
      std::string value = random_value(rng);
      const canopy::Topology& m = round % 2 ? two : omp_test::small_machine();
      omp_test::Parsed p;
      ASSERT_NO_THROW(p = parse({{name, value}}, m)) << name << "='" << value << "'";
      ASSERT_LE(p.warnings.size(), 1u) << name << "='" << value << "'";
      for (const std::string& w : p.warnings)
        ASSERT_EQ(w.rfind(std::string("canopy-omp: ") + name + "='", 0), 0u) << w;
      check_settings(p.settings, m);
    }
    // All variables at once: one line at most for each.
    omp_test::Env env;
    for (const char* name : kVariables) env[name] = random_value(rng);
    omp_test::Parsed p;
    ASSERT_NO_THROW(p = parse(env));
    ASSERT_LE(p.warnings.size(), std::size(kVariables));
    check_settings(p.settings, omp_test::small_machine());
  }
}

TEST(OmpRobustness, RandomAffinityFormats) {
  std::mt19937 rng(7);
  static const std::string alphabet = "%%%0.123456789{}tTLnNaHPiAq_abcdefghijklmnopqrstuvwxyz ";
  AffinityFields f;
  f.os_cpus = {0, 1, 5};
  f.host.assign(1, 'h');  // (= "h" trips a false GCC 12 -Wrestrict warning)
  std::uniform_int_distribution<int> len(0, 40), ch(0, static_cast<int>(alphabet.size()) - 1);
  for (int round = 0; round < 20000; ++round) {
    std::string format;
    for (int i = len(rng); i > 0; --i) format += alphabet[static_cast<std::size_t>(ch(rng))];
    std::string out;
    ASSERT_NO_THROW(out = format_affinity(format, f)) << format;
    // A well-formed format never prints a '%' it was not asked for.
    if (!affinity_format_error(format) && format.find("%%") == std::string::npos) {
      ASSERT_EQ(out.find('%'), std::string::npos) << format << " -> " << out;
    }
    ASSERT_LE(out.size(), format.size() * 65536 + 64);
  }
}
