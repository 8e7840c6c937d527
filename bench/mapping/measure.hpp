// Measuring one mapper run in the benchmark: wall and CPU clocks, the median
// of repeated runs, the peak resident memory a run adds (Linux: reset the
// high-water mark through /proc/self/clear_refs, read VmHWM after), and a
// watchdog that ends the process when a run exceeds its time limit (so that
// one slow mapper does not block the suite; run.py reruns what is left).
#pragma once
#include <string>
#include <vector>

namespace canopy::bench {

double wall_seconds();     // steady clock
double process_cpu_seconds();  // CPU time of all threads of this process
double median(std::vector<double> v);

// Peak RSS added by what runs between start() and delta_kb().
class PeakRss {
 public:
  void start();
  // Kilobytes above the resident size at start(); -1 when the kernel does not
  // let us reset the high-water mark (then the figure would be meaningless).
  long delta_kb() const;

 private:
  long baseline_kb_ = -1;
  bool reset_ok_ = false;
};

// Reads a "Vm...:  N kB" field of /proc/self/status; -1 when absent.
long proc_status_kb(const char* field);

// Writes `message` to stdout and ends the process with exit status 3 unless
// destroyed within `seconds` (<= 0: never fires). A real-time interval timer
// and SIGALRM, not a thread: nothing runs beside the timed mapper. One
// watchdog at a time.
class Watchdog {
 public:
  Watchdog(double seconds, std::string message);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  bool armed_ = false;
};

}  // namespace canopy::bench
