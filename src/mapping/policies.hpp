// The built-in policies' functions (one file each), listed in registry.cpp.
// Every one has the PolicyFunction signature of canopy/mapping.hpp: it
// receives the slots the engine chose and must fill them exactly.
#pragma once
#include <vector>

#include "canopy/mapping.hpp"

namespace canopy::policy {

std::vector<int> compact(const Topology&, const CommMatrix&, const MapOptions&, const Slots&);
std::vector<int> scatter(const Topology&, const CommMatrix&, const MapOptions&, const Slots&);
std::vector<int> treematch(const Topology&, const CommMatrix&, const MapOptions&, const Slots&);
std::vector<int> eagermap(const Topology&, const CommMatrix&, const MapOptions&, const Slots&);
std::vector<int> choicemap(const Topology&, const CommMatrix&, const MapOptions&, const Slots&);

}  // namespace canopy::policy
