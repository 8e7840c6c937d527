// Properties of the CLI's outputs that goldens cannot pin down: formats
// parse back (OMP_PLACES syntax, rankfile syntax, the list through `canopy
// eval`, matrices through their writers, XML through hwloc), every policy's
// placement round-trips, `compare` covers every policy, --help is grouped,
// notes reach stderr, and `taskset -c 0 canopy topology` sees one PU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "cli_runner.hpp"

namespace {

using canopy::test::lines;
using canopy::test::read_text;
using canopy::test::run_cli;
using Json = nlohmann::json;

const std::string kSmall = "pack:2 numa:2 core:4 pu:2";
const std::string kTwoSocket = "topologies/two-socket.xml";

struct TempDir {
  std::string path = canopy::test::temp_dir();
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string operator/(const std::string& f) const { return path + "/" + f; }
};

std::vector<std::string> policy_names() {
  auto r = run_cli({"map", "--list-policies"});
  std::vector<std::string> names;
  for (const auto& l : lines(r.out)) names.push_back(l.substr(0, l.find(' ')));
  return names;
}

// OMP_PLACES grammar as canopy writes it: "{a,b,...}" places separated by
// commas, no spaces, non-negative integers.
std::vector<std::vector<int>> parse_places(const std::string& s) {
  std::vector<std::vector<int>> places;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '{') throw std::runtime_error("expected '{' at " + std::to_string(i) + " in " + s);
    size_t close = s.find('}', i);
    if (close == std::string::npos) throw std::runtime_error("unclosed place in " + s);
    std::vector<int> place;
    std::string body = s.substr(i + 1, close - i - 1);
    if (!std::regex_match(body, std::regex("[0-9]+(,[0-9]+)*"))) throw std::runtime_error("bad place {" + body + "}");
    size_t p = 0;
    while (p < body.size()) {
      size_t q = body.find(',', p);
      if (q == std::string::npos) q = body.size();
      place.push_back(std::stoi(body.substr(p, q - p)));
      p = q + 1;
    }
    places.push_back(place);
    i = close + 1;
    if (i < s.size()) {
      if (s[i] != ',') throw std::runtime_error("expected ',' between places in " + s);
      ++i;
    }
  }
  return places;
}

