// What every version of the BT-MZ-like benchmark shares (btmz.hpp): the
// zones, one time step of a range of rows, BT-MZ's bin packing of zones to
// outer threads, and the sequential reference.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "btmz/btmz.hpp"
#include "locality.hpp"

namespace apps::btmz {

namespace {
constexpr double kCx = 0.4, kCy = 0.2;  // explicit part stable for cy <= 1/2

[[noreturn]] void bad(const char* prog, const char* flag, const char* value, const char* want) {
  std::fprintf(stderr, "%s: %s '%s': expected %s\n", prog, flag, value, want);
  std::exit(2);
}
}  // namespace

long Config::rows_per_task(int z) const {
  return std::clamp(grain / width[static_cast<std::size_t>(z)], 1L, rows);
}

BtmzArgs parse(int argc, char** argv, bool has_mode) {
  BtmzArgs a;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const bool valued = i > 0 && i + 1 < argc;
    char* end = nullptr;
    if (valued && !std::strcmp(argv[i], "--zones")) {
      const long z = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || z < 1 || z > 1024) bad(argv[0], "--zones", argv[i], "zones from 1 to 1024");
      a.zones = static_cast<int>(z);
    } else if (valued && !std::strcmp(argv[i], "--ratio")) {
      a.ratio = std::strtod(argv[++i], &end);
      if (*end != '\0' || !(a.ratio >= 1 && a.ratio <= 1000)) bad(argv[0], "--ratio", argv[i], "a number from 1 to 1000");
    } else if (valued && !std::strcmp(argv[i], "--grain")) {
      a.grain = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || a.grain < 1) bad(argv[0], "--grain", argv[i], "points per task >= 1");
    } else if (!has_mode && valued && !std::strcmp(argv[i], "--outer")) {
      const long t = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || t < 1) bad(argv[0], "--outer", argv[i], "outer threads >= 1");
      a.outer = static_cast<int>(t);
    } else if (has_mode && valued && !std::strcmp(argv[i], "--mode")) {
      a.mode = argv[++i];
      if (a.mode != "groups" && a.mode != "groups-nowork" && a.mode != "taskgroup")
        bad(argv[0], "--mode", a.mode.c_str(), "groups, groups-nowork or taskgroup");
    } else if (i > 0 && (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help"))) {
      std::printf(
          "%s: a BT-MZ-like nested benchmark (bench/apps/btmz/btmz.hpp, docs/groups-memory.md)\n"
          "  -n ROWS          rows of every zone (512; --smoke 32); zone widths ROWS/16 .. ratio x ROWS/16\n"
          "  -i STEPS         time steps (30; --smoke 3)\n"
          "  --zones Z        zones (16)      --ratio R  largest / smallest zone width (20)\n"
          "  --grain P        points per task (8192; --smoke 128)\n",
          argv[0]);
      if (has_mode)
        std::printf("  --mode M         groups (expected work and data), groups-nowork or taskgroup (groups)\n");
      else
        std::printf("  --outer T        outer threads (the NUMA nodes when they divide the threads, else 2)\n");
      std::printf("and the flags of every application (bench/apps/common.hpp):\n");
      std::fflush(stdout);
      usage(argv[0]);
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (has_mode && a.mode.empty()) a.mode = "groups";
  a.common = parse_args(static_cast<int>(rest.size()), rest.data());
  return a;
}

Config config(const BtmzArgs& a) {
  Config c;
  c.rows = a.common.n ? a.common.n : (a.common.smoke ? 32 : 512);
  c.steps = a.common.iterations ? a.common.iterations : (a.common.smoke ? 3 : 30);
  c.zones = a.zones;
  c.ratio = a.ratio;
  c.grain = a.grain ? a.grain : (a.common.smoke ? 128 : 8192);
  const double w0 = std::max(1L, c.rows / 16);
  for (int z = 0; z < c.zones; ++z) {
    const double f = c.zones > 1 ? static_cast<double>(z) / (c.zones - 1) : 0.0;
    c.width.push_back(std::max(1L, std::lround(w0 * std::pow(c.ratio, f))));
  }
  return c;
}

double initial(int z, long i, long j) { return 1.0 + 0.1 * static_cast<double>((7 * z + 13 * i + 5 * j) % 17); }

void init_rows(const Config& c, int z, double* u, long r0, long r1) {
  const long s = c.stride(z), w = s - 2;
  for (long i = r0; i < r1; ++i) {
    double* row = u + i * s;
    row[0] = row[w + 1] = 0.0;
    for (long j = 1; j <= w; ++j) row[j] = initial(z, i, j);
  }
}

void step_rows(const Config& c, int z, double* const* in, double* const* out, long r0, long r1) {
  const long s = c.stride(z), w = s - 2, h = c.rows;
  const int left = (z + c.zones - 1) % c.zones, right = (z + 1) % c.zones;
  const long ls = c.stride(left);
  double* u = in[z];
  double* v = out[z];
  if (locality_enabled()) {
    const long lo = std::max(0L, r0 - 1), hi = std::min(h, r1 + 1);
    locality_record(u + lo * s, sizeof(double) * static_cast<std::size_t>((hi - lo) * s));
    locality_record(v + r0 * s, sizeof(double) * static_cast<std::size_t>((r1 - r0) * s));
  }
  // The Thomas algorithm's modified upper diagonal (per thread: no allocation per task).
  thread_local std::vector<double> cp;
  cp.resize(static_cast<std::size_t>(w) + 2);
  for (long i = r0; i < r1; ++i) {
    double* row = u + i * s;
    // Exchange: the neighbours' edge columns of the previous step (their
    // interior, which nobody writes during this step).
    row[0] = in[left][i * ls + (ls - 2)];
    row[w + 1] = in[right][i * c.stride(right) + 1];
    const double* up = i > 0 ? row - s : nullptr;
    const double* down = i + 1 < h ? row + s : nullptr;
    double* d = v + i * s;  // r, then the solution, in place
    for (long j = 1; j <= w; ++j)
      d[j] = row[j] + kCy * ((up ? up[j] : 0.0) + (down ? down[j] : 0.0) - 2.0 * row[j]);
    d[1] += kCx * row[0];
    d[w] += kCx * row[w + 1];
    // (1 + 2cx) v_j - cx v_j-1 - cx v_j+1 = d_j, j = 1..w.
    const double b = 1.0 + 2.0 * kCx;
    cp[1] = -kCx / b;
    d[1] /= b;
    for (long j = 2; j <= w; ++j) {
      const double m = b + kCx * cp[static_cast<std::size_t>(j - 1)];
      cp[static_cast<std::size_t>(j)] = -kCx / m;
      d[j] = (d[j] + kCx * d[j - 1]) / m;
    }
    for (long j = w - 1; j >= 1; --j) d[j] -= cp[static_cast<std::size_t>(j)] * d[j + 1];
    d[0] = d[w + 1] = 0.0;
  }
}

std::vector<std::vector<int>> bin_pack(const Config& c, int bins) {
  std::vector<int> order(static_cast<std::size_t>(c.zones));
  for (int z = 0; z < c.zones; ++z) order[static_cast<std::size_t>(z)] = z;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return c.points(a) > c.points(b); });
  std::vector<std::vector<int>> out(static_cast<std::size_t>(bins));
  std::vector<long> load(static_cast<std::size_t>(bins), 0);
  for (int z : order) {
    const auto k = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[k].push_back(z);
    load[k] += c.points(z);
  }
  return out;
}

