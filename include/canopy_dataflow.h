/* canopy_dataflow.h: the C API of canopy's data-flow tasks
 * (canopy/dataflow.hpp), in the manner of canopy.h, whose status codes,
 * canopy_strerror() and canopy_last_error() it uses.
 *
 *   canopy_access_t acc[2] = {{a, CANOPY_ACCESS_READ}, {b, CANOPY_ACCESS_WRITE}};
 *   canopy_submit(rt, acc, 2, NULL, copy_a_to_b, &args);   // after tasks writing a, b
 *   canopy_wait_all(rt);                                   // helps; reports a task's failure
 *
 * A task is a function pointer and its argument; it runs when every task
 * submitted before it that conflicts with it (read after write, write after
 * read, write after write on a handle) has finished. A task may submit
 * tasks (its children; its dependents wait for them too). Functions of C
 * tasks cannot throw; C++ callers of this API that do get CANOPY_EUNKNOWN
 * from the next wait, with the exception's message in canopy_last_error().
 *
 * `rt` may be NULL: for canopy_submit, the runtime of the calling worker
 * (inside a task or canopy_runtime_run), else the default runtime
 * (CANOPY_* variables); for the waits, everything the calling thread
 * submitted, whichever runtime (the rule of wait_all() in
 * docs/dataflow.md, "Which tasks a wait covers").
 *
 * This header compiles as C99 and as C++. */
#ifndef CANOPY_DATAFLOW_H
#define CANOPY_DATAFLOW_H

#include <stddef.h>
#include <stdint.h>

#include "canopy.h"
#include "canopy_data.h"
#include "canopy_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum canopy_access_mode {
  CANOPY_ACCESS_READ = 0,
  CANOPY_ACCESS_WRITE = 1,
  CANOPY_ACCESS_READ_WRITE = 2,
  /* Not a mode: makes the enum int-sized in C and in C++. */
  CANOPY_ACCESS_MAX_ENUM_ = 0x7fffffff
} canopy_access_mode_t;

typedef struct canopy_access {
  canopy_data_t data;
  canopy_access_mode_t mode;
} canopy_access_t;

/* The most accesses one task may list (CANOPY_ERANGE beyond). */
#define CANOPY_MAX_ACCESSES 256

/* Submits fn(arg) with `count` accesses (`accesses` may be NULL when count
 * is 0) and an affinity hint (NULL: none, owner computes). EINVAL for a
 * null or freed handle, an unknown mode, a NULL fn; ERANGE for more than
 * CANOPY_MAX_ACCESSES accesses. */
canopy_status_t canopy_submit(canopy_runtime_t* rt, const canopy_access_t* accesses, size_t count,
                              const canopy_affinity_t* affinity, void (*fn)(void* arg), void* arg);

/* Waits, running tasks meanwhile. With a runtime: every task submitted so
 * far to it (inside one of its tasks: that task's children). NULL: every
 * task the calling thread submitted, to whichever runtime (outside any
 * task also the calling worker's runtime and the default one if it exists,
 * which is never made just for this); inside a task, its children and what
 * it submitted to other runtimes. The first failure of a task of those
 * runtimes is reported. */
canopy_status_t canopy_wait_all(canopy_runtime_t* rt);

/* Waits for every task submitted so far that accesses `data`: in `rt`, or
 * (NULL) in every runtime canopy_wait_all(NULL) covers. EINVAL for a null
 * or freed handle. */
canopy_status_t canopy_wait_data(canopy_runtime_t* rt, canopy_data_t data);

/* Bytes tasks accessed through `data` on the NUMA node of the worker that ran
 * them (local) and elsewhere (remote), and how many accesses there were.
 * Any output pointer may be NULL. */
canopy_status_t canopy_data_locality(canopy_data_t data, uint64_t* local_bytes, uint64_t* remote_bytes,
                                     uint64_t* accesses);

/* Task graphs (canopy/taskgraph.hpp): tasks recorded once, with their
 * accesses (the dependencies are found when each is added, in the order of
 * the calls), then run any number of times, each run paying only for the
 * tasks:
 *
 *   canopy_taskgraph_t* g;
 *   canopy_taskgraph_create(&g);
 *   canopy_taskgraph_add(g, acc, 2, NULL, step, &args);   // ... once per task
 *   for (t = 0; t < steps; ++t) canopy_taskgraph_run(g, rt);
 *   canopy_taskgraph_destroy(g);
 *
 * The graph keeps no reference to the handles (they are read at add). */
typedef struct canopy_taskgraph canopy_taskgraph_t;

