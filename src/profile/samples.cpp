// Reading the samples files the profiling library writes
// (samples_format.hpp): checked field by field, every error naming the file.
#include <dirent.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "canopy/error.hpp"
#include "canopy/profile.hpp"
#include "profile/samples_format.hpp"

namespace canopy {
namespace format = profile::format;

std::uint64_t ProfiledProcess::num_samples() const {
  std::uint64_t n = 0;
  for (const auto& t : threads) n += t.samples.size();
  return n;
}

ProfiledProcess read_profile_samples(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("{}: cannot open: {}", path, std::strerror(errno)), ErrorKind::System);
  if (in.peek() == std::ifstream::traits_type::eof())
    throw Error(fmt::format("{}: empty: the process ended without writing its samples (killed by a signal?)", path));
  format::FileHeader h{};
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h) || std::memcmp(h.magic, format::kMagic, sizeof h.magic) != 0)
    throw Error(fmt::format("{}: not a canopy samples file (no {} header)", path, std::string(format::kMagic, 8)));
  ProfiledProcess p;
  p.file = path;
  p.pid = h.pid;
  p.parent_pid = h.parent_pid;
  p.period_ns = h.period_ns;
  p.stopped_early = (h.flags & format::kStoppedEarly) != 0;
  p.timer.assign(h.timer, strnlen(h.timer, sizeof h.timer));
  format::ThreadHeader th{};
  while (in.read(reinterpret_cast<char*>(&th), sizeof th)) {
    if (th.count > (std::uint64_t{1} << 32) || th.stride == 0)
      throw Error(fmt::format("{}: thread {}: {} samples with stride {}: corrupt file", path, th.creation, th.count,
                              th.stride));
    ProfiledThread t;
    t.creation = th.creation;
    t.tid = th.tid;
    t.signals = th.signals;
    t.decoded = th.decoded;
    t.stride = th.stride;
    std::vector<format::Sample> raw(th.count);
    if (!in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size() * sizeof raw[0])))
      throw Error(fmt::format("{}: thread {}: cut short ({} samples announced)", path, th.creation, th.count));
    t.samples.reserve(raw.size());
    for (const auto& s : raw)
      t.samples.push_back({s.address & ~format::kWriteBit, (s.address & format::kWriteBit) != 0, s.omp_thread});
    p.threads.push_back(std::move(t));
  }
  if (in.gcount() != 0)
    throw Error(fmt::format("{}: cut short in a thread header ({} of {} bytes)", path, in.gcount(), sizeof th));
  std::sort(p.threads.begin(), p.threads.end(),
            [](const ProfiledThread& a, const ProfiledThread& b) { return a.creation < b.creation; });
  return p;
}

std::vector<std::string> profile_sample_files(const std::string& dir) {
  std::vector<std::pair<std::pair<long, long>, std::string>> found;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d)) {
      long pid = 0, n = 0;
      int used = 0;
      if (std::sscanf(e->d_name, "samples.%ld.%ld%n", &pid, &n, &used) == 2 && e->d_name[used] == '\0')
        found.push_back({{pid, n}, dir + "/" + e->d_name});
    }
    ::closedir(d);
  } else {
    throw Error(fmt::format("{}: cannot read the profile directory: {}", dir, std::strerror(errno)),
                ErrorKind::System);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  for (auto& f : found) files.push_back(std::move(f.second));
  return files;
}

}  // namespace canopy
