// C API: topology handles (this machine, XML, synthetic, the --input
// convention, restriction) and their accessors.
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "canopy/formats.hpp"
#include "capi/capi.hpp"

using namespace canopy;
using namespace canopy::capi;

namespace {

// A file that cannot be read is an I/O error (EIO) rather than malformed
// content (EPARSE): check before hwloc reports both the same way.
void check_readable(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail(CANOPY_EIO, fmt::format("{}: is a directory", path));
  std::ifstream f(path, std::ios::binary);
  if (!f) fail(CANOPY_EIO, fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
}

canopy_topology* make(Topology t) { return new canopy_topology{std::move(t)}; }

const Topology& topo_of(const canopy_topology_t* t) { return need(t, "topo").topo; }

template <class F>
canopy_status_t create(const char* fn, canopy_topology_t** out, canopy_status_t bad_input, F&& load) {
  return guard(fn, bad_input, [&] {
    need(out, "out") = nullptr;
    *out = make(load());
  });
}

}  // namespace

extern "C" {

canopy_status_t canopy_topology_create(canopy_topology_t** out) {
  return create("canopy_topology_create", out, CANOPY_ESYSTEM, [] { return Topology::this_machine(); });
}

canopy_status_t canopy_topology_create_from_xml(canopy_topology_t** out, const char* path) {
  return create("canopy_topology_create_from_xml", out, CANOPY_EPARSE, [&] {
    check_readable(need_str(path, "path"));
    return Topology::from_xml_file(path);
  });
}

canopy_status_t canopy_topology_create_from_synthetic(canopy_topology_t** out, const char* description) {
  return create("canopy_topology_create_from_synthetic", out, CANOPY_EPARSE,
                [&] { return Topology::from_synthetic(need_str(description, "description")); });
}

canopy_status_t canopy_topology_create_from_input(canopy_topology_t** out, const char* input) {
  return create("canopy_topology_create_from_input", out, CANOPY_EPARSE, [&] {
    if (!input || !*input) return Topology::this_machine();
    // The rule of Topology::load(), spelled out so that a missing file is
    // EIO and a bad description EPARSE.
    std::string_view s = input;
    std::error_code ec;
    if (std::filesystem::exists(input, ec) || s.ends_with(".xml") || s.find('/') != std::string_view::npos) {
      check_readable(input);
      return Topology::from_xml_file(input);
    }
    return Topology::from_synthetic(input);
  });
}

canopy_status_t canopy_topology_create_restricted(canopy_topology_t** out, const canopy_topology_t* topo,
                                                  const int* pu_os_indexes, size_t count) {
  return create("canopy_topology_create_restricted", out, CANOPY_EINVAL, [&] {
    const Topology& t = topo_of(topo);
    if (count == 0) fail(CANOPY_EINVAL, "cannot restrict a topology to no PU (count is 0)");
    need(pu_os_indexes, "pu_os_indexes");
    std::vector<int> os(pu_os_indexes, pu_os_indexes + count);
    for (int x : os)
      if (t.pu_by_os_index(x) < 0)
        fail(CANOPY_ERANGE, fmt::format("topology '{}' has no PU with OS index {}", t.source(), x));
    return t.restricted(os);
  });
}

void canopy_topology_destroy(canopy_topology_t* topo) { delete topo; }

canopy_status_t canopy_topology_num_pus(const canopy_topology_t* topo, int* out) {
  return guard("canopy_topology_num_pus", CANOPY_EINVAL, [&] { need(out, "out") = topo_of(topo).num_pus(); });
}

canopy_status_t canopy_topology_num_cores(const canopy_topology_t* topo, int* out) {
  return guard("canopy_topology_num_cores", CANOPY_EINVAL, [&] { need(out, "out") = topo_of(topo).num_cores(); });
}

canopy_status_t canopy_topology_num_numa_nodes(const canopy_topology_t* topo, int* out) {
  return guard("canopy_topology_num_numa_nodes", CANOPY_EINVAL,
               [&] { need(out, "out") = topo_of(topo).num_numa_nodes(); });
}

canopy_status_t canopy_topology_num_levels(const canopy_topology_t* topo, int* out) {
  return guard("canopy_topology_num_levels", CANOPY_EINVAL, [&] { need(out, "out") = topo_of(topo).num_levels(); });
}

canopy_status_t canopy_topology_pu_os_index(const canopy_topology_t* topo, int pu, int* os_index) {
  return guard("canopy_topology_pu_os_index", CANOPY_EINVAL, [&] {
    const Topology& t = topo_of(topo);
    need(os_index, "os_index");
    check_index(pu, t.num_pus(), "PU");
    *os_index = t.pu(pu).os_index;
  });
}

canopy_status_t canopy_topology_distance(const canopy_topology_t* topo, int pu_a, int pu_b, int* out) {
  return guard("canopy_topology_distance", CANOPY_EINVAL, [&] {
    const Topology& t = topo_of(topo);
    need(out, "out");
    check_index(pu_a, t.num_pus(), "PU");
    check_index(pu_b, t.num_pus(), "PU");
    *out = t.distance(pu_a, pu_b);
  });
}

canopy_status_t canopy_topology_is_this_machine(const canopy_topology_t* topo, int* out) {
  return guard("canopy_topology_is_this_machine", CANOPY_EINVAL,
               [&] { need(out, "out") = topo_of(topo).is_this_machine() ? 1 : 0; });
}

canopy_status_t canopy_topology_format(const canopy_topology_t* topo, const char* format, char* buf, size_t size,
                                       size_t* needed) {
  return guard("canopy_topology_format", CANOPY_EINVAL, [&] {
    const Topology& t = topo_of(topo);
    std::string_view f = need_str(format, "format");
    std::string s;
    if (f == "text")
      s = topology_text(t);
    else if (f == "json")
      s = topology_json(t);
    else if (f == "svg")
      s = topology_svg(t);
    else if (f == "xml")
      s = t.to_xml();
    else
      fail(CANOPY_EINVAL, fmt::format("format '{}': expected text, json, svg or xml", f));
    copy_string(s, buf, size, needed);
  });
}

}  // extern "C"
