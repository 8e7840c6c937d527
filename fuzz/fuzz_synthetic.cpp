// libFuzzer target: the bytes as an hwloc synthetic topology description.
// Topology::from_synthetic must either build a topology or throw
// canopy::Error; a crash, another exception or a sanitizer report is a
// finding. A topology that loads is walked a little to check it is usable.
//
// hwloc's synthetic loader takes time quadratic in the number of PUs (0.4 s
// for 4096, 7 s for 16384, minutes beyond), so descriptions that may hold
// more than kFuzzMaxPUs are skipped: they would only test hwloc's patience
// and turn every run into a timeout. The estimate is deliberately generous
// (the product of every number outside (...) and [...], also catching the
// bare-arity syntax "2 4 2"), so nothing smaller is skipped.
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "canopy/error.hpp"
#include "canopy/topology.hpp"

namespace {

constexpr double kFuzzMaxPUs = 1024;

double pu_bound(const std::string& desc) {
  double product = 1;
  int depth = 0;  // inside (...) or [...]
  for (std::size_t k = 0; k < desc.size(); ++k) {
    char c = desc[k];
    if (c == '(' || c == '[') ++depth;
    if ((c == ')' || c == ']') && depth > 0) --depth;
    if (depth > 0 || !std::isdigit(static_cast<unsigned char>(c))) continue;
    double v = 0;
    for (; k < desc.size() && std::isdigit(static_cast<unsigned char>(desc[k])); ++k) v = v * 10 + (desc[k] - '0');
    --k;
    product *= v < 1 ? 1 : v;
  }
  return product;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string desc(reinterpret_cast<const char*>(data), size);
  if (pu_bound(desc) > kFuzzMaxPUs) return 0;
  try {
    canopy::Topology t = canopy::Topology::from_synthetic(desc);
    if (t.num_pus() < 1 || t.num_pus() > canopy::kMaxPUs) {
      std::fprintf(stderr, "fuzz_synthetic: %d PUs\n", t.num_pus());
      std::abort();
    }
    (void)t.distance(0, t.num_pus() - 1);
  } catch (const canopy::Error&) {
  }
  return 0;
}
