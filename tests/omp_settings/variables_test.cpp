// parse_settings on every scalar and list variable: defaults, good values
// (case, blanks), bad values (exactly one warning naming the variable, the
// value and what was expected; the default kept), and libgomp's
// interactions (OMP_NESTED, list lengths and max-active-levels, GOMP_STACKSIZE).
#include <gtest/gtest.h>

#include "env_fixture.hpp"

using namespace canopy::omp;
using omp_test::Env;
using omp_test::parse;

TEST(OmpVariables, DefaultsWhenNothingIsSet) {
  auto p = parse({});
  const Settings& s = p.settings;
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_TRUE(s.num_threads.empty());
  EXPECT_EQ(s.default_num_threads, 16);  // the machine's cores
  EXPECT_TRUE(s.proc_bind.empty());
  EXPECT_TRUE(s.places.empty());
  EXPECT_FALSE(s.dynamic);
  EXPECT_FALSE(s.max_active_levels.has_value());
  EXPECT_EQ(effective_max_active_levels(s), 1);
  EXPECT_EQ(s.thread_limit, 0);
  EXPECT_FALSE(s.run_sched_set);
  EXPECT_EQ(s.run_sched.kind, ScheduleKind::Dynamic);
  EXPECT_EQ(s.stacksize, 0u);
  EXPECT_EQ(s.wait_policy, WaitPolicy::Unset);
  EXPECT_FALSE(s.display_env);
  EXPECT_EQ(s.affinity_format, "level %L thread %i affinity %A");
  EXPECT_EQ(s.allocator, "omp_default_mem_alloc");
  EXPECT_FALSE(s.spin_count.has_value());
  EXPECT_EQ(effective_spin_count(s), 300000u);
}

TEST(OmpVariables, NumThreadsLists) {
  EXPECT_EQ(parse({{"OMP_NUM_THREADS", "4"}}).settings.num_threads, (std::vector<int>{4}));
  EXPECT_EQ(parse({{"OMP_NUM_THREADS", " 4 , 2,1 "}}).settings.num_threads, (std::vector<int>{4, 2, 1}));
  EXPECT_EQ(parse({{"OMP_NUM_THREADS", "2147483647"}}).settings.num_threads, (std::vector<int>{2147483647}));
  for (const char* bad : {"4,x", "0", "-1", "", " ", "4,", ",4", "4 2", "2147483648", "+4", "4;2", "1e3"}) {
    auto p = parse({{"OMP_NUM_THREADS", bad}});
    EXPECT_TRUE(p.settings.num_threads.empty()) << bad;
    ASSERT_EQ(p.warnings.size(), 1u) << bad;
  }
  EXPECT_EQ(parse({{"OMP_NUM_THREADS", "4,x"}}).warnings[0],
            "canopy-omp: OMP_NUM_THREADS='4,x': expected a comma-separated list of positive integers; "
            "using the default");
}

TEST(OmpVariables, ProcBind) {
  auto one = [](const char* v) { return parse({{"OMP_PROC_BIND", v}}).settings.proc_bind; };
  EXPECT_EQ(one("true"), (std::vector<ProcBind>{ProcBind::True}));
  EXPECT_EQ(one(" FALSE "), (std::vector<ProcBind>{ProcBind::False}));
  EXPECT_EQ(one("Spread, close ,master,primary"),
            (std::vector<ProcBind>{ProcBind::Spread, ProcBind::Close, ProcBind::Primary, ProcBind::Primary}));
  for (const char* bad : {"false,close", "close,true", "true,false", "sideways", "close,", "", "close spread",
                          "closer"}) {
    auto p = parse({{"OMP_PROC_BIND", bad}});
    EXPECT_TRUE(p.settings.proc_bind.empty()) << bad;
    ASSERT_EQ(p.warnings.size(), 1u) << bad;
  }
  EXPECT_EQ(parse({{"OMP_PROC_BIND", "false,close"}}).warnings[0],
            "canopy-omp: OMP_PROC_BIND='false,close': expected true, false, or a comma-separated list of "
            "primary, master, close and spread; using the default");
}

