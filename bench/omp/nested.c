/* Nested parallelism shaped like NPB's BT-MZ: 16 zones of unequal size (the
 * x extent grows geometrically, largest / smallest = 20, as BT-MZ's zones
 * do), an outer team of -t threads that owns the zones (assigned once, the
 * biggest zone first to the least loaded thread, as BT-MZ's map_zones
 * does) and, for every zone and time step, three inner parallel regions of
 * -i threads (an x, y and z sweep of a 7-point Jacobi stencil, each a
 * parallel for over the zone's planes), then an outer barrier and a
 * boundary exchange between neighbouring zones. The cost of creating and
 * ending inner teams, and how the runtime copes with outer x inner threads
 * beyond the machine's cores, is what differs between runtimes.
 * Default 20 time steps (-n sets them). Checked: every zone's checksum
 * equals a sequential run's (each point's update does the same arithmetic
 * whoever runs it, so they agree exactly). RESULT bench=nested-<o>x<i>. */
#include "omp_bench.h"

#define ZONES 16
#define NY 24
#define NZ 24

typedef struct {
  long nx;
  double *u, *v; /* nx * NY * NZ, current and next */
  double sum;
} zone;

static zone zones[ZONES], ref[ZONES];
static int owner[ZONES];
static long steps;
static int outer, inner;

#define AT(z, x, y, k) ((z)->u[((x) * NY + (y)) * NZ + (k)])

static void init(zone* zs) {
  for (int z = 0; z < ZONES; ++z)
    for (long k = 0; k < zs[z].nx * NY * NZ; ++k) zs[z].u[k] = (double)(bench_mix((uint64_t)(z * 1000003 + k)) % 1000) / 1000.0;
}

/* One sweep along axis `axis` of zone z, planes [x0, x1) of x. */
static void sweep_planes(zone* z, int axis, long x0, long x1) {
  for (long x = x0; x < x1; ++x)
    for (long y = 0; y < NY; ++y)
      for (long k = 0; k < NZ; ++k) {
        const double c = AT(z, x, y, k);
        double a, b;
        if (axis == 0) {
          a = x ? AT(z, x - 1, y, k) : c;
          b = x + 1 < z->nx ? AT(z, x + 1, y, k) : c;
        } else if (axis == 1) {
          a = y ? AT(z, x, y - 1, k) : c;
          b = y + 1 < NY ? AT(z, x, y + 1, k) : c;
        } else {
          a = k ? AT(z, x, y, k - 1) : c;
          b = k + 1 < NZ ? AT(z, x, y, k + 1) : c;
        }
        z->v[(x * NY + y) * NZ + k] = 0.5 * c + 0.25 * (a + b);
      }
}
static void swap(zone* z) {
  double* t = z->u;
  z->u = z->v;
  z->v = t;
}

/* Boundary exchange: the first y-z plane of zone z+1 and the last of zone z
 * both become their mean (one thread per pair, after the outer barrier). */
static void exchange(zone* zs, int z) {
  zone *a = &zs[z], *b = &zs[z + 1];
  for (long k = 0; k < NY * NZ; ++k) {
    double* pa = &a->u[(a->nx - 1) * NY * NZ + k];
    double* pb = &b->u[k];
    const double m = 0.5 * (*pa + *pb);
    *pa = *pb = m;
  }
}

static void solve_seq(zone* zs) {
  for (long s = 0; s < steps; ++s) {
    for (int z = 0; z < ZONES; ++z)
      for (int axis = 0; axis < 3; ++axis) {
        sweep_planes(&zs[z], axis, 0, zs[z].nx);
        swap(&zs[z]);
      }
    for (int z = 0; z + 1 < ZONES; z += 2) exchange(zs, z);
    for (int z = 1; z + 1 < ZONES; z += 2) exchange(zs, z);
  }
}

static void run(void* ctx) {
  (void)ctx;
  init(zones);
#pragma omp parallel num_threads(outer)
  {
    const int me = omp_get_thread_num();
    const int team = omp_get_num_threads();
    for (long s = 0; s < steps; ++s) {
      for (int z = 0; z < ZONES; ++z) {
        if (owner[z] % team != me) continue;
        zone* zp = &zones[z];
        for (int axis = 0; axis < 3; ++axis) {
#pragma omp parallel for num_threads(inner) schedule(static)
          for (long x = 0; x < zp->nx; ++x) sweep_planes(zp, axis, x, x + 1);
          swap(zp);
        }
      }
#pragma omp barrier
#pragma omp for schedule(static)
      for (int z = 0; z < ZONES - 1; z += 2) exchange(zones, z);
#pragma omp for schedule(static)
      for (int z = 1; z < ZONES - 1; z += 2) exchange(zones, z);
    }
  }
}

static double checksum(const zone* z) {
  double s = 0;
  for (long k = 0; k < z->nx * NY * NZ; ++k) s += z->u[k] * (double)(k % 7 + 1);
  return s;
}

static char err[160];
static const char* check(void* ctx) {
  (void)ctx;
  for (int z = 0; z < ZONES; ++z) {
    const double got = checksum(&zones[z]);
    if (got != ref[z].sum) {
      snprintf(err, sizeof err, "zone %d checksum %.17g, expected %.17g", z, got, ref[z].sum);
      return err;
    }
  }
  return NULL;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  outer = a.threads;
  inner = a.inner;
  steps = a.n ? a.n : 20;
  omp_set_max_active_levels(2);
  double load[ZONES] = {0};
  for (int z = 0; z < ZONES; ++z) {
    /* nx from 6 to 120: ratio 20, geometric */
    long nx = (long)(6.0 * __builtin_pow(20.0, (double)z / (ZONES - 1)) + 0.5);
    zones[z].nx = ref[z].nx = nx;
    zones[z].u = malloc((size_t)(nx * NY * NZ) * sizeof(double));
    zones[z].v = malloc((size_t)(nx * NY * NZ) * sizeof(double));
    ref[z].u = malloc((size_t)(nx * NY * NZ) * sizeof(double));
    ref[z].v = malloc((size_t)(nx * NY * NZ) * sizeof(double));
    if (!zones[z].u || !zones[z].v || !ref[z].u || !ref[z].v) bench_fail("nested: out of memory");
  }
  /* zones, biggest first, each to the outer thread with the least work so far */
  for (int z = ZONES - 1; z >= 0; --z) {
    int best = 0;
    for (int t = 1; t < outer && t < ZONES; ++t)
      if (load[t] < load[best]) best = t;
    owner[z] = best;
    load[best] += (double)zones[z].nx;
  }
  init(ref);
  solve_seq(ref);
  for (int z = 0; z < ZONES; ++z) ref[z].sum = checksum(&ref[z]);
  char name[64];
  snprintf(name, sizeof name, "nested-%dx%d", outer, inner);
  bench_measure(&a, name, outer * inner, 1, "run", run, check, NULL);
  return 0;
}
