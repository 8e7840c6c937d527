/* libcanopy-mpi: a PMPI interposition library that measures how much each MPI
 * rank sends to each other rank, for `canopy map --matrix` / `canopy mpirun`.
 *
 * Preload it (mpirun -x LD_PRELOAD=.../libcanopy-mpi.so, or canopy mpirun
 * --profile) or link it before the MPI library: every MPI_* call below counts
 * and then calls the library's PMPI_* twin, so the program is not rebuilt.
 * It is built once per MPI library (Open MPI and MPICH are not ABI
 * compatible): lib/canopy-mpi/<mpi>/libcanopy-mpi.so.
 *
 * What is counted, always on the sending side, in MPI_COMM_WORLD ranks
 * (docs/mpi.md, "What the profile counts"):
 *  - point-to-point: every send (blocking, non-blocking, synchronous,
 *    buffered, ready, the send half of MPI_Sendrecv[_replace]) and every
 *    MPI_Start of a persistent send: one message of count x type size bytes;
 *  - collectives, as their usual algorithms move data:
 *    MPI_Bcast: binomial tree from the root (each rank receives the buffer
 *      once, from its parent); MPI_Reduce: the same tree towards the root;
 *    MPI_Allreduce: a reduce to rank 0 then a broadcast from rank 0;
 *    MPI_Gather[v]: each rank sends its block to the root; MPI_Scatter[v]:
 *      the root sends each rank its block;
 *    MPI_Allgather[v]: a ring: each rank sends to its right neighbour every
 *      block but that neighbour's own;
 *    MPI_Alltoall[v]: each rank sends each other rank its block directly;
 *    MPI_Scan / MPI_Exscan: a chain, rank i sends the buffer to rank i+1;
 *    MPI_Barrier moves no data and is not counted. Blocks a rank sends to
 *    itself are never counted.
 * At MPI_Finalize rank 0 gathers the rows and writes two MatrixMarket files:
 * $CANOPY_MPI_MATRIX (bytes, row = sender, column = receiver, 1-based) and
 * $CANOPY_MPI_MATRIX.messages (message counts). Without CANOPY_MPI_MATRIX the
 * library counts nothing and says so once.
 */
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_on = 0;        /* counting (CANOPY_MPI_MATRIX set and init done) */
static int g_size = 0;      /* MPI_COMM_WORLD size */
static int g_rank = 0;
static double* g_bytes = 0; /* bytes this rank sent to each world rank */
static double* g_msgs = 0;  /* messages this rank sent to each world rank */
static MPI_Group g_world_group = MPI_GROUP_NULL;

/* Persistent send requests (MPI_Send_init & co.): what MPI_Start sends. */
struct persistent {
  MPI_Request req;
  int world_dest;
  double bytes;
};
static struct persistent* g_persistent = 0;
static int g_npersistent = 0, g_cap_persistent = 0;

static void setup(void) {
  const char* path = getenv("CANOPY_MPI_MATRIX");
  PMPI_Comm_size(MPI_COMM_WORLD, &g_size);
  PMPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  if (!path || !*path) {
    if (g_rank == 0)
      fprintf(stderr, "libcanopy-mpi: CANOPY_MPI_MATRIX is not set: the communication is not recorded\n");
    return;
  }
  g_bytes = calloc((size_t)g_size, sizeof(double));
  g_msgs = calloc((size_t)g_size, sizeof(double));
  if (!g_bytes || !g_msgs) {
    fprintf(stderr, "libcanopy-mpi: rank %d: out of memory for %d counters; not recording\n", g_rank, g_size);
    return;
  }
  PMPI_Comm_group(MPI_COMM_WORLD, &g_world_group);
  g_on = 1;
}

/* The MPI_COMM_WORLD rank of rank `r` of `comm` (-1 when none). For
 * intercommunicators, point-to-point ranks name the remote group. */
static int world_rank(MPI_Comm comm, int r) {
  if (r < 0) return -1; /* MPI_PROC_NULL and friends */
  if (comm == MPI_COMM_WORLD) return r;
  int inter = 0, out = MPI_UNDEFINED;
  MPI_Group g;
  PMPI_Comm_test_inter(comm, &inter);
  if (inter)
    PMPI_Comm_remote_group(comm, &g);
  else
    PMPI_Comm_group(comm, &g);
  PMPI_Group_translate_ranks(g, 1, &r, g_world_group, &out);
  PMPI_Group_free(&g);
  return out == MPI_UNDEFINED ? -1 : out;
}

