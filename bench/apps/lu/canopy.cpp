// Blocked LU (lu.hpp) with canopy: one handle per tile, one data-flow task
// per kernel call (getrf, the two trsm, gemm) declaring the tiles it reads
// and the one it updates, submitted step by step and waited for once. The
// matrix is filled by the main thread before the factorisation, as a
// sequential program's initialisation does, and the variant says where the
// tiles' pages go (--placement):
//   first-touch  data_allocate's default: every page on the main thread's node
//   interleave   DataPlacement::interleaved(): pages round robin over the nodes
//   next-write   first touch, then data_mark_next_write on every tile: each
//                tile moves to the node of the first task that writes it
//   next-touch   the same with data_mark_next_touch (any first access)
// Owner computes (RuntimeOptions::data_affinity, Write by default) then sends
// each task to the node holding the tile it writes. Tiles are allocated and
// filled again before each run (the placement is part of what is measured;
// the fill and the marking are not timed, the migrations are).
#include <canopy/data.hpp>
#include <canopy/dataflow.hpp>
#include <canopy/runtime.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "canopy_app.hpp"
#include "lu/lu.hpp"

namespace {

double* ptr(canopy::Data d) { return static_cast<double*>(canopy::data_ptr(d)); }

enum class Variant { FirstTouch, Interleave, NextWrite, NextTouch };
const char* const kNames[] = {"first-touch", "interleave", "next-write", "next-touch"};

}  // namespace

int main(int argc, char** argv) {
  // --placement NAME (this program's own flag), the rest as every application.
  Variant v = Variant::FirstTouch;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    if (i > 0 && !std::strcmp(argv[i], "--placement")) {
      const std::string name = i + 1 < argc ? argv[++i] : "";
      int k = 0;
      while (k < 4 && name != kNames[k]) ++k;
      if (k == 4) {
        std::fprintf(stderr, "%s: --placement '%s': expected first-touch, interleave, next-write or next-touch\n",
                     argv[0], name.c_str());
        return 2;
      }
      v = static_cast<Variant>(k);
    } else {
      rest.push_back(argv[i]);
    }
  }
  const apps::CanopyArgs args = apps::parse_canopy_args(static_cast<int>(rest.size()), rest.data());
  const apps::Args& a = args.common;
  const apps::lu::Config c = apps::lu::config(a, argv[0]);
  const std::string impl = std::string("canopy-") + kNames[static_cast<int>(v)];
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);

  const long p = c.p, nb = c.nb;
  std::vector<canopy::Data> t;  // t[i * p + j]: tile (i, j)
  auto tile = [&](long i, long j) { return t[i * p + j]; };
  auto prepare = [&] {
    for (canopy::Data d : t) canopy::data_free(d);
    t.clear();
    const canopy::DataPlacement where =
        v == Variant::Interleave ? canopy::DataPlacement::interleaved() : canopy::DataPlacement::first_touch();
    for (long i = 0; i < p; ++i)
      for (long j = 0; j < p; ++j) {
        t.push_back(canopy::data_allocate(sizeof(double) * c.tile(), where));
        apps::lu::fill_tile(c, i, j, ptr(t.back()));
      }
    for (canopy::Data d : t) {
      if (v == Variant::NextWrite) canopy::data_mark_next_write(d);
      if (v == Variant::NextTouch) canopy::data_mark_next_touch(d);
    }
  };
  auto task = [](std::initializer_list<canopy::Data> tiles, auto&& body) {
    return [tiles = std::vector<canopy::Data>(tiles), body] {
      if (apps::locality_enabled())
        for (canopy::Data d : tiles) apps::record(d);
      body();
    };
  };
  int run = 0;
  auto timed = [&] {
    // Logged in the last run only (the earlier runs' tiles are freed by then).
    if (a.locality && ++run == a.warmups + a.reps) apps::locality_enable(true);
    rt.run([&] {
      using canopy::read;
      using canopy::read_write;
      for (long k = 0; k < p; ++k) {
        const canopy::Data kk = tile(k, k);
        canopy::submit({read_write(kk)}, task({kk}, [nb, kk] { apps::lu::getrf(nb, ptr(kk)); }));
        for (long j = k + 1; j < p; ++j) {
          const canopy::Data kj = tile(k, j);
          canopy::submit({read(kk), read_write(kj)},
                         task({kk, kj}, [nb, kk, kj] { apps::lu::trsm_row(nb, ptr(kk), ptr(kj)); }));
        }
        for (long i = k + 1; i < p; ++i) {
          const canopy::Data ik = tile(i, k);
          canopy::submit({read(kk), read_write(ik)},
                         task({kk, ik}, [nb, kk, ik] { apps::lu::trsm_col(nb, ptr(kk), ptr(ik)); }));
        }
        for (long i = k + 1; i < p; ++i)
          for (long j = k + 1; j < p; ++j) {
            const canopy::Data ik = tile(i, k), kj = tile(k, j), ij = tile(i, j);
            canopy::submit({read(ik), read(kj), read_write(ij)},
                           task({ik, kj, ij}, [nb, ik, kj, ij] { apps::lu::gemm(nb, ptr(ik), ptr(kj), ptr(ij)); }));
          }
      }
      canopy::wait_all();
    });
    apps::locality_enable(false);
  };
  auto check = [&] {
    if (a.inject_error) ptr(tile(p - 1, p - 1))[c.tile() - 1] += 1e-3;
    std::vector<const double*> tiles;
    for (canopy::Data d : t) tiles.push_back(ptr(d));
    apps::lu::check_tiles(argv[0], c, tiles);
  };
  apps::measure(a, "lu", impl.c_str(), 1, prepare, timed, check);
  if (a.locality) apps::locality_print("lu", impl.c_str(), a.threads, apps::locality_summarize());
  for (canopy::Data d : t) canopy::data_free(d);
}