void check(const char* prog, const Config& c, const std::vector<double*>& final_arrays, bool inject_error) {
  if (inject_error) final_arrays.back()[c.stride(c.zones - 1) + 1] += 1e-3;
  std::vector<std::vector<double>> a(static_cast<std::size_t>(c.zones)), b(a.size());
  std::vector<double*> in(a.size()), out(a.size());
  for (int z = 0; z < c.zones; ++z) {
    a[static_cast<std::size_t>(z)].assign(c.doubles(z), 0.0);
    b[static_cast<std::size_t>(z)].assign(c.doubles(z), 0.0);
    init_rows(c, z, a[static_cast<std::size_t>(z)].data(), 0, c.rows);
    in[static_cast<std::size_t>(z)] = a[static_cast<std::size_t>(z)].data();
    out[static_cast<std::size_t>(z)] = b[static_cast<std::size_t>(z)].data();
  }
  for (long t = 0; t < c.steps; ++t) {
    for (int z = 0; z < c.zones; ++z) step_rows(c, z, in.data(), out.data(), 0, c.rows);
    std::swap(in, out);
  }
  for (int z = 0; z < c.zones; ++z) {
    const long s = c.stride(z);
    for (long i = 0; i < c.rows; ++i)
      for (long j = 1; j <= s - 2; ++j) {
        const double want = in[static_cast<std::size_t>(z)][i * s + j];
        const double got = final_arrays[static_cast<std::size_t>(z)][i * s + j];
        if (!(std::fabs(got - want) <= 1e-12 * std::fabs(want))) {
          char msg[200];
          std::snprintf(msg, sizeof msg, "zone %d (%ld x %ld) point (%ld, %ld) = %.17g, the sequential reference has %.17g",
                        z, c.rows, s - 2, i, j, got, want);
          fail(prog, msg);
        }
      }
  }
}

}  // namespace apps::btmz
