// OMP_PLACES (OpenMP 5.1 section 6.5) and GOMP_CPU_AFFINITY (libgomp): the
// grammar, then the resolution of the CPU numbers it names against the
// machine canopy sees. Abstract names (threads, cores, ll_caches,
// numa_domains, sockets) come from the topology tree, listed in the order
// libgomp's sysfs walk produces on Linux (by lowest OS CPU number; NUMA
// nodes by number). Explicit
// lists keep libgomp's rules: "!" inside braces removes a CPU after the
// place's other CPUs were added, "!{...}" at the top removes an identical
// earlier place, "place:len:stride" copies a place len times shifting every
// CPU by stride, and CPUs the machine does not have are dropped (places left
// empty go, with one note saying so).
#include "omp/core/places.hpp"

#include <algorithm>
#include <set>

#include "canopy/topology.hpp"
#include "omp/core/env_text.hpp"

namespace canopy::omp::detail {
namespace {

using text::Cursor;

std::string at(const Cursor& c) { return " at position " + std::to_string(c.pos + 1); }

// ---------------------------------------------------------------- abstract names

std::vector<int> os_cpus_of_pus(const Topology& m, int first_pu, int num_pus) {
  std::vector<int> out;
  for (int p = first_pu; p < first_pu + num_pus; ++p) out.push_back(m.pu(p).os_index);
  std::sort(out.begin(), out.end());
  return out;
}

// One place per tree node that holds an object accepted by `is_kind`, in
// tree order (a node never holds two of them: merged objects differ in type).
template <class Pred>
std::vector<Place> places_of_nodes(const Topology& m, Pred is_kind) {
  std::vector<const TopoNode*> found;
  for (const TopoNode& n : m.nodes())
    for (const TopoObject& o : n.objects)
      if (is_kind(o)) {
        found.push_back(&n);
        break;
      }
  std::sort(found.begin(), found.end(), [](const TopoNode* a, const TopoNode* b) {
    return a->first_pu != b->first_pu ? a->first_pu < b->first_pu : a->level < b->level;
  });
  std::vector<Place> out;
  for (const TopoNode* n : found) out.push_back({os_cpus_of_pus(m, n->first_pu, n->num_pus)});
  return out;
}

std::vector<Place> whole_machine(const Topology& m) { return {{os_cpus_of_pus(m, 0, m.num_pus())}}; }

// The cache level of an hwloc type name: "L3" -> 3, "L1d" -> 1; 0 for
// anything else and for instruction caches ("L1i").
int data_cache_level(const std::string& type) {
  if (type.size() < 2 || type[0] != 'L' || type[1] < '1' || type[1] > '9') return 0;
  std::size_t i = 1;
  int level = 0;
  while (i < type.size() && type[i] >= '0' && type[i] <= '9') level = level * 10 + (type[i++] - '0');
  std::string_view rest = std::string_view(type).substr(i);
  if (rest.empty() || rest == "d" || rest == "u" || rest == "Cache" || rest == "dCache" || rest == "uCache")
    return level;
  return 0;
}

// libgomp lists places by their lowest OS CPU number (it walks the CPUs in
// that order); on machines numbered like their tree this is canopy's
// logical order, on others (packages interleaved) it is libgomp's.
void by_first_cpu(std::vector<Place>& places) {
  std::stable_sort(places.begin(), places.end(),
                   [](const Place& a, const Place& b) { return a.os_cpus.front() < b.os_cpus.front(); });
}

std::vector<Place> core_places(const Topology& m) {
  std::vector<Place> out;
  for (const CoreInfo& c : m.cores()) {
    Place pl;
    for (int pu : c.pus) pl.os_cpus.push_back(m.pu(pu).os_index);
    std::sort(pl.os_cpus.begin(), pl.os_cpus.end());
    out.push_back(std::move(pl));
  }
  by_first_cpu(out);
  return out;
}

std::vector<Place> abstract_places(std::string_view name, const Topology& m, std::string& note) {
  std::vector<Place> out;
  if (name == "threads") {  // core by core, as libgomp
    for (const Place& core : core_places(m))
      for (int cpu : core.os_cpus) out.push_back({{cpu}});
    return out;
  }
  if (name == "cores") {
    return core_places(m);
  } else if (name == "numa_domains") {
    // A CPU goes to the first node that has it (libgomp's rule; a KNL's
    // MCDRAM node shares its quadrant's CPUs); nodes left with none, like
    // memory-only ones, make no place.
    std::vector<bool> claimed(static_cast<std::size_t>(m.num_pus()), false);
    std::vector<const NumaInfo*> nodes;  // in OS number order, as sysfs lists them
    for (const NumaInfo& n : m.numa_nodes()) nodes.push_back(&n);
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const NumaInfo* a, const NumaInfo* b) { return a->os_index < b->os_index; });
    for (const NumaInfo* node : nodes) {
      const NumaInfo& n = *node;
      Place pl;
      for (int pu : n.pus)
        if (!claimed[static_cast<std::size_t>(pu)]) {
          claimed[static_cast<std::size_t>(pu)] = true;
          pl.os_cpus.push_back(m.pu(pu).os_index);
        }
      if (pl.os_cpus.empty()) continue;
      std::sort(pl.os_cpus.begin(), pl.os_cpus.end());
      out.push_back(std::move(pl));
    }
    if (out.empty()) out = whole_machine(m);
  } else if (name == "sockets") {
    out = places_of_nodes(m, [](const TopoObject& o) { return o.type == "Package"; });
    if (out.empty()) out = whole_machine(m);  // no package object: one socket
  } else {  // ll_caches
    int last = 0;
    for (const TopoNode& n : m.nodes())
      for (const TopoObject& o : n.objects) last = std::max(last, data_cache_level(o.type));
    if (last > 0) {
      out = places_of_nodes(m, [last](const TopoObject& o) { return data_cache_level(o.type) == last; });
    } else {
      note = "the topology shows no caches; using one place per socket";
      out = places_of_nodes(m, [](const TopoObject& o) { return o.type == "Package"; });
      if (out.empty()) out = whole_machine(m);
    }
  }
  if (name != "numa_domains") by_first_cpu(out);
  return out;
}

