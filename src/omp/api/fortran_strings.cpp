// Fortran forms of the routines that take strings or allocator handles:
// gfortran passes CHARACTER lengths as hidden trailing size_t arguments and
// pads results with blanks.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "../gomp/abi.hpp"

extern "C" {
void omp_set_affinity_format(const char*);
std::size_t omp_get_affinity_format(char*, std::size_t);
void omp_display_affinity(const char*);
std::size_t omp_capture_affinity(char*, std::size_t, const char*);
std::uintptr_t omp_init_allocator(std::uintptr_t, int, const void*);
void omp_destroy_allocator(std::uintptr_t);
void omp_set_default_allocator(std::uintptr_t);
std::uintptr_t omp_get_default_allocator();
}

namespace {
std::string trimmed(const char* s, std::size_t len) {
  std::string out(s, len);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}
void blank_pad(char* buf, std::size_t len, const std::string& s) {
  std::size_t n = std::min(len, s.size());
  std::memcpy(buf, s.data(), n);
  std::memset(buf + n, ' ', len - n);
}
}  // namespace

extern "C" {
CANOPY_GOMP void omp_set_affinity_format_(const char* f, std::size_t len) { omp_set_affinity_format(trimmed(f, len).c_str()); }
CANOPY_GOMP std::int32_t omp_get_affinity_format_(char* buf, std::size_t len) {
  std::string s(omp_get_affinity_format(nullptr, 0) + 1, '\0');
  omp_get_affinity_format(s.data(), s.size());
  s.pop_back();
  blank_pad(buf, len, s);
  return static_cast<std::int32_t>(s.size());
}
CANOPY_GOMP void omp_display_affinity_(const char* f, std::size_t len) { omp_display_affinity(trimmed(f, len).c_str()); }
CANOPY_GOMP std::int32_t omp_capture_affinity_(char* buf, const char* f, std::size_t buflen, std::size_t flen) {
  std::string fmt = trimmed(f, flen);
  std::string s(omp_capture_affinity(nullptr, 0, fmt.c_str()) + 1, '\0');
  omp_capture_affinity(s.data(), s.size(), fmt.c_str());
  s.pop_back();
  blank_pad(buf, buflen, s);
  return static_cast<std::int32_t>(s.size());
}
CANOPY_GOMP std::intptr_t omp_init_allocator_(const std::intptr_t* memspace, const std::int32_t* ntraits, const void* traits) {
  return static_cast<std::intptr_t>(omp_init_allocator(static_cast<std::uintptr_t>(*memspace), *ntraits, traits));
}
CANOPY_GOMP std::intptr_t omp_init_allocator_8_(const std::intptr_t* memspace, const std::int64_t* ntraits, const void* traits) {
  return static_cast<std::intptr_t>(omp_init_allocator(static_cast<std::uintptr_t>(*memspace), static_cast<int>(*ntraits), traits));
}
CANOPY_GOMP void omp_destroy_allocator_(const std::intptr_t* a) { omp_destroy_allocator(static_cast<std::uintptr_t>(*a)); }
CANOPY_GOMP void omp_set_default_allocator_(const std::intptr_t* a) { omp_set_default_allocator(static_cast<std::uintptr_t>(*a)); }
CANOPY_GOMP std::intptr_t omp_get_default_allocator_() { return static_cast<std::intptr_t>(omp_get_default_allocator()); }
}
