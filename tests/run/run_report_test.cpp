// The pure parts of `canopy run`: CPU lists, OMP_DISPLAY_AFFINITY lines, the
// comparison and its table, the output filter, the environment for each
// runtime (on synthetic machines), PATH lookup.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/placement.hpp"
#include "canopy/topology.hpp"
#include "run_launch.hpp"
#include "run_report.hpp"

using namespace canopy;
using namespace canopy::run;

TEST(RunCpuList, ParsesRuntimeForms) {
  EXPECT_EQ(parse_cpu_list("7"), (std::vector<int>{7}));
  EXPECT_EQ(parse_cpu_list("0-3"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_cpu_list("0,1"), (std::vector<int>{0, 1}));          // libomp
  EXPECT_EQ(parse_cpu_list("0-1,4"), (std::vector<int>{0, 1, 4}));     // libgomp
  EXPECT_EQ(parse_cpu_list("{2,1, 1}"), (std::vector<int>{1, 2}));
  EXPECT_EQ(parse_cpu_list(" 5 \r"), (std::vector<int>{5}));
  for (const char* bad : {"", "{}", "a", "1-", "3-1", "1,,2", "-1", "1 2", "99999999"})
    EXPECT_THROW(parse_cpu_list(bad), Error) << bad;
  try {
    parse_cpu_list("x7");
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'x7'"), std::string::npos);
  }
}

TEST(RunCpuList, Prints) {
  EXPECT_EQ(cpu_list_string({0, 1, 2, 3, 5}), "0-3,5");
  EXPECT_EQ(cpu_list_string({4}), "4");
  EXPECT_EQ(cpu_list_string({1, 3}), "1,3");
  EXPECT_EQ(cpu_list_string({}), "-");
}

TEST(RunAffinityLine, ParsesOnlyOurs) {
  const std::string marker = affinity_marker(42);
  EXPECT_EQ(marker, "canopy-affinity-42:");
  EXPECT_EQ(affinity_format(marker), "canopy-affinity-42: pid=%P level=%L thread=%n cpus=%A");
  auto a = parse_affinity_line("canopy-affinity-42: pid=1234 level=1 thread=3 cpus=0-1,6", marker);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->pid, 1234);
  EXPECT_EQ(a->level, 1);
  EXPECT_EQ(a->thread, 3);
  EXPECT_EQ(a->cpus, (std::vector<int>{0, 1, 6}));
  EXPECT_FALSE(parse_affinity_line("canopy-affinity-43: pid=1 level=1 thread=0 cpus=0", marker));
  EXPECT_FALSE(parse_affinity_line("hello", marker));
  EXPECT_THROW(parse_affinity_line("canopy-affinity-42: pid=1 level=1 cpus=0", marker), Error);
  EXPECT_THROW(parse_affinity_line("canopy-affinity-42: pid=1 level=x thread=0 cpus=0", marker), Error);
  EXPECT_THROW(parse_affinity_line("canopy-affinity-42: pid=1 level=1 thread=0 cpus=", marker), Error);
}

TEST(RunCompare, OkMismatchUnseenUnplacedAndNested) {
  const std::vector<std::vector<int>> expected = {{0}, {1}, {2, 3}};
  std::vector<AffinityLine> lines = {
      {10, 1, 0, {0}},     // ok
      {10, 1, 2, {2}},     // bound to only part of its core: mismatch
      {10, 2, 1, {7}},     // a nested team: not compared
      {10, 1, 5, {1}},     // beyond -n
      {10, 1, 0, {0}},     // the same thread again, still ok
  };
  Report r = compare(expected, lines);
  EXPECT_EQ(r.processes, 1);
  EXPECT_EQ(r.mismatches, 1);
  EXPECT_EQ(r.not_seen, 1);
  ASSERT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.rows[0].status, ThreadStatus::Ok);
  EXPECT_EQ(r.rows[1].status, ThreadStatus::NotSeen);
  EXPECT_EQ(r.rows[2].status, ThreadStatus::Mismatch);
  EXPECT_EQ(r.rows[3].status, ThreadStatus::Unplaced);
  const std::string table = format_report(r);
  EXPECT_NE(table.find("MISMATCH: 1 thread(s)"), std::string::npos) << table;
  EXPECT_NE(table.find("not seen"), std::string::npos);
  EXPECT_EQ(table.find("pid"), std::string::npos);  // one process: no pid column
}

