// NUMA checks of the runtime over data handles: strict node affinity keeps
// tasks on their node every time, and owner computes makes a tiled Cholesky
// on block-cyclic data write its tiles from the node that holds them (at
// least 95% of the bytes written), far more than with data affinity off.
// Where a task runs is measured here from the CPU it is on (sched_getcpu
// through the topology), not taken from the runtime's own bookkeeping.
#include <atomic>
#include <cmath>
#include <vector>

#include "canopy/binding.hpp"
#include "canopy/data.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/runtime.hpp"
#include "canopy/topology.hpp"
#include "numa_check.hpp"

using namespace canopy;
using numa_check::current_node;

namespace {

RuntimeOptions options(DataAffinity a) {
  RuntimeOptions o;
  o.num_threads = 0;  // one worker per core: every node has workers
  o.bind = BindMode::Core;
  o.data_affinity = a;
  return o;
}

}  // namespace

CANOPY_NUMA_CHECK(runtime_strict_node_tasks_run_on_their_node, 2) {
  Runtime rt(options(DataAffinity::Write));
  const int n = rt.num_numa_nodes();
  numa_require(n == data_num_nodes(), "runtime spans {} NUMA nodes of {}", n, data_num_nodes());
  constexpr int kPerNode = 300;
  std::atomic<int> wrong{0}, ran{0};
  std::atomic<int> first_wrong{-1};
  rt.run([&] {
    TaskGroup g(rt);
    for (int i = 0; i < kPerNode; ++i)
      for (int k = 0; k < n; ++k)
        g.spawn(Affinity::node(k, true), [&, k] {
          volatile double x = 0;  // a little work, so that idle workers try to steal
          for (int j = 0; j < 2000; ++j) x = x + j;
          ran.fetch_add(1);
          const int node = current_node();
          if (node != k && wrong.fetch_add(1) == 0) first_wrong = k * 100 + node;
        });
    g.wait();
  });
  numa_require(ran.load() == kPerNode * n, "{} of {} tasks ran", ran.load(), kPerNode * n);
  numa_require(wrong.load() == 0, "{} of {} strict node tasks ran elsewhere (first: node {} task on node {})",
               wrong.load(), kPerNode * n, first_wrong.load() / 100, first_wrong.load() % 100);
  // Strict near(handle): the node of a handle placed on node k.
  std::vector<Data> on(n);
  for (int k = 0; k < n; ++k) on[k] = data_allocate(data_page_size(), DataPlacement::on_node(k));
  rt.run([&] {
    TaskGroup g(rt);
    for (int i = 0; i < 50; ++i)
      for (int k = 0; k < n; ++k)
        g.spawn(Affinity::near(on[k], true), [&, k] {
          if (current_node() != k) wrong.fetch_add(1);
        });
    g.wait();
  });
  for (Data d : on) data_free(d);
  numa_require(wrong.load() == 0, "{} strict near(handle) tasks ran off the handle's node", wrong.load());
  numa_note(fmt::format("{} strict tasks on {} nodes, none elsewhere", (kPerNode + 50) * n, n));
}

