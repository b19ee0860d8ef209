# smmu-vp top-level entry points. See README.md.
#   make            install missing Debian packages, configure and build into build/
#   make run        ... then run platform/scenarios/default.json and print its results,
#                   and its sweep table when the scenario has a "sweep" section
#   make test       ... then run every test through CTest
#   make bench      ... then run the wall-clock benchmarks
#   make docs       ... then regenerate the reference section of docs/config.md
#   make install    ... then install the CLI, libsmmu_vp, its public headers, CMake and pkg-config
#                   files and the data into PREFIX (default /usr/local; docs/embedding.md)
#   make package    ... then build the Debian package build/smmu-vp_<version>_<arch>.deb
#   make reproduce  ... then run every seed figure of docs/figures.json and its sensitivity study
#                   into build/reproduce/report.md with plots (scripts/reproduce.py);
#                   BEFORE=FILE adds an earlier run's figures_measured.json beside this run's
#   make fuzz       build the libFuzzer harnesses (clang, ASan+UBSan) into build-fuzz/ and run
#                   each for FUZZ_SECONDS (default 60), or FUZZ_RUNS executions each;
#                   fails on any crash (README "Fuzzing")
#   make fuzz-smoke the same, 10 s each (CI)
#   SANITIZE=1      build with ASan+UBSan into build-asan/ (e.g. make test SANITIZE=1)
#   WERROR=1        treat warnings as errors (CI does)

SANITIZE ?= 0
WERROR ?= 0
BUILD_TYPE ?= RelWithDebInfo
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(SANITIZE),1)
BUILD ?= build-asan
else
BUILD ?= build
endif
# The sanitizer build leaves out the benchmarks: wall-clock figures of an
# instrumented build mean nothing, and they are a tenth of its compiling.
CMAKE_FLAGS = -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) \
  -DSMMU_VP_SANITIZE=$(if $(filter 1,$(SANITIZE)),ON,OFF) \
  -DSMMU_VP_BUILD_BENCHMARKS=$(if $(filter 1,$(SANITIZE)),OFF,ON) \
  -DSMMU_VP_WERROR=$(if $(filter 1,$(WERROR)),ON,OFF)
SCENARIO ?= platform/scenarios/default.json
OUT ?= $(BUILD)/out/default
# The reproduction and plotting scripts need Debian's python3 with python3-matplotlib.
PYTHON ?= /usr/bin/python3

# Where `make install` puts everything.
PREFIX ?= /usr/local

FUZZ_SECONDS ?= 60
FUZZ_BUILD ?= build-fuzz
# Harnesses to run (default: every one built), e.g. FUZZ_TARGETS="fuzz_config fuzz_dma_trace".
FUZZ_TARGETS ?=
# Executions per harness instead of a time (the campaign: FUZZ_RUNS=10000000).
FUZZ_RUNS ?=

.PHONY: all deps configure build run test bench docs install package reproduce clean fuzz-build fuzz fuzz-smoke
all: build

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Only what the run needs: the simulator, not the tests.
run: configure
	@cmake --build $(BUILD) -j $(JOBS) --target smmu-vp
	./$(BUILD)/smmu-vp run $(SCENARIO) --out $(OUT)
	@if grep -q '"sweep"' $(SCENARIO); then ./$(BUILD)/smmu-vp sweep $(SCENARIO) --out $(OUT)/sweep; fi

# use_stacks=0 (sanitizer build): SystemC runs processes on coroutine stacks,
# and at exit LeakSanitizer takes a freed one for the main thread's stack and
# dies scanning it ("Tracer caught signal 11", about 1 SystemC test in 6,
# with -j1 too). At exit no frame of ours holds memory, so the stacks have
# nothing to add to the globals and the heap.
LSAN_OPTIONS_TEST = suppressions=$(CURDIR)/tests/lsan.supp$(if $(filter 1,$(SANITIZE)),:use_stacks=0)

test: build
	cd $(BUILD) && LSAN_OPTIONS=$(LSAN_OPTIONS_TEST) ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD)/bench/smmu-vp-bench

docs: build
	bash scripts/update-config-doc.sh $(BUILD)/smmu-vp

# Only what is installed: the simulator and the models' library.
install: configure
	@cmake --build $(BUILD) -j $(JOBS) --target smmu-vp smmu_vp_shared
	cmake --install $(BUILD) --prefix $(PREFIX)

package: configure
	@cmake --build $(BUILD) -j $(JOBS) --target smmu-vp smmu_vp_shared
	cd $(BUILD) && cpack -G DEB

# Only the simulator is needed; the figures exit non-zero only when a run fails.
reproduce: configure
	@cmake --build $(BUILD) -j $(JOBS) --target smmu-vp
	$(PYTHON) scripts/reproduce.py --cli $(BUILD)/smmu-vp --out $(BUILD)/reproduce $(if $(BEFORE),--before $(BEFORE))

# Its own build directory: clang, every library instrumented, no tests or benchmarks.
fuzz-build: deps
	@cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSMMU_VP_FUZZ=ON -DSMMU_VP_BUILD_TESTS=OFF \
	  -DSMMU_VP_BUILD_BENCHMARKS=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_all

fuzz: fuzz-build
	FUZZ_RUNS=$(FUZZ_RUNS) bash scripts/run-fuzz.sh $(FUZZ_BUILD) $(if $(FUZZ_RUNS),0,$(FUZZ_SECONDS)) $(FUZZ_TARGETS)

fuzz-smoke:
	@$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=10

clean:
	rm -rf build build-asan build-fuzz
