/* The affinity clause on a real NUMA machine (run in numavm by
   scripts/omp-affinity-check.sh): a blocked Jacobi (KASTORS style: blocks
   of rows, each task reads its block and its neighbours and writes its
   block of the next array) and a tiled Cholesky (potrf, trsm, syrk, gemm
   tasks over tiles, depend + affinity on the tile each task writes), with
   the data spread block-cyclically over the NUMA nodes (block or tile k
   bound to node k mod nodes with mbind before it is touched). Each task
   notes the node it ran on (getcpu); the program prints, per kernel, the
   share of the bytes the tasks wrote that were on the node where they ran:
     locality jacobi 98.4% cholesky 97.1% (nodes 2, threads 4)
   Build with clang (GCC drops the clause): clang -fopenmp -O2; with
   -DNO_AFFINITY_CLAUSE the tasks carry no affinity clause (what automatic
   affinity, CANOPY_AFFINITY=auto, starts from); with -DDEPEND_SECTIONS
   (implies it) the Jacobi's depend items are array sections covering the
   blocks (depend(out: out[0:rows*n])), so automatic affinity knows their
   size and moves the written blocks' pages to their writers' nodes. A
   task's bytes count as local when the pages it writes are on its node
   when it starts (asked from the kernel, move_pages). The Jacobi also
   reports the share over its second half of sweeps (after a mapping). */
#define _GNU_SOURCE
#include <dirent.h>
#include <omp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The affinity clause, or nothing (OpenMP pragmas are macro-expanded). */
#if defined(DEPEND_SECTIONS) && !defined(NO_AFFINITY_CLAUSE)
#define NO_AFFINITY_CLAUSE
#endif
#ifdef NO_AFFINITY_CLAUSE
#define AFFINITY(...)
#else
#define AFFINITY(...) affinity(__VA_ARGS__)
#endif

static int g_nodes = 1;
static long g_page;

static int count_nodes(void) {
  DIR* d = opendir("/sys/devices/system/node");
  int n = 0;
  if (!d) return 1;
  for (struct dirent* e; (e = readdir(d));)
    if (!strncmp(e->d_name, "node", 4) && e->d_name[4] >= '0' && e->d_name[4] <= '9') ++n;
  closedir(d);
  return n > 0 ? n : 1;
}

/* Binds [p, p + bytes) (page-aligned) to `node`, before the first touch. */
static void bind_to_node(void* p, size_t bytes, int node) {
  if (g_nodes < 2) return;
  unsigned long mask = 1UL << node;
  if (syscall(SYS_mbind, p, bytes, 2 /* MPOL_BIND */, &mask, sizeof mask * 8, 0) != 0) {
    perror("mbind");
    exit(2);
  }
}

static int current_node(void) {
  unsigned cpu = 0, node = 0;
  if (syscall(SYS_getcpu, &cpu, &node, NULL) != 0) return 0;
  return (int)node;
}

static double* alloc_blocks(int nblocks, size_t block_bytes) {
  double* p = aligned_alloc((size_t)g_page, (size_t)nblocks * block_bytes);
  if (!p) exit(2);
  for (int b = 0; b < nblocks; ++b) bind_to_node((char*)p + (size_t)b * block_bytes, block_bytes, b % g_nodes);
  memset(p, 0, (size_t)nblocks * block_bytes);
  return p;
}

/* Bytes written by tasks, and those on the node where the task ran (the
   kernel's node of each page of [p, p + bytes), page-aligned, now); the
   same for the tasks of the second half of a run (`late`). */
static long long g_on, g_all, g_late_on, g_late_all;
static void note(const void* p, size_t bytes, int late) {
  enum { kMaxPages = 64 };
  const int ran = current_node();
  size_t pages = (bytes + (size_t)g_page - 1) / (size_t)g_page, on = 0;
  if (pages > kMaxPages) pages = kMaxPages;
  void* addr[kMaxPages];
  int status[kMaxPages];
  for (size_t i = 0; i < pages; ++i) addr[i] = (char*)p + i * (size_t)g_page;
  if (g_nodes < 2) on = pages;
  else if (syscall(SYS_move_pages, 0, pages, addr, NULL, status, 0) == 0) {
    for (size_t i = 0; i < pages; ++i) on += status[i] == ran;
  }
  const long long local = (long long)(bytes * on / pages);
#pragma omp atomic
  g_all += (long long)bytes;
#pragma omp atomic
  g_on += local;
  if (late) {
#pragma omp atomic
    g_late_all += (long long)bytes;
#pragma omp atomic
    g_late_on += local;
  }
}

static double g_jacobi_late;

