# Builds the libFuzzer target with clang (invoked by run_fuzz.sh; the main build uses g++).
# make -f fuzz.mk SRC=<source root> OUT=<build dir> CXX=<clang++>; incremental via -MMD.
SRCS := util/status.cc util/strings.cc util/cpus.cc config/config.cc config/values.cc diag/log.cc \
        transport/transport.cc \
        transport/engine/engine.cc transport/engine/engine_match.cc \
        transport/engine/engine_wait.cc transport/engine/engine_abort.cc \
        transport/engine/wait_policy.cc \
        transport/tcp/frame.cc transport/tcp/handshake.cc transport/tcp/engine.cc \
        transport/tcp/engine_abort.cc transport/tcp/engine_io.cc transport/tcp/engine_wait.cc \
        bootstrap/store_protocol.cc
OBJS := $(patsubst %.cc,$(OUT)/obj/%.o,$(SRCS)) $(OUT)/obj/frame_fuzz.o
SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
CXXFLAGS := -std=c++20 -g -O1 -Wall -Wextra -fsanitize=fuzzer-no-link $(SAN) \
            -I$(SRC)/src -I$(SRC)/include -MMD -MP

$(OUT)/chorus_frame_fuzz: $(OBJS)
	$(CXX) -fsanitize=fuzzer $(SAN) -o $@ $^ -pthread

$(OUT)/obj/frame_fuzz.o: $(SRC)/tests/fuzz/frame_fuzz.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

$(OUT)/obj/%.o: $(SRC)/src/%.cc
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

-include $(OBJS:.o=.d)
