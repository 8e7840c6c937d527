// Block-cyclic matrix multiplication with canopy, as a user writes it: a
// handle per tile of A, per row block of C and per B buffer (two per task:
// the block it multiplies with and the one its neighbour copies in), all
// from data_allocate (first touch: the tasks that fill them touch them).
// One product is p steps of p dgemm tasks (read A[i][k], read the buffer,
// read_write C_i) and p copy tasks (buffer i of the next step <- buffer i+1
// of this one); it is recorded once in a canopy::TaskGraph and replayed. No
// placement code. --submit: the same tasks through canopy::submit, every
// product submitted before one wait_all.
#include <canopy/data.hpp>
#include <canopy/dataflow.hpp>
#include <canopy/runtime.hpp>
#include <canopy/taskgraph.hpp>

#include <vector>

#include "canopy_app.hpp"
#include "matmul/matmul.hpp"

namespace {

double* ptr(canopy::Data d) { return static_cast<double*>(canopy::data_ptr(d)); }

}  // namespace

int main(int argc, char** argv) {
  const apps::CanopyArgs args = apps::parse_canopy_args(argc, argv);
  const apps::Args& a = args.common;
  const bool use_submit = args.use_submit;
  const apps::matmul::Config c = apps::matmul::config(a, argv[0]);
  if (c.p % 2 != 0) {
    std::fprintf(stderr, "%s: %ld row blocks: the ring needs an even count (B comes back after p steps)\n", argv[0],
                 c.p);
    return 2;
  }
  const char* impl = use_submit ? "canopy-submit" : "canopy";
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);

  const long p = c.p;
  std::vector<canopy::Data> at, cr, buf[2];  // at[i * p + k]: A[i][k]
  for (long i = 0; i < p; ++i) {
    for (long k = 0; k < p; ++k) at.push_back(canopy::data_allocate(sizeof(double) * c.tile()));
    cr.push_back(canopy::data_allocate(sizeof(double) * c.row_block()));
    buf[0].push_back(canopy::data_allocate(sizeof(double) * c.row_block()));
    buf[1].push_back(canopy::data_allocate(sizeof(double) * c.row_block()));
  }

  // One product: at step s, buf[s % 2][i] holds B_(i+s) mod p.
  auto add_product = [&](auto&& add) {
    for (long s = 0; s < p; ++s) {
      const std::vector<canopy::Data>& cur = buf[s % 2];
      const std::vector<canopy::Data>& next = buf[1 - s % 2];
      for (long i = 0; i < p; ++i) {
        const long k = (i + s) % p;
        add({canopy::read(at[i * p + k]), canopy::read(cur[i]), canopy::read_write(cr[i])},
            [&c, s, ta = at[i * p + k], b = cur[i], ci = cr[i]] {
              if (apps::locality_enabled())
                for (canopy::Data d : {ta, b, ci}) apps::record(d);
              apps::matmul::multiply(c, ptr(ta), ptr(b), ptr(ci), s > 0);
            });
      }
      for (long i = 0; i < p; ++i)
        add({canopy::read(cur[(i + 1) % p]), canopy::write(next[i])},
            [from = cur[(i + 1) % p], to = next[i]] {
              if (apps::locality_enabled())
                for (canopy::Data d : {from, to}) apps::record(d);
              std::memcpy(ptr(to), ptr(from), canopy::data_size(to));
            });
    }
  };

  canopy::TaskGraph graph;
  if (!use_submit)
    add_product([&](std::initializer_list<canopy::Access> acc, auto&& body) { graph.add(acc, body); });

  auto prepare = [&] {
    rt.run([&] {
      for (long i = 0; i < p; ++i)
        for (long k = 0; k < p; ++k)
          canopy::submit({canopy::write(at[i * p + k])},
                         [&c, i, k, t = at[i * p + k]] { apps::matmul::fill_a_tile(c, i, k, ptr(t)); });
      for (long i = 0; i < p; ++i)
        canopy::submit({canopy::write(buf[0][i]), canopy::write(buf[1][i]), canopy::write(cr[i])},
                       [&c, i, b0 = buf[0][i], b1 = buf[1][i], ci = cr[i]] {
                         apps::matmul::fill_b_rows(c, i, ptr(b0));
                         std::memset(ptr(b1), 0, canopy::data_size(b1));
                         std::memset(ptr(ci), 0, canopy::data_size(ci));
                       });
      canopy::wait_all();
    });
  };
  auto timed = [&] {
    if (use_submit) {
      rt.run([&] {
        for (long t = 0; t < c.iterations; ++t) {
          if (a.locality && t == c.iterations - 1) {
            canopy::wait_all();  // log the last product only
            apps::locality_enable(true);
          }
          add_product([](std::initializer_list<canopy::Access> acc, auto&& body) { canopy::submit(acc, body); });
        }
        canopy::wait_all();
      });
    } else {
      for (long t = 0; t < c.iterations; ++t) {
        if (a.locality && t == c.iterations - 1) apps::locality_enable(true);
        graph.run(rt);
      }
    }
    apps::locality_enable(false);
  };
  auto check = [&] {
    if (a.inject_error) ptr(cr[c.p - 1])[c.row_block() - 1] += 1e-3;
    apps::matmul::check(argv[0], c, [&](long i) { return ptr(cr[i]); });
  };
  apps::measure(a, "matmul", impl, c.iterations, prepare, timed, check);
  if (a.locality) apps::locality_print("matmul", impl, a.threads, apps::locality_summarize());
  for (canopy::Data d : at) canopy::data_free(d);
  for (long i = 0; i < p; ++i) {
    canopy::data_free(cr[i]);
    canopy::data_free(buf[0][i]);
    canopy::data_free(buf[1][i]);
  }
}
