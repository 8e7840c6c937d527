/* Test program for libcanopy-mpi: a 2D halo exchange on a px x py grid of
 * ranks (px = 2, py = size / 2; rank = y * px + x), not periodic. Each rank
 * sends 100 doubles to each of its up to four neighbours with MPI_Isend, five
 * times, on a communicator from MPI_Comm_split with the ranks reversed (so
 * the library must translate them to MPI_COMM_WORLD ranks). Expected: each
 * grid neighbour pair 4000 bytes in 5 messages each way (pmpi_test.py). */
#include <mpi.h>

int main(int argc, char** argv) {
  int world_rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - world_rank, &comm); /* rank = size-1-world_rank */
  int rank;
  MPI_Comm_rank(comm, &rank);
  const int px = 2, py = size / 2;
  int x = rank % px, y = rank / px;
  int nb[4], n = 0;
  if (x > 0) nb[n++] = rank - 1;
  if (x + 1 < px) nb[n++] = rank + 1;
  if (y > 0) nb[n++] = rank - px;
  if (y + 1 < py) nb[n++] = rank + px;
  double out[4][100] = {{0}}, in[4][100];
  for (int it = 0; it < 5; ++it) {
    MPI_Request req[8];
    MPI_Status st[8];
    for (int k = 0; k < n; ++k) {
      MPI_Irecv(in[k], 100, MPI_DOUBLE, nb[k], it, comm, &req[2 * k]);
      MPI_Isend(out[k], 100, MPI_DOUBLE, nb[k], it, comm, &req[2 * k + 1]);
    }
    MPI_Waitall(2 * n, req, st);
  }
  MPI_Comm_free(&comm);
  MPI_Finalize();
  return 0;
}
