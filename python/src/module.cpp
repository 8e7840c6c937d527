// The compiled module canopy._canopy: nanobind bindings over canopy's C++
// API. canopy::Error becomes the Python exception canopy.Error (a ValueError)
// with canopy's message; the Pythonic layer lives in python/canopy/*.py.
#include "bindings.hpp"

#include "canopy/error.hpp"

NB_MODULE(_canopy, m) {
  m.doc() = "canopy's C++ API (use the canopy package, not this module)";
  nanobind::exception<canopy::Error>(m, "Error", PyExc_ValueError);
  canopy::python::bind_topology(m);
  canopy::python::bind_matrix(m);
  canopy::python::bind_mapping(m);
}
