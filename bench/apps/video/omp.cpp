// The video-tracking pipeline with OpenMP, as a user writes it for speed:
// whole-frame buffers, each first touched by a `parallel for
// schedule(static)` over the rows (so that a row's pages are on the node of
// the thread that models and dilates it), then frame after frame: the
// capture (the camera, on the master thread, into the touched buffer), the
// background model and each dilation as a `parallel for schedule(static)`
// over the rows, the connected components as a `parallel for` over the
// four quarters, the merge and the tracking on the master thread.
// --locality logs, for the last frame, the rows each loop iteration reads
// and writes and the buffers of the other stages.
#include <omp.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "locality.hpp"
#include "video/video.hpp"

using namespace apps::video;

int main(int argc, char** argv) {
  const apps::Args a = apps::parse_args(argc, argv);
  const Config c = config(a, argv[0]);
  omp_set_num_threads(a.threads);
  const long w = c.w, h = c.h;
  const std::size_t px = static_cast<std::size_t>(w * h), mf = model_floats(c, 1) / static_cast<std::size_t>(w);
  auto alloc = [](std::size_t bytes) {
    bytes = (bytes + 4095) / 4096 * 4096;
    return std::unique_ptr<unsigned char[], decltype(&std::free)>(
        static_cast<unsigned char*>(std::aligned_alloc(4096, bytes)), &std::free);
  };
  auto frame_m = alloc(px), fg_m = alloc(px), d1_m = alloc(px), d2_m = alloc(px), d3_m = alloc(px),
       labels_m = alloc(px * sizeof(std::int32_t)), model_m = alloc(px * mf * sizeof(float));
  std::uint8_t *frame = frame_m.get(), *fg = fg_m.get(), *d1 = d1_m.get(), *d2 = d2_m.get(), *d3 = d3_m.get();
  auto* labels = reinterpret_cast<std::int32_t*>(labels_m.get());
  auto* model = reinterpret_cast<float*>(model_m.get());
  std::vector<std::unique_ptr<unsigned char[]>> cc_m;
  Components* cc[kQuarters];
  for (int q = 0; q < kQuarters; ++q) {
    cc_m.emplace_back(new unsigned char[components_bytes(c)]);
    cc[q] = reinterpret_cast<Components*>(cc_m.back().get());
  }
  Objects objects{};
  Tracks tracks{};
  const std::size_t row_model = static_cast<std::size_t>(w) * mf;

  auto prepare = [&] {
#pragma omp parallel for schedule(static)
    for (long r = 0; r < h; ++r) {
      const std::size_t o = static_cast<std::size_t>(r * w);
      for (std::uint8_t* b : {fg, d1, d2, d3}) std::memset(b + o, 0, static_cast<std::size_t>(w));
      std::memset(labels + o, 0, static_cast<std::size_t>(w) * sizeof(std::int32_t));
      capture(c, 0, r, r + 1, frame + o);
      model_init(frame + o, static_cast<std::size_t>(w), model + static_cast<std::size_t>(r) * row_model);
    }
    std::memset(&tracks, 0, sizeof tracks);
  };
  auto rec = [](const void* p, std::size_t bytes) { apps::locality_record(p, bytes); };
  auto timed = [&] {
    const std::size_t wb = static_cast<std::size_t>(w);
    for (long f = 1; f < c.frames; ++f) {
      const bool log = a.locality && f == c.frames - 1;
      apps::locality_enable(log);
      capture(c, f, 0, h, frame);
      if (log) rec(frame, px);
#pragma omp parallel for schedule(static)
      for (long r = 0; r < h; ++r) {
        const std::size_t o = static_cast<std::size_t>(r) * wb;
        if (log) {
          rec(frame + o, wb);
          rec(model + static_cast<std::size_t>(r) * row_model, row_model * sizeof(float));
          rec(fg + o, wb);
        }
        background(frame + o, wb, model + static_cast<std::size_t>(r) * row_model, fg + o);
      }
      for (auto [src, dst] : {std::pair{fg, d1}, std::pair{d1, d2}, std::pair{d2, d3}}) {
#pragma omp parallel for schedule(static)
        for (long r = 0; r < h; ++r) {
          if (log) {
            const long lo = r > 0 ? r - 1 : 0, hi = r + 1 < h ? r + 2 : h;
            rec(src + lo * w, static_cast<std::size_t>(hi - lo) * wb);
            rec(dst + r * w, wb);
          }
          dilate(c, r, r + 1, [&](long rr) { return src + rr * w; }, dst + r * w);
        }
      }
#pragma omp parallel for schedule(static)
      for (int q = 0; q < kQuarters; ++q) {
        const long lo = c.quarter_begin(q), hi = c.quarter_begin(q + 1);
        if (log) {
          rec(d3 + lo * w, static_cast<std::size_t>(hi - lo) * wb);
          rec(labels + lo * w, static_cast<std::size_t>(hi - lo) * wb * sizeof(std::int32_t));
          rec(cc[q], components_bytes(c));
        }
        components(c, lo, hi, d3 + lo * w, labels + lo * w, cc[q], argv[0]);
      }
      if (log) {
        for (Components* k : cc) rec(k, components_bytes(c));
        rec(&objects, sizeof objects);
        rec(&objects, sizeof objects);
        rec(&tracks, sizeof tracks);
      }
      const Components* const qs[kQuarters] = {cc[0], cc[1], cc[2], cc[3]};
      merge(c, qs, &objects, argv[0]);
      track(c, f, objects, &tracks);
    }
    apps::locality_enable(false);
  };
  Outcome ref{};
  bool have_ref = false;
  auto check = [&] {
    if (!have_ref) {
      ref = reference(c, argv[0]);
      have_ref = true;
    }
    Outcome got{};
    got.objects = objects;
    got.tracks = tracks;
    got.hash = hash_bytes(hash_bytes(0xCBF29CE484222325ull, model, px * mf * sizeof(float)), d3, px);
    if (a.inject_error) got.tracks.t[0].cx += 0.25;
    apps::video::check(argv[0], c, got, ref);
  };
  apps::measure(a, "video", "omp", c.frames - 1, prepare, timed, check);
  if (a.locality) apps::locality_print("video", "omp", a.threads, apps::locality_summarize());
}
