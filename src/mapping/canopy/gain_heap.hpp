// An indexed binary max-heap of vertices keyed by gain, for the
// Fiduccia-Mattheyses passes. Gains are communication volumes (doubles), so
// the classic integer gain buckets do not apply; a heap with decrease/increase
// key gives the same O(log n) per move. Equal gains are ordered by a per-vertex
// hash of a seed, not by vertex number, so that the order of task ids does
// not steer the search.
#pragma once
#include <cstdint>
#include <vector>

namespace canopy::cmap {

class GainHeap {
 public:
  // Empties the heap for vertices 0..n-1. O(items left), not O(n), once the
  // position array has grown: the bisection calls this thousands of times on
  // small graphs.
  void reset(int n, std::uint64_t seed) {
    for (const Item& it : heap_) pos_[it.v] = -1;
    heap_.clear();
    if (static_cast<int>(pos_.size()) < n) pos_.resize(n, -1);
    seed_ = seed;
  }
  bool empty() const { return heap_.empty(); }
  bool contains(int v) const { return pos_[v] >= 0; }
  int top() const { return heap_[0].v; }
  double top_key() const { return heap_[0].key; }
  double key(int v) const { return heap_[pos_[v]].key; }

  void push(int v, double key) {
    heap_.push_back({key, tie(v), v});
    pos_[v] = static_cast<int>(heap_.size()) - 1;
    up(pos_[v]);
  }
  // Bulk insertion: append with push_unordered(), then heapify() once,
  // O(n) instead of O(n log n) when a pass starts with every boundary vertex.
  void push_unordered(int v, double key) {
    heap_.push_back({key, tie(v), v});
    pos_[v] = static_cast<int>(heap_.size()) - 1;
  }
  void heapify() {
    for (int i = static_cast<int>(heap_.size()) / 2 - 1; i >= 0; --i) down(i);
  }
  void update(int v, double key) {
    int i = pos_[v];
    double old = heap_[i].key;
    heap_[i].key = key;
    if (key > old) up(i);
    else down(i);
  }
  void remove(int v) {
    int i = pos_[v];
    pos_[v] = -1;
    Item last = heap_.back();
    heap_.pop_back();
    if (i == static_cast<int>(heap_.size())) return;
    heap_[i] = last;
    pos_[last.v] = i;
    up(i);
    down(pos_[last.v]);
  }

 private:
  struct Item {
    double key;
    std::uint32_t tie;
    int v;
  };
  std::uint32_t tie(int v) const {
    std::uint64_t z = seed_ + 0x9e3779b97f4a7c15ULL * (static_cast<std::uint64_t>(v) + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<std::uint32_t>(z ^ (z >> 31));
  }
  static bool before(const Item& a, const Item& b) { return a.key > b.key || (a.key == b.key && a.tie > b.tie); }
  void up(int i) {
    Item it = heap_[i];
    while (i > 0) {
      int p = (i - 1) / 2;
      if (!before(it, heap_[p])) break;
      heap_[i] = heap_[p];
      pos_[heap_[i].v] = i;
      i = p;
    }
    heap_[i] = it;
    pos_[it.v] = i;
  }
  void down(int i) {
    const int n = static_cast<int>(heap_.size());
    Item it = heap_[i];
    for (;;) {
      int c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && before(heap_[c + 1], heap_[c])) ++c;
      if (!before(heap_[c], it)) break;
      heap_[i] = heap_[c];
      pos_[heap_[i].v] = i;
      i = c;
    }
    heap_[i] = it;
    pos_[it.v] = i;
  }

  std::vector<Item> heap_;
  std::vector<int> pos_;
  std::uint64_t seed_ = 0;
};

}  // namespace canopy::cmap
