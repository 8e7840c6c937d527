// RuntimeOptions from the CANOPY_* environment variables. Every variable is
// validated: a bad value throws canopy::Error naming the variable, its value
// and what is expected (as OpenMP runtimes should, and often do not).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <optional>

#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/runtime.hpp"
#include "runtime/env.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;  // unset or empty: the default
  return std::string(v);
}

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

namespace detail {
bool parse_env_bool(const char* var, const std::string& value) {
  const std::string v = lower(trimmed(value));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  throw Error(fmt::format("{}='{}': expected 1, 0, true, false, yes, no, on or off", var, value));
}
}  // namespace detail

using detail::parse_env_bool;

BindMode parse_bind_mode(const std::string& s) {
  const std::string v = lower(trimmed(s));
  if (v == "core") return BindMode::Core;
  if (v == "pu") return BindMode::PU;
  if (v == "none") return BindMode::None;
  throw Error(fmt::format("bind mode '{}': expected core, pu or none", s));
}

std::string to_string(BindMode m) {
  switch (m) {
    case BindMode::Core: return "core";
    case BindMode::PU: return "pu";
    case BindMode::None: return "none";
  }
  return "?";
}

DataAffinity parse_data_affinity(const std::string& s) {
  const std::string v = lower(trimmed(s));
  if (v == "write") return DataAffinity::Write;
  if (v == "read") return DataAffinity::Read;
  if (v == "none") return DataAffinity::None;
  throw Error(fmt::format("data affinity '{}': expected write, read or none", s));
}

std::string to_string(DataAffinity a) {
  switch (a) {
    case DataAffinity::Write: return "write";
    case DataAffinity::Read: return "read";
    case DataAffinity::None: return "none";
  }
  return "?";
}

AutoAffinity parse_auto_affinity(const std::string& s) {
  const std::string v = lower(trimmed(s));
  if (v == "none") return AutoAffinity::None;
  if (v == "auto") return AutoAffinity::Auto;
  throw Error(fmt::format("automatic affinity '{}': expected auto or none", s));
}

std::string to_string(AutoAffinity a) { return a == AutoAffinity::Auto ? "auto" : "none"; }

RuntimeOptions RuntimeOptions::from_env() {
  RuntimeOptions o;
  if (auto v = env("CANOPY_NUM_THREADS")) {
    const std::string t = trimmed(*v);
    int n = 0;
    auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
    if (ec != std::errc() || end != t.data() + t.size() || n < 1 || n > detail::kMaxWorkers)
      throw Error(fmt::format("CANOPY_NUM_THREADS='{}': expected a whole number of workers from 1 to {}", *v,
                              detail::kMaxWorkers));
    o.num_threads = n;
  }
  if (auto v = env("CANOPY_BIND")) {
    try {
      o.bind = parse_bind_mode(*v);
    } catch (const Error&) {
      throw Error(fmt::format("CANOPY_BIND='{}': expected core, pu or none", *v));
    }
  }
  if (auto v = env("CANOPY_POLICY")) {
    const std::string name = trimmed(*v);
    try {
      find_policy(name);
    } catch (const Error& e) {
      throw Error(fmt::format("CANOPY_POLICY='{}': {}", *v, e.what()));
    }
    o.policy = name;
  }
  if (auto v = env("CANOPY_DISPLAY_AFFINITY")) o.display_affinity = parse_env_bool("CANOPY_DISPLAY_AFFINITY", *v);
  if (auto v = env("CANOPY_STATS")) o.stats = parse_env_bool("CANOPY_STATS", *v);
  if (auto v = env("CANOPY_DATA_AFFINITY")) {
    try {
      o.data_affinity = parse_data_affinity(*v);
    } catch (const Error&) {
      throw Error(fmt::format("CANOPY_DATA_AFFINITY='{}': expected write, read or none", *v));
    }
  }
  if (auto v = env("CANOPY_AFFINITY")) {
    try {
      o.affinity = parse_auto_affinity(*v);
    } catch (const Error&) {
      throw Error(fmt::format("CANOPY_AFFINITY='{}': expected auto or none", *v));
    }
  }
  if (auto v = env("CANOPY_AFFINITY_DUMP")) o.affinity_dump = *v;  // checked when written (a clear error then)
  return o;
}

}  // namespace canopy
