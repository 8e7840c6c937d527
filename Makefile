# The two commands of the README: `make demo` and `make test`. Both install
# what is missing from Debian's packages first (scripts/setup.sh), so they
# work on a fresh Debian 12 machine. `make` alone builds everything.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=
NUMAVM ?= $(abspath ../shared/tools/numavm/numavm)

.PHONY: all setup configure build demo test test-release test-asan test-tsan fuzz numa-check bench-mapping clean

all: build

setup:
	@bash scripts/setup.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

build: $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

demo: setup build
	@bash scripts/demo.sh $(BUILD)/bin/canopy

# Release tests, then the AddressSanitizer+UBSan build, then ThreadSanitizer
# on the tests that run threads (runtime, data-flow, data handles, C API, CLI),
# then a short fuzzing run of the parsers, then the NUMA checks in VMs.
test: setup test-release test-asan test-tsan fuzz numa-check

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan:
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCANOPY_SANITIZE=address,undefined -DCANOPY_BUILD_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)

test-tsan:
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCANOPY_SANITIZE=thread -DCANOPY_BUILD_BENCH=OFF
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) -L 'runtime|capi|cli|dataflow|memory|omp'

fuzz:
	@bash scripts/fuzz.sh

# NUMA behaviour on kernels with 2 and 4 NUMA nodes (throw-away QEMU VMs from
# ../shared/tools/numavm; skipped with a message where it is not there).
# Page placements, strict affinity and the owner-computes write locality of
# a tiled Cholesky (at least 95% of the bytes written from the tile's node;
# 97-100% measured in loaded emulated VMs, docs/runtime.md) must all pass.
numa-check: build
	@if [ ! -x "$(NUMAVM)" ]; then \
	  echo "numa-check: skipped: numavm not found at $(NUMAVM)"; \
	elif ! "$(NUMAVM)" --prepare; then \
	  echo "numa-check: skipped: numavm --prepare failed (it needs qemu and Debian's kernel package; see its README)"; \
	else \
	  NUMAVM="$(NUMAVM)" bash scripts/numa-check.sh --binary $(BUILD)/bin/canopy_numa_check; \
	fi

bench-mapping: build
	python3 bench/mapping/run.py --canopy $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
