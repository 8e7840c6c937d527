// omp_target_* on a machine without offload devices: the only device is the
// host (the initial device, number omp_get_num_devices() = 0), so device
// memory is host memory.
#include <cstdlib>
#include <cstring>
#include <cerrno>

#include "../core/runtime.hpp"
#include "../gomp/abi.hpp"

namespace {
bool is_host(int device) { return device == 0; }  // omp_get_initial_device() and the default device

// Copies a `dims`-dimensional sub-volume, innermost dimension contiguous.
void copy_rect(char* dst, const char* src, std::size_t elem, int dims, const std::size_t* volume,
               const std::size_t* dst_off, const std::size_t* src_off, const std::size_t* dst_dims,
               const std::size_t* src_dims) {
  if (dims == 1) {
    std::memcpy(dst + dst_off[0] * elem, src + src_off[0] * elem, volume[0] * elem);
    return;
  }
  std::size_t dst_stride = elem, src_stride = elem;
  for (int d = 1; d < dims; ++d) {
    dst_stride *= dst_dims[d];
    src_stride *= src_dims[d];
  }
  for (std::size_t i = 0; i < volume[0]; ++i)
    copy_rect(dst + (dst_off[0] + i) * dst_stride, src + (src_off[0] + i) * src_stride, elem, dims - 1, volume + 1,
              dst_off + 1, src_off + 1, dst_dims + 1, src_dims + 1);
}
}  // namespace

extern "C" {
CANOPY_GOMP void* omp_target_alloc(std::size_t size, int device) { return is_host(device) ? std::malloc(size) : nullptr; }
CANOPY_GOMP void omp_target_free(void* p, int device) {
  if (is_host(device)) std::free(p);
}
CANOPY_GOMP int omp_target_is_present(const void*, int device) { return is_host(device); }
CANOPY_GOMP int omp_target_memcpy(void* dst, const void* src, std::size_t length, std::size_t dst_off,
                                  std::size_t src_off, int dst_dev, int src_dev) {
  if (!is_host(dst_dev) || !is_host(src_dev)) return EINVAL;
  std::memmove(static_cast<char*>(dst) + dst_off, static_cast<const char*>(src) + src_off, length);
  return 0;
}
CANOPY_GOMP int omp_target_memcpy_rect(void* dst, const void* src, std::size_t elem, int dims, const std::size_t* volume,
                                       const std::size_t* dst_off, const std::size_t* src_off,
                                       const std::size_t* dst_dims, const std::size_t* src_dims, int dst_dev,
                                       int src_dev) {
  if (!dst && !src) return 3;  // the query form: the largest number of dimensions supported
  if (!is_host(dst_dev) || !is_host(src_dev) || dims < 1) return EINVAL;
  copy_rect(static_cast<char*>(dst), static_cast<const char*>(src), elem, dims, volume, dst_off, src_off, dst_dims,
            src_dims);
  return 0;
}
// Associating host memory with "device" memory of the initial device means
// nothing (the host's data are its own); like libgomp, refuse it with EINVAL.
// Returning 0 made programs (GCC's target-12) treat the two buffers as one
// mapped object and check copies through it that cannot hold.
CANOPY_GOMP int omp_target_associate_ptr(const void*, const void*, std::size_t, std::size_t, int) { return EINVAL; }
CANOPY_GOMP int omp_target_disassociate_ptr(const void*, int) { return EINVAL; }
}
