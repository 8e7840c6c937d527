// matrix_svg: the communication matrix as a heat map, as in the ORWL and
// BindMe papers: row i from the top, column j from the left, white where
// tasks do not communicate, grey getting darker with the log of the traffic.
// A matrix larger than max_cells is binned: each cell sums a b x b block of
// tasks, so a 100,000-task matrix becomes a few hundred cells and a small
// file. Only non-empty cells are drawn, on one white square, so the file
// grows with the non-empty blocks, never with n².
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"

namespace canopy {
namespace {

// Grey level for a weight: 0 (black) for the largest, 224 for the smallest
// non-zero one, so that the faintest traffic still stands out from white.
int grey(double w, double lo, double hi) {
  if (hi <= lo) return 0;
  double t = (std::log(w) - std::log(lo)) / (std::log(hi) - std::log(lo));
  return static_cast<int>(std::lround(224.0 * (1.0 - std::clamp(t, 0.0, 1.0))));
}

}  // namespace

std::string matrix_svg(const CommMatrix& m, int max_cells) {
  if (max_cells < 1) throw Error(fmt::format("matrix_svg: max_cells {} is not positive, expected at least 1", max_cells));
  const std::int64_t n = m.size();
  const std::int64_t bin = std::max<std::int64_t>(1, (n + max_cells - 1) / max_cells);  // tasks per cell side
  const std::int64_t cells = (n + bin - 1) / bin;

  // Sum each block: sort (cell key, weight) pairs and merge; O(edges) memory.
  std::vector<std::pair<std::int64_t, double>> blocks;
  blocks.reserve(m.cols().size());
  for (int i = 0; i < m.size(); ++i)
    for (std::int64_t k = m.row_begin(i); k < m.row_end(i); ++k)
      blocks.emplace_back((i / bin) * cells + m.cols()[k] / bin, m.weights()[k]);
  std::sort(blocks.begin(), blocks.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::size_t out = 0;
  for (std::size_t k = 0; k < blocks.size();) {
    auto key = blocks[k].first;
    double sum = 0;
    for (; k < blocks.size() && blocks[k].first == key; ++k) sum += blocks[k].second;
    blocks[out++] = {key, sum};
  }
  blocks.resize(out);
  double lo = 0, hi = 0;
  for (const auto& b : blocks) {
    if (lo == 0 || b.second < lo) lo = b.second;
    hi = std::max(hi, b.second);
  }

  // Layout: title band on top, the matrix in a square of about 640 px, a
  // legend strip under it.
  const double side = 640, margin = 20, top = 50;
  const double cell = cells > 0 ? side / static_cast<double>(cells) : side;
  const double width = side + 2 * margin, height = top + side + 60;
  std::string title = fmt::format("communication matrix: {} tasks, {} edges", n, m.num_edges());
  if (bin > 1) title += fmt::format(" ({} x {} tasks per cell)", bin, bin);

  fmt::memory_buffer s;
  auto o = std::back_inserter(s);
  fmt::format_to(o,
                 "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                 "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n"
                 "<title>{2}</title>\n"
                 "<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
                 "<text x=\"{3}\" y=\"30\" font-family=\"sans-serif\" font-size=\"16\">{2}</text>\n",
                 width, height, title, margin);
  fmt::format_to(o, "<g transform=\"translate({} {}) scale({})\" shape-rendering=\"crispEdges\">\n", margin, top, cell);
  for (const auto& [key, w] : blocks) {
    int g = grey(w, lo, hi);
    fmt::format_to(o, "<rect x=\"{}\" y=\"{}\" width=\"1\" height=\"1\" fill=\"#{:02x}{:02x}{:02x}\"/>\n", key % cells,
                   key / cells, g, g, g);
  }
  fmt::format_to(o, "</g>\n<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n",
                 margin, top, side, side);

  // Legend: the grey ramp from the smallest to the largest (binned) weight.
  const double ly = top + side + 15;
  fmt::format_to(o,
                 "<defs><linearGradient id=\"ramp\"><stop offset=\"0\" stop-color=\"#e0e0e0\"/>"
                 "<stop offset=\"1\" stop-color=\"#000000\"/></linearGradient></defs>\n"
                 "<rect x=\"{0}\" y=\"{1}\" width=\"200\" height=\"12\" fill=\"url(#ramp)\" stroke=\"black\"/>\n"
                 "<text x=\"{0}\" y=\"{2}\" font-family=\"sans-serif\" font-size=\"12\">{3:.3g}</text>\n"
                 "<text x=\"{4}\" y=\"{2}\" font-family=\"sans-serif\" font-size=\"12\" "
                 "text-anchor=\"end\">{5:.3g}</text>\n"
                 "<text x=\"{6}\" y=\"{7}\" font-family=\"sans-serif\" font-size=\"12\">log scale{8}; white = no "
                 "traffic</text>\n</svg>\n",
                 margin, ly, ly + 28, lo, margin + 200, hi, margin + 215, ly + 11, bin > 1 ? " of the sum per cell" : "");
  return fmt::to_string(s);
}

}  // namespace canopy
