# Thin wrapper over CMake. `make run` and `make test` install what is missing first.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
MODEL ?=

.PHONY: all deps build python-unlink run test test-wide update-golden bench clean test-sanitize fuzz fuzz-ci fuzz-build fuzz-replay fuzz-corpus

all: build

deps:
	@bash scripts/install-deps.sh
	@bash scripts/install-ort.sh || echo "warning: onnxruntime-node is not installed; the ort_crosscheck test will try again or skip" >&2

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)
	@$(if $(filter 0,$(PYTHON_DEVELOP)),true,bash scripts/python-develop.sh $(BUILD_DIR))

# The Python package qonnx_cc: `make` links $(BUILD_DIR)/python into the user site-packages of the Python it
# was built for (a .pth file, as `pip install --user -e` would), so `import qonnx_cc` works after `make`.
# PYTHON_DEVELOP=0 skips that; `make python-unlink` removes the link. `pip install --no-build-isolation .`
# installs the package instead.
PYTHON_DEVELOP ?= 1
python-unlink:
	@bash scripts/python-develop.sh $(BUILD_DIR) --unlink

run: build
	@bash scripts/demo.sh $(BUILD_DIR)/qonnx-cc $(MODEL)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

# Rewrites tests/golden/*.expected from the current passes (review the diff before committing).
update-golden: build
	QONNX_UPDATE_GOLDEN=1 $(BUILD_DIR)/tests/qonnx_tests --gtest_filter='Golden.*'

# test-wide: the differential test at scale (tests/differential/README.md): N generated models from SEED,
# every target, the qdq results in onnxruntime; pass/fail counts per idiom. OPSET=21: convert with
# --target-opset 21 (13..21).
N ?= 5000
SEED ?= 1
OPSET ?=
test-wide: build
	node tests/differential/run_corpus.js --qonnx-cc $(BUILD_DIR)/qonnx-cc --gen $(BUILD_DIR)/tests/qonnx_diffgen \
	  --count $(N) --seed $(SEED) --jobs $(JOBS) $(if $(OPSET),--target-opset $(OPSET))

# bench: kernel bandwidth vs a memory copy and convert scaling (bench/run_bench.sh prints the ratios).
bench: build
	bash bench/run_bench.sh $(BUILD_DIR)

# ---- hardening (README "Hardening") ----
# test-sanitize: the whole ctest suite built with ASan + UBSan (SAN_CXX=g++ works too).
SAN_BUILD_DIR ?= build-asan
SAN_CXX ?= clang++
SAN_FLAGS ?= -O1 -g1
SAN_ENV = ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:abort_on_error=1:strict_string_checks=1 \
          UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

$(SAN_BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(SAN_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="$(SAN_FLAGS)" \
	  -DCMAKE_CXX_COMPILER=$(SAN_CXX) -DQONNX_SANITIZE=ON

# The differential corpus (hundreds of end-to-end conversions) runs in `make test` only: under the
# sanitizers it would take most of CI's time and checks nothing the unit, ort and fuzz runs do not.
test-sanitize: deps $(SAN_BUILD_DIR)/CMakeCache.txt
	cmake --build $(SAN_BUILD_DIR) -j $(JOBS)
	cd $(SAN_BUILD_DIR) && $(SAN_ENV) ctest --output-on-failure -j $(JOBS) -E '^differential_'

# fuzz: libFuzzer (clang) on each target for FUZZ_SECONDS, starting from fuzz/corpus/<target> and
# fuzz/regressions/<target>; new inputs go to $(FUZZ_BUILD_DIR)/corpus/<target>, crashes to
# $(FUZZ_BUILD_DIR)/findings/<target>/ (copy a reproducer to fuzz/regressions/<target>/ once fixed).
FUZZ_BUILD_DIR ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= load exec convert
FUZZ_FLAGS ?= -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
FUZZ_ENV = ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

$(FUZZ_BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(FUZZ_BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Sanitize -DCMAKE_CXX_FLAGS_SANITIZE="-O1 -g1" \
	  -DCMAKE_CXX_COMPILER=clang++ -DQONNX_FUZZ=ON -DQONNX_BUILD_TESTS=OFF

fuzz-build: deps $(FUZZ_BUILD_DIR)/CMakeCache.txt
	cmake --build $(FUZZ_BUILD_DIR) -j $(JOBS) --target $(addprefix fuzz_,$(FUZZ_TARGETS)) gen_corpus

# Runs every committed corpus file and crash reproducer once.
fuzz-replay: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  echo "== replay $$t"; \
	  $(FUZZ_ENV) $(FUZZ_BUILD_DIR)/fuzz/fuzz_$$t -runs=0 fuzz/corpus/$$t $$(test -d fuzz/regressions/$$t && echo fuzz/regressions/$$t) || exit 1; \
	done

fuzz: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$t for $(FUZZ_SECONDS) s"; \
	  mkdir -p $(FUZZ_BUILD_DIR)/corpus/$$t $(FUZZ_BUILD_DIR)/findings/$$t; \
	  $(FUZZ_ENV) $(FUZZ_BUILD_DIR)/fuzz/fuzz_$$t $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=$(FUZZ_BUILD_DIR)/findings/$$t/ $(FUZZ_BUILD_DIR)/corpus/$$t fuzz/corpus/$$t \
	    $$(test -d fuzz/regressions/$$t && echo fuzz/regressions/$$t) || exit 1; \
	done

# fuzz-ci: what CI runs, the same every time: each fuzzer for a fixed number of inputs from a fixed seed,
# starting from the committed corpus and regressions only (a fresh scratch corpus, nothing kept from
# earlier runs). Exploratory fuzzing (random seeds, longer, a growing corpus) is `make fuzz`; whatever it
# finds becomes a committed regression in fuzz/regressions/<target>/ and is then replayed here.
FUZZ_CI_SEED ?= 20261128
FUZZ_CI_RUNS ?= 4000
fuzz-ci: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	  echo "== fuzz $$t: $(FUZZ_CI_RUNS) inputs from seed $(FUZZ_CI_SEED)"; \
	  rm -rf $(FUZZ_BUILD_DIR)/ci-corpus/$$t && mkdir -p $(FUZZ_BUILD_DIR)/ci-corpus/$$t $(FUZZ_BUILD_DIR)/findings/$$t; \
	  $(FUZZ_ENV) $(FUZZ_BUILD_DIR)/fuzz/fuzz_$$t $(FUZZ_FLAGS) -seed=$(FUZZ_CI_SEED) -runs=$(FUZZ_CI_RUNS) \
	    -artifact_prefix=$(FUZZ_BUILD_DIR)/findings/$$t/ $(FUZZ_BUILD_DIR)/ci-corpus/$$t fuzz/corpus/$$t \
	    $$(test -d fuzz/regressions/$$t && echo fuzz/regressions/$$t) || exit 1; \
	done

# Rewrites the committed seed corpora (tiny models built in code by fuzz/gen_corpus.cc).
fuzz-corpus: fuzz-build
	rm -rf fuzz/corpus && $(FUZZ_BUILD_DIR)/fuzz/gen_corpus fuzz/corpus

clean:
	rm -rf $(BUILD_DIR)
