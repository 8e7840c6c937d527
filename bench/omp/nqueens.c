/* n-queens (BOTS style): every placement of a queen in a row is a task that
 * copies the board so far and recurses, down to a cut-off depth below which
 * the search is sequential; solutions are summed per task after a taskwait.
 * Default n = 12 (cut-off: the first 4 rows in tasks); checked against the
 * known solution counts. */
#include "omp_bench.h"

static const long known[] = {1, 1, 0, 0, 2, 10, 4, 40, 92, 352, 724, 2680, 14200, 73712, 365596, 2279184};

static int ok(const char* a, int row, int col) {
  for (int i = 0; i < row; ++i) {
    const int d = a[i] - col;
    if (d == 0 || d == row - i || d == i - row) return 0;
  }
  return 1;
}

static long seq(char* a, int row, int n) {
  if (row == n) return 1;
  long s = 0;
  for (int c = 0; c < n; ++c)
    if (ok(a, row, c)) {
      a[row] = (char)c;
      s += seq(a, row + 1, n);
    }
  return s;
}

static int cutoff = 4;

static long solve(const char* board, int row, int n) {
  if (row == n) return 1;
  if (row >= cutoff) {
    char a[32];
    memcpy(a, board, (size_t)row);
    return seq(a, row, n);
  }
  long counts[32];
  for (int c = 0; c < n; ++c) {
    counts[c] = 0;
#pragma omp task firstprivate(c) shared(counts)
    {
      if (ok(board, row, c)) {
        char a[32];
        memcpy(a, board, (size_t)row);
        a[row] = (char)c;
        counts[c] = solve(a, row + 1, n);
      }
    }
  }
#pragma omp taskwait
  long s = 0;
  for (int c = 0; c < n; ++c) s += counts[c];
  return s;
}

static int n;
static long result;
static void run(void* ctx) {
  (void)ctx;
  char board[32];
#pragma omp parallel
#pragma omp single
  result = solve(board, 0, n);
}
static char err[128];
static const char* check(void* ctx) {
  (void)ctx;
  if (result != known[n]) {
    snprintf(err, sizeof err, "%d queens: %ld solutions, expected %ld", n, result, known[n]);
    return err;
  }
  return NULL;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  n = a.n ? (int)a.n : 12;
  if (n < 1 || n > 15) bench_fail("nqueens: -n %d is outside 1..15", n);
  bench_measure(&a, "nqueens", a.threads, 1, "run", run, check, NULL);
  return 0;
}
