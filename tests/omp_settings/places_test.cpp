// OMP_PLACES and GOMP_CPU_AFFINITY: the abstract names (with counts) on
// synthetic machines and on the XML machines of tests/data/topologies (real
// CPU numberings), explicit lists (intervals, strides, negative strides,
// exclusions), CPUs the machine lacks, and the interplay with OMP_PROC_BIND.
#include <gtest/gtest.h>

#include "env_fixture.hpp"

using namespace canopy::omp;
using canopy::Topology;
using omp_test::cpus_of;
using omp_test::parse;
using V = std::vector<std::vector<int>>;

namespace {
V places(const char* value, const Topology& m) { return cpus_of(parse({{"OMP_PLACES", value}}, m).settings); }
V places(const char* value) { return places(value, omp_test::small_machine()); }
const Topology& two_socket() {
  static const Topology t = Topology::from_xml_file(CANOPY_TEST_DATA "/topologies/two-socket.xml");
  return t;
}
}  // namespace

TEST(OmpPlaces, AbstractNamesOnASyntheticMachine) {
  // pack:2 numa:2 core:4 pu:2: 32 PUs, OS index = logical index.
  V threads = places("threads");
  ASSERT_EQ(threads.size(), 32u);
  EXPECT_EQ(threads[5], (std::vector<int>{5}));
  V cores = places("cores");
  ASSERT_EQ(cores.size(), 16u);
  EXPECT_EQ(cores[3], (std::vector<int>{6, 7}));
  EXPECT_EQ(places("numa_domains"),
            (V{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}, {16, 17, 18, 19, 20, 21, 22, 23},
               {24, 25, 26, 27, 28, 29, 30, 31}}));
  V sockets = places("sockets");
  ASSERT_EQ(sockets.size(), 2u);
  EXPECT_EQ(sockets[1].front(), 16);
  EXPECT_EQ(sockets[1].size(), 16u);
  // Counts keep the first places; a count above the machine's keeps them all.
  EXPECT_EQ(places("cores(2)"), (V{{0, 1}, {2, 3}}));
  EXPECT_EQ(places(" THREADS ( 3 ) "), (V{{0}, {1}, {2}}));
  EXPECT_EQ(places("sockets(99)").size(), 2u);
  EXPECT_EQ(places("numa_domains(1)"), (V{{0, 1, 2, 3, 4, 5, 6, 7}}));
}

TEST(OmpPlaces, LastLevelCachesFallBackToSocketsWithoutCaches) {
  auto p = parse({{"OMP_PLACES", "ll_caches"}});
  EXPECT_EQ(cpus_of(p.settings).size(), 2u);
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0],
            "canopy-omp: OMP_PLACES='ll_caches': the topology shows no caches; using one place per socket");
  Topology cached = Topology::from_synthetic("pack:2 l3:2 core:2 pu:2");
  V ll = places("ll_caches", cached);
  EXPECT_EQ(ll, (V{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}));
}

TEST(OmpPlaces, AbstractNamesOnTheTwoSocketMachine) {
  // Linux numbering: the first threads of all cores, then their siblings.
  const Topology& m = two_socket();
  V cores = places("cores", m);
  ASSERT_EQ(cores.size(), 16u);
  EXPECT_EQ(cores[0], (std::vector<int>{0, 16}));
  EXPECT_EQ(cores[9], (std::vector<int>{9, 25}));
  V threads = places("threads(4)", m);
  EXPECT_EQ(threads, (V{{0}, {16}, {1}, {17}}));
  V ll = places("ll_caches", m);
  ASSERT_EQ(ll.size(), 2u);
  EXPECT_EQ(ll[0], (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23}));
  EXPECT_EQ(places("sockets", m), ll);
  EXPECT_EQ(places("numa_domains", m), ll);
  EXPECT_EQ(places_string(parse({{"OMP_PLACES", "sockets"}}, m).settings.places), "{0:8,16:8},{8:8,24:8}");
}