TEST(RoundTrip, ListPoliciesNamesTheDefault) {
  auto r = run_cli({"map", "--list-policies"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto names = policy_names();
  EXPECT_GE(names.size(), 2u);
  EXPECT_NE(std::find(names.begin(), names.end(), "compact"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "scatter"), names.end());
  EXPECT_NE(r.out.find("(default)"), std::string::npos) << r.out;
}

TEST(RoundTrip, OmpPlacesAreTheBindings) {
  for (const std::string gran : {"pu", "core"}) {
    auto places = run_cli({"map", "--input", kTwoSocket, "--matrix", "cli/stencil16.txt", "--policy", "compact",
                           "--granularity", gran, "--of", "omp-places"});
    ASSERT_EQ(places.status, 0) << places.err;
    ASSERT_FALSE(places.out.empty());
    ASSERT_EQ(places.out.back(), '\n');
    auto parsed = parse_places(places.out.substr(0, places.out.size() - 1));
    auto json = run_cli({"map", "--input", kTwoSocket, "--matrix", "cli/stencil16.txt", "--policy", "compact",
                         "--granularity", gran, "--of", "json"});
    ASSERT_EQ(json.status, 0) << json.err;
    Json j = Json::parse(json.out);
    ASSERT_EQ(parsed.size(), j["tasks"].size());
    for (size_t t = 0; t < parsed.size(); ++t) {
      EXPECT_EQ(parsed[t], j["tasks"][t]["binding_os"].get<std::vector<int>>()) << "task " << t;
      EXPECT_EQ(parsed[t].size(), gran == "core" ? 2u : 1u);
    }
  }
}

TEST(RoundTrip, RankfileLinesFollowOpenMpiSyntax) {
  for (const std::string gran : {"pu", "core"}) {
    auto r = run_cli({"map", "--input", kTwoSocket, "--tasks", "12", "--policy", "compact", "--granularity", gran,
                      "--helpers", "smt", "--of", "rankfile"});
    ASSERT_EQ(r.status, 0) << r.err;
    int rank = 0;
    for (const auto& l : lines(r.out)) {
      if (l.rfind("#", 0) == 0) continue;
      std::smatch m;
      ASSERT_TRUE(std::regex_match(l, m, std::regex("rank ([0-9]+)=localhost slot=([0-9]+(,[0-9]+)*)"))) << l;
      EXPECT_EQ(std::stoi(m[1]), rank++);
    }
    EXPECT_EQ(rank, 12);
  }
}

// The list written by `map` and read back by `eval` gives the same cost,
// for every policy (with a matrix that makes the costs differ).
TEST(RoundTrip, ListThroughEvalKeepsTheCostOfEveryPolicy) {
  TempDir tmp;
  for (const std::string& policy : policy_names()) {
    SCOPED_TRACE(policy);
    const std::string list = tmp / (policy + ".list");
    auto m = run_cli({"map", "--input", kSmall, "--matrix", "cli/stencil16.txt", "--policy", policy, "--of", "list",
                      "-o", list});
    ASSERT_EQ(m.status, 0) << m.err;
    EXPECT_EQ(m.out, "") << "-o must keep stdout empty";
    auto j = run_cli({"map", "--input", kSmall, "--matrix", "cli/stencil16.txt", "--policy", policy, "--of", "json"});
    ASSERT_EQ(j.status, 0) << j.err;
    auto e = run_cli({"eval", "--input", kSmall, "--matrix", "cli/stencil16.txt", "--placement", list, "--of", "json"});
    ASSERT_EQ(e.status, 0) << e.err;
    Json mapped = Json::parse(j.out)["cost"], evaluated = Json::parse(e.out)["cost"];
    EXPECT_EQ(mapped, evaluated);
    // The list is one line of OS CPU numbers, one per task.
    auto text = read_text(list);
    EXPECT_EQ(lines(text).size(), 1u);
    EXPECT_TRUE(std::regex_match(text, std::regex("[0-9]+( [0-9]+){15}\n"))) << text;
  }
}

TEST(RoundTrip, MatrixFormatsConvertBackAndForth) {
  TempDir tmp;
  auto original = run_cli({"matrix", "--matrix", "cli/stencil16.txt"});
  ASSERT_EQ(original.status, 0) << original.err;
  auto body = [](const std::string& info) { return info.substr(info.find('\n')); };  // all but the file line
  for (const std::string f : {"dense", "mm", "edges"}) {
    SCOPED_TRACE(f);
    const std::string path = tmp / ("m." + f);
    auto w = run_cli({"matrix", "--matrix", "cli/stencil16.txt", "--of", f, "-o", path});
    ASSERT_EQ(w.status, 0) << w.err;
    auto back = run_cli({"matrix", "--matrix", path, "--format", f});
    ASSERT_EQ(back.status, 0) << back.err;
    EXPECT_EQ(body(back.out), body(original.out));
  }
}

TEST(RoundTrip, TopologyXmlReloadsToTheSameTree) {
  TempDir tmp;
  for (const std::string& input : {kTwoSocket, std::string("topologies/knl-like.xml"), kSmall}) {
    SCOPED_TRACE(input);
    const std::string xml = tmp / "saved.xml";
    auto w = run_cli({"topology", "--input", input, "--of", "xml", "-o", xml});
    ASSERT_EQ(w.status, 0) << w.err;
    auto a = run_cli({"topology", "--input", input});
    auto b = run_cli({"topology", "--input", xml});
    ASSERT_EQ(b.status, 0) << b.err;
    auto skip_source = [](const std::string& s) { return s.substr(s.find('\n')); };
    EXPECT_EQ(skip_source(a.out), skip_source(b.out));
  }
}

TEST(RoundTrip, CompareCoversEveryPolicyAndNamesTheBest) {
  auto r = run_cli({"compare", "--input", kSmall, "--matrix", "cli/stencil16.txt", "--of", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = Json::parse(r.out);
  auto names = policy_names();
  ASSERT_EQ(j["policies"].size(), names.size());
  double best = 1e300;
  std::string best_name;
  for (size_t i = 0; i < names.size(); ++i) {
    const Json& p = j["policies"][i];
    EXPECT_EQ(p["policy"], names[i]);
    ASSERT_TRUE(p.contains("weighted")) << p.dump();
    EXPECT_GE(p["ratio"].get<double>(), 1.0 - 1e-12);
    EXPECT_GE(p["time_ms"].get<double>(), 0.0);
    if (p["weighted"].get<double>() < best) {
      best = p["weighted"].get<double>();
      best_name = p["policy"];
    }
  }
  EXPECT_EQ(j["best"], best_name);

  auto table = run_cli({"compare", "--input", kSmall, "--matrix", "cli/stencil16.txt"});
  ASSERT_EQ(table.status, 0) << table.err;
  for (const auto& n : names) EXPECT_NE(table.out.find("\n" + n + " "), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("best: " + best_name), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" ms\n"), std::string::npos);
}

TEST(RoundTrip, SvgFilesAreWrittenAndComplete) {
  TempDir tmp;
  auto m = run_cli({"map", "--input", kTwoSocket, "--matrix", "cli/stencil16.txt", "--policy", "compact", "--svg",
                    tmp / "p.svg", "--of", "list"});
  ASSERT_EQ(m.status, 0) << m.err;
  std::string svg = read_text(tmp / "p.svg");
  ASSERT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  size_t pus = 0;
  for (size_t pos = 0; (pos = svg.find("<title>PU L#", pos)) != std::string::npos; ++pos) ++pus;
  EXPECT_EQ(pus, 32u);
  for (int t = 0; t < 16; ++t) EXPECT_NE(svg.find(": task " + std::to_string(t) + "<"), std::string::npos) << t;

  auto h = run_cli({"matrix", "--matrix", "cli/stencil16.txt", "--svg", tmp / "m.svg"});
  ASSERT_EQ(h.status, 0) << h.err;
  EXPECT_NE(read_text(tmp / "m.svg").find("<svg"), std::string::npos);
}

TEST(RoundTrip, AsymmetricMatrixIsAnnounced) {
  auto r = run_cli({"map", "--input", kSmall, "--matrix", "cli/asym4.txt", "--policy", "compact", "--of", "list"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("canopy: note: cli/asym4.txt is not symmetric; using C + C^T"), std::string::npos) << r.err;
  auto quiet = run_cli({"map", "--input", kSmall, "--matrix", "cli/stencil16.txt", "--policy", "compact"});
  EXPECT_EQ(quiet.err, "");
}

TEST(RoundTrip, DefaultPolicyIsUsedWithoutPolicyOption) {
  std::string def;
  for (const auto& l : lines(run_cli({"map", "--list-policies"}).out))
    if (l.find("(default)") != std::string::npos) def = l.substr(0, l.find(' '));
  ASSERT_FALSE(def.empty());
  auto r = run_cli({"map", "--input", kSmall, "--tasks", "4"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out.rfind("# policy " + def + ":", 0), 0u) << r.out;
}

TEST(RoundTrip, HelpIsGroupedByHeading) {
  for (const std::string sub : {"topology", "matrix", "map", "eval", "compare"}) {
    auto r = run_cli({sub, "--help"});
    EXPECT_EQ(r.status, 0) << sub;
    EXPECT_NE(r.out.find("Input:"), std::string::npos) << sub;
    EXPECT_NE(r.out.find("Output:"), std::string::npos) << sub;
    EXPECT_NE(r.out.find("--of"), std::string::npos) << sub;
    EXPECT_NE(r.out.find("Examples:"), std::string::npos) << sub;
    if (sub == "map" || sub == "compare" || sub == "eval") {
      EXPECT_NE(r.out.find("Mapping:"), std::string::npos) << sub;
    }
  }
}

// The one test that looks at this machine: whatever it has, a process bound
// to CPU 0 sees exactly one PU.
TEST(ThisMachine, TasksetRestrictsTheTopologyToOnePU) {
  if (access("/usr/bin/taskset", X_OK) != 0 && access("/bin/taskset", X_OK) != 0) GTEST_SKIP() << "no taskset";
  // CPU 0 may be outside this process's cpuset (containers): use the first allowed CPU.
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
  int cpu = 0;
  while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set)) ++cpu;
  auto r = run_cli({"topology", "--of", "json"}, "", {"taskset", "-c", std::to_string(cpu)});
  ASSERT_EQ(r.status, 0) << r.err;
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["num_pus"], 1);
  ASSERT_EQ(j["pus"].size(), 1u);
  EXPECT_EQ(j["pus"][0]["os_index"], cpu);
  EXPECT_EQ(j["this_machine"], true);
}

}  // namespace