TEST(RunCompare, AMismatchStaysAMismatch) {
  Report r = compare({{0}}, {{1, 1, 0, {3}}, {1, 1, 0, {0}}});
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].status, ThreadStatus::Mismatch);
  EXPECT_EQ(r.rows[0].bound, std::vector<int>{3});
}

TEST(RunCompare, SeveralProcessesAndNothingPrinted) {
  Report r = compare({{0}, {1}}, {{7, 1, 0, {0}}, {7, 1, 1, {1}}, {8, 1, 0, {0}}, {8, 1, 1, {1}}});
  EXPECT_EQ(r.processes, 2);
  EXPECT_EQ(r.rows.size(), 4u);
  EXPECT_EQ(r.mismatches, 0);
  EXPECT_NE(format_report(r).find("pid"), std::string::npos);
  Report none = compare({{0}, {1}}, {});
  EXPECT_EQ(none.processes, 0);
  EXPECT_EQ(none.not_seen, 2);
  EXPECT_EQ(none.mismatches, 0);
  EXPECT_NE(format_report(none).find("printed no affinity"), std::string::npos);
}

namespace {
struct Filtered {
  std::string passed;
  std::vector<std::string> marked;
  LineFilter filter{"MARK:", [this](std::string_view b) { passed += b; },
                    [this](std::string_view l) { marked.emplace_back(l); }};
};
}  // namespace

TEST(RunLineFilter, SeparatesMarkerLinesAndPassesTheRest) {
  Filtered f;
  f.filter.feed("hello\nMARK: one\nMA");
  EXPECT_EQ(f.passed, "hello\n");  // "MA" may still become a marker line: held
  f.filter.feed("RK: two\nMAX\nprompt> ");
  EXPECT_EQ(f.passed, "hello\nMAX\nprompt> ");  // the prompt is passed without waiting for its newline
  f.filter.feed("answer\n  MARK: indented is not ours\nMARK");
  f.filter.finish();
  EXPECT_EQ(f.passed, "hello\nMAX\nprompt> answer\n  MARK: indented is not ours\nMARK");
  EXPECT_EQ(f.marked, (std::vector<std::string>{"MARK: one", "MARK: two"}));
}

TEST(RunLineFilter, ByteByByte) {
  Filtered f;
  const std::string in = "a\nMARK: x=1\n\nMARK: y\nMAR\nb";
  for (char c : in) f.filter.feed(std::string_view(&c, 1));
  f.filter.finish();
  EXPECT_EQ(f.passed, "a\n\nMAR\nb");
  EXPECT_EQ(f.marked, (std::vector<std::string>{"MARK: x=1", "MARK: y"}));
}

namespace {
std::string value(const std::vector<EnvChange>& env, const std::string& name) {
  for (const auto& c : env)
    if (c.name == name) return c.value ? *c.value : "<unset>";
  return "<absent>";
}

Placement given(std::vector<int> pus, Granularity g = Granularity::PU) {
  Placement p;
  p.policy = "given";
  p.task_pu = std::move(pus);
  p.granularity = g;
  return p;
}
}  // namespace

