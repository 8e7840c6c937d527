// A runtime's counters and energy: opened on demand, read for CANOPY_STATS
// and traces (run_counters.hpp).
#include "counters/run_counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <map>

#include "runtime/runtime_core.hpp"

namespace canopy::counters {

namespace {
std::atomic<const Probe*> g_probe{nullptr};
}

void set_test_probe(const Probe* probe) { g_probe.store(probe, std::memory_order_release); }

const Probe& current_probe() {
  static const Probe real;
  const Probe* p = g_probe.load(std::memory_order_acquire);
  return p ? *p : real;
}

std::vector<std::pair<std::string, std::string>> missing_counters(const std::vector<ThreadCounters*>& threads,
                                                                  unsigned asked) {
  // reason -> counters, in counter order, each counter once per reason.
  std::vector<std::pair<std::string, std::string>> out;
  std::map<std::string, std::size_t> index;
  std::map<std::string, std::uint32_t> listed;
  for (int c = 0; c < kNumCounters; ++c) {
    if (!(asked & (c < kNumOsCounters ? kSetOs : kSetHardware))) continue;
    for (ThreadCounters* t : threads) {
      if (!t) continue;
      const std::string why = t->why_missing(c);
      if (why.empty() || (listed[why] >> c & 1u)) continue;
      listed[why] |= 1u << c;
      auto [it, added] = index.emplace(why, out.size());
      if (added) out.emplace_back("", why);
      std::string& names = out[it->second].first;
      names += fmt::format("{}{}", names.empty() ? "" : ", ", counter_name(c));
    }
  }
  return out;
}

std::vector<std::string> fallback_notes(const std::vector<ThreadCounters*>& threads) {
  std::vector<std::string> out;
  for (ThreadCounters* t : threads) {
    if (!t) continue;
    std::string n = t->fallback_note();
    if (!n.empty() && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(std::move(n));
  }
  return out;
}

std::string column_name(int c, const std::vector<ThreadCounters*>& threads) {
  for (ThreadCounters* t : threads)
    if (t && t->user_only(c)) return std::string(counter_name(c)) + ":u";
  return counter_name(c);
}

}  // namespace canopy::counters

namespace canopy::detail {

counters::RunCounters* open_run_counters(RuntimeCore* rt, bool energy) {
  std::lock_guard<std::mutex> lock(rt->counters_mutex);
  if (!rt->workers_known) return nullptr;  // the constructor opens them once its threads run
  if (counters::RunCounters* c = rt->counters.load(std::memory_order_acquire)) {
    if (energy && !c->energy_on && (c->sets & counters::kSetEnergy)) {
      c->energy_on = true;
      c->energy_start = std::chrono::steady_clock::now();
      c->energy.start(counters::current_probe().sysfs_root);
    }
    return c;
  }
  auto run = std::make_unique<counters::RunCounters>();
  run->sets = rt->counter_sets;
  const counters::Probe& probe = counters::current_probe();
  for (int i = 0; i < rt->num_workers; ++i) {
    const pid_t tid = rt->worker_tids.empty() ? 0 : rt->worker_tids[i];
    if (tid == 0 || !(run->sets & (counters::kSetOs | counters::kSetHardware))) {
      run->workers.emplace_back();
      continue;
    }
    auto t = std::make_unique<counters::ThreadCounters>();
    t->open(tid, run->sets, probe);
    run->workers.push_back(std::move(t));
  }
  if (energy && (run->sets & counters::kSetEnergy)) {
    run->energy_on = true;
    run->energy_start = std::chrono::steady_clock::now();
    run->energy.start(probe.sysfs_root);
  }
  rt->counters_owner = std::move(run);
  rt->counters.store(rt->counters_owner.get(), std::memory_order_release);
  return rt->counters_owner.get();
}

void finish_worker_counters(Worker* w) {
  RuntimeCore* rt = w->rt;
  std::lock_guard<std::mutex> lock(rt->counters_mutex);
  counters::RunCounters* c = rt->counters.load(std::memory_order_acquire);
  if (c && w->index < static_cast<int>(c->workers.size()) && c->workers[w->index]) c->workers[w->index]->finish();
}

counters::Sample worker_counters(RuntimeCore* rt, int i) {
  counters::RunCounters* c = rt->counters.load(std::memory_order_acquire);
  if (!c || i < 0 || i >= static_cast<int>(c->workers.size()) || !c->workers[i]) return {};
  return c->workers[i]->read();
}

void print_run_counters(RuntimeCore* rt, std::ostream& out) {
  counters::RunCounters* run = rt->counters.load(std::memory_order_acquire);
  if (!run) return;
  std::vector<counters::ThreadCounters*> threads;
  for (auto& t : run->workers) threads.push_back(t.get());
  std::vector<counters::Sample> samples;
  std::uint32_t any = 0;
  for (counters::ThreadCounters* t : threads) {
    samples.push_back(t ? t->read() : counters::Sample{});
    any |= samples.back().have;
  }
  if (any != 0) {
    out << "canopy stats: counters per worker, since the runtime started (worker 0: the thread that made it)\n";
    std::string header = fmt::format("{:>6}", "worker");
    for (int c = 0; c < counters::kNumCounters; ++c)
      if (any >> c & 1u) header += fmt::format(" {:>16}", counters::column_name(c, threads));
    out << header << "\n";
    std::array<std::uint64_t, counters::kNumCounters> total{};
    for (std::size_t i = 0; i < samples.size(); ++i) {
      std::string line = fmt::format("{:>6}", i);
      for (int c = 0; c < counters::kNumCounters; ++c) {
        if (!(any >> c & 1u)) continue;
        line += samples[i].has(c) ? fmt::format(" {:>16}", samples[i].value[c]) : fmt::format(" {:>16}", "-");
        total[c] += samples[i].value[c];
      }
      out << line << "\n";
    }
    std::string line = fmt::format("{:>6}", "total");
    for (int c = 0; c < counters::kNumCounters; ++c)
      if (any >> c & 1u) line += fmt::format(" {:>16}", total[c]);
    out << line << "\n";
  }
  for (const std::string& note : counters::fallback_notes(threads)) out << "canopy stats: counters " << note << "\n";
  for (const auto& [names, why] : counters::missing_counters(threads, run->sets))
    out << "canopy stats: counters " << names << " unavailable: " << why << "\n";
  if (run->energy_on) {
    const std::vector<counters::EnergyReading> e = run->energy.read();
    if (e.empty()) {
      out << "canopy stats: energy unavailable: " << run->energy.why_missing() << "\n";
    } else {
      std::string parts;
      for (const counters::EnergyReading& r : e)
        parts += fmt::format("{}{} {:.3f} J", parts.empty() ? "" : ", ", r.domain, r.joules);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - run->energy_start).count();
      out << fmt::format("canopy stats: energy: {} in {:.3f} s ({}; the whole machine, not only this program)\n", parts,
                         s, run->energy.source());
    }
  }
}

}  // namespace canopy::detail