static double type_bytes(MPI_Datatype t, int count) {
  int size = 0;
  if (count <= 0 || t == MPI_DATATYPE_NULL) return 0;
  PMPI_Type_size(t, &size);
  return (double)size * count;
}

/* One message of `bytes` from this rank to rank `dest` of `comm`. */
static void count_to(MPI_Comm comm, int dest, double bytes) {
  if (!g_on) return;
  int w = world_rank(comm, dest);
  if (w < 0 || w >= g_size || w == g_rank) return;
  g_bytes[w] += bytes;
  g_msgs[w] += 1;
}

/* Collectives are counted on intracommunicators (their rank arithmetic is
 * within one group); on intercommunicators they are not counted. */
static int counted(MPI_Comm c) {
  int inter = 0;
  if (!g_on) return 0;
  if (c == MPI_COMM_WORLD) return 1;
  PMPI_Comm_test_inter(c, &inter);
  return !inter;
}

static int comm_rank(MPI_Comm c) {
  int r = 0;
  PMPI_Comm_rank(c, &r);
  return r;
}
static int comm_size(MPI_Comm c) {
  int s = 0;
  PMPI_Comm_size(c, &s);
  return s;
}

/* Binomial tree over relative ranks 0..p-1 (relative to the root): the
 * parent of v > 0 is v with its lowest set bit cleared; the children of v are
 * v + m for the powers of two m below v's lowest set bit (below p for v=0). */
static void binomial_children(MPI_Comm comm, int root, double bytes) {
  int p = comm_size(comm), v = (comm_rank(comm) - root + p) % p, m = 1;
  while (m < p && !(v & m)) m <<= 1; /* v's lowest set bit, or >= p for the root */
  for (m >>= 1; m > 0; m >>= 1)
    if (v + m < p) count_to(comm, (v + m + root) % p, bytes);
}
static void binomial_parent(MPI_Comm comm, int root, double bytes) {
  int p = comm_size(comm), v = (comm_rank(comm) - root + p) % p;
  if (v == 0) return;
  count_to(comm, ((v & (v - 1)) + root) % p, bytes);
}

/* ---- initialisation and finalisation ---- */

int MPI_Init(int* argc, char*** argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) setup();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) setup();
  return rc;
}

static void write_matrix(FILE* f, const double* all, int n, const char* what) {
  long nnz = 0;
  for (long k = 0; k < (long)n * n; ++k) nnz += all[k] != 0;
  fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n");
  fprintf(f, "%% canopy-mpi: %s sent by MPI rank i (row) to rank j (column), 1-based\n", what);
  fprintf(f, "%d %d %ld\n", n, n, nnz);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (all[(long)i * n + j] != 0) fprintf(f, "%d %d %.17g\n", i + 1, j + 1, all[(long)i * n + j]);
}

static void write_file(const char* path, const double* all, int n, const char* what) {
  FILE* f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "libcanopy-mpi: cannot write %s: %s\n", path, strerror(errno));
    return;
  }
  write_matrix(f, all, n, what);
  if (fclose(f) != 0) fprintf(stderr, "libcanopy-mpi: cannot write %s: %s\n", path, strerror(errno));
}

