// The parts of the C API every other file uses: the status table and
// canopy_strerror(), the thread-local last error, the version queries, and
// the helpers behind the buffer and flag conventions of canopy.h.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "capi/capi.hpp"

namespace {

// One message per thread: a C caller reads it right after the failing call,
// on the same thread, with no lock. Room for "function: " and the message.
constexpr int kFunctionNameMax = 100;
thread_local char g_last_error[kFunctionNameMax + 2 + canopy::capi::kMessageSize] = "";

#define CANOPY_STR2(x) #x
#define CANOPY_STR(x) CANOPY_STR2(x)

}  // namespace

namespace canopy::capi {

void record(const char* fn, const Outcome& o) noexcept {
  if (o.status == CANOPY_OK)
    g_last_error[0] = '\0';
  else
    std::snprintf(g_last_error, sizeof g_last_error, "%.*s: %s", kFunctionNameMax, fn, o.message);
}

void check_flags(unsigned flags, unsigned allowed) {
  if (flags & ~allowed)
    fail(CANOPY_EINVAL, fmt::format("unknown flag bits {:#x} in flags {:#x} (allowed: {:#x})", flags & ~allowed,
                                    flags, allowed));
}

void copy_string(const std::string& s, char* buf, std::size_t size, std::size_t* needed) {
  const std::size_t need = s.size() + 1;
  if (needed) *needed = need;
  if (!buf) {
    if (size != 0) fail(CANOPY_EINVAL, fmt::format("buf is NULL but size is {}", size));
    return;  // a size query
  }
  if (size >= need) {
    std::memcpy(buf, s.data(), need);
    return;
  }
  if (size > 0) {
    std::memcpy(buf, s.data(), size - 1);
    buf[size - 1] = '\0';
  }
  fail(CANOPY_ENOBUFS, fmt::format("buffer of {} bytes is too small: {} needed", size, need));
}

void apply_flags(unsigned flags, bool& pack, Granularity& granularity, Helpers& helpers) {
  check_flags(flags, CANOPY_MAP_ALL_FLAGS);
  pack = flags & CANOPY_MAP_PACK;
  granularity = (flags & CANOPY_MAP_GRANULARITY_CORE) ? Granularity::Core : Granularity::PU;
  helpers = (flags & CANOPY_MAP_HELPERS_SMT) ? Helpers::SMT : Helpers::None;
}

std::vector<int> binding_os(const canopy_placement& pl, int task) {
  std::vector<int> os;
  for (int pu : pl.p.binding(pl.topo, task)) os.push_back(pl.topo.pu(pu).os_index);
  return os;
}

void check_index(int i, int n, const char* what) {
  if (i < 0 || i >= n) fail(CANOPY_ERANGE, fmt::format("{} {} is outside [0, {})", what, i, n));
}

}  // namespace canopy::capi

extern "C" {

unsigned canopy_version(void) { return CANOPY_VERSION; }

const char* canopy_version_string(void) {
  return CANOPY_STR(CANOPY_VERSION_MAJOR) "." CANOPY_STR(CANOPY_VERSION_MINOR) "." CANOPY_STR(CANOPY_VERSION_PATCH);
}

const char* canopy_strerror(canopy_status_t status) {
  switch (status) {
    case CANOPY_OK: return "success";
    case CANOPY_EINVAL: return "invalid argument";
    case CANOPY_ENOMEM: return "out of memory";
    case CANOPY_EIO: return "input/output error";
    case CANOPY_EPARSE: return "malformed input";
    case CANOPY_ERANGE: return "index or size out of range";
    case CANOPY_ENOBUFS: return "buffer too small";
    case CANOPY_ENOSYS: return "not supported";
    case CANOPY_ESYSTEM: return "the operating system or hwloc refused";
    case CANOPY_EUNKNOWN: return "unexpected internal error";
    case CANOPY_STATUS_MAX_ENUM_: break;
  }
  return "unknown status";
}

const char* canopy_last_error(void) { return g_last_error; }

}  // extern "C"