TEST(OmpVariables, Booleans) {
  // libgomp takes true and false only (no 1/0/yes/no); so does canopy.
  EXPECT_TRUE(parse({{"OMP_DYNAMIC", "TRUE"}}).settings.dynamic);
  EXPECT_TRUE(parse({{"OMP_DYNAMIC", "  true\t"}}).settings.dynamic);
  EXPECT_TRUE(parse({{"OMP_CANCELLATION", "True"}}).settings.cancellation);
  EXPECT_TRUE(parse({{"OMP_DISPLAY_AFFINITY", "true"}}).settings.display_affinity);
  EXPECT_FALSE(parse({{"OMP_DYNAMIC", "false"}}).settings.dynamic);
  for (const char* name : {"OMP_DYNAMIC", "OMP_CANCELLATION", "OMP_DISPLAY_AFFINITY", "OMP_NESTED"})
    for (const char* bad : {"1", "0", "yes", "y", "n", "on", "", "truely", "true false"}) {
      auto p = parse({{name, bad}});
      ASSERT_EQ(p.warnings.size(), 1u) << name << "=" << bad;
      EXPECT_EQ(p.warnings[0], std::string("canopy-omp: ") + name + "='" + bad +
                                   "': expected true or false; using the default");
      EXPECT_FALSE(p.settings.dynamic || p.settings.cancellation || p.settings.display_affinity);
      EXPECT_FALSE(p.settings.nested.has_value());
    }
}

TEST(OmpVariables, MaxActiveLevelsNestedAndLists) {
  EXPECT_EQ(parse({{"OMP_MAX_ACTIVE_LEVELS", "3"}}).settings.max_active_levels, 3);
  EXPECT_EQ(parse({{"OMP_MAX_ACTIVE_LEVELS", "0"}}).settings.max_active_levels, 0);
  EXPECT_EQ(parse({{"OMP_MAX_ACTIVE_LEVELS", "100000"}}).settings.max_active_levels, kSupportedActiveLevels);
  EXPECT_EQ(parse({{"OMP_NESTED", "true"}}).settings.max_active_levels, kSupportedActiveLevels);
  EXPECT_EQ(parse({{"OMP_NESTED", "false"}}).settings.max_active_levels, 1);
  EXPECT_EQ(parse({{"OMP_NESTED", "true"}}).settings.nested, true);
  // OMP_MAX_ACTIVE_LEVELS wins over OMP_NESTED.
  EXPECT_EQ(parse({{"OMP_MAX_ACTIVE_LEVELS", "2"}, {"OMP_NESTED", "false"}}).settings.max_active_levels, 2);
  // Lists of more than one level turn nesting on (libgomp) unless told otherwise.
  EXPECT_EQ(parse({{"OMP_NUM_THREADS", "4,2"}}).settings.max_active_levels, kSupportedActiveLevels);
  EXPECT_EQ(parse({{"OMP_PROC_BIND", "spread,close"}}).settings.max_active_levels, kSupportedActiveLevels);
  EXPECT_EQ(parse({{"OMP_NUM_THREADS", "4,2"}, {"OMP_NESTED", "false"}}).settings.max_active_levels, 1);
  EXPECT_FALSE(parse({{"OMP_NUM_THREADS", "4"}}).settings.max_active_levels.has_value());
  auto bad = parse({{"OMP_MAX_ACTIVE_LEVELS", "-1"}});
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_EQ(bad.warnings[0],
            "canopy-omp: OMP_MAX_ACTIVE_LEVELS='-1': expected a non-negative integer; using the default");
  EXPECT_FALSE(bad.settings.max_active_levels.has_value());
}

