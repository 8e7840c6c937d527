// BT-MZ-like nested benchmark (issue 15; NAS BT-MZ's shape, not its
// physics): Z zones of unequal work, an outer level over the zones and an
// inner level over each zone's rows.
//
// Zone z is an H x w_z grid (H = -n rows for every zone; widths a geometric
// progression from w_0 = max(1, H / 16) to --ratio x w_0, default 20, as
// BT-MZ's zone sizes vary by more than an order of magnitude), stored row
// by row with a ghost column on each side, in two copies (in / out,
// swapped every time step). The zones form a ring along x (periodic, as
// BT-MZ's are), smallest to largest.
//
// One time step of a zone, row by row (rows are independent, so any split
// of the rows into tasks or loop chunks gives the same numbers):
//   exchange  the row's two ghost values come from the neighbouring zones'
//             edge columns of the previous step (the cheap exchange of
//             boundary values between zones);
//   y         explicit diffusion across rows: r_j = u_ij + cy (u_i-1,j + u_i+1,j - 2 u_ij)
//             (rows -1 and H are 0);
//   x         implicit diffusion along the row, a tridiagonal solve (Thomas):
//             (1 + 2 cx) v_j - cx (v_j-1 + v_j+1) = r_j, the ghosts at both ends
// which is one half step of an ADI scheme. All zones finish step t before
// any starts step t+1 (the exchange reads the neighbours' step t).
//
// The result depends only on the configuration, never on who ran which
// rows: every version must equal check()'s sequential reference (1e-12).
// Sizes: -n 512 (zone widths 32 .. 640, 1.7 M points), 30 steps; --smoke:
// -n 32, 3 steps; tasks / chunks of about --grain points (8192; smoke 128).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "common.hpp"

namespace apps::btmz {

struct Config {
  long rows = 0, steps = 0;
  int zones = 16;
  double ratio = 20;
  long grain = 0;             // points per canopy task
  std::vector<long> width;    // interior columns of each zone
  long stride(int z) const { return width[static_cast<std::size_t>(z)] + 2; }
  std::size_t doubles(int z) const { return static_cast<std::size_t>(rows * stride(z)); }
  long points(int z) const { return rows * width[static_cast<std::size_t>(z)]; }
  // Rows per canopy task in zone z (about `grain` points each).
  long rows_per_task(int z) const;
};

// The btmz-only flags taken out of argv (--zones Z, --ratio R, --grain P,
// --mode M for the canopy version, --outer T for OpenMP), the rest is the
// shared driver's.
struct BtmzArgs {
  Args common;
  int zones = 16;
  double ratio = 20;
  long grain = 0;
  int outer = 0;     // OpenMP: outer threads (0: the default, see omp.cpp)
  std::string mode;  // canopy: groups, groups-nowork, taskgroup; "" for OpenMP
};
BtmzArgs parse(int argc, char** argv, bool has_mode);
Config config(const BtmzArgs& a);

// The start value of point (i, j) of zone z (j in 1..w).
double initial(int z, long i, long j);
// Writes zone z's start values into rows [r0, r1) of `u` (ghosts 0).
void init_rows(const Config& c, int z, double* u, long r0, long r1);

// One time step of rows [r0, r1) of zone z: fills the rows' ghosts of
// in[z] from its neighbours' in[], then writes out[z]'s rows (see above).
// in and out hold every zone's arrays. With locality logging on, records
// the bytes of in[z] and out[z] it touches (the two ghost values per row it
// reads from the neighbours are left out: 16 bytes a row).
void step_rows(const Config& c, int z, double* const* in, double* const* out, long r0, long r1);

// Zones of the outer level assigned to `bins` outer threads as BT-MZ does
// (largest first, each to the bin with the least work so far).
std::vector<std::vector<int>> bin_pack(const Config& c, int bins);

// Runs the steps sequentially on fresh arrays and compares every interior
// value of each zone's final array with it; apps::fail on a mismatch. With
// inject_error, first changes one value of the last zone (--inject-error).
void check(const char* prog, const Config& c, const std::vector<double*>& final_arrays, bool inject_error);

}  // namespace apps::btmz