int MPI_Finalize(void) {
  /* Every rank takes part when any does: g_on is the same on all ranks (one
   * environment, one allocation outcome aside, which then loses the rows). */
  if (g_on) {
    const char* path = getenv("CANOPY_MPI_MATRIX");
    double* all_bytes = 0;
    double* all_msgs = 0;
    g_on = 0; /* the gathers below are not the program's traffic */
    if (g_rank == 0) {
      all_bytes = malloc(sizeof(double) * (size_t)g_size * (size_t)g_size);
      all_msgs = malloc(sizeof(double) * (size_t)g_size * (size_t)g_size);
    }
    if (g_rank == 0 && (!all_bytes || !all_msgs)) {
      fprintf(stderr, "libcanopy-mpi: out of memory for the %d x %d matrix\n", g_size, g_size);
    }
    PMPI_Gather(g_bytes, g_size, MPI_DOUBLE, all_bytes, g_size, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    PMPI_Gather(g_msgs, g_size, MPI_DOUBLE, all_msgs, g_size, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (g_rank == 0 && all_bytes && all_msgs) {
      size_t len = strlen(path);
      char* mpath = malloc(len + sizeof ".messages");
      write_file(path, all_bytes, g_size, "bytes");
      if (mpath) {
        memcpy(mpath, path, len);
        memcpy(mpath + len, ".messages", sizeof ".messages");
        write_file(mpath, all_msgs, g_size, "messages");
        free(mpath);
      }
    }
    free(all_bytes);
    free(all_msgs);
    PMPI_Group_free(&g_world_group);
  }
  free(g_bytes);
  free(g_msgs);
  free(g_persistent);
  g_bytes = g_msgs = 0;
  g_persistent = 0;
  return PMPI_Finalize();
}

/* ---- point-to-point ---- */

#define SEND_WRAPPER(NAME)                                                                                   \
  int MPI_##NAME(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm) {             \
    count_to(comm, dest, type_bytes(t, count));                                                              \
    return PMPI_##NAME(buf, count, t, dest, tag, comm);                                                      \
  }
SEND_WRAPPER(Send)
SEND_WRAPPER(Bsend)
SEND_WRAPPER(Ssend)
SEND_WRAPPER(Rsend)

#define ISEND_WRAPPER(NAME)                                                                                  \
  int MPI_##NAME(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* r) { \
    count_to(comm, dest, type_bytes(t, count));                                                              \
    return PMPI_##NAME(buf, count, t, dest, tag, comm, r);                                                   \
  }
ISEND_WRAPPER(Isend)
ISEND_WRAPPER(Ibsend)
ISEND_WRAPPER(Issend)
ISEND_WRAPPER(Irsend)

static void remember_persistent(MPI_Request req, MPI_Comm comm, int dest, double bytes) {
  if (!g_on) return;
  if (g_npersistent == g_cap_persistent) {
    int cap = g_cap_persistent ? 2 * g_cap_persistent : 16;
    struct persistent* p = realloc(g_persistent, sizeof *p * (size_t)cap);
    if (!p) return;
    g_persistent = p;
    g_cap_persistent = cap;
  }
  g_persistent[g_npersistent].req = req;
  g_persistent[g_npersistent].world_dest = world_rank(comm, dest);
  g_persistent[g_npersistent].bytes = bytes;
  ++g_npersistent;
}

#define SEND_INIT_WRAPPER(NAME)                                                                                  \
  int MPI_##NAME(const void* buf, int count, MPI_Datatype t, int dest, int tag, MPI_Comm comm, MPI_Request* r) { \
    int rc = PMPI_##NAME(buf, count, t, dest, tag, comm, r);                                                     \
    if (rc == MPI_SUCCESS) remember_persistent(*r, comm, dest, type_bytes(t, count));                           \
    return rc;                                                                                                   \
  }
SEND_INIT_WRAPPER(Send_init)
SEND_INIT_WRAPPER(Bsend_init)
SEND_INIT_WRAPPER(Ssend_init)
SEND_INIT_WRAPPER(Rsend_init)

static void count_start(MPI_Request r) {
  for (int k = 0; k < g_npersistent; ++k)
    if (g_persistent[k].req == r) {
      count_to(MPI_COMM_WORLD, g_persistent[k].world_dest, g_persistent[k].bytes);
      return;
    }
}

int MPI_Start(MPI_Request* r) {
  if (g_on) count_start(*r);
  return PMPI_Start(r);
}

int MPI_Startall(int n, MPI_Request r[]) {
  if (g_on)
    for (int k = 0; k < n; ++k) count_start(r[k]);
  return PMPI_Startall(n, r);
}

int MPI_Request_free(MPI_Request* r) {
  for (int k = 0; k < g_npersistent; ++k)
    if (g_persistent[k].req == *r) {
      g_persistent[k] = g_persistent[--g_npersistent];
      break;
    }
  return PMPI_Request_free(r);
}

int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  count_to(comm, dest, type_bytes(stype, scount));
  return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}

