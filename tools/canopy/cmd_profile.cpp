// `canopy profile`: run an unmodified program under the sampling library and
// write the thread-to-thread sharing matrix it observed (and, on request,
// the pages each thread touched). See docs/profile.md.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/profile.hpp"
#include "cli.hpp"
#include "profile_launch.hpp"
#include "run_launch.hpp"

namespace canopy::cli {
namespace {

struct ProfileArgs {
  std::string of, output = "-", granularity = "page", pages;
  double duration = 0;
  bool until_exit = false;
  bool quiet = false;
  double read_weight = 0.5;
  unsigned period_us = profiling::kDefaultPeriodUs;
  std::string timer = "auto";
  unsigned max_samples = 1 << 16;
  std::vector<std::string> command;
};

std::string self_executable() {
  std::string buf(4096, '\0');
  const ssize_t n = ::readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n <= 0) throw Error(fmt::format("cannot read /proc/self/exe: {}", std::strerror(errno)), ErrorKind::System);
  buf.resize(static_cast<size_t>(n));
  return buf;
}

std::string pages_text(const SharingProfile& s, SharingGranularity g) {
  std::string text = fmt::format("# thread {} samples written  (samples scaled by each thread's stride)\n",
                                 g == SharingGranularity::Line ? "line" : "page");
  for (const auto& u : s.uses)
    text += fmt::format("{} 0x{:x} {:g} {}\n", u.thread, u.region, u.samples, u.written ? 1 : 0);
  return text;
}

int profile_command(const ProfileArgs& a) {
  if (a.command.empty()) throw Error("no program given: expected 'canopy profile [options] -- program [args...]'");
  if (a.duration < 0) throw Error(fmt::format("--duration {}: expected a number of seconds > 0", a.duration));
  SharingOptions opt;
  opt.granularity = parse_sharing_granularity(a.granularity);
  opt.read_weight = a.read_weight;
  const MatrixFormat format = a.of.empty() ? MatrixFormat::Auto : parse_matrix_format(a.of);
  profiling::LaunchOptions lo;
  lo.library = profiling::library_path(std::getenv("CANOPY_PROFILE_LIB"), self_executable());
  lo.duration_s = a.until_exit ? 0 : a.duration;
  lo.period_us = a.period_us;
  lo.max_samples = a.max_samples;
  lo.timer = profiling::parse_sample_timer(a.timer);
  const std::string program = run::find_program(a.command[0], std::getenv("PATH"));

  const profiling::Run r = profiling::run_profiled(program, a.command, lo);
  for (const auto& u : r.unreadable) std::fprintf(stderr, "canopy: note: %s\n", u.c_str());
  if (!r.other_processes.empty()) {
    std::string list;
    for (const auto& o : r.other_processes) list += (list.empty() ? "" : "; ") + o;
    std::fprintf(stderr,
                 "canopy: note: the program started %zu other process(es) (fork), profiled on their own and not in "
                 "the matrix (each has its own memory): %s\n",
                 r.other_processes.size(), list.c_str());
  }
  const ProfiledProcess* image = profiling::chosen_image(r);
  if (!image && r.signal) {
    std::fprintf(stderr, "canopy: profile: %s was killed by signal %d (%s) before it wrote its samples: no matrix written\n",
                 a.command[0].c_str(), r.signal, strsignal(r.signal));
    return r.status;
  }
  if (!image) {
    std::fprintf(stderr,
                 "canopy: profile: %s left no samples: the profiling library was not loaded (a statically linked "
                 "program ignores LD_PRELOAD) or the program was killed before it started; no matrix written\n",
                 a.command[0].c_str());
    return r.status;  // passed on as always: the message says there is no matrix
  }
  const SharingProfile s = sharing_profile(*image, opt);
  if (!a.quiet) std::fputs((profiling::summary(*image, s, opt) + "\n").c_str(), stderr);
  if (image->num_samples() == 0)
    std::fprintf(stderr,
                 "canopy: profile: no data address was sampled: the program ran less than one sampling period "
                 "(%u us of CPU per thread) or touched no memory; the matrix written is all zeros\n",
                 a.period_us);
  else if (s.matrix.size() > 1 && s.matrix.num_edges() == 0)
    std::fprintf(stderr, "canopy: profile: no two threads were seen on the same %s: the matrix is all zeros\n",
                 a.granularity.c_str());
  if (a.output == "-") {
    std::ostringstream out;
    write_matrix(out, s.matrix, format == MatrixFormat::Auto ? MatrixFormat::Dense : format);
    std::fputs(out.str().c_str(), stdout);
  } else {
    write_matrix(a.output, s.matrix, format);
  }
  if (!a.pages.empty()) write_file(a.pages, pages_text(s, opt.granularity));
  if (r.status != 0) std::fprintf(stderr, "canopy: %s exited with status %d\n", a.command[0].c_str(), r.status);
  return r.status;
}

const bool profile_registered = register_subcommand(Subcommand{
    "profile", "Run a program and write the matrix of how much its threads share (sampled)", 65, [](CLI::App& app) {
      auto a = std::make_shared<ProfileArgs>();
      app.add_option("--of", a->of, "Matrix format: dense, mm or edges (default: dense, or from -o's extension)")
          ->check(CLI::IsMember({"dense", "mm", "edges"}))
          ->group("Output");
      app.add_option("-o,--output", a->output, "Write the matrix to FILE (default: standard output)")
          ->group("Output");
      app.add_flag("-q,--quiet", a->quiet, "No summary line on stderr (warnings still come)")->group("Output");
      app.add_option("--pages", a->pages, "Also write each thread's sampled pages (or lines) to FILE")
          ->group("Output");
      auto* d = app.add_option("--duration", a->duration,
                               "Sample only the first S seconds (the program then runs on unobserved)")
                    ->group("Sampling");
      app.add_flag("--until-exit", a->until_exit, "Sample until the program ends (the default)")
          ->excludes(d)
          ->group("Sampling");
      app.add_option("--granularity", a->granularity,
                     "Threads share when their samples fall on the same page (default) or cache line")
          ->check(CLI::IsMember({"page", "line"}))
          ->group("Sampling");
      app.add_option("--read-weight", a->read_weight,
                     "Weight of sharing on regions no sample saw written, 0 to 1 (default 0.5)")
          ->group("Sampling");
      app.add_option("--period-us", a->period_us,
                     fmt::format("Sampling period in microseconds of each thread's CPU time (default {})",
                                 profiling::kDefaultPeriodUs))
          ->check(CLI::Range(10u, 10000000u))
          ->group("Sampling");
      app.add_option("--timer", a->timer,
                     fmt::format("What triggers samples: posix (the POSIX CPU-time timer: no cost between "
                                 "samples, at most one per kernel tick), task-clock (perf_event: high resolution, "
                                 "a cost at every context switch; POSIX where it is not allowed) or auto (default: "
                                 "posix from {} us up, else task-clock)",
                                 profiling::kPosixTimerFromUs))
          ->check(CLI::IsMember({"auto", "task-clock", "posix"}))
          ->group("Sampling");
      app.add_option("--max-samples", a->max_samples,
                     "Addresses kept per thread before its sampling rate halves (default 65536: 1 MiB)")
          ->check(CLI::Range(64u, 1u << 26))
          ->group("Sampling");
      app.add_option("command", a->command, "The program and its arguments (after --)")->group("Sampling");
      app.footer(
          "Example: canopy profile -o halo.mat -- ./stencil 4096\n"
          "         canopy map --matrix halo.mat --input 'pack:2 core:4 pu:1'\n"
          "Thread i of the matrix is OpenMP thread i (canopy's runtime), else the i-th thread created (0: the\n"
          "initial thread). The program's exit status is passed on. Mechanisms and limits: docs/profile.md.");
      return [a] { return profile_command(*a); };
    }});

}  // namespace
}  // namespace canopy::cli
