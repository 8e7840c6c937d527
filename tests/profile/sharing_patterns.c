/* Programs with a known sharing pattern, for the `canopy profile` tests
 * (profile_patterns_test.cpp) and the overhead benchmark
 * (bench/profile/overhead.py).
 *
 *   sharing_patterns PATTERN THREADS STEPS       run it
 *   sharing_patterns PATTERN THREADS --truth     print the true matrix (dense)
 *
 * Every thread owns a block of BLOCK_PAGES pages that it rewrites at each
 * step, and reads, at each step, one page of each of its partners' blocks
 * (a boundary, an output buffer): the partners are the threads it truly
 * shares with, and the true matrix has 1 for each pair of partners.
 *
 *   halo1d     t with t-1 and t+1 (their facing boundary pages)
 *   halo2d     threads on a grid (rows x cols, rows the largest divisor of
 *              THREADS <= sqrt), each with its north, south, east and west
 *              neighbours (one boundary page per side)
 *   pipeline   t reads t-1's output page (stage t-1 feeds stage t)
 *   alltoall   every thread reads one page of every other block
 *   permuted   halo1d on blocks, but thread t works on block (3t+1) mod
 *              THREADS: the partners are scrambled thread numbers
 *   pairs      plain pthreads (no OpenMP): producer 2k writes a buffer that
 *              consumer 2k+1 reads; thread 0 is the initial thread, the
 *              others are numbered as created
 *
 * OpenMP patterns run one parallel region with a barrier every 64 steps
 * (the races on the boundary pages are deliberate and harmless: relaxed
 * atomic accesses). The checksum printed keeps the work from being
 * optimised away. */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096
#define DOUBLES_PER_PAGE (PAGE / (int)sizeof(double))
#define BLOCK_PAGES 8
#define MAX_THREADS 64
#define MAX_PARTNERS (MAX_THREADS - 1)

enum { HALO1D, HALO2D, PIPELINE, ALLTOALL, PERMUTED, PAIRS };
static const char* names[] = {"halo1d", "halo2d", "pipeline", "alltoall", "permuted", "pairs"};

static int pattern, nthreads;
static long steps;
static double* blocks; /* nthreads blocks of BLOCK_PAGES pages */
static double checksums[MAX_THREADS];

static double* page_of(int block, int page) { return blocks + ((size_t)block * BLOCK_PAGES + page) * DOUBLES_PER_PAGE; }

static int block_of(int t) { return pattern == PERMUTED ? (3 * t + 1) % nthreads : t; }
static int thread_of_block(int b) {
  for (int t = 0; t < nthreads; ++t)
    if (block_of(t) == b) return t;
  return -1;
}

static void grid(int* rows, int* cols) {
  int r = 1;
  for (int d = 1; d * d <= nthreads; ++d)
    if (nthreads % d == 0) r = d;
  *rows = r;
  *cols = nthreads / r;
}

/* The pages thread t reads from others at each step: (block, page). */
static int reads_of(int t, int* blk, int* pg) {
  int n = 0, b = block_of(t);
  switch (pattern) {
    case HALO1D:
    case PERMUTED:
      if (b > 0) blk[n] = b - 1, pg[n++] = BLOCK_PAGES - 1;  /* its last page faces us */
      if (b < nthreads - 1) blk[n] = b + 1, pg[n++] = 0;     /* its first page faces us */
      break;
    case HALO2D: {
      int rows, cols;
      grid(&rows, &cols);
      int r = t / cols, c = t % cols;
      if (r > 0) blk[n] = t - cols, pg[n++] = 1;        /* north neighbour's south page */
      if (r < rows - 1) blk[n] = t + cols, pg[n++] = 0; /* south neighbour's north page */
      if (c > 0) blk[n] = t - 1, pg[n++] = 3;           /* west neighbour's east page */
      if (c < cols - 1) blk[n] = t + 1, pg[n++] = 2;    /* east neighbour's west page */
      break;
    }
    case PIPELINE:
      if (t > 0) blk[n] = t - 1, pg[n++] = BLOCK_PAGES - 1;
      break;
    case ALLTOALL:
      for (int o = 0; o < nthreads; ++o)
        if (o != t) blk[n] = o, pg[n++] = 0;
      break;
    case PAIRS:
      if (t % 2 == 1) blk[n] = t - 1, pg[n++] = 0;  /* the consumer reads its producer's buffer */
      break;
  }
  return n;
}

