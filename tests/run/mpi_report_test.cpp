// `canopy mpirun --report`: the rank lines `canopy mpi-rank` prints and their
// comparison with the placement (tools/canopy/mpi_report.cpp).
#include <gtest/gtest.h>

#include "canopy/error.hpp"
#include "mpi_report.hpp"

namespace {

using canopy::mpi::compare_ranks;
using canopy::mpi::ExpectedRank;
using canopy::mpi::parse_rank_line;
using canopy::mpi::rank_line;
using canopy::mpi::RankLine;

const std::string kMarker = "canopy-affinity-7:";

TEST(MpiReport, RankLineRoundTrips) {
  auto r = parse_rank_line(rank_line(kMarker, 3, "node07", 1234, {4, 5, 6, 7}), kMarker);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rank, 3);
  EXPECT_EQ(r->host, "node07");
  EXPECT_EQ(r->pid, 1234);
  EXPECT_EQ(r->cpus, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_FALSE(parse_rank_line("canopy-affinity-7: pid=1 level=1 thread=0 cpus=0", kMarker));  // a thread line
  EXPECT_FALSE(parse_rank_line("rank=1 host=x pid=1 cpus=0", kMarker));                        // not ours
  EXPECT_THROW(parse_rank_line(kMarker + " rank=x host=a pid=1 cpus=0", kMarker), canopy::Error);
}

TEST(MpiReport, EveryRankAndThreadWherePlacedIsOk) {
  std::vector<ExpectedRank> e{{"localhost", {0, 1}, {{0}, {1}}}, {"localhost", {2, 3}, {{2}, {3}}}};
  std::vector<RankLine> ranks{{0, "build", 10, {0, 1}}, {1, "build", 11, {2, 3}}};
  std::vector<canopy::run::AffinityLine> threads{{10, 1, 0, {0}}, {10, 1, 1, {1}}, {11, 1, 0, {2}}, {11, 1, 1, {3}}};
  auto r = compare_ranks(e, ranks, threads);
  EXPECT_EQ(r.mismatches, 0) << r.text;
  EXPECT_NE(r.text.find("every rank (and thread) ran where placed"), std::string::npos);
}

TEST(MpiReport, MisplacedUnseenAndWrongHostAreMismatches) {
  std::vector<ExpectedRank> e{{"a", {0}, {}}, {"b", {1}, {}}, {"a", {2}, {}}, {"localhost", {0, 1}, {{0}, {1}}}};
  std::vector<RankLine> ranks{{0, "a", 10, {0, 1}},  // bound to more than its core
                              {1, "a", 11, {1}},     // on the wrong host
                              {3, "x", 13, {0, 1}}};  // rank 2 never reported
  std::vector<canopy::run::AffinityLine> threads{{13, 1, 0, {1}}};  // thread 0 elsewhere, thread 1 unseen
  auto r = compare_ranks(e, ranks, threads);
  EXPECT_EQ(r.mismatches, 5) << r.text;
  EXPECT_NE(r.text.find("MISMATCH (host b)"), std::string::npos) << r.text;
  EXPECT_NE(r.text.find("not seen"), std::string::npos) << r.text;
}

}  // namespace