TEST(OmpVariables, IntegerVariables) {
  auto p = parse({{"OMP_THREAD_LIMIT", "64"},
                  {"OMP_MAX_TASK_PRIORITY", "10"},
                  {"OMP_DEFAULT_DEVICE", "0"},
                  {"OMP_NUM_TEAMS", " 4 "},
                  {"OMP_TEAMS_THREAD_LIMIT", "8"}});
  EXPECT_TRUE(p.warnings.empty());
  EXPECT_EQ(p.settings.thread_limit, 64);
  EXPECT_EQ(p.settings.max_task_priority, 10);
  EXPECT_EQ(p.settings.default_device, 0);
  EXPECT_EQ(p.settings.num_teams, 4);
  EXPECT_EQ(p.settings.teams_thread_limit, 8);
  EXPECT_EQ(parse({{"OMP_MAX_TASK_PRIORITY", "0"}}).settings.max_task_priority, 0);
  EXPECT_EQ(parse({{"OMP_DEFAULT_DEVICE", "3"}}).settings.default_device, 3);
  // Above INT_MAX, a thread limit is no limit (libgomp).
  EXPECT_EQ(parse({{"OMP_THREAD_LIMIT", "99999999999"}}).settings.thread_limit, 0);
  struct Bad {
    const char* name;
    const char* value;
    const char* expected;
  };
  for (const Bad& b : {Bad{"OMP_THREAD_LIMIT", "0", "expected a positive integer"},
                       Bad{"OMP_THREAD_LIMIT", "many", "expected a positive integer"},
                       Bad{"OMP_NUM_TEAMS", "0", "expected a positive integer"},
                       Bad{"OMP_NUM_TEAMS", "2147483648", "expected a positive integer"},
                       Bad{"OMP_TEAMS_THREAD_LIMIT", "-3", "expected a positive integer"},
                       Bad{"OMP_MAX_TASK_PRIORITY", "-1", "expected a non-negative integer"},
                       Bad{"OMP_MAX_TASK_PRIORITY", "1.5", "expected a non-negative integer"},
                       Bad{"OMP_DEFAULT_DEVICE", "gpu", "expected a non-negative integer"},
                       Bad{"OMP_DEFAULT_DEVICE", "", "expected a non-negative integer"}}) {
    auto q = parse({{b.name, b.value}});
    ASSERT_EQ(q.warnings.size(), 1u) << b.name << "=" << b.value;
    EXPECT_EQ(q.warnings[0], std::string("canopy-omp: ") + b.name + "='" + b.value + "': " + b.expected +
                                 "; using the default");
    EXPECT_EQ(q.settings.thread_limit + q.settings.num_teams + q.settings.teams_thread_limit +
                  q.settings.max_task_priority + q.settings.default_device,
              0);
  }
}

TEST(OmpVariables, Schedule) {
  auto sch = [](const char* v) { return parse({{"OMP_SCHEDULE", v}}); };
  auto p = sch("static");
  EXPECT_TRUE(p.settings.run_sched_set);
  EXPECT_EQ(p.settings.run_sched.kind, ScheduleKind::Static);
  EXPECT_EQ(p.settings.run_sched.chunk, 0);
  p = sch(" Guided , 7 ");
  EXPECT_EQ(p.settings.run_sched.kind, ScheduleKind::Guided);
  EXPECT_EQ(p.settings.run_sched.chunk, 7);
  p = sch("monotonic:dynamic,4");
  EXPECT_TRUE(p.settings.run_sched.monotonic);
  EXPECT_EQ(p.settings.run_sched.kind, ScheduleKind::Dynamic);
  EXPECT_EQ(p.settings.run_sched.chunk, 4);
  p = sch("NONMONOTONIC : static");
  EXPECT_TRUE(p.settings.run_sched.nonmonotonic);
  EXPECT_FALSE(p.settings.run_sched.monotonic);
  EXPECT_EQ(sch("auto").settings.run_sched.kind, ScheduleKind::Auto);
  EXPECT_EQ(sch("dynamic,0").settings.run_sched.chunk, 1);  // libgomp: 0 means 1 for dynamic
  EXPECT_EQ(sch("static,0").settings.run_sched.chunk, 0);
  for (const char* bad : {"fast", "dynamic,", "dynamic,-1", "dynamic,x", "monotonic", "monotonic dynamic",
                          "dynamic 4", "static,2147483648", "", "runtime"}) {
    auto q = sch(bad);
    EXPECT_FALSE(q.settings.run_sched_set) << bad;
    ASSERT_EQ(q.warnings.size(), 1u) << bad;
  }
  EXPECT_EQ(sch("fast").warnings[0],
            "canopy-omp: OMP_SCHEDULE='fast': expected [monotonic:|nonmonotonic:]static|dynamic|guided|auto"
            "[,chunk] with a chunk from 0 to 2147483647; using the default");
}

