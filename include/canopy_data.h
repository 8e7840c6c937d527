/* canopy_data.h: the C API of canopy's data handles (canopy/data.hpp), in
 * the manner of canopy.h, whose status codes, canopy_strerror() and
 * canopy_last_error() it shares.
 *
 *   canopy_data_placement_t pl = {CANOPY_DATA_BLOCK_CYCLIC, 0, 64 * 4096};
 *   canopy_data_t d;
 *   canopy_data_allocate(&d, n * sizeof(double), &pl);   // bound, touched, checked
 *   double* a;
 *   canopy_data_ptr(d, (void**)&a);
 *   int home;
 *   canopy_data_home_node(d, &home);
 *   canopy_data_free(d);
 *
 * A handle is a value (two integers), not a pointer: copy it freely. After
 * canopy_data_free every copy is stale, and any call with one returns
 * CANOPY_EINVAL ("used after data_free"), never a crash. The all-zero
 * handle CANOPY_DATA_NULL is "no data".
 *
 * Nodes are the logical NUMA nodes of this machine as hwloc numbers them.
 * Arrays are returned like canopy.h's ints: (out, capacity, count), where
 * out == NULL with capacity 0 is a count query and a short array gives
 * CANOPY_ENOBUFS after storing the count.
 *
 * This header compiles as C99 and as C++. */
#ifndef CANOPY_DATA_H
#define CANOPY_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "canopy.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct canopy_data {
  uint32_t index;
  uint32_t generation; /* 0: the null handle */
} canopy_data_t;

#define CANOPY_DATA_NULL_INIT {0, 0}

typedef enum canopy_data_placement_kind {
  CANOPY_DATA_FIRST_TOUCH = 0,  /* each page on the node of the thread that first writes it */
  CANOPY_DATA_NODE = 1,         /* every page on `node` (wraps modulo the node count; < 0 is EINVAL) */
  CANOPY_DATA_INTERLEAVE = 2,   /* pages round-robin over every node */
  CANOPY_DATA_BLOCK_CYCLIC = 3  /* block b of `block` bytes on node b mod the node count */
} canopy_data_placement_kind_t;

/* Initialise with = {0}: first touch. */
typedef struct canopy_data_placement {
  canopy_data_placement_kind_t kind;
  int node;     /* CANOPY_DATA_NODE */
  size_t block; /* CANOPY_DATA_BLOCK_CYCLIC: a positive multiple of the page size */
} canopy_data_placement_t;

/* Allocates `bytes` (page-aligned, zeroed) with `placement` (NULL: first
 * touch) and registers it. Bound placements are touched at once and checked:
 * CANOPY_ESYSTEM when the kernel refused the binding or put pages
 * elsewhere (the message names them). EINVAL for 0 bytes or a bad placement. */
canopy_status_t canopy_data_allocate(canopy_data_t* out, size_t bytes, const canopy_data_placement_t* placement);
/* Registers an existing region (never freed by canopy). */
canopy_status_t canopy_data_register(canopy_data_t* out, void* ptr, size_t bytes);
/* Unregisters; frees the memory when canopy_data_allocate allocated it.
 * Waits first for the data-flow tasks of any runtime that still list the
 * handle; inside a data-flow task EINVAL instead (the task or a task it is
 * a child of lists it, or tasks elsewhere still use it: a task cannot wait
 * for them), the handle left as it was. */
canopy_status_t canopy_data_free(canopy_data_t d);

canopy_status_t canopy_data_ptr(canopy_data_t d, void** out);
canopy_status_t canopy_data_size(canopy_data_t d, size_t* out);
/* NUMA nodes of this machine (>= 1) and the page size. */
canopy_status_t canopy_data_num_nodes(int* out);
canopy_status_t canopy_data_page_size(size_t* out);

/* The node holding most of the region at the last look, -1 when no page of
 * it has been touched yet. */
canopy_status_t canopy_data_home_node(canopy_data_t d, int* out);
/* Bytes on each node at the last look (one entry per node). */
canopy_status_t canopy_data_bytes_per_node(canopy_data_t d, size_t* out, size_t capacity, size_t* count);
/* Asks the kernel again where the pages are. */
canopy_status_t canopy_data_refresh_location(canopy_data_t d);
/* The kernel's answer now: the node of each page the region spans, -1 for a
 * page not touched yet. */
canopy_status_t canopy_data_page_nodes(canopy_data_t d, int* out, size_t capacity, size_t* count);
/* CANOPY_ESYSTEM, naming the misplaced pages and nodes, when a page is not
 * where the placement asked at allocation puts it (require_touched != 0:
 * untouched pages too). */
canopy_status_t canopy_data_check_placement(canopy_data_t d, int require_touched);

/* Next-touch / next-write (docs/groups-memory.md): the handle's pages move,
 * once, to the NUMA node of the first data-flow task that starts with a
 * declared access to it (next-write: a write or read-write access), which
 * consumes the mark. CANOPY_EINVAL for a null or freed handle. */
typedef enum canopy_data_touch_mark {
  CANOPY_DATA_MARK_NONE = 0,
  CANOPY_DATA_MARK_NEXT_TOUCH = 1,
  CANOPY_DATA_MARK_NEXT_WRITE = 2
} canopy_data_touch_mark_t;
/* mark: CANOPY_DATA_MARK_NEXT_TOUCH or _NEXT_WRITE, or _NONE to drop the mark
 * (anything else is CANOPY_EINVAL). */
canopy_status_t canopy_data_mark(canopy_data_t d, int mark);
/* The mark now (CANOPY_DATA_MARK_NONE once a task claimed it). */
canopy_status_t canopy_data_touch_mark(canopy_data_t d, int* out);

#ifdef __cplusplus
}
#endif

#endif /* CANOPY_DATA_H */
