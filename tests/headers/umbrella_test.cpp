// The umbrella header canopy.hpp, included first and alone, is enough for
// a program that uses every public header: topology, matrix, mapping,
// placement, cost, formats, binding, errors, runtime, affinity, data
// handles, data-flow tasks and task graphs. (That each header also compiles
// alone, and that canopy.hpp lists every one of them, is checked by the
// targets of tests/headers/CMakeLists.txt.)
#include "canopy.hpp"
// Only after canopy.hpp, so that it cannot lean on what these bring in.
#include <gtest/gtest.h>

TEST(UmbrellaHeader, OneIncludeGivesTheWholeApi) {
  const canopy::Topology topo = canopy::Topology::from_synthetic("numa:2 core:2 pu:1");
  const canopy::CommMatrix m = canopy::CommMatrix::from_edges(4, {{0, 1, 10}, {2, 3, 10}});
  const canopy::Placement p = canopy::map_tasks(topo, m, canopy::default_policy());
  ASSERT_EQ(p.num_tasks(), 4);
  EXPECT_GE(canopy::evaluate(topo, m, p).weighted, 0.0);
  EXPECT_FALSE(canopy::omp_places(topo, p).empty());
  EXPECT_FALSE(canopy::current_thread_binding().empty());
  EXPECT_THROW(canopy::find_policy("no such policy"), canopy::Error);

  canopy::RuntimeOptions o;
  o.num_threads = 2;
  o.bind = canopy::BindMode::None;
  canopy::Runtime rt(o, topo);
  int x = 0;
  const canopy::Data d = canopy::data_register(&x, sizeof x);
  rt.run([&] {
    canopy::submit({canopy::write(d)}, [&] { ++x; }, canopy::Affinity::node(1, /*strict=*/true));
    canopy::wait_all();
  });
  canopy::TaskGraph g;
  g.add({canopy::read_write(d)}, [&] { ++x; });
  g.run(rt);
  canopy::data_free(d);
  EXPECT_EQ(x, 2);
}
