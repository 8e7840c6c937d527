// The placement engine in Python: the policy registry, map_tasks, the cost
// model, compare_policies, and placements in the formats other tools read
// (OMP_PLACES, GOMP_CPU_AFFINITY, rankfile, list, table, JSON, SVG).
// Mapping, evaluating and comparing release the GIL: their inputs are C++
// objects that Python cannot change, and they can take seconds.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>
#include <sstream>

#include "bindings.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/compare.hpp"
#include "canopy/cost.hpp"
#include "canopy/formats.hpp"
#include "canopy/mapping.hpp"
#include "canopy/placement.hpp"
#include "canopy/topology.hpp"

namespace canopy::python {

namespace {

MapOptions options(bool pack, const std::string& granularity, const std::string& helpers,
                   const std::vector<double>& weights) {
  MapOptions opt;
  opt.pack = pack;
  opt.granularity = parse_granularity(granularity);
  opt.helpers = parse_helpers(helpers);
  opt.weights = weights;
  return opt;
}

}  // namespace

void bind_mapping(nb::module_& m) {
  nb::class_<Placement>(m, "Placement")
      .def(
          "__init__",
          [](Placement* p, const std::string& policy, std::vector<int> task_pu, std::vector<int> helper_pu,
             const std::string& granularity) {
            new (p) Placement{policy, std::move(task_pu), std::move(helper_pu), parse_granularity(granularity)};
          },
          nb::arg("policy"), nb::arg("task_pu"), nb::arg("helper_pu") = std::vector<int>{},
          nb::arg("granularity") = "pu")
      .def_ro("policy", &Placement::policy)
      .def_ro("task_pu", &Placement::task_pu)
      .def_ro("helper_pu", &Placement::helper_pu)
      .def_prop_ro("granularity", [](const Placement& p) { return to_string(p.granularity); })
      .def_prop_ro("num_tasks", &Placement::num_tasks)
      .def("binding", &Placement::binding, nb::arg("topology"), nb::arg("task"));

  nb::class_<Cost>(m, "Cost")
      .def_ro("hop_bytes", &Cost::hop_bytes)
      .def_ro("weighted", &Cost::weighted)
      .def_ro("numa_crossing", &Cost::numa_crossing)
      .def_ro("tasks_per_numa", &Cost::tasks_per_numa);

  nb::class_<PolicyResult>(m, "PolicyResult")
      .def_ro("policy", &PolicyResult::policy)
      .def_ro("cost", &PolicyResult::cost)
      .def_ro("ratio", &PolicyResult::ratio)
      .def_ro("time_ms", &PolicyResult::time_ms)
      .def_ro("error", &PolicyResult::error);

  nb::class_<Comparison>(m, "Comparison")
      .def_ro("results", &Comparison::results)
      .def_ro("best", &Comparison::best)
      .def_ro("weights", &Comparison::weights);

  m.def("policies", [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (const Policy& p : policies()) out.emplace_back(p.name, p.description);
    return out;
  });
  m.def("find_policy", [](const std::string& name) { return find_policy(name).name; }, nb::arg("name"));
  m.def("default_policy", &default_policy);
  m.def("default_weights", &default_weights, nb::arg("topology"));
  m.def("resolve_weights", &resolve_weights, nb::arg("topology"), nb::arg("weights"));

  m.def(
      "map_tasks",
      [](const Topology& t, const CommMatrix& c, const std::string& policy, bool pack, const std::string& granularity,
         const std::string& helpers, const std::vector<double>& weights) {
        return map_tasks(t, c, policy, options(pack, granularity, helpers, weights));
      },
      nb::arg("topology"), nb::arg("matrix"), nb::arg("policy"), nb::arg("pack") = false,
      nb::arg("granularity") = "pu", nb::arg("helpers") = "none", nb::arg("weights") = std::vector<double>{},
      nb::call_guard<nb::gil_scoped_release>());
  m.def("validate_placement", &validate_placement, nb::arg("topology"), nb::arg("placement"));
  m.def(
      "evaluate",
      [](const Topology& t, const CommMatrix& c, const Placement& p, const std::vector<double>& weights) {
        return evaluate(t, c, p, weights);  // checks the sizes and PUs itself
      },
      nb::arg("topology"), nb::arg("matrix"), nb::arg("placement"), nb::arg("weights") = std::vector<double>{},
      nb::call_guard<nb::gil_scoped_release>());
  m.def(
      "compare_policies",
      [](const Topology& t, const CommMatrix& c, bool pack, const std::string& granularity,
         const std::vector<double>& weights) {
        return compare_policies(t, c, options(pack, granularity, "none", weights));
      },
      nb::arg("topology"), nb::arg("matrix"), nb::arg("pack") = false, nb::arg("granularity") = "pu",
      nb::arg("weights") = std::vector<double>{}, nb::call_guard<nb::gil_scoped_release>());

  m.def("omp_places", &omp_places, nb::arg("topology"), nb::arg("placement"));
  m.def("gomp_cpu_affinity", &gomp_cpu_affinity, nb::arg("topology"), nb::arg("placement"));
  m.def("rankfile", &rankfile, nb::arg("topology"), nb::arg("placement"), nb::arg("host") = "localhost");
  m.def("placement_svg", &placement_svg, nb::arg("topology"), nb::arg("placement"));
  m.def("placement_format_names", &placement_format_names);
  m.def(
      "format_placement",
      [](const Topology& t, const Placement& p, const std::string& format, const CommMatrix* c) {
        return format_placement(t, p, parse_placement_format(format), c);
      },
      nb::arg("topology"), nb::arg("placement"), nb::arg("format"), nb::arg("matrix").none() = nb::none());
  m.def(
      "parse_placement_list",
      [](const Topology& t, const std::string& text, const std::string& name, int expected_tasks) {
        std::istringstream in(text);
        return parse_placement_list(t, in, name, expected_tasks);
      },
      nb::arg("topology"), nb::arg("text"), nb::arg("name") = "placement", nb::arg("expected_tasks") = -1);
}

}  // namespace canopy::python
