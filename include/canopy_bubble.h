/* canopy_bubble.h: the C API of bubbles (canopy/bubble.hpp): groups of tasks
 * kept in one subtree of the machine, nested, placed by expected work, in
 * the manner of canopy.h (status codes, canopy_last_error()).
 *
 *   // inside canopy_runtime_run(rt, body, arg):
 *   canopy_bubble_t* all;
 *   canopy_bubble_create(&all, rt, NULL);
 *   canopy_bubble_options_t zone[2] = {{40.0, NULL, 0, 0}, {10.0, NULL, 0, 0}};
 *   canopy_bubble_t* z[2];
 *   canopy_bubble_split(all, zone, 2, z);
 *   canopy_bubble_spawn(z[0], work, &a);      // runs in z[0]'s subtree
 *   canopy_bubble_wait(z[0]);
 *   canopy_bubble_destroy(z[0]); ...; canopy_bubble_destroy(all);
 *
 * Bubbles are created, split, waited for and destroyed on a thread running
 * in the runtime (inside canopy_runtime_run or a task): elsewhere EINVAL.
 * This header compiles as C99 and as C++. */
#ifndef CANOPY_BUBBLE_H
#define CANOPY_BUBBLE_H

#include <stddef.h>

#include "canopy.h"
#include "canopy_data.h"
#include "canopy_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct canopy_bubble canopy_bubble_t;

typedef struct canopy_bubble_options {
  double work;               /* expected work, relative to the siblings'; 0 = unknown */
  const canopy_data_t* data; /* handles the group works on (may be NULL when num_data is 0) */
  size_t num_data;
  double passes;             /* times its tasks go over the data in this phase (memory scheduler); 0 = once */
} canopy_bubble_options_t;

/* A top-level bubble over the whole runtime (options may be NULL). */
canopy_status_t canopy_bubble_create(canopy_bubble_t** out, canopy_runtime_t* rt,
                                     const canopy_bubble_options_t* options);
/* count children of parent, placed together; out receives count bubbles
 * (each to destroy). EINVAL for count 0 or NULL arrays. */
canopy_status_t canopy_bubble_split(canopy_bubble_t* parent, const canopy_bubble_options_t* children, size_t count,
                                    canopy_bubble_t** out);
canopy_status_t canopy_bubble_spawn(canopy_bubble_t* bubble, void (*fn)(void* arg), void* arg);
/* Waits for the bubble's tasks; CANOPY_EUNKNOWN when one failed. */
canopy_status_t canopy_bubble_wait(canopy_bubble_t* bubble);
/* The workers of its subtree now: (out, capacity, count) as canopy.h. */
canopy_status_t canopy_bubble_workers(const canopy_bubble_t* bubble, int* out, size_t capacity, size_t* count);
/* Waits for tasks not waited for, then frees it (NULL is accepted). */
void canopy_bubble_destroy(canopy_bubble_t* bubble);

#ifdef __cplusplus
}
#endif

#endif /* CANOPY_BUBBLE_H */