TEST(OmpPlaces, InterleavedNumberingFollowsLibgompsOrder) {
  // Packages interleaved (CPU 0 on package 0, CPU 1 on package 1, ...), the
  // second threads of cores numbered 4-7: libgomp lists places by their
  // lowest CPU, core by core for threads.
  Topology m = Topology::from_synthetic("pack:2 core:2 pu:2(indexes=0,4,2,6,1,5,3,7)");
  EXPECT_EQ(places("threads", m), (V{{0}, {4}, {1}, {5}, {2}, {6}, {3}, {7}}));
  EXPECT_EQ(places("cores", m), (V{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(places("sockets", m), (V{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(places("cores(2)", m), (V{{0, 4}, {1, 5}}));
}

TEST(OmpPlaces, NumaDomainsOnTheKnlLikeMachine) {
  // Each quadrant has a DDR and an MCDRAM node over the same CPUs: the CPUs
  // go to the first, as libgomp's sysfs walk gives them.
  Topology knl = Topology::from_xml_file(CANOPY_TEST_DATA "/topologies/knl-like.xml");
  V numa = places("numa_domains", knl);
  ASSERT_EQ(numa.size(), 4u);
  EXPECT_EQ(numa[0].size(), 68u);
  EXPECT_EQ(numa[1].size(), 64u);
  V ll = places("ll_caches", knl);  // one L2 per core pair... here per core: 66 cores
  EXPECT_EQ(ll.size(), 66u);
  EXPECT_EQ(ll[0].size(), 4u);
}

TEST(OmpPlaces, ExplicitLists) {
  EXPECT_EQ(places("{0,1},{2,3}"), (V{{0, 1}, {2, 3}}));
  EXPECT_EQ(places("{0:4}:4:4"), (V{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14, 15}}));
  EXPECT_EQ(places("{0:2:8}"), (V{{0, 8}}));                   // res:len:stride
  EXPECT_EQ(places("{3:4:-1}"), (V{{0, 1, 2, 3}}));            // negative stride inside
  EXPECT_EQ(places("{12:2}:3:-4"), (V{{12, 13}, {8, 9}, {4, 5}}));  // negative place stride
  EXPECT_EQ(places("0,1,2"), (V{{0}, {1}, {2}}));              // bare numbers are places
  EXPECT_EQ(places("0:4"), (V{{0}, {1}, {2}, {3}}));
  EXPECT_EQ(places("0:3:2"), (V{{0}, {2}, {4}}));
  EXPECT_EQ(places(" { 0 , 1 } : 2 : 2 , { 7 } "), (V{{0, 1}, {2, 3}, {7}}));
  EXPECT_EQ(places("{1,0,1}"), (V{{0, 1}}));                   // sorted, distinct
}

TEST(OmpPlaces, Exclusions) {
  EXPECT_EQ(places("{0:8,!3,!5}"), (V{{0, 1, 2, 4, 6, 7}}));   // CPUs, after the additions
  EXPECT_EQ(places("{!3,0:4}"), (V{{0, 1, 2}}));
  EXPECT_EQ(places("{0:2}:4:2,!{2,3}"), (V{{0, 1}, {4, 5}, {6, 7}}));  // a whole place
  EXPECT_EQ(places("0:4,!2"), (V{{0}, {1}, {3}}));
  auto p = parse({{"OMP_PLACES", "{0,1},!{2,3}"}});
  EXPECT_TRUE(p.settings.places.empty());
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("'!' excludes a place that is not in the list at position 13"), std::string::npos)
      << p.warnings[0];
  EXPECT_EQ(parse({{"OMP_PLACES", "{0,!1:2}"}}).warnings.size(), 1u);  // "!" takes no length
  EXPECT_EQ(parse({{"OMP_PLACES", "!{0}:2"}}).warnings.size(), 1u);
}

TEST(OmpPlaces, CpusNotOnTheMachineAreDropped) {
  auto p = parse({{"OMP_PLACES", "{30:4},{40}"}});
  EXPECT_EQ(cpus_of(p.settings), (V{{30, 31}}));
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0],
            "canopy-omp: OMP_PLACES='{30:4},{40}': CPUs 32-33,40 are not on this machine; dropped (1 place left "
            "empty, 2 -> 1 places)");
  auto none = parse({{"OMP_PLACES", "{100:2}"}});
  EXPECT_TRUE(none.settings.places.empty());
  ASSERT_EQ(none.warnings.size(), 1u);
  EXPECT_EQ(none.warnings[0],
            "canopy-omp: OMP_PLACES='{100:2}': expected threads, cores, ll_caches, numa_domains or sockets with "
            "an optional (count), or a list of places such as '{0,1},{2,3}' or '{0:4}:4:4' (no CPU of this "
            "machine is listed (CPUs 100-101 not on it)); using the default");
  // On the two-socket machine with OS numbers 0-31: 32 is absent.
  auto q = parse({{"OMP_PLACES", "{31,32}"}}, two_socket());
  EXPECT_EQ(cpus_of(q.settings), (V{{31}}));
  EXPECT_EQ(q.warnings.size(), 1u);
}

TEST(OmpPlaces, BadValues) {
  for (const char* bad : {"", " ", "{", "{0", "{0,}", "{0:0}", "{0:}", "{0::}", "{0}:0", "{-1}", "{0}x", "{0}{1}",
                          "cores(", "cores()", "cores(0)", "cores(2", "cores(2)x", "cores 2", "hyperthreads",
                          "{0}:2:x", ",", "{0},", "{1048576}", "{1048575:2}", "{0:2}:2:-1", "!", "!{}", "{}"}) {
    auto p = parse({{"OMP_PLACES", bad}});
    EXPECT_TRUE(p.settings.places.empty()) << bad;
    ASSERT_EQ(p.warnings.size(), 1u) << "'" << bad << "'";
    EXPECT_EQ(p.warnings[0].rfind(std::string("canopy-omp: OMP_PLACES='") + bad + "': expected threads", 0), 0u)
        << p.warnings[0];
    EXPECT_NE(p.warnings[0].find("; using the default"), std::string::npos);
  }
  auto p = parse({{"OMP_PLACES", "{0:2}x"}});
  EXPECT_NE(p.warnings[0].find("(expected ',' at position 6)"), std::string::npos) << p.warnings[0];
  // The example of docs/omp-env.md.
  EXPECT_EQ(parse({{"OMP_PLACES", "{0:4"}}).warnings,
            std::vector<std::string>{
                "canopy-omp: OMP_PLACES='{0:4': expected threads, cores, ll_caches, numa_domains or sockets with an "
                "optional (count), or a list of places such as '{0,1},{2,3}' or '{0:4}:4:4' (expected ',' or '}' at "
                "position 5); using the default"});
}

TEST(OmpPlaces, LimitsKeepTyposFromAllocating) {
  EXPECT_EQ(parse({{"OMP_PLACES", "{0:1000000}:65536"}}).warnings.size(), 1u);
  EXPECT_EQ(parse({{"OMP_PLACES", "0:65537"}}).warnings.size(), 1u);
  EXPECT_EQ(places("{0:100000}").size(), 1u);  // large but within the limits
  EXPECT_EQ(parse({{"GOMP_CPU_AFFINITY", "0-65535"}}).settings.places.size(), 32u);
  auto p = parse({{"GOMP_CPU_AFFINITY", "0-65535 0"}});
  EXPECT_TRUE(p.settings.places.empty());
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_NE(p.warnings[0].find("(more than 65536 CPUs listed)"), std::string::npos) << p.warnings[0];
}

TEST(OmpPlaces, ProcBindInterplay) {
  // Places turn binding on when OMP_PROC_BIND is unset (libgomp).
  auto p = parse({{"OMP_PLACES", "cores"}});
  EXPECT_EQ(p.settings.proc_bind, (std::vector<ProcBind>{ProcBind::True}));
  EXPECT_TRUE(p.settings.proc_bind_implied);
  EXPECT_EQ(p.settings.places_source, "cores");
  // OMP_PROC_BIND=false: no places (still checked).
  p = parse({{"OMP_PLACES", "cores"}, {"OMP_PROC_BIND", "false"}});
  EXPECT_TRUE(p.settings.places.empty());
  EXPECT_EQ(p.settings.proc_bind, (std::vector<ProcBind>{ProcBind::False}));
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(parse({{"OMP_PLACES", "{"}, {"OMP_PROC_BIND", "false"}}).warnings.size(), 1u);
  p = parse({{"OMP_PLACES", "threads"}, {"OMP_PROC_BIND", "spread"}});
  EXPECT_EQ(p.settings.proc_bind, (std::vector<ProcBind>{ProcBind::Spread}));
  EXPECT_FALSE(p.settings.proc_bind_implied);
  EXPECT_FALSE(p.settings.places_implied);
  // Binding without places: one place per hardware thread (libgomp).
  p = parse({{"OMP_PROC_BIND", "close"}});
  EXPECT_EQ(p.settings.places.size(), 32u);
  EXPECT_TRUE(p.settings.places_implied);
  EXPECT_EQ(p.settings.places_source, "threads");
  EXPECT_TRUE(parse({{"OMP_PROC_BIND", "false"}}).settings.places.empty());
  EXPECT_TRUE(parse({}).settings.places.empty());
}

TEST(OmpPlaces, GompCpuAffinity) {
  auto aff = [](const char* v) { return parse({{"GOMP_CPU_AFFINITY", v}}); };
  auto p = aff("0 3 1-2 4-15:2");
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(cpus_of(p.settings), (V{{0}, {3}, {1}, {2}, {4}, {6}, {8}, {10}, {12}, {14}}));
  EXPECT_EQ(p.settings.gomp_cpu_affinity, "0 3 1-2 4-15:2");
  EXPECT_EQ(p.settings.proc_bind, (std::vector<ProcBind>{ProcBind::True}));
  EXPECT_EQ(cpus_of(aff("0,0x1f, 2 ,2").settings), (V{{0}, {31}, {2}, {2}}));  // hex; repeats kept
  // OMP_PLACES wins; GOMP_CPU_AFFINITY is still checked.
  p = parse({{"OMP_PLACES", "{5}"}, {"GOMP_CPU_AFFINITY", "0-3"}});
  EXPECT_EQ(cpus_of(p.settings), (V{{5}}));
  p = parse({{"OMP_PLACES", "{5}"}, {"GOMP_CPU_AFFINITY", "3-1"}});
  EXPECT_EQ(p.warnings.size(), 1u);
  // A bad OMP_PLACES leaves the places to GOMP_CPU_AFFINITY.
  p = parse({{"OMP_PLACES", "{"}, {"GOMP_CPU_AFFINITY", "7"}});
  EXPECT_EQ(cpus_of(p.settings), (V{{7}}));
  EXPECT_EQ(p.warnings.size(), 1u);
  // CPUs not on the machine.
  p = aff("30-34");
  EXPECT_EQ(cpus_of(p.settings), (V{{30}, {31}}));
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0],
            "canopy-omp: GOMP_CPU_AFFINITY='30-34': CPUs 32-34 are not on this machine; dropped (3 places left "
            "empty, 5 -> 2 places)");
  for (const char* bad : {"", "x", "3-1", "0-3:0", "65536", "1-", "0,", "0-3:", "1;2", "-1"}) {
    auto q = aff(bad);
    EXPECT_TRUE(q.settings.places.empty()) << bad;
    ASSERT_EQ(q.warnings.size(), 1u) << bad;
    EXPECT_EQ(q.warnings[0].rfind(std::string("canopy-omp: GOMP_CPU_AFFINITY='") + bad + "': expected", 0), 0u)
        << q.warnings[0];
  }
  EXPECT_EQ(aff("3-1").warnings[0],
            "canopy-omp: GOMP_CPU_AFFINITY='3-1': expected CPU numbers and ranges such as '0 3 1-2 4-15:2' "
            "(expected a range end from 3 to 65535 at position 4); using the default");
}
