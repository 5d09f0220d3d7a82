# The two commands of the README:
#   make run   install what is missing, build, sweep the corpus, write results/ and plots/
#   make test  install what is missing, build (plain and ASan+UBSan), run every test
# Everything else is CMake's job; this file only wires the steps together.

BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= 2
CMAKE_FLAGS ?= -DSB_WERROR=ON
# Debian packages the build, the tests, the plots and the benchmarks need.
PKGS := cmake make gcc g++ libcsv-dev gnuplot-nox libbenchmark-dev \
        libyaml-dev libjansson-dev libprotobuf-c-dev protobuf-c-compiler clang

.PHONY: all deps build build-asan build-release run test bench bench-scale baseline gate fuzz clean

all: build

deps:
	@sh ci/install-deps.sh $(PKGS)

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j $(JOBS)

# Every build type must build warning-free (CI builds Release too).
build-release: deps
	cmake -S . -B build-release $(CMAKE_FLAGS) -DSB_BENCH=OFF -DCMAKE_BUILD_TYPE=Release
	cmake --build build-release -j $(JOBS)

# libFuzzer targets (clang, ASan+UBSan), FUZZ_SECONDS each (docs/fuzzing.md).
FUZZ_SECONDS ?= 30
fuzz: deps
	CC=clang cmake -S . -B build-fuzz $(CMAKE_FLAGS) -DSB_FUZZ=ON -DSB_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug
	cmake --build build-fuzz -j $(JOBS) --target fuzz_workload fuzz_hlo fuzz_machine fuzz_results fuzz_options fuzz_expect fuzz_chakra fuzz_astra_text fuzz_ggml_case fuzz_astra_config fuzz_astra_queue fuzz_resume fuzz_names fuzz_icase
	sh ci/fuzz.sh build-fuzz $(FUZZ_SECONDS)

build-asan: deps
	cmake -S . -B $(ASAN_BUILD) $(CMAKE_FLAGS) -DSB_SANITIZE=ON -DSB_BENCH=OFF -DCMAKE_BUILD_TYPE=Debug
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The default sweep: every corpus workload x every scheduler, memory timelines
# for the plots, then the plots (in one line, so that the run's closing
# summary stays on screen).
run: build
	@mkdir -p results/mem plots
	./$(BUILD)/schedbench run --isolate --jobs $(JOBS) -o results/latest.csv --mem-dir results/mem
	./$(BUILD)/schedbench plot results/latest.csv -o plots --brief

# Refresh the committed baseline the regression gate compares against: do it
# in the same change that intentionally moves results, and say why in the
# commit message.
# PLUGIN, WORKLOADS, SCHEDULERS and BASELINE make both targets a plugin's own
# (docs/plugins.md, "Gating your plugin"):
#   make baseline PLUGIN=my.so SCHEDULERS=mine WORKLOADS=wl/ BASELINE=ci/mine.csv
#   make gate     PLUGIN=my.so SCHEDULERS=mine WORKLOADS=wl/ BASELINE=ci/mine.csv METRICS=peak
BASELINE ?= results/baseline.csv
METRICS  ?= peak,makespan,exposed
RUN_ARGS := $(foreach p,$(PLUGIN),--plugin $(p)) $(if $(WORKLOADS),-w $(WORKLOADS)) \
            $(if $(SCHEDULERS),-s $(SCHEDULERS))
# The baseline is written in the form that diffs well (ci/baseline-form.sh):
# no sched_ms (it differs run to run) and no per-row sweep numbering (cell,
# shard, sweep_id, sweep_cells: one policy more renumbers every row); the
# sweep's identity in a `#` line above the header.
baseline: build
	./$(BUILD)/schedbench run --jobs $(JOBS) --quiet $(RUN_ARGS) -o $(BASELINE).run.csv
	sh ci/baseline-form.sh $(BASELINE).run.csv >$(BASELINE).tmp
	mv $(BASELINE).tmp $(BASELINE) && rm -f $(BASELINE).run.csv

# The regression gate CI runs after the tests.
gate: build
	BASELINE=$(BASELINE) sh ci/gate.sh ./$(BUILD)/schedbench --metrics $(METRICS) $(RUN_ARGS)

test: build build-asan
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)
	cd $(ASAN_BUILD) && ctest --output-on-failure -j $(JOBS)

bench: build
	./$(BUILD)/bench/bench_core --benchmark_out=$(BUILD)/bench_core.json --benchmark_out_format=json
	./$(BUILD)/bench/bench_sweep --benchmark_out=$(BUILD)/bench_sweep.json --benchmark_out_format=json
	./$(BUILD)/bench/bench_place --benchmark_out=$(BUILD)/bench_place.json --benchmark_out_format=json
	./$(BUILD)/bench/bench_import --benchmark_out=$(BUILD)/bench_import.json --benchmark_out_format=json
	./$(BUILD)/bench/bench_scale --benchmark_out=$(BUILD)/bench_scale.json --benchmark_out_format=json

# Issue 25's acceptance run: bench_scale with the million-node graphs, in a
# Release build (about two minutes more than `make bench`'s default sizes).
bench-scale: deps
	cmake -S . -B build-scale $(CMAKE_FLAGS) -DSB_BENCH=ON -DCMAKE_BUILD_TYPE=Release
	cmake --build build-scale -j $(JOBS) --target bench_scale
	./build-scale/bench/bench_scale --sb_sizes=10k,100k,1M --benchmark_out=build-scale/bench_scale.json --benchmark_out_format=json

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-release build-fuzz build-scale
