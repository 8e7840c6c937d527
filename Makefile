# The two commands of the README: `make demo` and `make test`. Both install
# what is missing from Debian's packages first (scripts/setup.sh), so they
# work on a fresh Debian 12 machine. `make` alone builds everything.
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: all setup configure build demo test test-release test-asan test-tsan fuzz bench-mapping clean

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
# then a short fuzzing run of the parsers.
test: setup test-release test-asan test-tsan fuzz

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan:
	cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCANOPY_SANITIZE=address,undefined -DCANOPY_BUILD_BENCH=OFF
	cmake --build build-asan -j $(JOBS)
	cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j $(JOBS)

test-tsan:
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCANOPY_SANITIZE=thread -DCANOPY_BUILD_BENCH=OFF
	cmake --build build-tsan -j $(JOBS)
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j $(JOBS) -L 'runtime|capi|cli|dataflow|memory'

fuzz:
	@bash scripts/fuzz.sh

bench-mapping: build
	python3 bench/mapping/run.py --canopy $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz
