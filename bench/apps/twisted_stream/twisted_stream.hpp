// Twisted-STREAM (ForestGOMP's benchmark of the memory scheduler): G groups
// (one per NUMA node), each with its own three vectors a, b, c of n
// doubles. Phase 1: each group runs `iterations` triads on its own vectors
// (they are first written there: first touch puts them on its node).
// Phase 2: the vectors are swapped between groups: group g works on group
// g+1's (mod G) vectors,
//   Twisted-100: a, b and c of group g+1 (all three remote under first touch),
//   Twisted-66:  a and b of group g+1, its own c (two of three remote).
// Each iteration of a group: a[i] += b[i] + s * c[i] over its vectors, cut
// into one chunk per thread of the group. The result depends only on n, G,
// the iteration count and the variant, never on who ran which chunk, so
// every version must agree with check()'s sequential reference (to 1e-12).
//
// Sizes: n = 2^22 doubles (32 MiB per vector), 20 iterations per phase;
// --smoke: n = 2^14, 2 iterations.
#pragma once
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common.hpp"

namespace apps::twisted {

struct Config {
  long n = 0, iterations = 0;
  int groups = 2;
  int variant = 100;  // 100 or 66
};

// The twisted-only flags (--variant 100|66, -g GROUPS) taken out of argv;
// the rest is the shared driver's.
struct TwistedArgs {
  Args common;
  int variant = 100;
  int groups = 0;  // 0: one per NUMA node (at least 2)
  std::string mode;  // the canopy version's --mode (first-touch, memsched), "" for OpenMP
};
TwistedArgs parse(int argc, char** argv, bool has_mode);

Config config(const TwistedArgs& a, int groups_default, const char* prog);

// Group g's vectors in phase `phase` (1 or 2): indexes into the 3 G vectors
// (vector j of group x is 3 x + j).
void phase_vectors(const Config& c, int phase, int g, int out[3]);

// The start value of vector v at element i.
double initial(int v, long i);

// a[i] += b[i] + s * c[i] for i in [begin, end).
void triad(double* a, const double* b, const double* c, long begin, long end);

// The final value of every vector after both phases, computed one element
// at a time; exits 1 (apps::fail) unless vec(v) equals it.
template <class Vec>
void check(const char* prog, const Config& c, Vec&& vec) {
  const int nv = 3 * c.groups;
  std::vector<double> x(static_cast<std::size_t>(nv));
  for (long i = 0; i < c.n; ++i) {
    for (int v = 0; v < nv; ++v) x[static_cast<std::size_t>(v)] = initial(v, i);
    for (int phase = 1; phase <= 2; ++phase)
      for (int g = 0; g < c.groups; ++g) {
        int w[3];
        phase_vectors(c, phase, g, w);
        for (long t = 0; t < c.iterations; ++t) triad(&x[w[0]], &x[w[1]], &x[w[2]], 0, 1);
      }
    for (int v = 0; v < nv; ++v)
      if (const double want = x[static_cast<std::size_t>(v)];
          !(vec(v)[i] - want <= 1e-12 * want && want - vec(v)[i] <= 1e-12 * want)) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "vector %d [%ld] = %.17g, the sequential reference has %.17g", v, i, vec(v)[i],
                      x[static_cast<std::size_t>(v)]);
        fail(prog, msg);
      }
  }
}

// "PHASE bench=twisted_stream variant=.. impl=.. groups=.. phase=.. seconds=.. local_share=.. migrated_bytes=..
// groups_moved=.." (run.py reads it).
void print_phase(const Config& c, const char* impl, int phase, double seconds, double local_share,
                 unsigned long long migrated, unsigned long long moved);

}  // namespace apps::twisted
