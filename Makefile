# Thin wrapper over CMake. `make run` and `make test` install what is missing first.
BUILD_DIR ?= build
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
MODEL ?=

.PHONY: all deps build run test bench clean

all: build

deps:
	@bash scripts/install-deps.sh
	@bash scripts/install-ort.sh || echo "warning: onnxruntime-node is not installed; the ort_crosscheck test will try again or skip" >&2

$(BUILD_DIR)/CMakeCache.txt:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE)

build: deps $(BUILD_DIR)/CMakeCache.txt
	cmake --build $(BUILD_DIR) -j $(JOBS)

run: build
	@bash scripts/demo.sh $(BUILD_DIR)/qonnx-cc $(MODEL)

test: build
	cd $(BUILD_DIR) && ctest --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD_DIR)
