# crmd — the two commands a user needs: `make run` and `make test`.
BUILD_DIR ?= build
DATA_DIR  ?= data
LISTEN    ?= 127.0.0.1:8080
JOBS      ?= $(shell nproc)
ASAN_DIR  ?= build-asan

.PHONY: all deps build build-tests debug run test check build-asan test-asan test-tsan bench clean

all: build

deps:
	@scripts/install-deps

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Release

$(ASAN_DIR)/build.ninja:
	cmake -S . -B $(ASAN_DIR) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCRMD_SANITIZE=ON

# The server alone: what `make run` and `make bench` run (issue 35: the first `make run` built the
# unit tests too, minutes of a newcomer's first hour).
build: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS) --target crmd

# Everything: the server, the unit tests and the test helpers.
build-tests: deps $(BUILD_DIR)/build.ninja
	cmake --build $(BUILD_DIR) -j $(JOBS) --target all crmd_unit_tests

run: build
	@scripts/run-demo "$(BUILD_DIR)/crmd" "$(DATA_DIR)" "$(LISTEN)"

# What CI runs: the end-to-end and compat tests (three processes on two cores: an end-to-end file
# spends much of its time waiting on its servers, timeouts and clients) against the Release server,
# and the unit tests under AddressSanitizer and UBSan, built beside them (scripts/make-test). The
# npm clients download while the server builds (a fresh machine: half a minute of network).
test: deps $(BUILD_DIR)/build.ninja $(ASAN_DIR)/build.ninja
	@scripts/make-test $(BUILD_DIR) $(ASAN_DIR) $(JOBS)

# The inner loop: the unit tests and the end-to-end suite on SQLite (PostgreSQL's runs are in
# make test), 2 min 20 s of tests on 2 cores once built.
check: build-tests
	@scripts/install-npm
	cd $(BUILD_DIR) && ctest --output-on-failure -j 2 --timeout 600 -L '^(unit|e2e)$$'

# Unit tests under AddressSanitizer and UndefinedBehaviorSanitizer.
build-asan: deps $(ASAN_DIR)/build.ninja
	cmake --build $(ASAN_DIR) -j $(JOBS) --target crmd_unit_tests

test-asan: build-asan
	cd $(ASAN_DIR) && ctest --output-on-failure -j 2 -L unit

# Unit and end-to-end tests under ThreadSanitizer, the server included (write queues, commit
# groups, the network threads): any report fails the test that caused it.
test-tsan: deps
	cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCRMD_TSAN=ON
	cmake --build build-tsan -j $(JOBS) --target all crmd_unit_tests
	@scripts/install-npm
	cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j 2 --timeout 900

# crmd side by side with Parse Server on PostgreSQL, nginx as the loopback ceiling (issue 6) and the
# databases' own limits (issue 33). Installs what is missing (wrk, PostgreSQL 15, nginx,
# libsqlite3-dev; Parse Server into bench/.work), loopback only, about 30 minutes (the first run
# 5-15 more: bench/tenants.mjs makes its 10,200 applications once), at most 70; writes
# docs/PERFORMANCE.md and bench/.work/results.json.
bench: build
	@bench/run

clean:
	rm -rf $(BUILD_DIR) $(ASAN_DIR) build-tsan
