// From samples to the sharing matrix (profile.hpp): samples are grouped by
// region (line or page) and thread; every pair of threads on a region gets
// the smaller of their two counts, read-only regions scaled by read_weight.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "canopy/error.hpp"
#include "canopy/profile.hpp"

namespace canopy {

SharingGranularity parse_sharing_granularity(const std::string& name) {
  if (name == "line") return SharingGranularity::Line;
  if (name == "page") return SharingGranularity::Page;
  throw Error(fmt::format("granularity '{}': expected line (64-byte cache lines) or page (4 KiB pages)", name));
}

SharingProfile sharing_profile(const ProfiledProcess& p, const SharingOptions& opt) {
  if (!(opt.read_weight >= 0 && opt.read_weight <= 1))
    throw Error(fmt::format("read weight {}: expected a number in [0, 1]", opt.read_weight));
  const int shift = opt.granularity == SharingGranularity::Line ? 6 : 12;
  SharingProfile out;
  for (const auto& t : p.threads)
    for (const auto& s : t.samples)
      if (s.omp_thread >= 0) out.openmp_numbering = true;

  // region -> (thread -> use); std::map keeps the regions and threads ordered
  // so that the result does not depend on hashing.
  struct Use {
    double samples = 0;
    bool written = false;
  };
  std::unordered_map<std::uint64_t, std::map<int, Use>> regions;
  int n = 0;
  for (const auto& t : p.threads) {
    n = std::max(n, t.creation + 1);
    for (const auto& s : t.samples) {
      const int row = s.omp_thread >= 0 ? s.omp_thread : t.creation;
      n = std::max(n, row + 1);
      Use& u = regions[s.address >> shift][row];
      u.samples += static_cast<double>(t.stride);
      u.written = u.written || s.write;
    }
  }
  if (n > kMaxTasks) throw Error(fmt::format("{}: {} threads: more than canopy handles", p.file, n));
  out.threads.assign(static_cast<size_t>(n), {});

  std::vector<Edge> edges;
  for (const auto& [region, users] : regions) {
    bool written = false;
    for (const auto& [row, u] : users) written = written || u.written;
    const double scale = written ? 1.0 : opt.read_weight;
    for (const auto& [row, u] : users) {
      ThreadFootprint& f = out.threads[static_cast<size_t>(row)];
      f.samples += u.samples;
      ++f.regions;
      if (users.size() > 1) ++f.shared_regions;
      out.uses.push_back({row, region << shift, u.samples, u.written});
    }
    if (users.size() < 2) continue;
    ++out.shared_regions;
    if (scale == 0) continue;
    for (auto a = users.begin(); a != users.end(); ++a)
      for (auto b = std::next(a); b != users.end(); ++b)
        edges.push_back({a->first, b->first, scale * std::min(a->second.samples, b->second.samples)});
  }
  out.matrix = CommMatrix::from_edges(n, edges);
  std::sort(out.uses.begin(), out.uses.end(), [](const RegionUse& a, const RegionUse& b) {
    return a.thread != b.thread ? a.thread < b.thread : a.region < b.region;
  });
  return out;
}

}  // namespace canopy