TEST(OmpVariables, StackSize) {
  auto size = [](const char* v) { return parse({{"OMP_STACKSIZE", v}}).settings.stacksize; };
  EXPECT_EQ(size("512"), 512u * 1024);  // K when no suffix
  EXPECT_EQ(size("100B"), 100u);
  EXPECT_EQ(size(" 4 k "), 4096u);
  EXPECT_EQ(size("8M"), 8u << 20);
  EXPECT_EQ(size("1g"), 1u << 30);
  for (const char* bad : {"", "8X", "8MB", "M", "-1", "99999999999999999999", "17179869184G"}) {
    auto p = parse({{"OMP_STACKSIZE", bad}});
    EXPECT_EQ(p.settings.stacksize, 0u) << bad;
    ASSERT_EQ(p.warnings.size(), 1u) << bad;
  }
  EXPECT_EQ(parse({{"OMP_STACKSIZE", "8X"}}).warnings[0],
            "canopy-omp: OMP_STACKSIZE='8X': expected a size such as 512K, 8M or 1G (suffix B, K, M or G; K when "
            "none) that fits in 64 bits; using the default");
  // GOMP_STACKSIZE stands in when OMP_STACKSIZE is unset or bad.
  EXPECT_EQ(parse({{"GOMP_STACKSIZE", "2M"}}).settings.stacksize, 2u << 20);
  EXPECT_EQ(parse({{"OMP_STACKSIZE", "1M"}, {"GOMP_STACKSIZE", "2M"}}).settings.stacksize, 1u << 20);
  EXPECT_EQ(parse({{"OMP_STACKSIZE", "bad"}, {"GOMP_STACKSIZE", "2M"}}).settings.stacksize, 2u << 20);
}

TEST(OmpVariables, WaitPolicyAndSpinCount) {
  EXPECT_EQ(parse({{"OMP_WAIT_POLICY", "ACTIVE"}}).settings.wait_policy, WaitPolicy::Active);
  EXPECT_EQ(parse({{"OMP_WAIT_POLICY", " passive "}}).settings.wait_policy, WaitPolicy::Passive);
  EXPECT_EQ(effective_spin_count(parse({{"OMP_WAIT_POLICY", "active"}}).settings), 30000000000u);
  EXPECT_EQ(effective_spin_count(parse({{"OMP_WAIT_POLICY", "passive"}}).settings), 0u);
  auto bad = parse({{"OMP_WAIT_POLICY", "lazy"}});
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_EQ(bad.warnings[0], "canopy-omp: OMP_WAIT_POLICY='lazy': expected active or passive; using the default");

  auto spin = [](const char* v) { return parse({{"GOMP_SPINCOUNT", v}}).settings.spin_count; };
  EXPECT_EQ(spin("1000"), 1000u);
  EXPECT_EQ(spin("10k"), 10000u);
  EXPECT_EQ(spin(" 3 M "), 3000000u);
  EXPECT_EQ(spin("2G"), 2000000000u);
  EXPECT_EQ(spin("5T"), 5000000000000u);
  EXPECT_EQ(spin("infinite"), ~std::uint64_t{0});
  EXPECT_EQ(spin("INFINITY"), ~std::uint64_t{0});
  EXPECT_EQ(spin("99999999999T"), ~std::uint64_t{0});  // saturates, as libgomp does
  // GOMP_SPINCOUNT wins over the wait policy's default.
  EXPECT_EQ(effective_spin_count(parse({{"OMP_WAIT_POLICY", "active"}, {"GOMP_SPINCOUNT", "7"}}).settings), 7u);
  for (const char* bad : {"", "fast", "10x", "10kk", "-5", "infinite2", "1.5k"}) {
    auto p = parse({{"GOMP_SPINCOUNT", bad}});
    EXPECT_FALSE(p.settings.spin_count.has_value()) << bad;
    ASSERT_EQ(p.warnings.size(), 1u) << bad;
  }
}

