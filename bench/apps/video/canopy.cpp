// The video-tracking pipeline with canopy, as a user writes it: a handle per
// strip of the frame, of the background model and of the foreground mask,
// per quarter of each dilated mask, of the labels and of the components,
// one for the objects and one for the tracks; two sets of the per-frame
// buffers, so that frame f+1 is captured and modelled while frame f is
// still in the later stages. Every frame's 35 tasks are submitted as the
// frame comes (a stream: the data-flow order alone keeps it correct, no
// wait between frames). No placement code.
#include <canopy/data.hpp>
#include <canopy/dataflow.hpp>
#include <canopy/runtime.hpp>

#include <cstring>
#include <vector>

#include "locality.hpp"
#include "video/video.hpp"

using namespace apps::video;

namespace {

template <class T = std::uint8_t>
T* ptr(canopy::Data d) {
  return static_cast<T*>(canopy::data_ptr(d));
}

// submit, and with `log`, the bytes of every handle listed go to the
// locality log when the task runs (the same list: declared = counted).
template <class F>
void submit_logged(std::vector<canopy::Access> acc, bool log, F&& body) {
  std::vector<canopy::Access> listed = acc;
  canopy::submit(std::span<const canopy::Access>(acc), [listed = std::move(listed), log, body = std::forward<F>(body)] {
    if (log)
      for (const canopy::Access& x : listed) apps::locality_record(canopy::data_ptr(x.data), canopy::data_size(x.data));
    body();
  });
}

}  // namespace

