/* canopy_runtime.h: the C API of canopy's task runtime (canopy/runtime.hpp),
 * in the manner of canopy.h, whose status codes, canopy_strerror() and
 * canopy_last_error() it shares.
 *
 *   canopy_runtime_t* rt;
 *   canopy_runtime_create(&rt, NULL);          // from CANOPY_* variables
 *   canopy_task_group_t* g;
 *   canopy_task_group_create(&g, rt);
 *   for (int i = 0; i < n; ++i) canopy_task_group_spawn(g, work, &items[i]);
 *   canopy_task_group_wait(g);
 *   canopy_task_group_destroy(g);
 *   canopy_parallel_for(rt, 0, n, 0, body, &data);   // body(lo, hi, &data)
 *   canopy_affinity_t on1 = {CANOPY_AFFINITY_NODE, 1, CANOPY_AFFINITY_STRICT};
 *   canopy_task_group_spawn_affinity(g, &on1, work, &x);  // only on NUMA node 1
 *   canopy_runtime_destroy(rt);
 *
 * Threads: a runtime of N workers starts N-1 threads; the thread that calls
 * in runs as worker 0 (see canopy/runtime.hpp). A task group belongs to the
 * thread that created it: wait and destroy it there. Tasks may spawn into
 * their own group. Task functions must not unwind (longjmp, C++ throw): a
 * C++ exception that escapes one anyway is caught and reported by
 * canopy_task_group_wait as CANOPY_EUNKNOWN.
 *
 * This header compiles as C99 and as C++. */
#ifndef CANOPY_RUNTIME_H
#define CANOPY_RUNTIME_H

#include <stdint.h>

#include "canopy.h"
#include "canopy_data.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct canopy_runtime canopy_runtime_t;
typedef struct canopy_task_group canopy_task_group_t;

/* How workers are bound (CANOPY_BIND). */
typedef enum canopy_bind {
  CANOPY_BIND_CORE = 0, /* to every PU of its core */
  CANOPY_BIND_PU = 1,   /* to its one PU */
  CANOPY_BIND_NONE = 2  /* not bound */
} canopy_bind_t;

/* Flags of canopy_runtime_options_t. */
#define CANOPY_RUNTIME_DISPLAY_AFFINITY (1u << 0) /* one line per worker on stderr at start */
#define CANOPY_RUNTIME_STATS (1u << 1)            /* per-worker statistics on stderr at the end */
#define CANOPY_RUNTIME_ALL_FLAGS (CANOPY_RUNTIME_DISPLAY_AFFINITY | CANOPY_RUNTIME_STATS)

/* Where data-flow tasks without a hint run (CANOPY_DATA_AFFINITY). */
typedef enum canopy_data_affinity {
  CANOPY_DATA_AFFINITY_WRITE = 0, /* the node holding most bytes the task writes (owner computes) */
  CANOPY_DATA_AFFINITY_READ = 1,  /* ... most bytes it reads or writes */
  CANOPY_DATA_AFFINITY_NONE = 2   /* anywhere */
} canopy_data_affinity_t;

/* Initialise with = {0}: one worker per core, bound to its core, compact,
 * owner computes. */
typedef struct canopy_runtime_options {
  int num_threads;     /* 0: one per core of the PUs this process may use */
  canopy_bind_t bind;
  const char* policy;  /* placement policy of the workers; NULL or "": compact */
  unsigned flags;      /* CANOPY_RUNTIME_* bits; any other bit is rejected */
  canopy_data_affinity_t data_affinity;
} canopy_runtime_options_t;

/* An affinity hint (canopy/affinity.hpp): where one task should run. Ids
 * wrap (a worker modulo the workers, a node modulo the runtime's NUMA
 * nodes); a handle whose node is unknown means node 0. Strict: it runs
 * only there; otherwise idle workers elsewhere may take it. Initialise with
 * = {0}: no hint. */
typedef enum canopy_affinity_kind {
  CANOPY_AFFINITY_NONE = 0,
  CANOPY_AFFINITY_WORKER = 1, /* index: a worker */
  CANOPY_AFFINITY_NODE = 2,   /* index: a NUMA node of the runtime (0 .. canopy_runtime_num_numa_nodes-1) */
  CANOPY_AFFINITY_DATA = 3    /* data: the node holding most of the handle's bytes */
} canopy_affinity_kind_t;

#define CANOPY_AFFINITY_STRICT (1u << 0)
#define CANOPY_AFFINITY_ALL_FLAGS (CANOPY_AFFINITY_STRICT)

