/* canopy.h: the C API of canopy, in the manner of hwloc and libuv.
 *
 * - One prefix, canopy_; typed opaque handles (canopy_topology_t,
 *   canopy_matrix_t, canopy_placement_t, canopy_team_t) made by
 *   canopy_*_create* and freed by canopy_*_destroy (which accept NULL).
 * - Every other call returns a canopy_status_t from one table;
 *   canopy_strerror() names a status and canopy_last_error() gives the
 *   message of the last failed call on the calling thread (a call that
 *   succeeds clears it). No C++ exception ever crosses this API.
 * - Flag words reject unknown bits with CANOPY_EINVAL.
 * - Strings are returned in caller buffers with "needed size" semantics
 *   (see CANOPY_ENOBUFS below).
 * - Handles are not locked: a handle may be read (const calls) from several
 *   threads at once, but not destroyed while in use.
 *
 * The OpenMP part (bind the threads of the calling team) is in
 * canopy_omp.h, header-only, so that libcanopy itself does not depend on
 * an OpenMP runtime. See docs/c-api.md.
 *
 * This header compiles as C99 and as C++. */
#ifndef CANOPY_H
#define CANOPY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version ---------------------------------------------------------- */

#define CANOPY_VERSION_MAJOR 0
#define CANOPY_VERSION_MINOR 1
#define CANOPY_VERSION_PATCH 0
#define CANOPY_VERSION_ENCODE(major, minor, patch) (((major) << 16) | ((minor) << 8) | (patch))
/* The version this header belongs to, e.g. 0x000100 for 0.1.0. */
#define CANOPY_VERSION CANOPY_VERSION_ENCODE(CANOPY_VERSION_MAJOR, CANOPY_VERSION_MINOR, CANOPY_VERSION_PATCH)

/* The version of the library actually loaded (CANOPY_VERSION_ENCODE form);
 * compare with CANOPY_VERSION to detect a header/library mismatch. */
unsigned canopy_version(void);
/* The same as "MAJOR.MINOR.PATCH" (a static string). */
const char* canopy_version_string(void);

/* ---- Status ------------------------------------------------------------ */

typedef enum canopy_status {
  CANOPY_OK = 0,
  CANOPY_EINVAL = -1,   /* invalid argument: NULL, unknown flag bit, unknown name, bad value */
  CANOPY_ENOMEM = -2,   /* out of memory */
  CANOPY_EIO = -3,      /* a file cannot be opened, read or written */
  CANOPY_EPARSE = -4,   /* malformed input: a file's content or a description string */
  CANOPY_ERANGE = -5,   /* an index or size out of range */
  CANOPY_ENOBUFS = -6,  /* the caller's buffer is too small (the needed size was stored) */
  CANOPY_ENOSYS = -7,   /* not supported here (e.g. binding on a topology that is not this machine) */
  CANOPY_ESYSTEM = -8,  /* the operating system or hwloc refused (e.g. binding outside the allowed CPUs) */
  CANOPY_EUNKNOWN = -9, /* an unexpected internal error */
  /* Not a status: makes the enum int-sized in C and in C++, so that any int
   * may be stored in it and given to canopy_strerror(). */
  CANOPY_STATUS_MAX_ENUM_ = 0x7fffffff
} canopy_status_t;

/* A short, static description of a status ("invalid argument"); unknown
 * values give "unknown status". Never NULL. */
const char* canopy_strerror(canopy_status_t status);

/* The message of the last call that failed on the calling thread, naming the
 * function, the input and what was expected; "" when the last call on this
 * thread succeeded. Valid until the next canopy_ call on this thread. */
const char* canopy_last_error(void);

/* ---- Handles ----------------------------------------------------------- */

typedef struct canopy_topology canopy_topology_t;
typedef struct canopy_matrix canopy_matrix_t;
typedef struct canopy_placement canopy_placement_t;
typedef struct canopy_team canopy_team_t;

/* ---- Topology ---------------------------------------------------------- */

/* This machine, restricted to the PUs this process may use (taskset,
 * cgroup cpuset). */
canopy_status_t canopy_topology_create(canopy_topology_t** out);
/* An hwloc XML file (lstopo file.xml of another machine). EIO when the file
 * cannot be read, EPARSE when hwloc rejects it. */
canopy_status_t canopy_topology_create_from_xml(canopy_topology_t** out, const char* path);
/* An hwloc synthetic description such as "pack:2 numa:2 core:8 pu:2".
 * EPARSE when it is not valid or too large. */