int MPI_Sendrecv_replace(void* buf, int count, MPI_Datatype t, int dest, int stag, int source, int rtag,
                         MPI_Comm comm, MPI_Status* status) {
  count_to(comm, dest, type_bytes(t, count));
  return PMPI_Sendrecv_replace(buf, count, t, dest, stag, source, rtag, comm, status);
}

/* ---- collectives ---- */

int MPI_Bcast(void* buf, int count, MPI_Datatype t, int root, MPI_Comm comm) {
  if (counted(comm)) binomial_children(comm, root, type_bytes(t, count));
  return PMPI_Bcast(buf, count, t, root, comm);
}

int MPI_Reduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) {
  if (counted(comm)) binomial_parent(comm, root, type_bytes(t, count));
  return PMPI_Reduce(sbuf, rbuf, count, t, op, root, comm);
}

int MPI_Allreduce(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  if (counted(comm)) {
    binomial_parent(comm, 0, type_bytes(t, count));
    binomial_children(comm, 0, type_bytes(t, count));
  }
  return PMPI_Allreduce(sbuf, rbuf, count, t, op, comm);
}

int MPI_Gather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  if (counted(comm) && comm_rank(comm) != root) count_to(comm, root, type_bytes(stype, scount));
  return PMPI_Gather(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Gatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (counted(comm) && comm_rank(comm) != root) count_to(comm, root, type_bytes(stype, scount));
  return PMPI_Gatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm);
}

int MPI_Scatter(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                int root, MPI_Comm comm) {
  if (counted(comm) && comm_rank(comm) == root) {
    int p = comm_size(comm);
    for (int i = 0; i < p; ++i)
      if (i != root) count_to(comm, i, type_bytes(stype, scount));
  }
  return PMPI_Scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Scatterv(const void* sbuf, const int scounts[], const int displs[], MPI_Datatype stype, void* rbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm) {
  if (counted(comm) && comm_rank(comm) == root) {
    int p = comm_size(comm);
    for (int i = 0; i < p; ++i)
      if (i != root) count_to(comm, i, type_bytes(stype, scounts[i]));
  }
  return PMPI_Scatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm);
}

int MPI_Allgather(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  if (counted(comm)) {
    int p = comm_size(comm);
    /* MPI_IN_PLACE: the block is described by the receive arguments. */
    double block = sbuf == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount);
    for (int s = 0; s < p - 1; ++s) count_to(comm, (comm_rank(comm) + 1) % p, block);
  }
  return PMPI_Allgather(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int MPI_Allgatherv(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, const int rcounts[],
                   const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  if (counted(comm)) {
    int p = comm_size(comm), me = comm_rank(comm), right = (me + 1) % p;
    for (int b = 0; b < p; ++b)
      if (b != right) count_to(comm, right, type_bytes(rtype, rcounts[b]));
  }
  return PMPI_Allgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm);
}

int MPI_Alltoall(const void* sbuf, int scount, MPI_Datatype stype, void* rbuf, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  if (counted(comm)) {
    int p = comm_size(comm);
    double block = sbuf == MPI_IN_PLACE ? type_bytes(rtype, rcount) : type_bytes(stype, scount);
    for (int i = 0; i < p; ++i) count_to(comm, i, block);
  }
  return PMPI_Alltoall(sbuf, scount, stype, rbuf, rcount, rtype, comm);
}

int MPI_Alltoallv(const void* sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype, void* rbuf,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  if (counted(comm)) {
    int p = comm_size(comm);
    for (int i = 0; i < p; ++i)
      count_to(comm, i, sbuf == MPI_IN_PLACE ? type_bytes(rtype, rcounts[i]) : type_bytes(stype, scounts[i]));
  }
  return PMPI_Alltoallv(sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm);
}

int MPI_Scan(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  if (counted(comm) && comm_rank(comm) + 1 < comm_size(comm)) count_to(comm, comm_rank(comm) + 1, type_bytes(t, count));
  return PMPI_Scan(sbuf, rbuf, count, t, op, comm);
}

int MPI_Exscan(const void* sbuf, void* rbuf, int count, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  if (counted(comm) && comm_rank(comm) + 1 < comm_size(comm)) count_to(comm, comm_rank(comm) + 1, type_bytes(t, count));
  return PMPI_Exscan(sbuf, rbuf, count, t, op, comm);
}
