/* Unbalanced tree search (UTS's binomial tree, with splitmix64 in place of
 * UTS's SHA-1): the root has B0 = 6000 children (about 520,000 nodes); every other node has M = 4
 * children with probability Q = 0.2475 (M Q = 0.99: the expected subtree is
 * 100 nodes, the actual sizes vary wildly) and none otherwise. Each node
 * spends 16 rounds of hashing (the work UTS's SHA-1 stands for) and creates
 * one task per child; nothing waits but the end of the region. -n sets B0.
 * Checked: nodes and leaves equal a sequential traversal's (done once). */
#include "omp_bench.h"

#define M 4
#define Q 0.2475
#define WORK 16

static uint64_t node_work(uint64_t state) {
  for (int k = 0; k < WORK; ++k) state = bench_mix(state);
  return state;
}
static int children(uint64_t state) {
  return (double)(bench_mix(state ^ 0x5bd1e995ULL) >> 11) * 0x1.0p-53 < Q ? M : 0;
}

typedef struct {
  long nodes, leaves;
  char pad[48];
} counts;
static counts* per_thread;

static void visit(uint64_t state) {
  const uint64_t s = node_work(state);
  const int n = children(s);
  counts* c = &per_thread[omp_get_thread_num()];
  c->nodes++;
  if (!n) c->leaves++;
  for (int i = 0; i < n; ++i) {
    const uint64_t child = s * 31 + (uint64_t)i + 1;
#pragma omp task firstprivate(child)
    visit(child);
  }
}

static void visit_seq(uint64_t state, long* nodes, long* leaves) {
  const uint64_t s = node_work(state);
  const int n = children(s);
  ++*nodes;
  if (!n) ++*leaves;
  for (int i = 0; i < n; ++i) visit_seq(s * 31 + (uint64_t)i + 1, nodes, leaves);
}

static long b0, nodes, leaves, want_nodes, want_leaves;
static int threads;

static void run(void* ctx) {
  (void)ctx;
  memset(per_thread, 0, (size_t)threads * sizeof(counts));
#pragma omp parallel
#pragma omp single
  {
    per_thread[omp_get_thread_num()].nodes++; /* the root */
    for (long i = 0; i < b0; ++i) {
      const uint64_t child = 0x9e3779b9ULL * (uint64_t)(i + 1);
#pragma omp task firstprivate(child)
      visit(child);
    }
  }
  nodes = leaves = 0;
  for (int t = 0; t < threads; ++t) {
    nodes += per_thread[t].nodes;
    leaves += per_thread[t].leaves;
  }
}
static char err[160];
static const char* check(void* ctx) {
  (void)ctx;
  if (nodes != want_nodes || leaves != want_leaves) {
    snprintf(err, sizeof err, "%ld nodes, %ld leaves; expected %ld and %ld", nodes, leaves, want_nodes, want_leaves);
    return err;
  }
  return NULL;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  b0 = a.n ? a.n : 6000;
  threads = a.threads;
  per_thread = calloc((size_t)threads, sizeof(counts));
  if (!per_thread) bench_fail("uts: out of memory");
  want_nodes = 1;
  for (long i = 0; i < b0; ++i) visit_seq(0x9e3779b9ULL * (uint64_t)(i + 1), &want_nodes, &want_leaves);
  bench_measure(&a, "uts", a.threads, 1, "run", run, check, NULL);
  return 0;
}
