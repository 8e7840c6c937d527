/* Test program for libcanopy-mpi: master-worker. Rank 0 hands each worker
 * three tasks of 4 ints (16 bytes, MPI_Send), each worker answers each with
 * one double (8 bytes), the master receives from MPI_ANY_SOURCE, then sends
 * every worker an empty stop message (0 bytes, tag 1). Expected: 0 -> w 48
 * bytes in 4 messages, w -> 0 24 bytes in 3 messages (pmpi_test.py). */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank, size, task[4] = {0};
  double result = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    for (int round = 0; round < 3; ++round) {
      for (int w = 1; w < size; ++w) MPI_Send(task, 4, MPI_INT, w, 0, MPI_COMM_WORLD);
      for (int w = 1; w < size; ++w)
        MPI_Recv(&result, 1, MPI_DOUBLE, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (int w = 1; w < size; ++w) MPI_Send(0, 0, MPI_INT, w, 1, MPI_COMM_WORLD);
  } else {
    while (1) {
      MPI_Status st;
      MPI_Recv(task, 4, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      if (st.MPI_TAG == 1) break;
      MPI_Ssend(&result, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
    }
  }
  MPI_Finalize();
  return 0;
}
