// Profiling an unmodified program's sharing (`canopy profile`,
// docs/profile.md): the samples the profiling library (libcanopy-profile.so,
// loaded with LD_PRELOAD) writes, read back, and turned into the
// thread-to-thread sharing matrix and the pages each thread touched.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "canopy/comm_matrix.hpp"

namespace canopy {

// One data access seen at a sample.
struct ProfileSample {
  std::uint64_t address = 0;
  bool write = false;
  int omp_thread = -1;  // the OpenMP thread number canopy's runtime gave, -1 when unknown
};

struct ProfiledThread {
  int creation = 0;            // 0: the initial thread, then in pthread_create order
  int tid = 0;                 // OS thread id
  std::uint64_t signals = 0;   // samples taken
  std::uint64_t decoded = 0;   // kept samples where an address was found
  std::uint64_t stride = 1;    // each kept sample stands for `stride` samples
  std::vector<ProfileSample> samples;
};

// What one process image recorded (one samples.<pid>.<n> file).
struct ProfiledProcess {
  std::string file;
  int pid = 0;
  int parent_pid = 0;
  std::uint64_t period_ns = 0;
  bool stopped_early = false;  // sampling ended before the process (--duration)
  std::string timer;           // how samples were triggered
  std::vector<ProfiledThread> threads;
  std::uint64_t num_samples() const;
};

// Reads a samples file. Throws canopy::Error naming the file when it is not
// one or is cut short.
ProfiledProcess read_profile_samples(const std::string& path);
// The samples files in `dir` (samples.<pid>.<n>), sorted by pid then n.
std::vector<std::string> profile_sample_files(const std::string& dir);

enum class SharingGranularity { Line, Page };  // 64-byte cache lines or 4 KiB pages
SharingGranularity parse_sharing_granularity(const std::string& name);  // "line" or "page"

// How sharing is weighted (docs/profile.md): two threads whose samples fell
// on the same line (page) share it; the pair's weight for that region is
// the smaller of their two sample counts (each count scaled by its thread's
// stride), so a region one thread hammers and another touches once weighs
// little. Regions no sample saw written weigh `read_weight` times that:
// shared read-only data costs no coherence traffic, only cache space.
struct SharingOptions {
  SharingGranularity granularity = SharingGranularity::Page;
  double read_weight = 0.5;
};

// Samples of one thread on one region.
struct RegionUse {
  int thread = 0;
  std::uint64_t region = 0;  // address of the line or page
  double samples = 0;
  bool written = false;
};

struct ThreadFootprint {
  double samples = 0;             // scaled by stride
  std::int64_t regions = 0;       // distinct lines or pages touched
  std::int64_t shared_regions = 0;  // of those, touched by another thread too
};

struct SharingProfile {
  CommMatrix matrix;                 // thread i = row i
  bool openmp_numbering = false;     // rows are canopy-runtime OpenMP numbers (else creation order)
  std::vector<ThreadFootprint> threads;
  std::vector<RegionUse> uses;       // sorted by thread, then region
  std::int64_t shared_regions = 0;   // regions more than one thread touched
};

// The matrix of a process's samples. Thread i is OpenMP thread i when the
// samples carry canopy's runtime numbering, else the i-th thread created.
SharingProfile sharing_profile(const ProfiledProcess& p, const SharingOptions& opt = {});

// Why hardware address sampling (perf_event load/store samples with data
// addresses) is not used on this machine, in one line.
std::string hardware_sampling_status();

}  // namespace canopy