/* A new, empty graph in *out (EINVAL: out is NULL). */
canopy_status_t canopy_taskgraph_create(canopy_taskgraph_t** out);

/* Records fn(arg) with `count` accesses and an affinity hint (NULL: none).
 * The same errors as canopy_submit, and EINVAL for a NULL graph or one that
 * is running. */
canopy_status_t canopy_taskgraph_add(canopy_taskgraph_t* graph, const canopy_access_t* accesses, size_t count,
                                     const canopy_affinity_t* affinity, void (*fn)(void* arg), void* arg);

/* Runs every task once, in dependency order, on `rt` (NULL: the runtime of
 * the calling worker, else the default one), and returns when all have
 * finished. EINVAL for a NULL graph or one that is already running. */
canopy_status_t canopy_taskgraph_run(canopy_taskgraph_t* graph, canopy_runtime_t* rt);

/* Tasks recorded (0 for NULL). */
size_t canopy_taskgraph_size(const canopy_taskgraph_t* graph);

/* Frees the graph (NULL: nothing). Not while it runs. */
void canopy_taskgraph_destroy(canopy_taskgraph_t* graph);

/* Automatic affinity (canopy/auto_affinity.hpp, docs/auto-affinity.md).
 * By hand, in three calls: the graph's matrix, a placement computed from it
 * for a runtime's workers with any policy, the placement applied:
 *
 *   canopy_matrix_t* m;  canopy_placement_t* p;
 *   canopy_taskgraph_matrix(g, &m);                       // bytes between tasks
 *   canopy_placement_create_for_runtime(&p, rt, m, "treematch");
 *   canopy_taskgraph_apply(g, rt, p);                     // the next runs follow it
 *
 * The matrix and placement are the ordinary handles of canopy.h (write
 * them with canopy_matrix_write_file / canopy_placement_format "list" for
 * the CLI). `rt` NULL means the default runtime. */

/* This graph's automatic affinity: "auto" or "none" (over CANOPY_AFFINITY).
 * EINVAL for anything else, naming the value. */
canopy_status_t canopy_taskgraph_set_affinity(canopy_taskgraph_t* graph, const char* mode);

/* The graph's task-to-task matrix (a new handle in *out). */
canopy_status_t canopy_taskgraph_matrix(const canopy_taskgraph_t* graph, canopy_matrix_t** out);

/* Task `task`'s label ("t3: r#1 w#2"), with canopy.h's buffer convention. */
canopy_status_t canopy_taskgraph_task_label(const canopy_taskgraph_t* graph, size_t task, char* buf, size_t size,
                                            size_t* needed);

/* A placement of the matrix's tasks on the workers of `rt` with `policy`
 * (NULL or "": the runtime's CANOPY_POLICY, else canopy's own); its
 * topology is the machine restricted to the workers' PUs. */
canopy_status_t canopy_placement_create_for_runtime(canopy_placement_t** out, canopy_runtime_t* rt,
                                                    const canopy_matrix_t* matrix, const char* policy);

/* Applies a placement computed for `rt`: each task's worker from the next
 * run on, and each written handle's pages on its writer's NUMA node.
 * EINVAL when the placement's task count is not the graph's. */
canopy_status_t canopy_taskgraph_apply(canopy_taskgraph_t* graph, canopy_runtime_t* rt,
                                       const canopy_placement_t* placement);

/* The worker task `task` is placed on (-1: none). */
canopy_status_t canopy_taskgraph_task_worker(const canopy_taskgraph_t* graph, size_t task, int* worker);

/* The same for a runtime's stream of submitted tasks (canopy_submit) under
 * automatic affinity (CANOPY_AFFINITY=auto; docs/auto-affinity.md,
 * "Streams"): the matrix of its recurring tasks (one per distinct task of
 * the last recognised iteration, in first-submission order), and a
 * placement of them applied by hand (kept until the stream's pattern
 * changes). EINVAL when no iteration has been recognised yet, or the
 * placement's task count differs. `rt` NULL means the default runtime. */
canopy_status_t canopy_stream_matrix(canopy_runtime_t* rt, canopy_matrix_t** out);
canopy_status_t canopy_stream_apply(canopy_runtime_t* rt, const canopy_placement_t* placement);

/* The worker recurring task `task` of the mapped stream is placed on (-1:
 * not mapped); ERANGE beyond the mapped tasks. */
canopy_status_t canopy_stream_task_worker(canopy_runtime_t* rt, size_t task, int* worker);

#ifdef __cplusplus
}
#endif

#endif /* CANOPY_DATAFLOW_H */
