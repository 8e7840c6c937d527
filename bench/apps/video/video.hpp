// A video-tracking pipeline on synthetic HD frames (1920 x 1080, 8-bit
// gray), streamed frame after frame. Per frame:
//   capture      one task: the camera (here: a textured background with a
//                little noise and four bright rectangles moving back and
//                forth; frame 0, which starts the model, has none);
//   background   16 tasks, one per horizontal strip: a Gaussian mixture per
//                pixel (3 components, Stauffer-Grimson update) says which
//                pixels are foreground;
//   dilate       3 passes of a 3 x 3 dilation of the mask, 4 tasks each
//                (one per quarter of the rows, reading one row of the
//                quarters above and below);
//   components   4 tasks: connected components (8-connected) of each
//                quarter, with each component's area, centroid sums and box,
//                and the labels of the quarter's first and last rows;
//   merge        one task: joins components across the quarter edges and
//                keeps those of at least min_area pixels, as objects;
//   track        one task: matches objects to the tracks of the previous
//                frame (nearest centroid) and updates them.
// 35 tasks a frame. The model of each strip stays from frame to frame.
//
// Checked two ways: (1) against the same pipeline run sequentially
// (reference(): equal objects, tracks and a hash of the final models and
// mask, to the last bit); (2) against the scene itself: in the last frame
// there are exactly the four rectangles, each object's centroid within half
// a pixel of its rectangle's centre, and each is followed by a track that
// has existed since the first frame that saw it.
//
// Sizes: 1920 x 1080, 40 frames; -n W gives W x (W * 9 / 16); --smoke:
// 192 x 108, 6 frames.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "common.hpp"

namespace apps::video {

inline constexpr int kStrips = 16, kQuarters = 4, kObjects = 4;
inline constexpr int kGauss = 3;        // components per pixel
inline constexpr int kMaxComps = 512;  // per quarter
inline constexpr int kMaxObjects = 256;

struct Config {
  long w, h, frames;
  long strip_begin(long k) const { return h * k / kStrips; }
  long quarter_begin(long q) const { return strip_begin(q * (kStrips / kQuarters)); }
  long obj_w() const { return w / 24; }
  long obj_h() const { return h / 18; }
  long min_area() const { return obj_w() * obj_h() / 2; }
};

Config config(const Args& a, const char* prog);

// Rows [lo, hi) of frame f into dst (row-major, w bytes a row).
void capture(const Config& c, long f, long lo, long hi, std::uint8_t* dst);

// The mixture of a strip: 3 * kGauss floats a pixel (weight, mean, variance).
inline std::size_t model_floats(const Config& c, long rows) {
  return static_cast<std::size_t>(rows * c.w) * 3 * kGauss;
}
// Starts the mixture from the first frame's pixels.
void model_init(const std::uint8_t* pixels, std::size_t count, float* model);
// Updates the mixture with `count` pixels and writes the mask (255 foreground, 0 background).
void background(const std::uint8_t* pixels, std::size_t count, float* model, std::uint8_t* mask);

// Rows [lo, hi) of the 3 x 3 dilation of a mask into dst; row(r) gives
// row r of the source for r in [lo - 1, hi] within [0, h).
template <class Row>
void dilate(const Config& c, long lo, long hi, Row&& row, std::uint8_t* dst) {
  const long w = c.w;
  for (long r = lo; r < hi; ++r) {
    const std::uint8_t* rows[3] = {r > 0 ? row(r - 1) : nullptr, row(r), r + 1 < c.h ? row(r + 1) : nullptr};
    std::uint8_t* out = dst + (r - lo) * w;
    for (long x = 0; x < w; ++x) {
      std::uint8_t m = 0;
      for (const std::uint8_t* s : rows) {
        if (!s) continue;
        m |= s[x];
        if (x > 0) m |= s[x - 1];
        if (x + 1 < w) m |= s[x + 1];
      }
      out[x] = m;
    }
  }
}

struct Component {
  std::int64_t area, sum_x, sum_y;
  std::int32_t x0, y0, x1, y1;
};

// What the components task of one quarter hands to the merge.
struct Components {
  std::int32_t count;
  Component comps[kMaxComps];
  // Labels of the quarter's first and last rows (-1: background), w each,
  // follow the struct in the same buffer.
};
inline std::size_t components_bytes(const Config& c) {
  return sizeof(Components) + 2 * static_cast<std::size_t>(c.w) * sizeof(std::int32_t);
}
inline std::int32_t* first_row_labels(Components* k) { return reinterpret_cast<std::int32_t*>(k + 1); }
inline std::int32_t* last_row_labels(const Config& c, Components* k) { return first_row_labels(k) + c.w; }
inline const std::int32_t* first_row_labels(const Components* k) {
  return reinterpret_cast<const std::int32_t*>(k + 1);
}
inline const std::int32_t* last_row_labels(const Config& c, const Components* k) { return first_row_labels(k) + c.w; }

// Connected components of rows [lo, hi) of the mask (contiguous, w bytes a
// row) with `labels` as scratch ((hi - lo) * w); fails (exit 1) past kMaxComps.
void components(const Config& c, long lo, long hi, const std::uint8_t* mask, std::int32_t* labels, Components* out,
                const char* prog);

struct Object {
  std::int64_t area;
  double cx, cy;
  std::int32_t x0, y0, x1, y1;
};
struct Objects {
  std::int32_t count;
  Object obj[kMaxObjects];
};
// Joins the quarters' components across their edges (q[k] is quarter k).
void merge(const Config& c, const Components* const q[kQuarters], Objects* out, const char* prog);

struct Track {
  std::int32_t id;
  std::int32_t born;  // frame of its first object
  std::int32_t last;  // frame of its last object
  double cx, cy;
};
struct Tracks {
  std::int32_t count, next_id;
  Track t[kMaxObjects];
};
// Matches frame f's objects with the tracks (a track not seen for 5 frames is dropped).
void track(const Config& c, long f, const Objects& objs, Tracks* tracks);

// What a run ends with, compared between versions.
struct Outcome {
  Objects objects;  // of the last frame
  Tracks tracks;
  std::uint64_t hash;  // of the final models (strip by strip) and the last dilated mask
};
std::uint64_t hash_bytes(std::uint64_t h, const void* p, std::size_t bytes);

// The pipeline run sequentially on whole-frame buffers.
Outcome reference(const Config& c, const char* prog);

// Exits 1 unless `got` equals the reference and matches the scene.
void check(const char* prog, const Config& c, const Outcome& got, const Outcome& ref);

}  // namespace apps::video
