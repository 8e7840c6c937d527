// OMP_PLACES and GOMP_CPU_AFFINITY: their syntax and their resolution to the
// OS CPU numbers of a canopy::Topology. Internal to the settings layer
// (parse_settings turns the outcome into warning lines and Settings fields).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "omp/core/settings.hpp"

namespace canopy::omp::detail {

struct PlacesOutcome {
  std::vector<Place> places;
  std::string note;  // non-empty when a valid value lost CPUs or places on this machine
};

// Limits that keep a typo from allocating the machine away (libgomp's are
// the same order: 65536 places, CPU numbers below its cpuset size).
inline constexpr int kMaxPlaces = 65536;
inline constexpr int kMaxCpu = 1 << 20;             // CPU numbers are below this
inline constexpr std::size_t kMaxListedCpus = 1 << 22;  // CPUs over all places before resolution

// Both return nullopt and set `error` ("expected ... (why)") on a bad value.
std::optional<PlacesOutcome> parse_omp_places(std::string_view value, const Topology& machine, std::string& error);
std::optional<PlacesOutcome> parse_gomp_cpu_affinity(std::string_view value, const Topology& machine,
                                                     std::string& error);

}  // namespace canopy::omp::detail