namespace {

constexpr int kTiles = 12;  // tiles per dimension
constexpr int kB = 64;      // tile edge (64x64 doubles = 32 KiB = 8 pages)
constexpr std::size_t kTileBytes = kB * kB * sizeof(double);

struct Matrix {
  Data whole;
  std::vector<Data> tiles;  // tile (i, j) at i * kTiles + j, each its own handle
  double* tile(int i, int j) const { return static_cast<double*>(data_ptr(tiles[i * kTiles + j])); }
};

Matrix make_matrix() {
  Matrix m;
  // Tile-major storage, block-cyclic with one tile per block: tile t on node t mod n.
  m.whole = data_allocate(kTiles * kTiles * kTileBytes, DataPlacement::block_cyclic(kTileBytes));
  char* base = static_cast<char*>(data_ptr(m.whole));
  for (int t = 0; t < kTiles * kTiles; ++t) m.tiles.push_back(data_register(base + t * kTileBytes, kTileBytes));
  // Symmetric, diagonally dominant: positive definite.
  const int nn = kTiles * kB;
  for (int i = 0; i < kTiles; ++i)
    for (int j = 0; j < kTiles; ++j)
      for (int r = 0; r < kB; ++r)
        for (int c = 0; c < kB; ++c) {
          const int gi = i * kB + r, gj = j * kB + c;
          m.tile(i, j)[r * kB + c] = 1.0 / (1.0 + std::abs(gi - gj)) + (gi == gj ? nn : 0);
        }
  return m;
}

void free_matrix(Matrix& m) {
  for (Data d : m.tiles) data_free(d);
  data_free(m.whole);
}

// Tile kernels (row-major kB x kB), lower Cholesky.
void potrf(double* a) {
  for (int j = 0; j < kB; ++j) {
    double d = a[j * kB + j];
    for (int k = 0; k < j; ++k) d -= a[j * kB + k] * a[j * kB + k];
    d = std::sqrt(d);
    a[j * kB + j] = d;
    for (int i = j + 1; i < kB; ++i) {
      double s = a[i * kB + j];
      for (int k = 0; k < j; ++k) s -= a[i * kB + k] * a[j * kB + k];
      a[i * kB + j] = s / d;
    }
    for (int i = 0; i < j; ++i) a[i * kB + j] = 0;
  }
}
void trsm(const double* l, double* a) {  // a = a * l^-T
  for (int r = 0; r < kB; ++r)
    for (int c = 0; c < kB; ++c) {
      double s = a[r * kB + c];
      for (int k = 0; k < c; ++k) s -= a[r * kB + k] * l[c * kB + k];
      a[r * kB + c] = s / l[c * kB + c];
    }
}
void gemm_nt(const double* x, const double* y, double* a) {  // a -= x * y^T
  for (int r = 0; r < kB; ++r)
    for (int c = 0; c < kB; ++c) {
      double s = 0;
      for (int k = 0; k < kB; ++k) s += x[r * kB + k] * y[c * kB + k];
      a[r * kB + c] -= s;
    }
}

struct Locality {
  std::atomic<std::uint64_t> local{0}, remote{0};
  std::uint64_t hinted_here = 0, hinted_away = 0;  // the runtime's own counts
  double share() const {
    const double l = static_cast<double>(local.load()), r = static_cast<double>(remote.load());
    return l + r > 0 ? l / (l + r) : 0;
  }
};

// Runs the tiled Cholesky with data-flow tasks; each task records whether
// the node it ran on holds the tile it writes. Returns the max error of
// L * L^T against the original matrix (on a few rows).
double cholesky(DataAffinity affinity, Locality& loc) {
  Matrix m = make_matrix();
  std::vector<double> orig;
  for (int i = 0; i < kTiles; ++i)
    for (int j = 0; j < kTiles; ++j) orig.insert(orig.end(), m.tile(i, j), m.tile(i, j) + kB * kB);
  Runtime rt(options(affinity));
  auto note = [&loc](Data written) {
    if (current_node() == data_home_node(written))
      loc.local.fetch_add(kTileBytes);
    else
      loc.remote.fetch_add(kTileBytes);
  };
  rt.run([&] {
    for (int k = 0; k < kTiles; ++k) {
      Data akk = m.tiles[k * kTiles + k];
      submit(rt, {read_write(akk)}, [=] { note(akk); potrf(static_cast<double*>(data_ptr(akk))); });
      for (int i = k + 1; i < kTiles; ++i) {
        Data aik = m.tiles[i * kTiles + k];
        submit(rt, {read(akk), read_write(aik)}, [=] {
          note(aik);
          trsm(static_cast<double*>(data_ptr(akk)), static_cast<double*>(data_ptr(aik)));
        });
      }
      for (int i = k + 1; i < kTiles; ++i)
        for (int j = k + 1; j <= i; ++j) {
          Data aik = m.tiles[i * kTiles + k], ajk = m.tiles[j * kTiles + k], aij = m.tiles[i * kTiles + j];
          submit(rt, {read(aik), read(ajk), read_write(aij)}, [=] {
            note(aij);
            gemm_nt(static_cast<double*>(data_ptr(aik)), static_cast<double*>(data_ptr(ajk)),
                    static_cast<double*>(data_ptr(aij)));
          });
        }
    }
    wait_all(rt);
  });
  for (const WorkerStats& st : rt.stats()) {
    loc.hinted_here += st.hinted_here;
    loc.hinted_away += st.hinted_away;
  }
  // (L L^T)[gi][gj] over the lower tiles, against the original.
  const int nn = kTiles * kB;
  auto l = [&](int gi, int gj) { return gj > gi ? 0.0 : m.tile(gi / kB, gj / kB)[(gi % kB) * kB + gj % kB]; };
  double err = 0;
  for (int gi = 0; gi < nn; gi += 7)
    for (int gj = 0; gj <= gi; ++gj) {
      double s = 0;
      for (int k = 0; k <= gj; ++k) s += l(gi, k) * l(gj, k);
      const double a = orig[((gi / kB) * kTiles + gj / kB) * kB * kB + (gi % kB) * kB + gj % kB];
      err = std::max(err, std::abs(s - a));
    }
  free_matrix(m);
  return err;
}

}  // namespace

CANOPY_NUMA_CHECK(dataflow_owner_computes_cholesky_write_locality, 2) {
  Locality owner, off;
  const double err_owner = cholesky(DataAffinity::Write, owner);
  const double err_off = cholesky(DataAffinity::None, off);
  numa_require(err_owner < 1e-8 && err_off < 1e-8, "wrong factor: max error {} (owner computes), {} (off)",
               err_owner, err_off);
  const std::string shares = fmt::format(
      "bytes written on the tile's node: {:.1f}% with owner computes (hinted tasks run where hinted: {}, "
      "elsewhere: {}), {:.1f}% with affinity off",
      100 * owner.share(), owner.hinted_here, owner.hinted_away, 100 * off.share());
  numa_note(shares);
  numa_require(owner.share() >= 0.95, "want >= 95% with owner computes; {}", shares);
  numa_require(off.share() < owner.share(), "affinity off wrote {:.1f}%, owner computes {:.1f}%", 100 * off.share(),
               100 * owner.share());
}
