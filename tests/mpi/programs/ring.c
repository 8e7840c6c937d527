/* Test program for libcanopy-mpi: a ring. Rank r sends 1000 ints to r+1
 * (mod p) three times: twice with MPI_Sendrecv, once with a persistent
 * send (MPI_Send_init + MPI_Start). Expected: r -> r+1, 12000 bytes in 3
 * messages, nothing else (tests/mpi/pmpi_test.py). */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank, size, out[1000] = {0}, in[1000];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int right = (rank + 1) % size, left = (rank + size - 1) % size;
  for (int it = 0; it < 2; ++it)
    MPI_Sendrecv(out, 1000, MPI_INT, right, 0, in, 1000, MPI_INT, left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Request send, recv;
  MPI_Send_init(out, 1000, MPI_INT, right, 1, MPI_COMM_WORLD, &send);
  MPI_Irecv(in, 1000, MPI_INT, left, 1, MPI_COMM_WORLD, &recv);
  MPI_Start(&send);
  MPI_Wait(&recv, MPI_STATUS_IGNORE);
  MPI_Wait(&send, MPI_STATUS_IGNORE);
  MPI_Request_free(&send);
  MPI_Finalize();
  return 0;
}