// ---------------------------------------------------------------- explicit lists

struct ListParser {
  Cursor c;
  std::string error;
  std::size_t listed = 0;  // CPUs over all places so far (the allocation guard)

  bool fail(std::string why) {
    if (error.empty()) error = std::move(why);
    return false;
  }
  bool count(std::size_t n) {
    listed += n;
    return listed <= kMaxListedCpus || fail("more than " + std::to_string(kMaxListedCpus) + " CPUs listed");
  }
  std::optional<int> cpu() {
    auto v = c.number(static_cast<std::uint64_t>(kMaxCpu) - 1);
    if (!v) {
      fail("expected a CPU number below " + std::to_string(kMaxCpu) + at(c));
      return std::nullopt;
    }
    return static_cast<int>(*v);
  }
  // ":len[:stride]" after a CPU or a place; len in [1, max_len].
  bool len_stride(std::int64_t max_len, std::int64_t& len, std::int64_t& stride) {
    len = 1;
    stride = 1;
    if (!c.eat(':')) return true;
    auto l = c.number(static_cast<std::uint64_t>(max_len));
    if (!l || *l == 0) return fail("expected a length from 1 to " + std::to_string(max_len) + at(c));
    len = static_cast<std::int64_t>(*l);
    if (!c.eat(':')) return true;
    auto s = c.signed_number(kMaxCpu);
    if (!s) return fail("expected a stride" + at(c));
    stride = *s;
    return true;
  }
  static bool in_range(std::int64_t cpu) { return cpu >= 0 && cpu < kMaxCpu; }