canopy_status_t canopy_topology_create_from_synthetic(canopy_topology_t** out, const char* description);
/* The --input convention of the canopy tool: NULL or "" = this machine; an
 * existing file, or a name ending in ".xml" or containing '/' = XML; anything
 * else = synthetic. */
canopy_status_t canopy_topology_create_from_input(canopy_topology_t** out, const char* input);
/* The same machine restricted to the given PUs (OS indexes). ERANGE when one
 * of them is not a PU of `topo`. */
canopy_status_t canopy_topology_create_restricted(canopy_topology_t** out, const canopy_topology_t* topo,
                                                  const int* pu_os_indexes, size_t count);
void canopy_topology_destroy(canopy_topology_t* topo);

canopy_status_t canopy_topology_num_pus(const canopy_topology_t* topo, int* out);
canopy_status_t canopy_topology_num_cores(const canopy_topology_t* topo, int* out);
canopy_status_t canopy_topology_num_numa_nodes(const canopy_topology_t* topo, int* out);
/* Levels of canopy's tree (root to PUs, levels that do not branch merged). */
canopy_status_t canopy_topology_num_levels(const canopy_topology_t* topo, int* out);
/* OS index (CPU number) of logical PU `pu`; ERANGE when out of range. */
canopy_status_t canopy_topology_pu_os_index(const canopy_topology_t* topo, int pu, int* os_index);
/* Tree distance between two logical PUs (0 = same PU, 1 = lowest shared level, ...). */
canopy_status_t canopy_topology_distance(const canopy_topology_t* topo, int pu_a, int pu_b, int* out);
/* 1 when `topo` is this machine (threads can be bound on it), else 0. */
canopy_status_t canopy_topology_is_this_machine(const canopy_topology_t* topo, int* out);
/* The topology as "text" (like lstopo), "json", "svg" or "xml" (hwloc XML),
 * with the buffer convention below. EINVAL for another format name. */
canopy_status_t canopy_topology_format(const canopy_topology_t* topo, const char* format, char* buf, size_t size,
                                       size_t* needed);

/* Buffer convention of every call that returns a string: the string and its
 * terminating NUL need `*needed` bytes, stored when `needed` is not NULL.
 * - buf == NULL and size == 0: a size query; returns CANOPY_OK.
 * - size >= *needed: the string is copied; CANOPY_OK.
 * - 0 < size < *needed: buf receives the first size-1 bytes and a NUL;
 *   returns CANOPY_ENOBUFS.
 * - buf == NULL with size > 0: CANOPY_EINVAL. */

/* ---- Communication matrix --------------------------------------------- */

typedef enum canopy_matrix_format {
  CANOPY_MATRIX_FORMAT_AUTO = 0,      /* reading only: detect from header, extension and content */
  CANOPY_MATRIX_FORMAT_DENSE = 1,     /* whitespace- or comma-separated rows (TreeMatch, BindMe) */
  CANOPY_MATRIX_FORMAT_MATRIXMARKET = 2, /* MatrixMarket coordinate, general or symmetric */
  CANOPY_MATRIX_FORMAT_EDGELIST = 3,  /* lines "i j weight" */
  /* Not a format: any int passed from C stays a valid value that canopy can
   * reject with CANOPY_EINVAL (in C++ an enum holds only its range). */
  CANOPY_MATRIX_FORMAT_MAX_ENUM_ = 0x7fffffff
} canopy_matrix_format_t;

/* Bits of the `info` word the matrix constructors can return. */
#define CANOPY_MATRIX_SYMMETRIZED (1u << 0)  /* the input was asymmetric: C + Ct was taken */
#define CANOPY_MATRIX_HAD_DIAGONAL (1u << 1) /* non-zero diagonal entries were ignored (files only) */

typedef struct canopy_edge {
  int i;
  int j;
  double weight; /* finite, >= 0 */
} canopy_edge_t;

/* n tasks that do not communicate (n >= 0). */
canopy_status_t canopy_matrix_create(canopy_matrix_t** out, int n);
/* Read a matrix file. `info` (may be NULL) receives CANOPY_MATRIX_* bits.
 * EIO when the file cannot be read; EPARSE when its content is malformed
 * (the message names the file, line and problem). */
canopy_status_t canopy_matrix_create_from_file(canopy_matrix_t** out, const char* path,
                                               canopy_matrix_format_t format, unsigned* info);