static int is_partner(int a, int b) {
  int blk[MAX_PARTNERS], pg[MAX_PARTNERS];
  int n = reads_of(a, blk, pg);
  for (int i = 0; i < n; ++i)
    if (thread_of_block(blk[i]) == b) return 1;
  n = reads_of(b, blk, pg);
  for (int i = 0; i < n; ++i)
    if (thread_of_block(blk[i]) == a) return 1;
  return 0;
}

static void step(int t, double* sum) {
  int blk[MAX_PARTNERS], pg[MAX_PARTNERS];
  const int n = reads_of(t, blk, pg);
  double s = *sum;
  for (int i = 0; i < n; ++i) {
    const double* p = page_of(blk[i], pg[i]);
    for (int k = 0; k < DOUBLES_PER_PAGE; ++k) s += __atomic_load_n((const long*)&p[k], __ATOMIC_RELAXED) & 1;
  }
  double* own = page_of(block_of(t), 0);
  for (int k = 0; k < BLOCK_PAGES * DOUBLES_PER_PAGE; ++k) {
    long v = __atomic_load_n((long*)&own[k], __ATOMIC_RELAXED);
    __atomic_store_n((long*)&own[k], v * 3 + (long)s, __ATOMIC_RELAXED);
  }
  *sum = s;
}

static void* pair_thread(void* arg) {
  const int t = (int)(long)arg;
  double sum = 0;
  for (long i = 0; i < steps; ++i) step(t, &sum);
  checksums[t] = sum;
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s halo1d|halo2d|pipeline|alltoall|permuted|pairs THREADS STEPS|--truth\n", argv[0]);
    return 2;
  }
  pattern = -1;
  for (int i = 0; i < 6; ++i)
    if (strcmp(argv[1], names[i]) == 0) pattern = i;
  nthreads = atoi(argv[2]);
  if (pattern < 0 || nthreads < 2 || nthreads > MAX_THREADS || (pattern == PAIRS && nthreads % 2) ||
      (pattern == PERMUTED && nthreads % 3 == 0)) {
    fprintf(stderr, "%s: bad pattern or thread count\n", argv[0]);
    return 2;
  }
  if (strcmp(argv[3], "--truth") == 0) {
    for (int a = 0; a < nthreads; ++a)
      for (int b = 0; b < nthreads; ++b) printf("%d%c", a != b && is_partner(a, b), b + 1 < nthreads ? ' ' : '\n');
    return 0;
  }
  steps = atol(argv[3]);
  if (posix_memalign((void**)&blocks, PAGE, (size_t)nthreads * BLOCK_PAGES * PAGE) != 0) return 1;
  memset(blocks, 0, (size_t)nthreads * BLOCK_PAGES * PAGE);

  if (pattern == PAIRS) {
    pthread_t th[MAX_THREADS];
    for (int t = 1; t < nthreads; ++t) pthread_create(&th[t], NULL, pair_thread, (void*)(long)t);
    pair_thread((void*)0L);
    for (int t = 1; t < nthreads; ++t) pthread_join(th[t], NULL);
  } else {
#pragma omp parallel num_threads(nthreads)
    {
      const int t = omp_get_thread_num();
      double sum = 0;
      for (long i = 0; i < steps; ++i) {
        step(t, &sum);
        if (i % 64 == 63) {
#pragma omp barrier
        }
      }
      checksums[t] = sum;
    }
  }
  double total = 0;
  for (int t = 0; t < nthreads; ++t) total += checksums[t];
  printf("%s %d threads: checksum %g\n", names[pattern], nthreads, total);
  free(blocks);
  return 0;
}
