// Unit tests of src/formats: labels and sizes as lstopo prints them, the
// placement strings (OMP_PLACES, GOMP_CPU_AFFINITY, rankfile, list reader),
// the text tree's compaction, the JSON's content and the SVG pictures, on
// synthetic and XML topologies.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/formats.hpp"
#include "canopy/topology.hpp"
#include "formats/labels.hpp"

namespace {

using canopy::Placement;
using canopy::PlacementFormat;
using canopy::Topology;

Topology two_socket() { return Topology::from_xml_file(std::string(CANOPY_TEST_DATA) + "/topologies/two-socket.xml"); }

Placement placement(std::vector<int> task_pu, canopy::Granularity g = canopy::Granularity::PU) {
  Placement p;
  p.policy = "test";
  p.task_pu = std::move(task_pu);
  p.granularity = g;
  return p;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t pos = 0; (pos = s.find(what, pos)) != std::string::npos; pos += what.size()) ++n;
  return n;
}

TEST(Labels, SizesAsLstopoPrintsThem) {
  using canopy::formats::human_size;
  EXPECT_EQ(human_size(32768), "32KB");
  EXPECT_EQ(human_size(256000), "250KB");          // 249.99 KiB rounds to 250
  EXPECT_EQ(human_size(20ULL << 20), "20MB");
  EXPECT_EQ(human_size(20000000), "19MB");
  EXPECT_EQ(human_size((10ULL << 20) - 1), "10240KB");  // below 10 MiB stays in KB
  EXPECT_EQ(human_size(4ULL << 30), "4096MB");
  EXPECT_EQ(human_size(64000000000ULL), "60GB");
  EXPECT_EQ(human_size(64ULL << 30), "64GB");
  EXPECT_EQ(human_size(16ULL << 40), "16TB");
}

TEST(Labels, ObjectsAndRanges) {
  using canopy::formats::object_label;
  EXPECT_EQ(object_label({"PU", 3, 17, 0}), "PU L#3 (P#17)");
  EXPECT_EQ(object_label({"NUMANode", 1, 1, 64ULL << 30}), "NUMANode L#1 (P#1 64GB)");
  EXPECT_EQ(object_label({"L3", 0, 0, 20ULL << 20}), "L3 L#0 (20MB)");
  EXPECT_EQ(object_label({"Package", 1, 1, 0}), "Package L#1");
  EXPECT_EQ(object_label({"Machine", 0, 0, 128ULL << 30}), "Machine (128GB total)");
  EXPECT_EQ(object_label({"Pad", -1, -1, 0}), "");
  EXPECT_EQ(canopy::formats::ranges({5, 0, 1, 2, 3, 8, 9, 3}), "0-3,5,8-9");
  EXPECT_EQ(canopy::formats::ranges({}), "");
  EXPECT_EQ(canopy::formats::xml_escape("a&b<c>\"d'"), "a&amp;b&lt;c&gt;&quot;d&apos;");
}

TEST(PlacementFormats, NamesParseAndUnknownIsAnError) {
  for (const auto& n : canopy::placement_format_names()) EXPECT_NO_THROW(canopy::parse_placement_format(n));
  EXPECT_EQ(canopy::parse_placement_format("omp-places"), PlacementFormat::OmpPlaces);
  EXPECT_EQ(canopy::parse_placement_format("rankfile"), PlacementFormat::Rankfile);
  try {
    canopy::parse_placement_format("yaml");
    FAIL();
  } catch (const canopy::Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown placement format 'yaml': expected one of table, json, list, omp-places, gomp, rankfile");
    EXPECT_EQ(e.kind(), canopy::ErrorKind::BadInput);
  }
}

// two-socket.xml numbers the first hardware thread of each core 0-15 and
// their siblings 16-31: logical PU 2c is P#c, 2c+1 is P#c+16 (package 0
// holds cores 0-7).
TEST(PlacementFormats, StringsUseOsNumbers) {
  Topology t = two_socket();
  Placement p = placement({0, 3, 16, 16});
  EXPECT_EQ(canopy::omp_places(t, p), "{0},{17},{8},{8}");
  EXPECT_EQ(canopy::gomp_cpu_affinity(t, p), "0 17 8 8");
  EXPECT_EQ(canopy::format_placement(t, p, PlacementFormat::List), "0 17 8 8\n");
  EXPECT_EQ(canopy::format_placement(t, p, PlacementFormat::Gomp), "0 17 8 8\n");
  Placement core = placement({0, 3, 16}, canopy::Granularity::Core);
  EXPECT_EQ(canopy::omp_places(t, core), "{0,16},{1,17},{8,24}");
  EXPECT_EQ(canopy::gomp_cpu_affinity(t, core), "0 17 8");  // GOMP_CPU_AFFINITY: one CPU per thread
}