typedef struct canopy_affinity {
  canopy_affinity_kind_t kind;
  int index;
  unsigned flags; /* CANOPY_AFFINITY_* bits; any other bit is rejected */
  canopy_data_t data;
} canopy_affinity_t;

/* A runtime. `options` NULL: everything from the CANOPY_NUM_THREADS,
 * CANOPY_BIND, CANOPY_POLICY, CANOPY_DISPLAY_AFFINITY, CANOPY_STATS,
 * CANOPY_DATA_AFFINITY and CANOPY_COUNTERS variables (a bad value: EINVAL
 * naming the variable).
 * ESYSTEM when a worker cannot be started or bound. */
canopy_status_t canopy_runtime_create(canopy_runtime_t** out, const canopy_runtime_options_t* options);
/* Stops the workers. No task group of this runtime may still exist. */
void canopy_runtime_destroy(canopy_runtime_t* rt);

canopy_status_t canopy_runtime_num_workers(const canopy_runtime_t* rt, int* out);
/* Logical PU and OS CPU of worker `worker`; ERANGE when out of range. */
canopy_status_t canopy_runtime_worker_pu(const canopy_runtime_t* rt, int worker, int* pu, int* os_index);
/* Index of the calling thread among the workers of the runtime it runs in,
 * -1 outside every runtime. */
canopy_status_t canopy_runtime_worker_index(int* out);
/* The NUMA nodes the workers are on (numbered 0 .. count-1 in the machine's
 * order), and the node of worker `worker` (ERANGE when out of range). */
canopy_status_t canopy_runtime_num_numa_nodes(const canopy_runtime_t* rt, int* out);
canopy_status_t canopy_runtime_worker_numa_node(const canopy_runtime_t* rt, int worker, int* out);
/* Runs fn(arg) on the calling thread as a worker of rt (tasks it spawns are
 * shared with the other workers), and returns when it is done. */
canopy_status_t canopy_runtime_run(canopy_runtime_t* rt, void (*fn)(void* arg), void* arg);

/* A group of tasks to wait for. */
canopy_status_t canopy_task_group_create(canopy_task_group_t** out, canopy_runtime_t* rt);
/* Queues fn(arg) as a task of the group. EINVAL from a thread that is not
 * the group's creator nor a worker running a task of rt. */
canopy_status_t canopy_task_group_spawn(canopy_task_group_t* group, void (*fn)(void* arg), void* arg);
/* The same with an affinity hint (NULL: none). EINVAL for an unknown kind
 * or flag, or a null or freed handle with CANOPY_AFFINITY_DATA. */
canopy_status_t canopy_task_group_spawn_affinity(canopy_task_group_t* group, const canopy_affinity_t* affinity,
                                                 void (*fn)(void* arg), void* arg);
/* Runs and waits for the group's tasks (the calling thread helps). The
 * group can be used again afterwards. */
canopy_status_t canopy_task_group_wait(canopy_task_group_t* group);
/* Waits for tasks not waited for, then frees the group (NULL is accepted). */
void canopy_task_group_destroy(canopy_task_group_t* group);

/* body(lo, hi, arg) over chunks covering [begin, end) in parallel. grain 0:
 * chunks chosen by the runtime; grain > 0: chunks of at most grain indexes.
 * EINVAL for a negative grain or a NULL body. */
canopy_status_t canopy_parallel_for(canopy_runtime_t* rt, int64_t begin, int64_t end, int64_t grain,
                                    void (*body)(int64_t lo, int64_t hi, void* arg), void* arg);

/* Tracing (canopy/trace.hpp, docs/trace.md): records what every runtime's
 * workers do (tasks, steals, parks, releases, migrations, placements) until
 * canopy_trace_stop, which writes `path`. format: "json" (Chrome trace
 * events), "otf2", or NULL (from the name: .otf2 is OTF2, else JSON);
 * events: a comma-separated list of task, steal, park, search, release,
 * migration, placement, or NULL for all. EINVAL for a bad format or event
 * name, or when a session records already (CANOPY_TRACE's included). */
canopy_status_t canopy_trace_start(const char* path, const char* format, const char* events);
/* Stops the session and writes its file; *events and *lost (either may be
 * NULL) get the events written and those dropped because a worker's buffer
 * was full. EINVAL when no session records; ESYSTEM when the file cannot be
 * written. */
canopy_status_t canopy_trace_stop(uint64_t* events, uint64_t* lost);

#ifdef __cplusplus
}
#endif

#endif /* CANOPY_RUNTIME_H */
