# The two commands: `make run` (build + the main job) and `make test` (build + every test).
BUILD ?= build
JOBS ?= $(shell nproc)
RANKS ?= 4
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all deps build run test test-unit install clean

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

install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX),)

clean:
	rm -rf $(BUILD)