/* From edges (i, j, weight); (i, j) and (j, i) add up, self-edges are dropped.
 * ERANGE for an index outside [0, n), EINVAL for a negative or non-finite weight. */
canopy_status_t canopy_matrix_create_from_edges(canopy_matrix_t** out, int n, const canopy_edge_t* edges,
                                                size_t num_edges, unsigned* info);
/* From a dense row-major n x n array (n*n doubles). */
canopy_status_t canopy_matrix_create_from_dense(canopy_matrix_t** out, int n, const double* values, unsigned* info);
void canopy_matrix_destroy(canopy_matrix_t* matrix);

canopy_status_t canopy_matrix_size(const canopy_matrix_t* matrix, int* n);
/* Undirected edges with a non-zero weight. */
canopy_status_t canopy_matrix_num_edges(const canopy_matrix_t* matrix, int64_t* out);
/* Weight between tasks i and j (0 when none); ERANGE when out of range. */
canopy_status_t canopy_matrix_get(const canopy_matrix_t* matrix, int i, int j, double* weight);
/* Write in one of the formats (not AUTO). */
canopy_status_t canopy_matrix_write_file(const canopy_matrix_t* matrix, const char* path,
                                         canopy_matrix_format_t format);

/* ---- Policies ---------------------------------------------------------- */

/* The registered mapping policies (compact, scatter, treematch, ...). Names
 * and descriptions are static strings valid for the life of the process. */
canopy_status_t canopy_policy_count(size_t* count);
canopy_status_t canopy_policy_get(size_t index, const char** name, const char** description);
canopy_status_t canopy_policy_default(const char** name);

/* ---- Placement --------------------------------------------------------- */

/* Flags of canopy_map_options_t and canopy_team_create(). */
#define CANOPY_MAP_PACK (1u << 0)             /* fewer tasks than PUs: pack into as few NUMA nodes as possible */
#define CANOPY_MAP_GRANULARITY_CORE (1u << 1) /* bind each task to its whole core, not one PU */
#define CANOPY_MAP_HELPERS_SMT (1u << 2)      /* keep each task's hyperthread sibling for its helper threads */
#define CANOPY_MAP_ALL_FLAGS (CANOPY_MAP_PACK | CANOPY_MAP_GRANULARITY_CORE | CANOPY_MAP_HELPERS_SMT)

/* Initialise with = {0} (all defaults). */
typedef struct canopy_map_options {
  unsigned flags;         /* CANOPY_MAP_* bits; any other bit is rejected */
  const double* weights;  /* cost weight per level, root first (see docs/cost-model.md); NULL = defaults */
  size_t num_weights;
} canopy_map_options_t;

/* Map the tasks of `matrix` onto `topo` with `policy` (NULL = the default
 * policy); `options` may be NULL. EINVAL for an unknown policy (the message
 * lists the known ones) or bad options. */
canopy_status_t canopy_placement_create(canopy_placement_t** out, const canopy_topology_t* topo,
                                        const canopy_matrix_t* matrix, const char* policy,
                                        const canopy_map_options_t* options);
/* A placement given by the caller: task t on logical PU task_pu[t] (to
 * evaluate it, print it, or bind with it). Only CANOPY_MAP_GRANULARITY_CORE
 * may be set in `flags`. ERANGE for a PU outside the topology; EINVAL when a
 * PU holds more than ceil(tasks/PUs) tasks. */
canopy_status_t canopy_placement_create_from_pus(canopy_placement_t** out, const canopy_topology_t* topo,
                                                 const int* task_pu, int num_tasks, unsigned flags);
void canopy_placement_destroy(canopy_placement_t* placement);

canopy_status_t canopy_placement_num_tasks(const canopy_placement_t* placement, int* out);
/* The policy that computed it ("given" for canopy_placement_create_from_pus);
 * valid while the placement lives. */
canopy_status_t canopy_placement_policy(const canopy_placement_t* placement, const char** name);
/* Logical PU / OS CPU number of task `task`. ERANGE when out of range. */
canopy_status_t canopy_placement_task_pu(const canopy_placement_t* placement, int task, int* pu);
canopy_status_t canopy_placement_task_pu_os(const canopy_placement_t* placement, int task, int* os_index);
/* Logical PU kept for the helpers of `task` (CANOPY_MAP_HELPERS_SMT), -1 when none. */
canopy_status_t canopy_placement_helper_pu(const canopy_placement_t* placement, int task, int* pu);
/* The OS CPUs task `task` is bound to (its PU, or its core's PUs): up to
 * `capacity` ints into `os_indexes`; `*count` receives how many there are.
 * Like strings: os_indexes == NULL with capacity 0 is a count query (OK);
 * otherwise ENOBUFS when capacity < *count (the first `capacity` are stored). */
