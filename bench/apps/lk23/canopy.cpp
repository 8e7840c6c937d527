// Livermore Kernel 23 with canopy, as a user writes it: a handle per block
// of each copy of za and one for the block's coefficients (data_allocate,
// first touch: the tasks that fill them touch the pages), one data-flow task
// per block and iteration reading the block and its four neighbours of one
// copy and writing the block of the other. Two iterations (za -> copy -> za)
// are recorded once in a canopy::TaskGraph and replayed. No placement code:
// where tasks run and where pages live is the runtime's business
// (CANOPY_AFFINITY, CANOPY_DATA_AFFINITY). --submit: the same tasks through
// canopy::submit, every iteration submitted before one wait_all.
#include <canopy/data.hpp>
#include <canopy/dataflow.hpp>
#include <canopy/runtime.hpp>
#include <canopy/taskgraph.hpp>

#include <vector>

#include "lk23/lk23.hpp"
#include "canopy_app.hpp"

int main(int argc, char** argv) {
  const apps::CanopyArgs args = apps::parse_canopy_args(argc, argv);
  const apps::Args& a = args.common;
  const bool use_submit = args.use_submit;
  const apps::lk23::Config c = apps::lk23::config(a, argv[0]);
  const char* impl = use_submit ? "canopy-submit" : "canopy";
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);

  const long b = c.b;
  const std::size_t bytes = sizeof(double) * c.block_points();
  std::vector<canopy::Data> za[2], coef;
  for (long k = 0; k < b * b; ++k) {
    za[0].push_back(canopy::data_allocate(bytes));
    za[1].push_back(canopy::data_allocate(bytes));
    coef.push_back(canopy::data_allocate(5 * bytes));
  }
  auto ptr = [](canopy::Data d) { return static_cast<double*>(canopy::data_ptr(d)); };

  // Calls add(accesses, body) for every block of iteration t (from za[t % 2]
  // into za[1 - t % 2]).
  auto add_iteration = [&](long t, auto&& add) {
    const std::vector<canopy::Data>& in = za[t % 2];
    const std::vector<canopy::Data>& out = za[1 - t % 2];
    for (long bi = 0; bi < b; ++bi)
      for (long bj = 0; bj < b; ++bj) {
        const long k = bi * b + bj;
        std::vector<canopy::Access> acc = {canopy::read(in[k]), canopy::read(coef[k]), canopy::write(out[k])};
        canopy::Data up{}, down{}, left{}, right{};
        if (bi > 0) acc.push_back(canopy::read(up = in[k - b]));
        if (bi < b - 1) acc.push_back(canopy::read(down = in[k + b]));
        if (bj > 0) acc.push_back(canopy::read(left = in[k - 1]));
        if (bj < b - 1) acc.push_back(canopy::read(right = in[k + 1]));
        add(acc, [&c, &ptr, bi, bj, old = in[k], nw = out[k], cf = coef[k], up, down, left, right] {
          if (apps::locality_enabled())
            for (canopy::Data d : {old, cf, nw, up, down, left, right})
              if (d) apps::record(d);
          auto p = [&ptr](canopy::Data d) -> const double* { return d ? ptr(d) : nullptr; };
          apps::lk23::update_block(c, bi, bj, ptr(old), p(up), p(down), p(left), p(right), ptr(cf), ptr(nw));
        });
      }
  };

  canopy::TaskGraph graph;
  if (!use_submit)
    for (long t = 0; t < 2; ++t)
      add_iteration(t, [&](const std::vector<canopy::Access>& acc, auto&& body) {
        graph.add(std::span<const canopy::Access>(acc), body);
      });

  auto prepare = [&] {
    rt.run([&] {
      for (long bi = 0; bi < b; ++bi)
        for (long bj = 0; bj < b; ++bj) {
          const long k = bi * b + bj;
          canopy::submit({canopy::write(za[0][k]), canopy::write(za[1][k]), canopy::write(coef[k])}, [&, bi, bj, k] {
            apps::lk23::init_block(c, bi, bj, ptr(za[0][k]), ptr(coef[k]));
            std::memcpy(ptr(za[1][k]), ptr(za[0][k]), bytes);
          });
        }
      canopy::wait_all();
    });
  };
  auto timed = [&] {
    if (use_submit) {
      rt.run([&] {
        for (long t = 0; t < c.iterations; ++t) {
          if (a.locality && t == c.iterations - 2) {
            canopy::wait_all();  // log the last two iterations only
            apps::locality_enable(true);
          }
          add_iteration(t, [](const std::vector<canopy::Access>& acc, auto&& body) {
            canopy::submit(std::span<const canopy::Access>(acc), body);
          });
        }
        canopy::wait_all();
      });
    } else {
      for (long t = 0; t < c.iterations; t += 2) {
        if (a.locality && t == c.iterations - 2) apps::locality_enable(true);
        graph.run(rt);
      }
    }
    apps::locality_enable(false);
  };
  std::vector<double> ref;
  auto check = [&] {
    if (ref.empty()) ref = apps::lk23::reference(c);
    if (a.inject_error) ptr(za[0][0])[c.s + 1] += 1e-9;  // an interior point
    apps::lk23::compare(argv[0], c, ref, [&](long bi, long bj) { return ptr(za[0][bi * b + bj]); });
  };
  apps::measure(a, "lk23", impl, c.iterations, prepare, timed, check);
  if (a.locality) apps::locality_print("lk23", impl, a.threads, apps::locality_summarize());
  for (long k = 0; k < b * b; ++k) {
    canopy::data_free(za[0][k]);
    canopy::data_free(za[1][k]);
    canopy::data_free(coef[k]);
  }
}