TEST(OmpVariables, DisplayEnvAffinityAllocatorOffload) {
  auto d = parse({{"OMP_DISPLAY_ENV", "Verbose"}}).settings;
  EXPECT_TRUE(d.display_env && d.display_env_verbose);
  d = parse({{"OMP_DISPLAY_ENV", "true"}}).settings;
  EXPECT_TRUE(d.display_env && !d.display_env_verbose);
  EXPECT_FALSE(parse({{"OMP_DISPLAY_ENV", "false"}}).settings.display_env);
  auto bad = parse({{"OMP_DISPLAY_ENV", "yes"}});
  ASSERT_EQ(bad.warnings.size(), 1u);
  EXPECT_EQ(bad.warnings[0],
            "canopy-omp: OMP_DISPLAY_ENV='yes': expected true, false or verbose; using the default");

  EXPECT_EQ(parse({{"OMP_AFFINITY_FORMAT", "T%n on %A"}}).settings.affinity_format, "T%n on %A");
  auto fmt = parse({{"OMP_AFFINITY_FORMAT", "thread %q"}});
  ASSERT_EQ(fmt.warnings.size(), 1u);
  EXPECT_EQ(fmt.warnings[0],
            "canopy-omp: OMP_AFFINITY_FORMAT='thread %q': expected a valid affinity format (an unknown field "
            "type in '%q'); using the default");
  EXPECT_EQ(fmt.settings.affinity_format, "level %L thread %i affinity %A");

  EXPECT_EQ(parse({{"OMP_ALLOCATOR", " OMP_HIGH_BW_MEM_ALLOC "}}).settings.allocator, "omp_high_bw_mem_alloc");
  EXPECT_EQ(parse({{"OMP_ALLOCATOR", "omp_thread_mem_alloc"}}).settings.allocator, "omp_thread_mem_alloc");
  for (const char* badalloc : {"omp_default_mem_allocx", "malloc", "", "omp_default_mem_space"}) {
    auto p = parse({{"OMP_ALLOCATOR", badalloc}});
    EXPECT_EQ(p.settings.allocator, "omp_default_mem_alloc");
    ASSERT_EQ(p.warnings.size(), 1u) << badalloc;
    EXPECT_NE(p.warnings[0].find("expected a predefined allocator: omp_default_mem_alloc,"), std::string::npos);
  }
  EXPECT_EQ(parse({{"OMP_TARGET_OFFLOAD", "disabled"}}).settings.target_offload, TargetOffload::Disabled);
  EXPECT_EQ(parse({{"OMP_TARGET_OFFLOAD", "mandatory"}}).settings.target_offload, TargetOffload::Mandatory);
  EXPECT_EQ(parse({{"OMP_TARGET_OFFLOAD", "maybe"}}).warnings.size(), 1u);
}

TEST(OmpVariables, SeveralBadValuesGiveOneLineEach) {
  auto p = parse({{"OMP_NUM_THREADS", "x"}, {"OMP_DYNAMIC", "1"}, {"OMP_SCHEDULE", "y"}, {"OMP_PLACES", "{"}});
  EXPECT_EQ(p.warnings.size(), 4u);
}

TEST(OmpVariables, ProcessGetenvReadsTheProcessEnvironment) {
  ::setenv("CANOPY_OMP_TEST_VARIABLE", " 4,2 ", 1);
  ::unsetenv("CANOPY_OMP_TEST_UNSET");
  Getenv g = process_getenv();
  EXPECT_EQ(g("CANOPY_OMP_TEST_VARIABLE"), std::optional<std::string>(" 4,2 "));
  EXPECT_EQ(g("CANOPY_OMP_TEST_UNSET"), std::nullopt);
  ::setenv("CANOPY_OMP_TEST_VARIABLE", "", 1);
  EXPECT_EQ(g("CANOPY_OMP_TEST_VARIABLE"), std::optional<std::string>(""));
  ::unsetenv("CANOPY_OMP_TEST_VARIABLE");
}

TEST(OmpVariables, WarningsStayOneLineWhateverTheValue) {
  auto p = parse({{"OMP_NUM_THREADS", "4\n2\\\xff"}});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0],
            "canopy-omp: OMP_NUM_THREADS='4\\x0a2\\x5c\\xff': expected a comma-separated list of positive "
            "integers; using the default");
}

TEST(OmpVariables, QuotedPiecesOfTheValueAreEscapedToo) {
  // Found by fuzz_omp_env: the reason quotes the bad specifier, newline and all.
  auto p = parse({{"OMP_AFFINITY_FORMAT", "%a %\n"}});
  ASSERT_EQ(p.warnings.size(), 1u);
  EXPECT_EQ(p.warnings[0],
            "canopy-omp: OMP_AFFINITY_FORMAT='%a %\\x0a': expected a valid affinity format (an unknown field type "
            "in '%\\x0a'); using the default");
}
