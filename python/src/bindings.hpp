// What the files of the compiled module canopy._canopy share: one function
// per area that adds its classes and functions to the module, and the helper
// that hands a std::vector to NumPy without copying it again.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <vector>

namespace canopy::python {

namespace nb = nanobind;

void bind_topology(nb::module_& m);
void bind_matrix(nb::module_& m);
void bind_mapping(nb::module_& m);

// A 1-D NumPy array that owns the vector's buffer (freed with the array).
template <typename T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), {heap->size()}, owner);
}

}  // namespace canopy::python
