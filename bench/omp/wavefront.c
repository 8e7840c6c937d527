/* A wavefront with `depend`: the alignment score of two generated sequences
 * of length N (a Smith-Waterman-like recurrence, integer, so every run gives
 * the same numbers), computed in B x B tiles; tile (i, j) is a task that
 * depends on tiles (i-1, j) and (i, j-1) (in) and writes itself (out). Only
 * tile edges are stored: the bottom row of every tile row and the right
 * column of every tile column, which is all a tile reads from its
 * neighbours. Default N = 8192, B = 128 (4,096 tasks); -n sets N (a
 * multiple of 128). Checked: every stored edge equals a sequential run's. */
#include "omp_bench.h"

#define B 128

static long n, nt;
static unsigned char *s1, *s2;
static int *rows, *cols;   /* rows[ti][0..n]: bottom edge of tile row ti; cols[tj][0..n]: right edge of tile column tj */
static int *ref_rows, *ref_cols;
static char* tile_objs;

static inline int score(int diag, int up, int left, unsigned char a, unsigned char b) {
  int v = diag + (a == b ? 3 : -1);
  if (up - 2 > v) v = up - 2;
  if (left - 2 > v) v = left - 2;
  return v < 0 ? 0 : v;
}

/* The tile (ti, tj): reads the bottom edge of tile row ti-1 (columns
 * tj*B-1 .. tj*B+B-1; entry 0 is the corner) and the right edge of tile
 * column tj-1, writes its own bottom and right edges. Edge arrays are
 * indexed by global row / column + 1 (index 0: the zero border). */
static void tile(int* r, int* c, long ti, long tj) {
  int prev[B + 1], cur[B + 1];
  const int* up = ti ? r + (ti - 1) * (n + 1) : NULL;
  const int* left = tj ? c + (tj - 1) * (n + 1) : NULL;
  int* down = r + ti * (n + 1);
  int* right = c + tj * (n + 1);
  for (long j = 0; j <= B; ++j) prev[j] = up ? up[tj * B + j] : 0;
  for (long i = 1; i <= B; ++i) {
    const long gi = ti * B + i;
    cur[0] = left ? left[gi] : 0;
    for (long j = 1; j <= B; ++j) cur[j] = score(prev[j - 1], prev[j], cur[j - 1], s1[gi - 1], s2[tj * B + j - 1]);
    right[gi] = cur[B];
    memcpy(prev, cur, sizeof prev);
  }
  for (long j = 0; j <= B; ++j) down[tj * B + j] = prev[j];
  if (tj == 0) down[0] = 0;
}

static void clear(int* r, int* c) {
  memset(r, 0, (size_t)(nt * (n + 1)) * sizeof(int));
  memset(c, 0, (size_t)(nt * (n + 1)) * sizeof(int));
}

static void run(void* ctx) {
  (void)ctx;
  clear(rows, cols);
#pragma omp parallel
#pragma omp single
  for (long ti = 0; ti < nt; ++ti)
    for (long tj = 0; tj < nt; ++tj) {
      char* self = tile_objs + ti * nt + tj;
      char* north = ti ? self - nt : self;
      char* west = tj ? self - 1 : self;
      (void)north; /* used only in the depend clause, which GCC does not count */
      (void)west;
#pragma omp task firstprivate(ti, tj) depend(in : north[0], west[0]) depend(out : self[0])
      tile(rows, cols, ti, tj);
    }
}
static char err[160];
static const char* check(void* ctx) {
  (void)ctx;
  for (long k = 0; k < nt * (n + 1); ++k)
    if (rows[k] != ref_rows[k] || cols[k] != ref_cols[k]) {
      snprintf(err, sizeof err, "edge %ld of tile %ld is (%d, %d), expected (%d, %d)", k % (n + 1), k / (n + 1),
               rows[k], cols[k], ref_rows[k], ref_cols[k]);
      return err;
    }
  return NULL;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  n = a.n ? a.n : 8192;
  if (n < B || n % B) bench_fail("wavefront: -n %ld is not a positive multiple of %d", n, B);
  nt = n / B;
  s1 = malloc((size_t)n);
  s2 = malloc((size_t)n);
  rows = malloc((size_t)(nt * (n + 1)) * sizeof(int));
  cols = malloc((size_t)(nt * (n + 1)) * sizeof(int));
  ref_rows = malloc((size_t)(nt * (n + 1)) * sizeof(int));
  ref_cols = malloc((size_t)(nt * (n + 1)) * sizeof(int));
  tile_objs = malloc((size_t)(nt * nt));
  if (!s1 || !s2 || !rows || !cols || !ref_rows || !ref_cols || !tile_objs) bench_fail("wavefront: out of memory");
  for (long k = 0; k < n; ++k) {
    s1[k] = (unsigned char)(bench_mix((uint64_t)k) % 4);
    s2[k] = (unsigned char)(bench_mix((uint64_t)k + 77777) % 4);
  }
  clear(ref_rows, ref_cols);
  for (long ti = 0; ti < nt; ++ti)
    for (long tj = 0; tj < nt; ++tj) tile(ref_rows, ref_cols, ti, tj);
  if (ref_rows[(nt - 1) * (n + 1) + n] <= 0) bench_fail("wavefront: the reference score is not positive");
  bench_measure(&a, "wavefront", a.threads, 1, "run", run, check, NULL);
  return 0;
}
