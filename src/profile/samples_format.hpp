// The file the profiling library (preload/sampler.cpp) writes in the
// profiled process and `canopy profile` reads (samples.cpp): one file per
// process image, <dir>/samples.<pid>.<n> (n counts the images an exec gives
// the same pid). Binary, native byte order (written and read on the same
// machine): a FileHeader, then per thread a ThreadHeader followed by its
// samples. Plain structs of fixed-size fields so that the writer, which
// may run in a signal handler, needs nothing but write().
#pragma once
#include <cstdint>

namespace canopy::profile::format {

inline constexpr char kMagic[8] = {'C', 'N', 'P', 'Y', 'P', 'R', 'F', '1'};

struct FileHeader {
  char magic[8];
  std::int32_t pid;
  std::int32_t parent_pid;
  std::uint64_t period_ns;      // sampling period in thread CPU time
  std::uint32_t flags;          // kStoppedEarly, ...
  std::uint32_t reserved;
  char timer[160];              // how samples were triggered (one line, NUL-terminated)
};
inline constexpr std::uint32_t kStoppedEarly = 1;  // --duration: sampling stopped before the process ended

struct ThreadHeader {
  std::int32_t creation;        // 0: the process's initial thread, then in pthread_create order
  std::int32_t tid;
  std::uint64_t signals;        // samples taken (timer expirations seen)
  std::uint64_t decoded;        // of those, kept samples where an address was found
  std::uint64_t stride;         // each kept sample stands for `stride` samples (the buffer was halved)
  std::uint64_t count;          // Sample records that follow
};

struct Sample {
  std::uint64_t address;        // data address, bit 63: the access writes
  std::int32_t omp_thread;      // OpenMP thread number from canopy's runtime at that moment, -1 unknown
  std::uint32_t reserved;
};
inline constexpr std::uint64_t kWriteBit = std::uint64_t{1} << 63;

}  // namespace canopy::profile::format