TEST(PlacementFormats, RankfileUsesLogicalPusOrCores) {
  Topology t = two_socket();
  Placement p = placement({0, 3, 16});
  std::string pu = canopy::rankfile(t, p, "node7");
  EXPECT_NE(pu.find("rank 0=node7 slot=0\nrank 1=node7 slot=3\nrank 2=node7 slot=16\n"), std::string::npos) << pu;
  EXPECT_NE(pu.find("--use-hwthread-cpus"), std::string::npos);
  p.helper_pu = {1, 2, 17};
  EXPECT_NE(canopy::rankfile(t, p).find("rank 1=localhost slot=3,2\n"), std::string::npos);
  p.granularity = canopy::Granularity::Core;
  std::string core = canopy::rankfile(t, p);
  EXPECT_NE(core.find("rank 0=localhost slot=0\nrank 1=localhost slot=1\nrank 2=localhost slot=8\n"),
            std::string::npos)
      << core;
  for (const auto& line : {pu, core}) EXPECT_EQ(line.front(), '#');  // comments for Open MPI's lexer
}

TEST(PlacementFormats, TableAndJsonCarryEveryColumn) {
  Topology t = two_socket();
  Placement p = placement({0, 3});
  p.helper_pu = {1, -1};
  canopy::CommMatrix m = canopy::CommMatrix::from_edges(2, {{0, 1, 42}});
  std::string table = canopy::format_placement(t, p, PlacementFormat::Table, &m);
  EXPECT_NE(table.find("task  PU L#  PU P#  core  NUMA  binding (P#)  helper P#  volume"), std::string::npos)
      << table;
  EXPECT_NE(table.find("   1      3     17     1     0  17                    -      42"), std::string::npos) << table;
  auto j = nlohmann::json::parse(canopy::format_placement(t, p, PlacementFormat::Json, &m));
  EXPECT_EQ(j["tasks"][0]["helper_pu_os"], 16);
  EXPECT_TRUE(j["tasks"][1]["helper_pu"].is_null());
  EXPECT_EQ(j["tasks"][1]["cpuset"], "0x00020000");
  EXPECT_EQ(j["tasks"][1]["volume"], 42.0);
  EXPECT_EQ(j["helpers"], "smt");
  // A matrix of another size adds no volume column rather than reading out of bounds.
  canopy::CommMatrix other(5);
  EXPECT_EQ(canopy::format_placement(t, p, PlacementFormat::Table, &other).find("volume"), std::string::npos);
}

TEST(PlacementList, ReadsWhitespaceAndComments) {
  Topology t = two_socket();
  std::istringstream in("# tasks 0-2\n 16\t0 \n\n1 # trailing comment\n");
  Placement p = canopy::parse_placement_list(t, in, "p.txt", 3);
  EXPECT_EQ(p.task_pu, (std::vector<int>{1, 0, 2}));
  EXPECT_EQ(p.granularity, canopy::Granularity::PU);
  // What the List format writes reads back to the same PUs.
  Placement q = placement({5, 7, 30, 0});
  std::istringstream back(canopy::format_placement(t, q, PlacementFormat::List));
  EXPECT_EQ(canopy::parse_placement_list(t, back, "back").task_pu, q.task_pu);
}

