// canopy::Topology in Python: the three ways to load one, its sizes and
// levels, per-PU facts as NumPy arrays, and its text, JSON, SVG and XML.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "canopy/formats.hpp"
#include "canopy/topology.hpp"

namespace canopy::python {

namespace {

template <typename F>
nb::ndarray<nb::numpy, int, nb::ndim<1>> per_pu(const Topology& t, F field) {
  std::vector<int> v;
  v.reserve(t.pus().size());
  for (const PUInfo& pu : t.pus()) v.push_back(field(pu));
  return to_numpy(std::move(v));
}

}  // namespace

void bind_topology(nb::module_& m) {
  nb::class_<Topology>(m, "Topology")
      .def_static("this_machine", &Topology::this_machine)
      .def_static("from_xml_file", &Topology::from_xml_file, nb::arg("path"))
      .def_static("from_synthetic", &Topology::from_synthetic, nb::arg("description"))
      .def_static("load", &Topology::load, nb::arg("input"))
      .def("restricted", &Topology::restricted, nb::arg("pu_os_indexes"))
      .def_prop_ro("source", &Topology::source)
      .def_prop_ro("is_this_machine", &Topology::is_this_machine)
      .def_prop_ro("num_levels", &Topology::num_levels)
      .def_prop_ro("num_pus", &Topology::num_pus)
      .def_prop_ro("num_cores", &Topology::num_cores)
      .def_prop_ro("num_numa_nodes", &Topology::num_numa_nodes)
      .def("level_names", [](const Topology& t) {
        std::vector<std::string> names;
        for (const LevelInfo& l : t.levels()) names.push_back(l.name);
        return names;
      })
      .def("pu_os_indexes", [](const Topology& t) { return per_pu(t, [](const PUInfo& p) { return p.os_index; }); })
      .def("pu_cores", [](const Topology& t) { return per_pu(t, [](const PUInfo& p) { return p.core; }); })
      .def("pu_numa_nodes", [](const Topology& t) { return per_pu(t, [](const PUInfo& p) { return p.numa; }); })
      .def("pu_by_os_index", &Topology::pu_by_os_index, nb::arg("os_index"))
      .def(
          "distance",
          [](const Topology& t, int a, int b) {
            (void)t.pu(a);  // out of range: IndexError (std::out_of_range)
            (void)t.pu(b);
            return t.distance(a, b);
          },
          nb::arg("pu_a"), nb::arg("pu_b"))
      .def("text", [](const Topology& t) { return topology_text(t); })
      .def("json", [](const Topology& t) { return topology_json(t); })
      .def("svg", [](const Topology& t) { return topology_svg(t); })
      .def("to_xml", &Topology::to_xml);
}

}  // namespace canopy::python
