// The known data-flow program of the trace tests (trace_test.cpp, and
// app/trace_app.cpp for the tests that need a process of their own): two
// producers, then a task reading both. In an unnamed namespace on purpose:
// the tests expect the labels "{anonymous}::Produce" and
// "{anonymous}::Combine" (each including file has its own copy).
#pragma once

#include <atomic>
#include <thread>

#include "canopy/data.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/runtime.hpp"

namespace {

// Waits until all three tasks are submitted, so that Combine depends on
// both producers (and is made ready by the release of the last one).
std::atomic<bool> go{false};
struct Produce {
  canopy::Data out;
  void operator()() const {
    while (!go.load()) std::this_thread::yield();
    static_cast<volatile char*>(canopy::data_ptr(out))[0] = 1;
  }
};
struct Combine {
  canopy::Data a, b, out;
  void operator()() const {
    static_cast<volatile char*>(canopy::data_ptr(out))[0] = static_cast<char>(
        static_cast<char*>(canopy::data_ptr(a))[0] + static_cast<char*>(canopy::data_ptr(b))[0]);
  }
};

// Two producers, then a task reading both; returns when all three ran.
void diamond(canopy::Runtime& rt) {
  go.store(false);
  canopy::Data a = canopy::data_allocate(4096), b = canopy::data_allocate(4096), c = canopy::data_allocate(4096);
  canopy::submit(rt, {canopy::write(a)}, Produce{a});
  canopy::submit(rt, {canopy::write(b)}, Produce{b});
  canopy::submit(rt, {canopy::read(a), canopy::read(b), canopy::write(c)}, Combine{a, b, c});
  go.store(true);
  canopy::wait_all(rt);
  canopy::data_free(a);
  canopy::data_free(b);
  canopy::data_free(c);
}

}  // namespace
