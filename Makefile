# The two commands of the README: `make demo` and `make test`. Both install
# what is missing from Debian's packages first (scripts/setup.sh), so they
# work on a fresh Debian 12 machine. `make` alone builds everything.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
NUMAVM ?= $(abspath ../shared/tools/numavm/numavm)
PREFIX ?= /usr/local

.PHONY: all setup configure build install demo test test-release test-python test-asan test-tsan fuzz numa-check bench-mapping gomp-suite gomp-suite-profile clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

# libcanopy.so.0 and libcanopy.a, headers, the CLI, CMake package, canopy.pc
# (README "Install and use the library").
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

demo: setup build
	@bash scripts/demo.sh $(BUILD)/bin/canopy

# Release tests (with the install test: C and C++ programs built against a
# temporary `cmake --install`, tests/install), then the Python package's, then GCC's libgomp
# suite on canopy's OpenMP runtime, then a twentieth of it under `canopy profile` (on canopy's
# runtime and on the system libgomp), then the AddressSanitizer+UBSan build, then ThreadSanitizer
# on the tests that run threads (runtime, data-flow, data handles, C API, CLI),
# then a short fuzzing run of the parsers, then the NUMA checks in VMs.
test: setup test-release test-python gomp-suite gomp-suite-profile test-asan test-tsan fuzz numa-check

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# The Python package: pip install . into a venv in $(BUILD)/pyenv, then
# pytest on python/tests (scripts/test-python.sh; docs/python.md).
test-python: setup
	@bash scripts/test-python.sh $(BUILD)

# The sanitizer builds: line tables only (-g1: the reports' file:line, a
# fifth less compile time than -g; TSan at -O1, another fifth), and no test
# area that only compiles (headers) or, for TSan, that its labels do not run
# (CI builds three times on 2 cores). The ASan build compiles the placement
# algorithms at -O1 (CANOPY_MAPPING_COMPILE_OPTIONS, CMakeLists.txt): its
# tests spend most of their time in them, and -O1 is what ASan recommends.
SANITIZE_DEBUG_FLAGS = -DCMAKE_C_FLAGS_DEBUG=-g1 -DCMAKE_CXX_FLAGS_DEBUG=-g1
TSAN_FLAGS = '-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG' '-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG'
TSAN_SKIP_AREAS = 'headers;mapping;matrix;topology;profile;run;numa;mpi;install'

test-asan:
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCANOPY_SANITIZE=address,undefined -DCANOPY_BUILD_BENCH=OFF \
	  $(SANITIZE_DEBUG_FLAGS) -DCANOPY_SKIP_TEST_AREAS=headers -DCANOPY_MAPPING_COMPILE_OPTIONS=-O1
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)

test-tsan:
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCANOPY_SANITIZE=thread -DCANOPY_BUILD_BENCH=OFF \
	  $(TSAN_FLAGS) -DCANOPY_SKIP_TEST_AREAS=$(TSAN_SKIP_AREAS)
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) -L 'runtime|capi|cli|dataflow|memory|omp|trace'

fuzz:
	@bash scripts/fuzz.sh

# NUMA behaviour on kernels with 2 and 4 NUMA nodes (throw-away QEMU VMs from
# ../shared/tools/numavm). Page placements, strict affinity and the
# owner-computes write locality of a tiled Cholesky (at least 95% of the
# bytes written from the tile's node; 97-100% measured in loaded emulated
# VMs, docs/runtime.md) must all pass. Without numavm, or when
# `numavm --prepare` fails, it is skipped with a message, except that with CI
# set and numavm there a failing --prepare fails (a VM that does not start
# fails everywhere): scripts/numa-check.sh --skip-unavailable.
numa-check: build
	@NUMAVM="$(NUMAVM)" bash scripts/numa-check.sh --prepare --skip-unavailable --binary $(BUILD)/bin/canopy_numa_check
	@NUMAVM="$(NUMAVM)" bash scripts/omp-affinity-check.sh --build-dir $(BUILD)

# GCC 12's own libgomp tests (Debian's gcc-12-source) on canopy's OpenMP
# runtime, which the release build puts in $(GOMP_RUNTIME_DIR) as
# libgomp.so.1; every test that passes on the system libgomp must pass on it
# (docs/omp-suite.md). Compiled tests are cached in $(BUILD)/gomp-suite.
GOMP_RUNTIME_DIR ?= $(BUILD)/lib/canopy-omp
GOMP_SUITE_FLAGS ?=
gomp-suite: setup build
	python3 scripts/gomp_suite.py --runtime-dir $(GOMP_RUNTIME_DIR) --cache $(BUILD)/gomp-suite --jobs $(JOBS) \
	  --known-failures tests/omp/gomp_suite_known_failures.txt $(GOMP_SUITE_FLAGS)

# The same suite's programs under `canopy profile` (issue 14: a profiled
# program behaves as without profiling; docs/profile.md): every
# $(GOMP_PROFILE_SAMPLE)th runnable test of each directory, a fixed subset,
# on canopy's runtime and on the system libgomp, judged against the unwrapped
# system-libgomp run. GOMP_PROFILE_SAMPLE=1 runs all of them (about 9 minutes
# per runtime on 2 cores; the subset about a twentieth of that). Shares
# gomp-suite's cache of compiled tests.
GOMP_PROFILE_SAMPLE ?= 20
GOMP_PROFILE_WRAP = '$(abspath $(BUILD))/bin/canopy profile -q -o /dev/null --'
gomp-suite-profile: setup build
	python3 scripts/gomp_suite.py --runtime-dir $(GOMP_RUNTIME_DIR) --cache $(BUILD)/gomp-suite --jobs $(JOBS) \
	  --sample $(GOMP_PROFILE_SAMPLE) --known-failures tests/omp/gomp_suite_known_failures.txt --wrap $(GOMP_PROFILE_WRAP)
	python3 scripts/gomp_suite.py --system-runtime --cache $(BUILD)/gomp-suite --jobs $(JOBS) \
	  --sample $(GOMP_PROFILE_SAMPLE) --wrap $(GOMP_PROFILE_WRAP)

bench-mapping: build
	python3 bench/mapping/run.py --canopy $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
