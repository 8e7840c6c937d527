// From samples to the sharing matrix (src/profile/sharing.cpp) and reading
// the samples files (src/profile/samples.cpp), on samples made up here.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "canopy/error.hpp"
#include "canopy/profile.hpp"
#include "profile/samples_format.hpp"

namespace canopy {
namespace {

ProfiledThread thread(int creation, std::vector<ProfileSample> samples, std::uint64_t stride = 1) {
  ProfiledThread t;
  t.creation = creation;
  t.stride = stride;
  t.samples = std::move(samples);
  t.signals = t.decoded = t.samples.size();
  return t;
}

ProfileSample at(std::uint64_t a, bool write = true, int omp = -1) { return {a, write, omp}; }

TEST(SharingProfile, APairWeighsTheSmallerOfItsTwoSampleCountsOnEachRegion) {
  ProfiledProcess p;
  p.threads.push_back(thread(0, {at(0x10000), at(0x10008), at(0x10010), at(0x20000)}));
  p.threads.push_back(thread(1, {at(0x10fff, false), at(0x30000)}));
  p.threads.push_back(thread(2, {at(0x30000), at(0x30040), at(0x20000, false)}));
  const SharingProfile s = sharing_profile(p);
  ASSERT_EQ(s.matrix.size(), 3);
  EXPECT_EQ(s.matrix.at(0, 1), 1);  // page 0x10: 3 and 1 samples
  EXPECT_EQ(s.matrix.at(1, 2), 1);  // page 0x30: 1 and 2
  EXPECT_EQ(s.matrix.at(0, 2), 1);  // page 0x20: 1 and 1, written by thread 0
  EXPECT_FALSE(s.openmp_numbering);
  EXPECT_EQ(s.shared_regions, 3);
  EXPECT_EQ(s.threads[0].regions, 2);
  EXPECT_EQ(s.threads[0].shared_regions, 2);
  EXPECT_EQ(s.threads[2].samples, 3);
}

TEST(SharingProfile, CacheLinesSeparateWhatPagesJoin) {
  ProfiledProcess p;
  p.threads.push_back(thread(0, {at(0x10000), at(0x10040)}));
  p.threads.push_back(thread(1, {at(0x10080)}));
  EXPECT_EQ(sharing_profile(p).matrix.at(0, 1), 1);
  SharingOptions line;
  line.granularity = SharingGranularity::Line;
  EXPECT_EQ(sharing_profile(p, line).matrix.at(0, 1), 0);
  EXPECT_EQ(sharing_profile(p, line).threads[0].regions, 2);
}

TEST(SharingProfile, ReadOnlySharingIsScaledByTheReadWeight) {
  ProfiledProcess p;
  p.threads.push_back(thread(0, {at(0x10000, false), at(0x20000, true)}));
  p.threads.push_back(thread(1, {at(0x10000, false), at(0x20000, false)}));
  SharingOptions o;
  o.read_weight = 0;
  EXPECT_EQ(sharing_profile(p, o).matrix.at(0, 1), 1);  // only the page thread 0 wrote
  o.read_weight = 0.5;
  EXPECT_EQ(sharing_profile(p, o).matrix.at(0, 1), 1.5);
  o.read_weight = 1.5;
  EXPECT_THROW(sharing_profile(p, o), Error);
}

TEST(SharingProfile, EachSampleCountsForItsThreadsStride) {
  ProfiledProcess p;
  p.threads.push_back(thread(0, {at(0x10000)}, 4));
  p.threads.push_back(thread(1, {at(0x10000), at(0x10000)}, 1));
  EXPECT_EQ(sharing_profile(p).matrix.at(0, 1), 2);  // min(4, 2)
}

TEST(SharingProfile, RowsFollowTheOpenMPNumbersOfCanopysRuntime) {
  ProfiledProcess p;
  // Created third and first, but OpenMP threads 0 and 1 (the numbers the
  // runtime gave at each sample win over the creation order).
  p.threads.push_back(thread(0, {at(0x10000, true, 1)}));
  p.threads.push_back(thread(2, {at(0x10000, true, 0), at(0x50000, true, 0)}));
  const SharingProfile s = sharing_profile(p);
  EXPECT_TRUE(s.openmp_numbering);
  ASSERT_EQ(s.matrix.size(), 3);  // creation 2 still counts as a thread that existed
  EXPECT_EQ(s.matrix.at(0, 1), 1);
  EXPECT_EQ(s.threads[0].regions, 2);
}

TEST(SharingProfile, GranularityNamesAreChecked) {
  EXPECT_EQ(parse_sharing_granularity("line"), SharingGranularity::Line);
  EXPECT_EQ(parse_sharing_granularity("page"), SharingGranularity::Page);
  try {
    parse_sharing_granularity("word");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'word'"), std::string::npos);
  }
}

// --- samples files ---

std::string temp_file(const std::string& name) { return ::testing::TempDir() + "/" + name; }

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

std::string header_bytes(int pid) {
  profile::format::FileHeader h{};
  std::memcpy(h.magic, profile::format::kMagic, 8);
  h.pid = pid;
  h.period_ns = 250000;
  h.flags = profile::format::kStoppedEarly;
  std::strcpy(h.timer, "test timer");
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

std::string thread_bytes(int creation, std::vector<profile::format::Sample> samples) {
  profile::format::ThreadHeader t{};
  t.creation = creation;
  t.tid = 100 + creation;
  t.signals = 7;
  t.decoded = 5;
  t.stride = 2;
  t.count = samples.size();
  return std::string(reinterpret_cast<const char*>(&t), sizeof t) +
         std::string(reinterpret_cast<const char*>(samples.data()), samples.size() * sizeof samples[0]);
}

TEST(ProfileSamples, ReadsWhatTheLibraryWrites) {
  const std::string f = temp_file("samples.42.0");
  write_file(f, header_bytes(42) + thread_bytes(1, {{0x1000 | profile::format::kWriteBit, 3, 0}}) +
                    thread_bytes(0, {{0x2000, -1, 0}, {0x3000, -1, 0}}));
  const ProfiledProcess p = read_profile_samples(f);
  EXPECT_EQ(p.pid, 42);
  EXPECT_TRUE(p.stopped_early);
  EXPECT_EQ(p.timer, "test timer");
  ASSERT_EQ(p.threads.size(), 2u);
  EXPECT_EQ(p.threads[0].creation, 0);  // sorted by creation
  EXPECT_EQ(p.threads[1].samples[0].address, 0x1000u);
  EXPECT_TRUE(p.threads[1].samples[0].write);
  EXPECT_EQ(p.threads[1].samples[0].omp_thread, 3);
  EXPECT_EQ(p.threads[1].stride, 2u);
  EXPECT_EQ(p.num_samples(), 3u);
  EXPECT_EQ(profile_sample_files(::testing::TempDir()).size() >= 1, true);
}

void expect_error(const std::string& bytes, const std::string& what) {
  const std::string f = temp_file("bad_samples");
  write_file(f, bytes);
  try {
    read_profile_samples(f);
    FAIL() << "no error for " << what;
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(f), std::string::npos) << msg;
    EXPECT_NE(msg.find(what), std::string::npos) << msg;
  }
}

TEST(ProfileSamples, BadFilesAreNamedWithWhatIsWrong) {
  expect_error("", "empty");
  expect_error("not a samples file at all, but long enough to hold a header..............................", "not a canopy samples file");
  const std::string t = thread_bytes(0, {{0x2000, -1, 0}, {0x3000, -1, 0}});
  expect_error(header_bytes(1) + t.substr(0, t.size() - 4), "cut short");
  expect_error(header_bytes(1) + t.substr(0, 10), "cut short in a thread header");
  EXPECT_THROW(read_profile_samples(temp_file("does-not-exist")), Error);
}

}  // namespace
}  // namespace canopy
