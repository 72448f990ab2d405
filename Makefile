# The two commands: `make run` (build + the main job) and `make test` (build + every test).
BUILD ?= build
JOBS ?= $(shell nproc)
RANKS ?= 4
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps build run test test-unit install clean compare

all: build

deps:
	@scripts/install-deps.sh

build: deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)
	cmake --build $(BUILD) -j$(JOBS)

# 4 local ranks under chorus-run, every collective from 8 B to 16 MiB, results checked.
run: build
	$(BUILD)/tools/chorus-run/chorus-run -n $(RANKS) -- \
	  $(BUILD)/tools/chorus-bench/chorus-bench --op all -b 8 -e 16M -f 2 -n 10 -w 2 -c 1

# Every CTest case: unit tests in parallel, then multi-process and tool tests one at a time.
test: build
	cd $(BUILD) && ctest --output-on-failure -L unit -j$(JOBS)
	cd $(BUILD) && ctest --output-on-failure -LE unit

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit -j$(JOBS)

# Chorus next to Open MPI and Gloo (Debian packages, installed if missing): one table of
# time/busbw per system; exit 1 on any wrong result. COMPARE_FLAGS=--quick for a short run.
compare: build
	python3 bench/compare/compare.py --build-dir $(BUILD) $(COMPARE_FLAGS)

install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX),)

clean:
	rm -rf $(BUILD)
