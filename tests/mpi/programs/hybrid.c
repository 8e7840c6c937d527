/* Test program for canopy mpirun: a hybrid MPI + OpenMP ring. Each rank runs
 * one OpenMP parallel region (so that the runtime reports every thread's
 * binding under OMP_DISPLAY_AFFINITY) and passes a token round the ring. */
#include <mpi.h>
#include <omp.h>

int main(int argc, char** argv) {
  int provided, rank, size, token = 0, sum = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
#pragma omp parallel reduction(+ : sum)
  sum += omp_get_thread_num();
  MPI_Sendrecv(&sum, 1, MPI_INT, (rank + 1) % size, 0, &token, 1, MPI_INT, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
  MPI_Finalize();
  return token < 0;
}
