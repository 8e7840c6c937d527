// The C API of tracing (canopy_runtime.h: canopy_trace_start / _stop) over
// canopy/trace.hpp.
#include <fmt/format.h>

#include <string>

#include "canopy/trace.hpp"
#include "canopy_runtime.h"
#include "capi/capi.hpp"

using namespace canopy;
using namespace canopy::capi;

extern "C" {

canopy_status_t canopy_trace_start(const char* path, const char* format, const char* events) {
  return guard("canopy_trace_start", CANOPY_EINVAL, [&] {
    TraceOptions o;
    if (format) {
      const std::string f = format;
      if (f == "json")
        o.format = TraceFormat::Json;
      else if (f == "otf2")
        o.format = TraceFormat::Otf2;
      else
        throw Error(fmt::format("format '{}': expected json, otf2 or NULL", f), ErrorKind::BadInput);
    }
    if (events) o.events = events;
    need(path, "path");
    trace_start(path, o);
  });
}

canopy_status_t canopy_trace_stop(uint64_t* events, uint64_t* lost) {
  return guard("canopy_trace_stop", CANOPY_EINVAL, [&] {
    const TraceResult r = trace_stop();
    if (events) *events = r.events;
    if (lost) *lost = r.lost;
  });
}

}  // extern "C"
