// `canopy run --matrix auto` (run_auto.hpp): the profile cache and the
// profiling run.
#include "run_auto.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "canopy/error.hpp"
#include "canopy/profile.hpp"

namespace canopy::run_auto {

std::string cache_dir() {
  if (const char* d = std::getenv("CANOPY_PROFILE_CACHE"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/canopy/profiles";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/canopy/profiles";
  throw Error("--matrix auto: no place for the profile cache (set CANOPY_PROFILE_CACHE, XDG_CACHE_HOME or HOME)");
}

std::string cache_file(const std::string& dir, const std::string& program, const std::vector<std::string>& argv,
                       int threads, const std::string& runtime) {
  std::error_code ec;
  const std::string path = std::filesystem::weakly_canonical(program, ec).string();
  struct stat st {};
  ::stat(program.c_str(), &st);
  // FNV-1a over everything that makes it another run: stable across canopy builds.
  std::uint64_t h = 1469598103934665603ull;
  auto add = [&](const std::string& s) {
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // separator: ("ab","c") != ("a","bc")
  };
  add(path.empty() ? program : path);
  add(std::to_string(st.st_size));
  add(std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec));
  for (size_t i = 1; i < argv.size(); ++i) add(argv[i]);
  add(std::to_string(threads));
  add(runtime);
  const std::string name = std::filesystem::path(program).filename().string();
  return fmt::format("{}/{}-{:016x}.mtx", dir, name, h);
}

AutoMatrix auto_matrix(const std::string& program, const std::vector<std::string>& argv, const std::string& cache,
                       bool refresh, const profiling::LaunchOptions& opt) {
  if (!refresh && ::access(cache.c_str(), R_OK) == 0)
    return {read_matrix(cache), fmt::format("the profile of an earlier run, {}", cache)};

  profiling::LaunchOptions lo = opt;
  lo.stop_after_duration = true;
  const profiling::Run r = profiling::run_profiled(program, argv, lo);
  const ProfiledProcess* image = profiling::chosen_image(r);
  if (!image || image->num_samples() == 0)
    throw Error(fmt::format("--matrix auto: profiling {} gave no samples (it exited with status {}): nothing to place "
                            "from; give --matrix FILE or -n",
                            argv[0], r.status),
                ErrorKind::System);
  SharingOptions so;
  const SharingProfile s = sharing_profile(*image, so);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ec);
  try {
    write_matrix(cache, s.matrix, MatrixFormat::MatrixMarket);
    std::ofstream(cache + ".cmd") << fmt::format("{}\n", fmt::join(argv, " "));
  } catch (const Error& e) {
    std::fprintf(stderr, "canopy: note: the profile is not cached: %s\n", e.what());
  }
  const std::string how = r.stopped ? fmt::format("its first {:g} s, then stopped", opt.duration_s)
                                    : fmt::format("a whole run, exit status {}", r.status);
  return {s.matrix, fmt::format("profiled now ({}; saved as {})\n{}", how, cache, profiling::summary(*image, s, so))};
}

}  // namespace canopy::run_auto
