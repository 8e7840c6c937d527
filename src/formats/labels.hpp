// Small text helpers shared by the output formats: sizes printed the way
// lstopo prints them, hwloc object labels ("L3 L#0 (19MB)"), and compact
// integer ranges ("0-3,8"). Internal to src/formats.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "canopy/topology.hpp"

namespace canopy::formats {

// lstopo's rounding and units: below 10 MiB in KB, below 10 GiB in MB,
// below 10 TiB in GB, else TB (1 KB = 1024 bytes), rounded to nearest.
std::string human_size(std::uint64_t bytes);

// One hwloc object as lstopo's console output names it: "Package L#0",
// "L3 L#0 (19MB)", "NUMANode L#0 (P#0 60GB)", "PU L#0 (P#0)",
// "Machine (119GB total)". Empty for the padding canopy adds to
// unbalanced trees.
std::string object_label(const TopoObject& o);

// True for the placeholder objects canopy inserts to keep all PUs at the
// same depth (not a real hwloc object).
bool is_padding(const TopoObject& o);

// The node's objects that are drawn as its title: everything except the PU
// itself, the NUMA nodes (shown separately, as lstopo does) and padding.
std::vector<const TopoObject*> title_objects(const TopoNode& n);

// The node's NUMANode objects.
std::vector<const TopoObject*> numa_objects(const TopoNode& n);

// Sorted, de-duplicated integers as ranges: {0,1,2,3,8} -> "0-3,8".
std::string ranges(std::vector<int> values);

// XML (SVG) escaping of user-provided text (file names, synthetic strings).
std::string xml_escape(const std::string& s);

}  // namespace canopy::formats
