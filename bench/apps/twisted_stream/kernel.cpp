// What both versions of Twisted-STREAM share (twisted_stream.hpp).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "twisted_stream/twisted_stream.hpp"

namespace apps::twisted {

TwistedArgs parse(int argc, char** argv, bool has_mode) {
  TwistedArgs a;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const bool valued = i > 0 && i + 1 < argc;
    if (valued && !std::strcmp(argv[i], "--variant")) {
      const std::string v = argv[++i];
      if (v != "100" && v != "66") {
        std::fprintf(stderr, "%s: --variant '%s': expected 100 or 66\n", argv[0], v.c_str());
        std::exit(2);
      }
      a.variant = std::stoi(v);
    } else if (valued && !std::strcmp(argv[i], "-g")) {
      char* end = nullptr;
      const long g = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || g < 2 || g > 64) {
        std::fprintf(stderr, "%s: -g '%s': expected groups from 2 to 64\n", argv[0], argv[i]);
        std::exit(2);
      }
      a.groups = static_cast<int>(g);
    } else if (has_mode && valued && !std::strcmp(argv[i], "--mode")) {
      a.mode = argv[++i];
      if (a.mode != "first-touch" && a.mode != "memsched") {
        std::fprintf(stderr, "%s: --mode '%s': expected first-touch or memsched\n", argv[0], a.mode.c_str());
        std::exit(2);
      }
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (has_mode && a.mode.empty()) a.mode = "memsched";
  a.common = parse_args(static_cast<int>(rest.size()), rest.data());
  return a;
}

Config config(const TwistedArgs& a, int groups_default, const char* prog) {
  Config c;
  c.n = a.common.n ? a.common.n : (a.common.smoke ? 1L << 14 : 1L << 22);
  c.iterations = a.common.iterations ? a.common.iterations : (a.common.smoke ? 2 : 20);
  c.groups = a.groups ? a.groups : (groups_default < 2 ? 2 : groups_default);
  c.variant = a.variant;
  if (a.common.threads < c.groups) {
    std::fprintf(stderr, "%s: %d threads for %d groups: give at least one thread per group (-t, -g)\n", prog,
                 a.common.threads, c.groups);
    std::exit(2);
  }
  return c;
}

void phase_vectors(const Config& c, int phase, int g, int out[3]) {
  const int next = (g + 1) % c.groups;
  for (int j = 0; j < 3; ++j) out[j] = 3 * g + j;
  if (phase == 1) return;
  out[0] = 3 * next;
  out[1] = 3 * next + 1;
  out[2] = c.variant == 100 ? 3 * next + 2 : 3 * g + 2;
}

double initial(int v, long i) { return static_cast<double>((v + 1) * 3 + i % 11) * 0.25; }

void triad(double* a, const double* b, const double* c, long begin, long end) {
  constexpr double s = 3.0;
  for (long i = begin; i < end; ++i) a[i] += b[i] + s * c[i];
}

void print_phase(const Config& c, const char* impl, int phase, double seconds, double local_share,
                 unsigned long long migrated, unsigned long long moved) {
  std::printf(
      "PHASE bench=twisted_stream variant=%d impl=%s groups=%d phase=%d seconds=%.6f local_share=%.4f "
      "migrated_bytes=%llu groups_moved=%llu\n",
      c.variant, impl, c.groups, phase, seconds, local_share, migrated, moved);
  std::fflush(stdout);
}

}  // namespace apps::twisted