TEST(PlacementList, ErrorsNameLineAndToken) {
  Topology t = two_socket();
  auto error = [&](const std::string& text, int expected) {
    std::istringstream in(text);
    try {
      canopy::parse_placement_list(t, in, "p.txt", expected);
    } catch (const canopy::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("0 1\n2 3,4\n", -1).rfind("p.txt:2: '3,4' is not an OS CPU number", 0), 0u);
  EXPECT_EQ(error("0 -1\n", -1).rfind("p.txt:1: '-1' is not an OS CPU number", 0), 0u);
  EXPECT_EQ(error("0 99999999999999\n", -1).rfind("p.txt:1: '99999999999999'", 0), 0u);
  EXPECT_EQ(error("0\n1\n32\n", -1), "p.txt:3: CPU 32 is not in topology '" + t.source() +
                                         "' (its OS CPU numbers are 0-31)");
  EXPECT_EQ(error("0 1 2\n", 4), "p.txt: 3 CPU numbers for 4 tasks (expected one OS CPU number per task of the matrix)");
  EXPECT_EQ(error("# empty\n", -1), "p.txt: no CPU number found (expected one OS CPU number per task)");
}

TEST(TopologyText, SmallMachinesPrintEveryObject) {
  std::string s = canopy::topology_text(two_socket());
  EXPECT_NE(s.find("Machine (128GB total)\n  Package L#0 + L3 L#0 (20MB)\n    NUMANode L#0 (P#0 64GB)\n"
                   "    L2 L#0 (256KB) + L1d L#0 (32KB) + Core L#0: PU L#0 (P#0), PU L#1 (P#16)\n"),
            std::string::npos)
      << s;
  EXPECT_EQ(s.find("more like the above"), std::string::npos);
  EXPECT_NE(s.find("     #0  10  21\n"), std::string::npos) << s;  // distance matrix
}

TEST(TopologyText, BigMachinesFitAScreen) {
  for (const std::string syn : {"pack:16 numa:4 core:16 pu:4", "pack:64 core:64 pu:1", "pack:4 pu:1024"}) {
    std::string s = canopy::topology_text(Topology::from_synthetic(syn));
    size_t n = count(s, "\n");
    EXPECT_LE(n, 100u) << s;
    EXPECT_NE(s.find(Topology::from_synthetic(syn).num_pus() == 4096 ? "4096 PUs" : "PUs"), std::string::npos);
  }
  // A tree that does not collapse (every sibling differs) is cut with a count.
  Topology full = Topology::from_synthetic("pack:1 core:120 pu:2");
  std::vector<int> keep;
  for (int c = 0; c < 120; ++c)
    for (int k = 0; k <= c % 2; ++k) keep.push_back(2 * c + k);
  Topology uneven = full.restricted(keep);
  std::string s = canopy::topology_text(uneven);
  EXPECT_LE(count(s, "\n"), 100u);
  EXPECT_NE(s.find("more lines not shown"), std::string::npos) << s;
}

TEST(TopologyJson, ListsPusCoresNumaAndDistances) {
  Topology t = two_socket();
  auto j = nlohmann::json::parse(canopy::topology_json(t));
  EXPECT_EQ(j["num_pus"], 32);
  ASSERT_EQ(j["pus"].size(), 32u);
  EXPECT_EQ(j["pus"][1]["os_index"], 16);
  EXPECT_EQ(j["pus"][1]["core"], 0);
  EXPECT_EQ(j["pus"][31]["numa"], 1);
  EXPECT_EQ(j["cores"].size(), 16u);
  EXPECT_EQ(j["numa_nodes"][1]["cpuset"], "8-15,24-31");
  EXPECT_EQ(j["numa_nodes"][1]["bytes"], 64ULL << 30);
  EXPECT_EQ(j["numa_distances"], nlohmann::json::parse("[[10,21],[21,10]]"));
  EXPECT_EQ(j["levels"].size(), static_cast<size_t>(t.num_levels()));
  // The tree's leaves are the PUs, in order.
  std::vector<int> leaves;
  std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& n) {
    if (!n.contains("children")) leaves.push_back(n["first_pu"]);
    else
      for (const auto& c : n["children"]) walk(c);
  };
  walk(j["tree"]);
  ASSERT_EQ(leaves.size(), 32u);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(leaves[i], i);
  EXPECT_TRUE(nlohmann::json::parse(canopy::topology_json(Topology::from_synthetic("pack:2 pu:2")))["numa_distances"]
                  .is_null());
}

TEST(TopologySvg, EveryPuIsDrawnAtEverySize) {
  for (const std::string syn : {"pack:2 core:2 pu:2", "pack:4 numa:2 core:8 pu:2", "pack:8 numa:2 core:16 pu:4"}) {
    Topology t = Topology::from_synthetic(syn);
    std::string svg = canopy::topology_svg(t);
    EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
    EXPECT_TRUE(svg.ends_with("</svg>\n"));
    EXPECT_EQ(count(svg, "<title>PU L#"), static_cast<size_t>(t.num_pus())) << syn;
    EXPECT_EQ(count(svg, "<g>"), count(svg, "</g>"));
    EXPECT_EQ(count(svg, "<title>PU L#") + count(svg, "<g>\n"), count(svg, "<title>"));
  }
  // Sizes stay screen-like for 4096 PUs.
  std::string big = canopy::topology_svg(Topology::from_synthetic("pack:16 numa:4 core:16 pu:4"));
  auto w = std::stoi(big.substr(big.find("width=\"") + 7));
  auto h = std::stoi(big.substr(big.find("height=\"") + 8));
  EXPECT_LE(w, 2000);
  EXPECT_LE(h, 2000);
}

TEST(PlacementSvg, TasksHelpersAndLegend) {
  Topology t = two_socket();
  Placement p = placement({0, 2, 2});
  p.helper_pu = {1, 3, -1};
  std::string svg = canopy::placement_svg(t, p);
  EXPECT_NE(svg.find("<title>PU L#0 (P#0): task 0</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>PU L#2 (P#1): task 1,task 2</title>"), std::string::npos);  // shared PU: striped
  EXPECT_NE(svg.find("<title>PU L#1 (P#16): helper PU of task 0</title>"), std::string::npos);
  EXPECT_NE(svg.find("stroke-dasharray"), std::string::npos);
  EXPECT_NE(svg.find(">task 0<"), std::string::npos);  // legend, one colour per task when few
  EXPECT_NE(svg.find(">free PU<"), std::string::npos);
  // Many tasks: at most 12 colour groups of consecutive ids.
  std::vector<int> pus;
  for (int i = 0; i < 32; ++i) pus.push_back(i);
  std::string many = canopy::placement_svg(t, placement(pus));
  EXPECT_NE(many.find(">tasks 0-2<"), std::string::npos);
  EXPECT_NE(many.find(">tasks 30-31<"), std::string::npos);
  EXPECT_EQ(count(many, ">tasks "), 12u);
}

}  // namespace
