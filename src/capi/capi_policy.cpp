// C API: the policy registry (names and descriptions of the mapping
// policies the C++ API and the CLI use too).
#include <mutex>
#include <set>

#include <fmt/format.h>

#include "canopy/mapping.hpp"
#include "capi/capi.hpp"

using namespace canopy;
using namespace canopy::capi;

namespace {

// canopy.h promises names valid for the life of the process, but the
// registry may grow (register_policy) and move its strings. Interned
// copies live in a set whose nodes never move.
const char* intern(const std::string& s) {
  static std::mutex mutex;
  static std::set<std::string> strings;
  std::lock_guard<std::mutex> lock(mutex);
  return strings.insert(s).first->c_str();
}

}  // namespace

extern "C" {

canopy_status_t canopy_policy_count(size_t* count) {
  return guard("canopy_policy_count", CANOPY_EINVAL, [&] { need(count, "count") = policies().size(); });
}

canopy_status_t canopy_policy_get(size_t index, const char** name, const char** description) {
  return guard("canopy_policy_get", CANOPY_EINVAL, [&] {
    if (!name && !description) fail(CANOPY_EINVAL, "name and description are both NULL");
    const auto& all = policies();
    if (index >= all.size())
      fail(CANOPY_ERANGE, fmt::format("policy index {} is outside [0, {})", index, all.size()));
    if (name) *name = intern(all[index].name);
    if (description) *description = intern(all[index].description);
  });
}

canopy_status_t canopy_policy_default(const char** name) {
  return guard("canopy_policy_default", CANOPY_EINVAL, [&] { need(name, "name") = intern(default_policy()); });
}

}  // extern "C"