  // <place>: "{res-list}" or a bare CPU number; `negated` when "!" precedes.
  bool place(std::vector<int>& cpus, bool& negated) {
    negated = c.eat('!');
    if (!c.eat('{')) {
      auto n = cpu();
      if (!n) return false;
      cpus = {*n};
      return count(1);
    }
    std::vector<int> removed;
    while (true) {
      bool neg = c.eat('!');
      auto n = cpu();
      if (!n) return false;
      std::int64_t len, stride;
      std::size_t before = c.pos;
      if (!len_stride(kMaxCpu, len, stride)) return false;
      if (neg && c.pos != before) return fail("an excluded CPU ('!') takes no length or stride" + at(c));
      if (neg) {
        removed.push_back(*n);
      } else {
        if (!count(static_cast<std::size_t>(len))) return false;
        for (std::int64_t k = 0; k < len; ++k) {
          std::int64_t v = *n + k * stride;
          if (!in_range(v)) return fail("CPU " + std::to_string(v) + " is out of range" + at(c));
          cpus.push_back(static_cast<int>(v));
        }
      }
      if (c.eat('}')) break;
      if (!c.eat(',')) return fail("expected ',' or '}'" + at(c));
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    for (int r : removed) cpus.erase(std::remove(cpus.begin(), cpus.end(), r), cpus.end());
    return true;
  }

  bool list(std::vector<std::vector<int>>& out) {
    while (true) {
      std::vector<int> cpus;
      bool negated = false;
      if (!place(cpus, negated)) return false;
      std::int64_t len, stride;
      std::size_t before = c.pos;
      if (!len_stride(kMaxPlaces, len, stride)) return false;
      if (negated) {
        if (c.pos != before) return fail("an excluded place ('!') takes no length or stride" + at(c));
        auto it = std::find(out.begin(), out.end(), cpus);
        if (it == out.end()) return fail("'!' excludes a place that is not in the list" + at(c));
        out.erase(it);
      } else {
        out.push_back(cpus);
        if (!count(cpus.size() * static_cast<std::size_t>(len - 1))) return false;
        for (std::int64_t k = 1; k < len; ++k) {
          std::vector<int> next;
          for (int v : out.back()) {
            std::int64_t w = v + stride;
            if (!in_range(w)) return fail("CPU " + std::to_string(w) + " is out of range" + at(c));
            next.push_back(static_cast<int>(w));
          }
          std::sort(next.begin(), next.end());  // a negative stride keeps the order, but be sure
          out.push_back(std::move(next));
        }
        if (out.size() > static_cast<std::size_t>(kMaxPlaces))
          return fail("more than " + std::to_string(kMaxPlaces) + " places");
      }
      if (c.done()) return true;
      if (!c.eat(',')) return fail("expected ','" + at(c));
    }
  }
};

// Keeps the CPUs the machine has; drops places left empty. nullopt (and
// `error`) when nothing is left; `note` says what was dropped otherwise.
std::optional<PlacesOutcome> resolve(const std::vector<std::vector<int>>& raw, const Topology& m,
                                     std::string& error) {
  PlacesOutcome r;
  std::set<int> missing;
  int empty = 0;
  for (const auto& cpus : raw) {
    Place pl;
    for (int v : cpus) {
      if (m.pu_by_os_index(v) >= 0) pl.os_cpus.push_back(v);
      else missing.insert(v);
    }
    if (pl.os_cpus.empty()) ++empty;
    else r.places.push_back(std::move(pl));
  }
  std::string missing_text;
  if (!missing.empty())
    missing_text = std::string(missing.size() == 1 ? "CPU " : "CPUs ") +
                   cpu_list_string(std::vector<int>(missing.begin(), missing.end()));
  if (r.places.empty()) {
    error = raw.empty() ? "no place is left after the exclusions"
                        : "no CPU of this machine is listed (" + missing_text + " not on it)";
    return std::nullopt;
  }
  if (!missing.empty()) {
    r.note = missing_text + (missing.size() == 1 ? " is" : " are") + " not on this machine; dropped";
    if (empty > 0)
      r.note += " (" + std::to_string(empty) + (empty == 1 ? " place" : " places") + " left empty, " +
                std::to_string(raw.size()) + " -> " + std::to_string(r.places.size()) + " places)";
  } else if (empty > 0) {
    r.note = std::to_string(empty) + (empty == 1 ? " place is" : " places are") + " empty; dropped";
  }
  return r;
}

const char* kPlacesExpected =
    "expected threads, cores, ll_caches, numa_domains or sockets with an optional (count), or a list of "
    "places such as '{0,1},{2,3}' or '{0:4}:4:4'";

}  // namespace

