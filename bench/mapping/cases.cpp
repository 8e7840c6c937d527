// Reading the benchmark's case manifest (see cases.hpp and gen_cases.py).
#include "cases.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "canopy/error.hpp"

namespace canopy::bench {

std::vector<std::string> default_regimes(int tasks, int pus) {
  if (tasks < pus) return {"spread", "packed"};
  return {tasks == pus ? "full" : "over"};
}

void check_regime(const std::string& regime) {
  if (regime != "full" && regime != "over" && regime != "spread" && regime != "packed")
    throw Error(fmt::format("regime '{}': expected full, over, spread or packed", regime));
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    std::string item = s.substr(start, comma - start);
    if (!item.empty()) out.push_back(item);
    start = comma + 1;
  }
  return out;
}

std::vector<Case> read_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("manifest '{}': cannot open it", path));
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("manifest '{}': not valid JSON ({})", path, e.what()));
  }
  if (!j.is_object() || !j.contains("cases") || !j["cases"].is_array())
    throw Error(fmt::format("manifest '{}': expected an object with a \"cases\" array", path));
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  std::vector<Case> cases;
  size_t index = 0;
  for (const auto& e : j["cases"]) {
    auto where = [&] { return fmt::format("manifest '{}', case {}", path, index); };
    try {
      Case c;
      c.name = e.at("name").get<std::string>();
      std::filesystem::path m = e.at("matrix").get<std::string>();
      c.matrix = (m.is_absolute() ? m : dir / m).string();
      c.topology = e.at("topology").get<std::string>();
      c.machine = e.value("machine", "");
      c.family = e.value("family", "");
      c.tasks = e.value("tasks", 0);
      if (e.contains("regimes"))
        for (const auto& r : e["regimes"]) {
          c.regimes.push_back(r.get<std::string>());
          check_regime(c.regimes.back());
        }
      cases.push_back(std::move(c));
    } catch (const nlohmann::json::exception& ex) {
      throw Error(fmt::format("{}: {} (expected name, matrix and topology strings)", where(), ex.what()));
    } catch (const Error& ex) {
      throw Error(fmt::format("{}: {}", where(), ex.what()));
    }
    ++index;
  }
  return cases;
}

}  // namespace canopy::bench
