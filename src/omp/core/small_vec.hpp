// A vector of trivially copyable values that keeps its first N in place
// and allocates only beyond them: the dependence nodes' successor and
// address lists (usually one or two entries) and a new task's depend items
// cost no malloc of their own.
// Not copyable or movable (its data may point into itself).
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

namespace canopy::omp {

[[noreturn]] void fatal(const char* fmt, ...);  // runtime.hpp

template <class T, std::uint32_t N>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T> && N > 0);

 public:
  SmallVec() = default;
  SmallVec(const SmallVec&) = delete;
  SmallVec& operator=(const SmallVec&) = delete;
  ~SmallVec() {
    if (data_ != inline_) std::free(data_);
  }
  void push_back(T v) {
    if (size_ == capacity_) grow();
    data_[size_++] = v;
  }
  void clear() { size_ = 0; }
  bool empty() const { return size_ == 0; }
  std::uint32_t size() const { return size_; }
  T& operator[](std::uint32_t i) { return data_[i]; }
  const T& operator[](std::uint32_t i) const { return data_[i]; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  bool contains(const T& v) const {
    for (const T& x : *this)
      if (x == v) return true;
    return false;
  }

 private:
  void grow() {
    const std::uint32_t capacity = capacity_ * 2;
    auto* p = static_cast<T*>(std::malloc(sizeof(T) * capacity));
    if (!p) fatal("cannot allocate %zu bytes for a task's dependences", sizeof(T) * capacity);
    std::memcpy(static_cast<void*>(p), data_, sizeof(T) * size_);
    if (data_ != inline_) std::free(data_);
    data_ = p;
    capacity_ = capacity;
  }

  T* data_ = inline_;
  std::uint32_t size_ = 0, capacity_ = N;
  T inline_[N];
};

}  // namespace canopy::omp