canopy_status_t canopy_placement_task_binding(const canopy_placement_t* placement, int task, int* os_indexes,
                                              size_t capacity, size_t* count);
/* OMP_PLACES value, one place per task: "{0},{1},{2,3}" (buffer convention above). */
canopy_status_t canopy_placement_omp_places(const canopy_placement_t* placement, char* buf, size_t size,
                                            size_t* needed);
/* The placement in one of the formats of `canopy map --of`: "table", "json",
 * "list", "omp-places", "gomp", "rankfile". `matrix` (may be NULL) adds
 * per-task communication to table and json. */
canopy_status_t canopy_placement_format(const canopy_placement_t* placement, const char* format,
                                        const canopy_matrix_t* matrix, char* buf, size_t size, size_t* needed);

/* What a placement costs (lower is better); see docs/cost-model.md. */
typedef struct canopy_cost {
  double hop_bytes;     /* volume x tree edges between the two tasks' PUs */
  double weighted;      /* volume x weight of the level of their common ancestor */
  double numa_crossing; /* volume between tasks on different NUMA nodes */
} canopy_cost_t;

/* Evaluate the placement with `matrix` (same number of tasks, else EINVAL);
 * weights as in canopy_map_options_t (NULL = defaults). */
canopy_status_t canopy_placement_cost(const canopy_placement_t* placement, const canopy_matrix_t* matrix,
                                      const double* weights, size_t num_weights, canopy_cost_t* cost);
/* Tasks per NUMA node (logical order) into counts[0..capacity); `*count`
 * receives the number of NUMA nodes (array convention of
 * canopy_placement_task_binding). */
canopy_status_t canopy_placement_tasks_per_numa(const canopy_placement_t* placement, int* counts, size_t capacity,
                                                size_t* count);

/* Bind the calling thread to where the placement puts task `task`. The
 * placement must be for this machine (canopy_topology_create), else ENOSYS. */
canopy_status_t canopy_placement_bind_thread(const canopy_placement_t* placement, int task);

/* ---- Threads ----------------------------------------------------------- */

/* Bind the calling thread to the given OS CPUs. EINVAL for an empty list or
 * a CPU this machine does not have; ESYSTEM when the OS refuses. */
canopy_status_t canopy_thread_bind(const int* os_indexes, size_t count);
/* The OS CPUs the calling thread may run on (same convention as
 * canopy_placement_task_binding). */
canopy_status_t canopy_thread_binding(int* os_indexes, size_t capacity, size_t* count);
/* The OS CPU the calling thread runs on now. ESYSTEM when the OS cannot tell. */
canopy_status_t canopy_thread_cpu(int* os_index);

/* ---- Teams: binding the threads of a parallel region (BindMe's call) ---- */

/* A team plans where `num_threads` threads of this process run: thread i is
 * task i of `matrix` (NULL = threads that do not communicate), placed with
 * `policy` (NULL = default) and CANOPY_MAP_* `flags` on this machine as the
 * process saw it on its first team (so that a later, larger team is not
 * squeezed onto the CPUs an earlier team was bound to).
 *
 * The team records the outcome: when planning fails for any reason but a
 * NULL `out` or lack of memory, the error status is returned AND *out is
 * still set, to a team whose canopy_team_bind() returns that same status
 * and message on every thread. Destroy it either way. This lets one thread
 * plan and every thread of the team learn the result (canopy_omp.h).
 *
 * EINVAL: num_threads < 1, or more than 64 per PU, unknown flag bits or
 * policy, or a matrix whose size is not num_threads. */
canopy_status_t canopy_team_create(canopy_team_t** out, int num_threads, const char* policy, unsigned flags,
                                   const canopy_matrix_t* matrix);
/* Bind the calling thread as thread `thread_num` of the team. Threads may
 * call it concurrently. ERANGE when thread_num is outside [0, num_threads). */
canopy_status_t canopy_team_bind(const canopy_team_t* team, int thread_num);
/* The team's placement (owned by the team), or the planning error. */
canopy_status_t canopy_team_placement(const canopy_team_t* team, const canopy_placement_t** placement);
void canopy_team_destroy(canopy_team_t* team);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CANOPY_H */