int main(int argc, char** argv) {
  const apps::Args a = apps::parse_args(argc, argv);
  const Config c = config(a, argv[0]);
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);

  constexpr int kSets = 2;
  const long w = c.w;
  auto strip_rows = [&](long k) { return c.strip_begin(k + 1) - c.strip_begin(k); };
  auto quarter_rows = [&](long q) { return c.quarter_begin(q + 1) - c.quarter_begin(q); };
  std::vector<canopy::Data> frame[kSets], fg[kSets], d1[kSets], d2[kSets], d3[kSets], cc[kSets], model, labels;
  canopy::Data objects[kSets], tracks;
  for (int s = 0; s < kSets; ++s) {
    for (long k = 0; k < kStrips; ++k) {
      frame[s].push_back(canopy::data_allocate(static_cast<std::size_t>(strip_rows(k) * w)));
      fg[s].push_back(canopy::data_allocate(static_cast<std::size_t>(strip_rows(k) * w)));
    }
    for (long q = 0; q < kQuarters; ++q) {
      const auto bytes = static_cast<std::size_t>(quarter_rows(q) * w);
      d1[s].push_back(canopy::data_allocate(bytes));
      d2[s].push_back(canopy::data_allocate(bytes));
      d3[s].push_back(canopy::data_allocate(bytes));
      cc[s].push_back(canopy::data_allocate(components_bytes(c)));
    }
    objects[s] = canopy::data_allocate(sizeof(Objects));
  }
  for (long k = 0; k < kStrips; ++k)
    model.push_back(canopy::data_allocate(model_floats(c, strip_rows(k)) * sizeof(float)));
  for (long q = 0; q < kQuarters; ++q)
    labels.push_back(canopy::data_allocate(static_cast<std::size_t>(quarter_rows(q) * w) * sizeof(std::int32_t)));
  tracks = canopy::data_allocate(sizeof(Tracks));

  auto strip_of = [&](long r) {
    long k = 0;
    while (c.strip_begin(k + 1) <= r) ++k;
    return k;
  };
  // One frame's tasks (frame f into buffer set s).
  auto submit_frame = [&](long f, bool log) {
    const int s = static_cast<int>(f % kSets);
    std::vector<canopy::Access> acc;
    for (long k = 0; k < kStrips; ++k) acc.push_back(canopy::write(frame[s][k]));
    submit_logged(acc, log, [&, f, s] {
      for (long k = 0; k < kStrips; ++k) capture(c, f, c.strip_begin(k), c.strip_begin(k + 1), ptr(frame[s][k]));
    });
    for (long k = 0; k < kStrips; ++k)
      submit_logged({canopy::read(frame[s][k]), canopy::read_write(model[k]), canopy::write(fg[s][k])}, log,
                    [&, s, k] {
                      background(ptr(frame[s][k]), static_cast<std::size_t>(strip_rows(k) * w), ptr<float>(model[k]),
                                 ptr(fg[s][k]));
                    });
    // Dilation 1: from the strips of the mask; 2 and 3: from the quarters.
    for (long q = 0; q < kQuarters; ++q) {
      const long lo = c.quarter_begin(q), hi = c.quarter_begin(q + 1);
      std::vector<canopy::Access> in;
      for (long k = strip_of(lo > 0 ? lo - 1 : 0); k <= strip_of(hi < c.h ? hi : hi - 1); ++k)
        in.push_back(canopy::read(fg[s][k]));
      in.push_back(canopy::write(d1[s][q]));
      submit_logged(in, log, [&, s, lo, hi, q] {
        auto row = [&](long r) {
          const long k = strip_of(r);
          return ptr(fg[s][k]) + (r - c.strip_begin(k)) * w;
        };
        dilate(c, lo, hi, row, ptr(d1[s][q]));
      });
    }
    for (const auto* pass : {&d1, &d2}) {
      const std::vector<canopy::Data>& src = (*pass)[s];
      const std::vector<canopy::Data>& dst = pass == &d1 ? d2[s] : d3[s];
      for (long q = 0; q < kQuarters; ++q) {
        std::vector<canopy::Access> in;
        for (long p = std::max(0L, q - 1); p <= std::min<long>(kQuarters - 1, q + 1); ++p)
          in.push_back(canopy::read(src[p]));
        in.push_back(canopy::write(dst[q]));
        submit_logged(in, log, [&, q, src_set = &src, out = dst[q]] {
          dilate(c, c.quarter_begin(q), c.quarter_begin(q + 1),
                 [&](long r) {
                   long p = 0;
                   while (c.quarter_begin(p + 1) <= r) ++p;
                   return ptr((*src_set)[p]) + (r - c.quarter_begin(p)) * w;
                 },
                 ptr(out));
        });
      }
    }
    for (long q = 0; q < kQuarters; ++q)
      submit_logged({canopy::read(d3[s][q]), canopy::read_write(labels[q]), canopy::write(cc[s][q])}, log,
                    [&, s, q, prog = argv[0]] {
                      components(c, c.quarter_begin(q), c.quarter_begin(q + 1), ptr(d3[s][q]),
                                 ptr<std::int32_t>(labels[q]), ptr<Components>(cc[s][q]), prog);
                    });
    std::vector<canopy::Access> in;
    for (long q = 0; q < kQuarters; ++q) in.push_back(canopy::read(cc[s][q]));
    in.push_back(canopy::write(objects[s]));
    submit_logged(in, log, [&, s, prog = argv[0]] {
      const Components* const qs[kQuarters] = {ptr<Components>(cc[s][0]), ptr<Components>(cc[s][1]),
                                               ptr<Components>(cc[s][2]), ptr<Components>(cc[s][3])};
      merge(c, qs, ptr<Objects>(objects[s]), prog);
    });
    submit_logged({canopy::read(objects[s]), canopy::read_write(tracks)}, log,
                  [&, s, f] { track(c, f, *ptr<Objects>(objects[s]), ptr<Tracks>(tracks)); });
  };

  auto prepare = [&] {
    rt.run([&] {
      std::vector<canopy::Access> acc;
      for (long k = 0; k < kStrips; ++k) acc.push_back(canopy::write(frame[0][k]));
      canopy::submit(std::span<const canopy::Access>(acc), [&] {
        for (long k = 0; k < kStrips; ++k) capture(c, 0, c.strip_begin(k), c.strip_begin(k + 1), ptr(frame[0][k]));
      });
      for (long k = 0; k < kStrips; ++k)
        canopy::submit({canopy::read(frame[0][k]), canopy::write(model[k])}, [&, k] {
          model_init(ptr(frame[0][k]), static_cast<std::size_t>(strip_rows(k) * w), ptr<float>(model[k]));
        });
      canopy::submit({canopy::write(tracks)}, [&] { std::memset(ptr(tracks), 0, sizeof(Tracks)); });
      canopy::wait_all();
    });
  };
  auto timed = [&] {
    apps::locality_enable(a.locality);
    rt.run([&] {
      for (long f = 1; f < c.frames; ++f) submit_frame(f, a.locality && f == c.frames - 1);
      canopy::wait_all();
    });
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
    const int last = static_cast<int>((c.frames - 1) % kSets);
    got.objects = *ptr<Objects>(objects[last]);
    got.tracks = *ptr<Tracks>(tracks);
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (long k = 0; k < kStrips; ++k) h = hash_bytes(h, ptr(model[k]), canopy::data_size(model[k]));
    std::vector<std::uint8_t> mask;
    for (long q = 0; q < kQuarters; ++q)
      mask.insert(mask.end(), ptr(d3[last][q]), ptr(d3[last][q]) + canopy::data_size(d3[last][q]));
    got.hash = hash_bytes(h, mask.data(), mask.size());
    if (a.inject_error) got.tracks.t[0].cx += 0.25;
    apps::video::check(argv[0], c, got, ref);
  };
  apps::measure(a, "video", "canopy", c.frames - 1, prepare, timed, check);
  if (a.locality) apps::locality_print("video", "canopy", a.threads, apps::locality_summarize());
  for (int s = 0; s < kSets; ++s) {
    for (auto* v : {&frame[s], &fg[s], &d1[s], &d2[s], &d3[s], &cc[s]})
      for (canopy::Data d : *v) canopy::data_free(d);
    canopy::data_free(objects[s]);
  }
  for (canopy::Data d : model) canopy::data_free(d);
  for (canopy::Data d : labels) canopy::data_free(d);
  canopy::data_free(tracks);
}