std::optional<PlacesOutcome> parse_omp_places(std::string_view value, const Topology& machine,
                                              std::string& error) {
  auto expected = [&](const std::string& why) {
    error = std::string(kPlacesExpected) + " (" + why + ")";
    return std::nullopt;
  };
  Cursor c{value};
  if (c.done()) return expected("the value is empty");
  if (std::isalpha(static_cast<unsigned char>(c.peek()))) {
    static const char* names[] = {"threads", "cores", "ll_caches", "numa_domains", "sockets"};
    for (const char* name : names) {
      if (!c.eat_word(name)) continue;
      std::uint64_t count = ~std::uint64_t{0};
      if (!c.done()) {
        if (!c.eat('(')) return expected("expected '(' after '" + std::string(name) + "'" + at(c));
        auto n = c.number(~std::uint64_t{0} >> 1);
        if (!n || *n == 0) return expected("expected a positive count" + at(c));
        count = *n;
        if (!c.eat(')')) return expected("expected ')'" + at(c));
        if (!c.done()) return expected("unexpected text after ')'" + at(c));
      }
      PlacesOutcome r;
      r.places = abstract_places(name, machine, r.note);
      if (r.places.size() > count) r.places.resize(static_cast<std::size_t>(count));
      return r;
    }
    return expected("unknown abstract name");
  }
  ListParser p;
  p.c = c;
  std::vector<std::vector<int>> raw;
  if (!p.list(raw)) return expected(p.error);
  std::string why;
  auto r = resolve(raw, machine, why);
  if (!r) return expected(why);
  return r;
}

std::optional<PlacesOutcome> parse_gomp_cpu_affinity(std::string_view value, const Topology& machine,
                                                     std::string& error) {
  // libgomp: CPU numbers below 65536 (decimal, or hex with 0x), "a-b" and
  // "a-b:stride" ranges, separated by blanks or commas; one place per CPU,
  // in the order written, repeats kept.
  const std::uint64_t max = 65535;
  auto fail = [&](const std::string& why) {
    error = "expected CPU numbers and ranges such as '0 3 1-2 4-15:2' (" + why + ")";
    return std::nullopt;
  };
  Cursor c{value};
  auto num = [&]() -> std::optional<std::uint64_t> {
    c.skip_blanks();
    if (c.s.substr(c.pos).size() > 2 && c.s[c.pos] == '0' && text::lower(c.s[c.pos + 1]) == 'x') {
      std::size_t p = c.pos + 2;
      std::uint64_t v = 0;
      while (p < c.s.size() && std::isxdigit(static_cast<unsigned char>(c.s[p]))) {
        v = v * 16 + static_cast<std::uint64_t>(std::isdigit(static_cast<unsigned char>(c.s[p]))
                                                    ? c.s[p] - '0'
                                                    : text::lower(c.s[p]) - 'a' + 10);
        if (v > max) return std::nullopt;
        ++p;
      }
      if (p == c.pos + 2) return std::nullopt;
      c.pos = p;
      return v;
    }
    return c.number(max);
  };
  if (c.done()) return fail("the value is empty");
  std::vector<std::vector<int>> raw;
  while (true) {
    auto beg = num();
    if (!beg) return fail("expected a CPU number below 65536" + at(c));
    std::uint64_t end = *beg, stride = 1;
    if (c.peek() == '-') {
      ++c.pos;
      auto e = num();
      if (!e || *e < *beg) return fail("expected a range end from " + std::to_string(*beg) + " to 65535" + at(c));
      end = *e;
      if (c.peek() == ':') {
        ++c.pos;
        auto s = num();
        if (!s || *s == 0) return fail("expected a stride from 1 to 65535" + at(c));
        stride = *s;
      }
    }
    for (std::uint64_t v = *beg; v <= end; v += stride) raw.push_back({static_cast<int>(v)});
    if (raw.size() > static_cast<std::size_t>(kMaxPlaces))
      return fail("more than " + std::to_string(kMaxPlaces) + " CPUs listed");
    if (c.done()) break;
    c.eat(',');
    if (c.done()) return fail("expected a CPU number after ','" + at(c));
  }
  std::string why;
  auto r = resolve(raw, machine, why);
  if (!r) return fail(why);
  return r;
}

}  // namespace canopy::omp::detail
