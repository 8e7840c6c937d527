// The video-tracking pipeline's stages, shared by every version, and the
// sequential reference and checks (video.hpp).
#include "video/video.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

namespace apps::video {
namespace {

constexpr float kAlpha = 0.005f, kInitVar = 36.f, kMinVar = 4.f, kMatch = 6.25f, kBackground = 0.7f;
constexpr std::uint8_t kObjectValue = 230;
constexpr double kCentres[kObjects] = {0.2, 0.5, 0.7, 0.9};  // 0.5: an object across a quarter edge

std::uint32_t mix(std::uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return static_cast<std::uint32_t>(h);
}

// Rectangle o of frame f: left and top.
void object_at(const Config& c, int o, long f, long* x0, long* y0) {
  const long ow = c.obj_w(), oh = c.obj_h(), range = c.w - ow - 4;
  const long v = std::max(1L, (2 + o) * c.w / 1920);
  const long pos = (c.w * (o + 1) / 6 + v * f) % (2 * range);
  *x0 = 2 + (pos < range ? pos : 2 * range - pos);
  *y0 = static_cast<long>(kCentres[o] * static_cast<double>(c.h)) - oh / 2;
}

struct UnionFind {
  std::vector<std::int32_t> parent;
  std::int32_t add() {
    parent.push_back(static_cast<std::int32_t>(parent.size()));
    return parent.back();
  }
  std::int32_t find(std::int32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(std::int32_t a, std::int32_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

}  // namespace

Config config(const Args& a, const char* prog) {
  Config c{a.smoke ? 192 : 1920, 0, a.smoke ? 6 : 40};
  if (a.n) c.w = a.n;
  c.h = c.w * 9 / 16;
  if (a.iterations) c.frames = a.iterations;
  if (c.w < 192 || c.frames < 2) {
    std::fprintf(stderr, "%s: -n %ld -i %ld: expected a width of at least 192 and at least 2 frames\n", prog, c.w,
                 c.frames);
    std::exit(2);
  }
  return c;
}

void capture(const Config& c, long f, long lo, long hi, std::uint8_t* dst) {
  for (long y = lo; y < hi; ++y)
    for (long x = 0; x < c.w; ++x) {
      const std::uint64_t key = static_cast<std::uint64_t>(f) << 42 ^ static_cast<std::uint64_t>(y) << 21 ^
                                static_cast<std::uint64_t>(x);
      const int noise = static_cast<int>(mix(key) % 5) - 2;
      dst[(y - lo) * c.w + x] = static_cast<std::uint8_t>(60 + ((x * 7 + y * 13) & 63) + noise);
    }
  // Frame 0, which starts the background model, is the empty scene.
  for (int o = 0; o < kObjects && f > 0; ++o) {
    long x0, y0;
    object_at(c, o, f, &x0, &y0);
    for (long y = std::max(lo, y0); y < std::min(hi, y0 + c.obj_h()); ++y)
      std::memset(dst + (y - lo) * c.w + x0, kObjectValue, static_cast<std::size_t>(c.obj_w()));
  }
}

void model_init(const std::uint8_t* pixels, std::size_t count, float* model) {
  for (std::size_t i = 0; i < count; ++i) {
    float* m = model + i * 3 * kGauss;
    for (int k = 0; k < kGauss; ++k) {
      m[3 * k] = k == 0 ? 1.f : 0.f;
      m[3 * k + 1] = k == 0 ? static_cast<float>(pixels[i]) : 0.f;
      m[3 * k + 2] = kInitVar;
    }
  }
}

void background(const std::uint8_t* pixels, std::size_t count, float* model, std::uint8_t* mask) {
  for (std::size_t i = 0; i < count; ++i) {
    float* m = model + i * 3 * kGauss;  // components sorted by weight / sd, best first
    const float x = static_cast<float>(pixels[i]);
    int match = -1;
    for (int k = 0; k < kGauss && match < 0; ++k) {
      const float d = x - m[3 * k + 1];
      if (m[3 * k] > 0.f && d * d < kMatch * m[3 * k + 2]) match = k;
    }
    float total = 0.f;
    for (int k = 0; k < kGauss; ++k) {
      m[3 * k] = (1.f - kAlpha) * m[3 * k] + (k == match ? kAlpha : 0.f);
      total += m[3 * k];
    }
    if (match >= 0) {
      const float rho = std::min(1.f, kAlpha / m[3 * match]);
      const float d = x - m[3 * match + 1];
      m[3 * match + 1] += rho * d;
      m[3 * match + 2] = std::max(kMinVar, m[3 * match + 2] + rho * (d * d - m[3 * match + 2]));
    } else {  // replace the weakest
      total += kAlpha - m[3 * (kGauss - 1)];
      m[3 * (kGauss - 1)] = kAlpha;
      m[3 * (kGauss - 1) + 1] = x;
      m[3 * (kGauss - 1) + 2] = kInitVar;
      match = kGauss - 1;
    }
    for (int k = 0; k < kGauss; ++k) m[3 * k] /= total;
    // Background: the first components whose weights add up to kBackground.
    float cum = 0.f;
    bool fg = true;
    for (int k = 0; k < kGauss; ++k) {
      if (k == match) fg = false;
      cum += m[3 * k];
      if (cum > kBackground) break;
    }
    mask[i] = fg ? 255 : 0;
    // Keep them sorted by weight / sd (insertion sort of three).
    for (int k = 1; k < kGauss; ++k)
      // w_j / sd_j > w_(j-1) / sd_(j-1), squared
      for (int j = k;
           j > 0 && m[3 * j] * m[3 * j] * m[3 * (j - 1) + 2] > m[3 * (j - 1)] * m[3 * (j - 1)] * m[3 * j + 2]; --j)
        for (int e = 0; e < 3; ++e) std::swap(m[3 * j + e], m[3 * (j - 1) + e]);
  }
}

void components(const Config& c, long lo, long hi, const std::uint8_t* mask, std::int32_t* labels, Components* out,
                const char* prog) {
  const long w = c.w;
  UnionFind uf;
  for (long y = lo; y < hi; ++y)
    for (long x = 0; x < w; ++x) {
      const long i = (y - lo) * w + x;
      labels[i] = -1;
      if (!mask[i]) continue;
      std::int32_t l = -1;
      auto see = [&](long yy, long xx) {
        if (yy < lo || xx < 0 || xx >= w) return;
        const std::int32_t n = labels[(yy - lo) * w + xx];
        if (n < 0) return;
        if (l < 0)
          l = n;
        else
          uf.join(l, n);
      };
      see(y, x - 1);
      see(y - 1, x - 1);
      see(y - 1, x);
      see(y - 1, x + 1);
      labels[i] = l >= 0 ? l : uf.add();
    }
  // Final labels 0.. in the order the components first appear.
  std::vector<std::int32_t> final_of(uf.parent.size(), -1);
  out->count = 0;
  for (long y = lo; y < hi; ++y)
    for (long x = 0; x < w; ++x) {
      std::int32_t& l = labels[(y - lo) * w + x];
      if (l < 0) continue;
      const std::int32_t root = uf.find(l);
      if (final_of[root] < 0) {
        if (out->count == kMaxComps)
          apps::fail(prog, "more than " + std::to_string(kMaxComps) + " components in rows " + std::to_string(lo) +
                               ".." + std::to_string(hi));
        final_of[root] = out->count;
        out->comps[out->count++] = {0, 0, 0, static_cast<std::int32_t>(x), static_cast<std::int32_t>(y),
                                    static_cast<std::int32_t>(x), static_cast<std::int32_t>(y)};
      }
      l = final_of[root];
      Component& k = out->comps[l];
      ++k.area;
      k.sum_x += x;
      k.sum_y += y;
      k.x0 = std::min<std::int32_t>(k.x0, static_cast<std::int32_t>(x));
      k.x1 = std::max<std::int32_t>(k.x1, static_cast<std::int32_t>(x));
      k.y1 = static_cast<std::int32_t>(y);
    }
  std::memcpy(first_row_labels(out), labels, static_cast<std::size_t>(w) * sizeof(std::int32_t));
  std::memcpy(last_row_labels(c, out), labels + (hi - 1 - lo) * w, static_cast<std::size_t>(w) * sizeof(std::int32_t));
}

void merge(const Config& c, const Components* const q[kQuarters], Objects* out, const char* prog) {
  std::int32_t base[kQuarters + 1] = {0};
  for (int k = 0; k < kQuarters; ++k) base[k + 1] = base[k] + q[k]->count;
  UnionFind uf;
  uf.parent.reserve(static_cast<std::size_t>(base[kQuarters]));
  for (std::int32_t i = 0; i < base[kQuarters]; ++i) uf.add();
  for (int k = 0; k + 1 < kQuarters; ++k) {
    const std::int32_t* above = last_row_labels(c, q[k]);
    const std::int32_t* below = first_row_labels(q[k + 1]);
    for (long x = 0; x < c.w; ++x) {
      if (above[x] < 0) continue;
      for (long dx = -1; dx <= 1; ++dx)
        if (x + dx >= 0 && x + dx < c.w && below[x + dx] >= 0) uf.join(base[k] + above[x], base[k + 1] + below[x + dx]);
    }
  }
  std::vector<Component> joined(static_cast<std::size_t>(base[kQuarters]), Component{0, 0, 0, 0, 0, 0, 0});
  for (int k = 0; k < kQuarters; ++k)
    for (std::int32_t i = 0; i < q[k]->count; ++i) {
      const Component& s = q[k]->comps[i];
      Component& d = joined[static_cast<std::size_t>(uf.find(base[k] + i))];
      if (d.area == 0) {
        d = s;
        continue;
      }
      d.area += s.area;
      d.sum_x += s.sum_x;
      d.sum_y += s.sum_y;
      d.x0 = std::min(d.x0, s.x0);
      d.y0 = std::min(d.y0, s.y0);
      d.x1 = std::max(d.x1, s.x1);
      d.y1 = std::max(d.y1, s.y1);
    }
  out->count = 0;
  for (const Component& k : joined) {
    if (k.area < c.min_area()) continue;
    if (out->count == kMaxObjects) apps::fail(prog, "more than " + std::to_string(kMaxObjects) + " objects");
    out->obj[out->count++] = {k.area, static_cast<double>(k.sum_x) / static_cast<double>(k.area),
                              static_cast<double>(k.sum_y) / static_cast<double>(k.area), k.x0, k.y0, k.x1, k.y1};
  }
  std::sort(out->obj, out->obj + out->count,
            [](const Object& a, const Object& b) { return a.y0 != b.y0 ? a.y0 < b.y0 : a.x0 < b.x0; });
}

void track(const Config& c, long f, const Objects& objs, Tracks* tracks) {
  const double radius = static_cast<double>(c.obj_w());
  std::vector<bool> taken(static_cast<std::size_t>(tracks->count), false);
  for (std::int32_t i = 0; i < objs.count; ++i) {
    const Object& o = objs.obj[i];
    int best = -1;
    double best_d = radius * radius;
    for (std::int32_t t = 0; t < tracks->count; ++t) {
      const double dx = tracks->t[t].cx - o.cx, dy = tracks->t[t].cy - o.cy, d = dx * dx + dy * dy;
      if (!taken[static_cast<std::size_t>(t)] && d < best_d) {
        best = t;
        best_d = d;
      }
    }
    if (best >= 0) {
      taken[static_cast<std::size_t>(best)] = true;
      Track& t = tracks->t[best];
      t.cx = o.cx;
      t.cy = o.cy;
      t.last = static_cast<std::int32_t>(f);
    } else if (tracks->count < kMaxObjects) {
      tracks->t[tracks->count++] = {tracks->next_id++, static_cast<std::int32_t>(f), static_cast<std::int32_t>(f), o.cx,
                                    o.cy};
      taken.push_back(true);
    }
  }
  std::int32_t kept = 0;
  for (std::int32_t t = 0; t < tracks->count; ++t)
    if (tracks->t[t].last >= f - 5) tracks->t[kept++] = tracks->t[t];
  tracks->count = kept;
}

std::uint64_t hash_bytes(std::uint64_t h, const void* p, std::size_t bytes) {
  const auto* s = static_cast<const unsigned char*>(p);
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    std::uint64_t v;
    std::memcpy(&v, s + i, 8);
    h = (h ^ v) * 0x100000001B3ull;
    h ^= h >> 29;
  }
  for (; i < bytes; ++i) h = (h ^ s[i]) * 0x100000001B3ull;
  return h;
}

Outcome reference(const Config& c, const char* prog) {
  const std::size_t px = static_cast<std::size_t>(c.w * c.h);
  std::vector<std::uint8_t> frame(px), mask(px), d1(px), d2(px);
  std::vector<float> model(model_floats(c, c.h));
  std::vector<std::int32_t> labels(px);
  std::vector<Components*> comps;
  std::vector<std::unique_ptr<unsigned char[]>> comp_mem;
  for (int q = 0; q < kQuarters; ++q) {
    comp_mem.emplace_back(new unsigned char[components_bytes(c)]);
    comps.push_back(reinterpret_cast<Components*>(comp_mem.back().get()));
  }
  Outcome out{};
  capture(c, 0, 0, c.h, frame.data());
  model_init(frame.data(), px, model.data());
  for (long f = 1; f < c.frames; ++f) {
    capture(c, f, 0, c.h, frame.data());
    background(frame.data(), px, model.data(), mask.data());
    auto row_of = [&c](const std::vector<std::uint8_t>& m) { return [&c, &m](long r) { return m.data() + r * c.w; }; };
    dilate(c, 0, c.h, row_of(mask), d1.data());
    dilate(c, 0, c.h, row_of(d1), d2.data());
    dilate(c, 0, c.h, row_of(d2), mask.data());
    for (int q = 0; q < kQuarters; ++q) {
      const long lo = c.quarter_begin(q), hi = c.quarter_begin(q + 1);
      components(c, lo, hi, mask.data() + lo * c.w, labels.data() + lo * c.w, comps[q], prog);
    }
    const Components* const qs[kQuarters] = {comps[0], comps[1], comps[2], comps[3]};
    merge(c, qs, &out.objects, prog);
    track(c, f, out.objects, &out.tracks);
  }
  out.hash = hash_bytes(hash_bytes(0xCBF29CE484222325ull, model.data(), model.size() * sizeof(float)), mask.data(), px);
  return out;
}

void check(const char* prog, const Config& c, const Outcome& got, const Outcome& ref) {
  if (got.hash != ref.hash) fail(prog, "the final models and mask differ from the sequential pipeline's");
  static_assert(sizeof(Object) == 2 * sizeof(double) + sizeof(std::int64_t) + 4 * sizeof(std::int32_t),
                "Object has no padding: memcmp compares values only");
  if (got.objects.count != ref.objects.count ||
      std::memcmp(got.objects.obj, ref.objects.obj, sizeof(Object) * static_cast<std::size_t>(got.objects.count)))
    fail(prog, "the last frame's objects differ from the sequential pipeline's");
  // Field by field: Track has padding, which assignments need not copy.
  bool same = got.tracks.count == ref.tracks.count && got.tracks.next_id == ref.tracks.next_id;
  for (std::int32_t i = 0; same && i < got.tracks.count; ++i) {
    const Track &x = got.tracks.t[i], &y = ref.tracks.t[i];
    same = x.id == y.id && x.born == y.born && x.last == y.last && x.cx == y.cx && x.cy == y.cy;
  }
  if (!same) fail(prog, "the tracks differ from the sequential pipeline's");
  // The scene: every rectangle found, once, where it is, tracked since frame 1.
  const long f = c.frames - 1;
  if (got.objects.count != kObjects)
    fail(prog, "frame " + std::to_string(f) + ": " + std::to_string(got.objects.count) + " objects, the scene has " +
                   std::to_string(kObjects));
  // Frame 0, which starts the background model, is the empty scene.
  for (int o = 0; o < kObjects && f > 0; ++o) {
    long x0, y0;
    object_at(c, o, f, &x0, &y0);
    const double cx = static_cast<double>(x0) + static_cast<double>(c.obj_w() - 1) / 2,
                 cy = static_cast<double>(y0) + static_cast<double>(c.obj_h() - 1) / 2;
    bool seen = false, tracked = false;
    for (std::int32_t i = 0; i < got.objects.count; ++i)
      seen |= std::fabs(got.objects.obj[i].cx - cx) <= 0.5 && std::fabs(got.objects.obj[i].cy - cy) <= 0.5;
    for (std::int32_t i = 0; i < got.tracks.count; ++i) {
      const Track& t = got.tracks.t[i];
      tracked |= t.born == 1 && t.last == f && std::fabs(t.cx - cx) <= 0.5 && std::fabs(t.cy - cy) <= 0.5;
    }
    if (!seen || !tracked)
      fail(prog, "frame " + std::to_string(f) + ": the rectangle centred at (" + std::to_string(cx) + ", " +
                     std::to_string(cy) + ") was " + (seen ? "found but not tracked since frame 1" : "not found"));
  }
}

}  // namespace apps::video