TEST(RunEnvironment, EachRuntime) {
  // Synthetic OS indexes equal logical ones: PUs 0..7, cores {0,1},{2,3},...
  const Topology topo = Topology::from_synthetic("pack:2 core:2 pu:2");
  const Placement p = given({6, 0, 3});
  auto a = omp_environment(topo, p, Runtime::Auto, "");
  EXPECT_EQ(value(a, "OMP_NUM_THREADS"), "3");
  EXPECT_EQ(value(a, "OMP_PLACES"), "{6},{0},{3}");
  EXPECT_EQ(value(a, "OMP_PROC_BIND"), "close");
  EXPECT_EQ(value(a, "GOMP_CPU_AFFINITY"), "<unset>");
  EXPECT_EQ(value(a, "KMP_AFFINITY"), "<unset>");
  EXPECT_EQ(value(a, "OMP_DISPLAY_AFFINITY"), "<absent>");

  auto g = omp_environment(topo, p, Runtime::Gomp, "");
  EXPECT_EQ(value(g, "GOMP_CPU_AFFINITY"), "6 0 3");
  EXPECT_EQ(value(g, "OMP_PLACES"), "<unset>");
  EXPECT_EQ(value(g, "OMP_PROC_BIND"), "<unset>");
  EXPECT_EQ(value(g, "KMP_AFFINITY"), "<unset>");

  auto l = omp_environment(topo, p, Runtime::Llvm, "FMT");
  EXPECT_EQ(value(l, "KMP_AFFINITY"), "granularity=fine,explicit,proclist=[{6},{0},{3}]");
  EXPECT_EQ(value(l, "OMP_PLACES"), "<unset>");
  EXPECT_EQ(value(l, "GOMP_CPU_AFFINITY"), "<unset>");
  EXPECT_EQ(value(l, "OMP_DISPLAY_AFFINITY"), "true");
  EXPECT_EQ(value(l, "OMP_AFFINITY_FORMAT"), "FMT");
}

TEST(RunEnvironment, CoreGranularity) {
  const Topology topo = Topology::from_synthetic("pack:2 core:2 pu:2");
  const Placement p = given({6, 1}, Granularity::Core);
  EXPECT_EQ(value(omp_environment(topo, p, Runtime::Auto, ""), "OMP_PLACES"), "{6,7},{0,1}");
  EXPECT_EQ(value(omp_environment(topo, p, Runtime::Llvm, ""), "KMP_AFFINITY"),
            "granularity=fine,explicit,proclist=[{6,7},{0,1}]");
  // GOMP_CPU_AFFINITY cannot say "this core": refused with a way out.
  try {
    omp_environment(topo, p, Runtime::Gomp, "");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput);
    EXPECT_NE(std::string(e.what()).find("--runtime auto"), std::string::npos) << e.what();
  }
  // Cores of one PU: core granularity is the same as pu.
  const Topology single = Topology::from_synthetic("pack:1 core:4 pu:1");
  EXPECT_EQ(value(omp_environment(single, given({2, 0}, Granularity::Core), Runtime::Gomp, ""), "GOMP_CPU_AFFINITY"),
            "2 0");
}

TEST(RunEnvironment, RuntimeNames) {
  EXPECT_EQ(parse_runtime("auto"), Runtime::Auto);
  EXPECT_EQ(parse_runtime("gomp"), Runtime::Gomp);
  EXPECT_EQ(parse_runtime("llvm"), Runtime::Llvm);
  EXPECT_THROW(parse_runtime("intel"), Error);
}

TEST(RunFindProgram, PathLookupAndErrors) {
  EXPECT_EQ(find_program("sh", "/nonexistent:/bin:/usr/bin"), "/bin/sh");
  EXPECT_EQ(find_program("/bin/sh", ""), "/bin/sh");
  auto message = [](const std::string& name, const char* path) {
    try {
      find_program(name, path);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::BadInput);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("no-such-program-xyz", "/bin:/usr/bin").find("'no-such-program-xyz' not found in PATH"),
            std::string::npos);
  EXPECT_NE(message("./no-such-program-xyz", "/bin").find("./no-such-program-xyz"), std::string::npos);
  EXPECT_NE(message("/tmp", "").find("is a directory"), std::string::npos);
  EXPECT_NE(message("", "/bin").find("no program given"), std::string::npos);
  const std::string dir = ::testing::TempDir() + "canopy_run_find_" + std::to_string(::getpid());
  ::mkdir(dir.c_str(), 0755);
  const std::string plain = dir + "/plain";
  std::ofstream(plain) << "#!/bin/sh\n";
  ::chmod(plain.c_str(), 0644);
  EXPECT_NE(message(plain, "").find("is not executable"), std::string::npos);
  EXPECT_NE(message("plain", dir.c_str()).find("is not executable"), std::string::npos);
  ::chmod(plain.c_str(), 0755);
  EXPECT_EQ(find_program("plain", (std::string("/nonexistent:") + dir).c_str()), dir + "/plain");
  ::unlink(plain.c_str());
  ::rmdir(dir.c_str());
}