static double jacobi(int nb, int rows, int n, int iters) {
  const size_t block_bytes = (size_t)rows * n * sizeof(double);
#ifdef DEPEND_SECTIONS
  const size_t bn = (size_t)rows * n; /* doubles per block */
#endif
  double* u[2] = {alloc_blocks(nb, block_bytes), alloc_blocks(nb, block_bytes)};
  g_on = g_all = g_late_on = g_late_all = 0;
#pragma omp parallel
#pragma omp single
  for (int it = 0; it < iters; ++it) {
    double* src = u[it % 2];
    double* dst = u[(it + 1) % 2];
    for (int b = 0; b < nb; ++b) {
      double* out = dst + (size_t)b * rows * n;
      double* in = src + (size_t)b * rows * n;
      double* up = b > 0 ? in - (size_t)rows * n : in;
      double* down = b < nb - 1 ? in + (size_t)rows * n : in;
      const int late = it >= iters / 2;
#ifdef DEPEND_SECTIONS
#pragma omp task depend(in : up[0 : bn], in[0 : bn], down[0 : bn]) depend(out : out[0 : bn]) firstprivate(b, in, out, late)
#else
#pragma omp task depend(in : up[0], in[0], down[0]) depend(out : out[0]) AFFINITY(out[0 : rows * n]) \
    firstprivate(b, in, out, late)
#endif
      {
        note(out, block_bytes, late);
        for (int r = 0; r < rows; ++r)
          for (int c = 1; c < n - 1; ++c) {
            const size_t i = (size_t)r * n + c;
            const double above = r > 0 ? in[i - n] : (b > 0 ? in[i - n] : 0);
            const double below = r < rows - 1 ? in[i + n] : (b < nb - 1 ? in[i + n] : 0);
            out[i] = 0.25 * (in[i - 1] + in[i + 1] + above + below) + 1.0;
          }
      }
    }
  }
  free(u[0]);
  free(u[1]);
  g_jacobi_late = g_late_all ? 100.0 * (double)g_late_on / (double)g_late_all : 0;
  return g_all ? 100.0 * (double)g_on / (double)g_all : 0;
}

/* Tiled Cholesky: tile (i, j) of nt x nt tiles of ts x ts doubles on node (i * nt + j) mod nodes. */
static __attribute__((unused)) double cholesky(int nt, int ts) {
  const size_t tile_bytes = (size_t)ts * ts * sizeof(double);
  double* m = alloc_blocks(nt * nt, tile_bytes);
#define TILE(i, j) (m + ((size_t)(i) * nt + (j)) * ts * ts)

  for (int i = 0; i < nt; ++i) /* diagonally dominant: positive definite */
    for (int j = 0; j <= i; ++j)
      for (int k = 0; k < ts * ts; ++k) TILE(i, j)[k] = (i == j && k % (ts + 1) == 0) ? 2.0 * nt * ts : 0.5;
  g_on = g_all = 0;
#pragma omp parallel
#pragma omp single
  for (int k = 0; k < nt; ++k) {
    double* kk = TILE(k, k);
#pragma omp task depend(inout : kk[0]) AFFINITY(kk[0 : ts * ts]) firstprivate(k, kk)
    {
      note(kk, tile_bytes, 0);
      for (int c = 0; c < ts; ++c) { /* potrf (lower) */
        double d = kk[c * ts + c];
        for (int p = 0; p < c; ++p) d -= kk[c * ts + p] * kk[c * ts + p];
        d = d > 0 ? __builtin_sqrt(d) : 1;
        kk[c * ts + c] = d;
        for (int r = c + 1; r < ts; ++r) {
          double s = kk[r * ts + c];
          for (int p = 0; p < c; ++p) s -= kk[r * ts + p] * kk[c * ts + p];
          kk[r * ts + c] = s / d;
        }
      }
    }
    for (int i = k + 1; i < nt; ++i) {
      double* ik = TILE(i, k);
#pragma omp task depend(in : kk[0]) depend(inout : ik[0]) AFFINITY(ik[0 : ts * ts]) firstprivate(i, k, kk, ik)
      {
        note(ik, tile_bytes, 0);
        for (int r = 0; r < ts; ++r) /* trsm */
          for (int c = 0; c < ts; ++c) {
            double s = ik[r * ts + c];
            for (int p = 0; p < c; ++p) s -= ik[r * ts + p] * kk[c * ts + p];
            ik[r * ts + c] = s / kk[c * ts + c];
          }
      }
    }
    for (int i = k + 1; i < nt; ++i) {
      double* ik = TILE(i, k);
      for (int j = k + 1; j <= i; ++j) {
        double* jk = TILE(j, k);
        double* ij = TILE(i, j);
#pragma omp task depend(in : ik[0], jk[0]) depend(inout : ij[0]) AFFINITY(ij[0 : ts * ts]) firstprivate(i, j, ik, jk, ij)
        {
          note(ij, tile_bytes, 0);
          for (int r = 0; r < ts; ++r) /* syrk / gemm */
            for (int c = 0; c < ts; ++c) {
              double s = 0;
              for (int p = 0; p < ts; ++p) s += ik[r * ts + p] * jk[c * ts + p];
              ij[r * ts + c] -= s;
            }
        }
      }
    }
  }
  free(m);
#undef TILE

  return g_all ? 100.0 * (double)g_on / (double)g_all : 0;
}

int main(int argc, char** argv) {
  g_page = sysconf(_SC_PAGESIZE);
  g_nodes = count_nodes();
  const int scale = argc > 1 ? atoi(argv[1]) : 1;
  /* Jacobi: 16 blocks of 16 rows of 512 doubles (64 KB, 16 pages); Cholesky: 8 x 8 tiles of 32 x 32. */
  const double j = jacobi(16, 16, 512, 10 * scale);
  const double late = g_jacobi_late;
#ifdef DEPEND_SECTIONS
  /* The Cholesky's items are single elements either way: only the Jacobi (half the VM time). */
  printf("locality jacobi %.1f%% (second half %.1f%%) (nodes %d, threads %d)\n", j, late, g_nodes,
         omp_get_max_threads());
#else
  const double c = cholesky(8, 32);
  printf("locality jacobi %.1f%% (second half %.1f%%) cholesky %.1f%% (nodes %d, threads %d)\n", j, late, c, g_nodes,
         omp_get_max_threads());
#endif
  return 0;
}
