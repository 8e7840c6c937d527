/* Test program for libcanopy-mpi: one call of each counted collective with
 * its own size, so that the expected matrix (pmpi_test.py, from the models
 * documented in src/mpi/canopy_mpi.c and docs/mpi.md) tells them apart:
 * Alltoall 10 ints per block, Bcast 3 doubles from rank 1, Reduce 5 ints to
 * rank 2, Allreduce 7 chars, Gather 11 chars to rank 0, Scatter 13 chars
 * from rank 3 (when it exists, else 0), Allgather 17 chars, Scan 19 chars,
 * Barrier (nothing). */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static int ia[64 * 10], ib[64 * 10];
  static char ca[64 * 32], cb[64 * 32];
  double d[3] = {0};
  MPI_Alltoall(ia, 10, MPI_INT, ib, 10, MPI_INT, MPI_COMM_WORLD);
  MPI_Bcast(d, 3, MPI_DOUBLE, 1 % size, MPI_COMM_WORLD);
  MPI_Reduce(ia, ib, 5, MPI_INT, MPI_SUM, 2 % size, MPI_COMM_WORLD);
  MPI_Allreduce(ca, cb, 7, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD);
  MPI_Gather(ca, 11, MPI_CHAR, cb, 11, MPI_CHAR, 0, MPI_COMM_WORLD);
  MPI_Scatter(ca, 13, MPI_CHAR, cb, 13, MPI_CHAR, size > 3 ? 3 : 0, MPI_COMM_WORLD);
  MPI_Allgather(ca, 17, MPI_CHAR, cb, 17, MPI_CHAR, MPI_COMM_WORLD);
  MPI_Scan(ca, cb, 19, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
