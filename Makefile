# retargetd -- one non-recursive Makefile, Linux only.
#   make            build everything into build/ (CUDA backend when nvcc exists)
#   make test       build and run every test (SANITIZE=1: under ASan+UBSan)
#   make run        the main job: inspect, offline retarget, then the daemon
#   make bench      CPU benchmarks;  make gpu-check / bench-gpu on a GPU machine
#   make bench-e2e  a corpus end to end through the CLI and the daemon (N windows, K clients)
#   make bench-plausibility  every shared clip onto G1, H1, T1: issue 13's quality bounds
#   make fuzz       libFuzzer targets for the readers (FUZZ_SECONDS each)
#   CUDA=auto|0|1   auto builds CUDA when nvcc is found; 0 forces CPU-only
CUDA      ?= auto
SANITIZE  ?= 0
CUDA_HOME ?= /usr/local/cuda
FUZZ_SECONDS ?= 60
NVCC_PATH := $(or $(shell command -v nvcc 2>/dev/null),$(wildcard $(CUDA_HOME)/bin/nvcc))

ifeq ($(CUDA),0)
WITH_CUDA := 0
else ifeq ($(CUDA),1)
ifeq ($(NVCC_PATH),)
$(error CUDA=1 but nvcc was not found on PATH or in $(CUDA_HOME)/bin)
endif
WITH_CUDA := 1
else
WITH_CUDA := $(if $(NVCC_PATH),1,0)
endif

B := build$(if $(filter 1,$(SANITIZE)),/san)$(if $(filter 0,$(CUDA)),/cpu)
O := $(B)/obj

CC      := gcc
CFLAGS  := -std=c11 -O2 -g -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2 -ffp-contract=off -fno-fast-math -MMD -MP
LDFLAGS := -Wl,--as-needed
LDLIBS  := -lmicrohttpd -lsqlite3 -lzstd -lcurl -lcjson -lzip -lexpat -lcrypto -ldl -lpthread -lm
NVFLAGS := -O2 -std=c++17 -fmad=false -lineinfo -Xcompiler -fno-fast-math,-ffp-contract=off \
           -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
ifeq ($(SANITIZE),1)
SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
CFLAGS   += $(SANFLAGS)
LDFLAGS  += $(SANFLAGS)
endif

LIB_SRC := $(wildcard base/*.c) $(wildcard kinematics/*.c) $(wildcard solver/*.c) \
           $(wildcard solver/cpu/*.c) $(wildcard storage/*.c) $(wildcard retarget/*.c)
CU_SRC  := $(if $(filter 1,$(WITH_CUDA)),$(wildcard solver/cuda/*.cu))
ifneq ($(CU_SRC),)
# The runtime library beside the nvcc that was found (PATH or CUDA_HOME).
CUDA_LIB := $(firstword $(wildcard $(abspath $(dir $(NVCC_PATH))../lib64) $(CUDA_HOME)/lib64))
LDLIBS  += $(if $(CUDA_LIB),-L$(CUDA_LIB)) -lcudart_static -ldl -lrt -lstdc++
else
LIB_SRC += solver/cuda/cuda_stub.c
endif
SRV_SRC := $(filter-out server/main.c,$(wildcard server/*.c))
CLI_SRC := $(filter-out clients/retarget.c,$(wildcard clients/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(O)/%.o) $(CU_SRC:%.cu=$(O)/%.o)
# robots/*.urdf and profiles/*.json compiled in (deploy/embed.sh, kinematics/embed.h),
# so kin_robot_load("g1") and rtg_profile_load("cmu_g1") work anywhere.
ROBOTS   := $(sort $(wildcard robots/*.urdf))
PROFILES := $(sort $(wildcard profiles/*.json))
EMBEDDED := $(B)/gen/kin_embedded_robots.c $(B)/gen/kin_embedded_profiles.c
LIB_OBJ += $(EMBEDDED:.c=.o)
# The web page: deploy/web.sh bundles web/ (npm ci, esbuild) into $(B)/web/
# and embeds its files as $(B)/gen/srv_ui_files.c, which server/ui.c serves;
# without npm a placeholder page (and make tries again next time).
WEB_SRC  := web/package.json web/package-lock.json web/build.mjs $(sort $(wildcard web/src/*))
UI_GEN   := $(B)/gen/srv_ui_files.c
# server/openapi.json, the description of /v1 served at /v1/openapi.json.
API_GEN  := $(B)/gen/srv_openapi.c
SRV_OBJ := $(SRV_SRC:%.c=$(O)/%.o) $(UI_GEN:.c=.o) $(API_GEN:.c=.o)
CLI_OBJ := $(CLI_SRC:%.c=$(O)/%.o)
LIB     := $(B)/libretarget.a
SRV_LIB := $(B)/libretargetd.a
CLI_LIB := $(B)/libcli.a
TESTS   := $(patsubst tests/%.c,$(B)/tests/%,$(wildcard tests/test_*.c))
SH_TESTS := $(wildcard tests/test_*.sh)
BENCHES := $(patsubst bench/%.c,$(B)/bench/%,$(wildcard bench/bench_*.c))
PROGS   := $(if $(wildcard clients/retarget.c),$(B)/retarget) $(if $(wildcard server/main.c),$(B)/retargetd)
STAMP   := $(B)/.config

.PHONY: all deps test run bench bench-e2e bench-plausibility bench-gpu gpu-check fuzz clean
all: $(PROGS) $(TESTS) $(BENCHES)

# The configuration stamp changes only when the configuration does, so that
# an auto-detected CUDA appearing or vanishing rebuilds everything.
$(STAMP): FORCE | deps
	@mkdir -p $(@D)
	@echo "WITH_CUDA=$(WITH_CUDA) SANITIZE=$(SANITIZE) CFLAGS=$(CFLAGS)" > $@.new
	@cmp -s $@.new $@ || mv $@.new $@; rm -f $@.new
FORCE:

deps:
	@sh deploy/deps.sh

$(O)/%.o: %.c $(STAMP)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c $< -o $@
# storage/store.c embeds the schema with .incbin.
$(O)/storage/store.o: storage/schema.sql
# The CPU solver at -O3: its per-frame loops (block products, the Cholesky
# solves' updates) run four floats at a time (SSE2). Each lane is the scalar
# IEEE operation and no sum is reordered (no -ffast-math, no contraction),
# so the bits are those of -O2; about a sixth off the CPU solve
# (bench/RESULTS.md).
$(O)/solver/cpu/%.o: CFLAGS += -O3
$(O)/%.o: %.cu $(STAMP)
	@mkdir -p $(@D)
	$(NVCC_PATH) $(NVFLAGS) -MMD -MP -c $< -o $@
$(B)/gen/kin_embedded_robots.c: deploy/embed.sh $(ROBOTS)
	@mkdir -p $(@D)
	sh deploy/embed.sh kin_embedded_robots $@ $(ROBOTS)
$(B)/gen/kin_embedded_profiles.c: deploy/embed.sh $(PROFILES)
	@mkdir -p $(@D)
	sh deploy/embed.sh kin_embedded_profiles $@ $(PROFILES)
$(UI_GEN): deploy/web.sh deploy/embed.sh $(WEB_SRC) $(if $(wildcard $(B)/web/.placeholder),FORCE)
	@mkdir -p $(@D)
	sh deploy/web.sh $(B)/web $@
$(API_GEN): deploy/embed.sh server/openapi.json
	@mkdir -p $(@D)
	sh deploy/embed.sh --keep-ext srv_openapi $@ server/openapi.json
$(EMBEDDED:.c=.o) $(UI_GEN:.c=.o) $(API_GEN:.c=.o): %.o: %.c $(STAMP)
	$(CC) $(CFLAGS) -I. -c $< -o $@
$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(SRV_LIB): $(SRV_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(CLI_LIB): $(CLI_OBJ)
	@rm -f $@
	ar rcs $@ $^
$(B)/retarget: $(O)/clients/retarget.o $(CLI_LIB) $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(B)/retargetd: $(O)/server/main.o $(SRV_LIB) $(LIB)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
$(B)/tests/%: $(O)/tests/%.o $(SRV_LIB) $(CLI_LIB) $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@
# test_http_alone and test_http_classes reach the scheduler's solver calls
# through a wrapper of rtg_batch_solve_packed (a fault injected into one
# clip; a worker held busy).
$(B)/tests/test_http_alone $(B)/tests/test_http_classes: LDFLAGS += -Wl,--wrap=rtg_batch_solve_packed
$(B)/bench/%: $(O)/bench/%.o $(LIB)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# What only some tests need (the browser test's Chromium, a venv with pip and
# setuptools for the Python package, slurm-wlm and munge for the Slurm
# cluster of test_slurm, systemd's systemd-analyze for test_systemd):
# installed where it can be (root, apt), else those tests skip.
test: all
	@sh deploy/deps.sh --optional chromium python3-venv python3-pip python3-setuptools slurm-wlm munge systemd
	@sh tests/run.sh $(B) $(TESTS) $(SH_TESTS)

run: all
	@PORT=$(or $(PORT),8080) sh deploy/run.sh $(B)

bench: all
	@sh bench/run.sh $(B)

gpu-check: all
	@sh bench/gpu_check.sh $(B)

bench-gpu: all
	@sh bench/bench_gpu.sh $(B)

# N windows of the G1 reference trajectory plus the BVH clips, K HTTP clients
# (a GPU machine: make bench-e2e N=512 K=16).
N ?= 16
K ?= 4
bench-e2e: all
	@sh bench/e2e.sh $(B) $(N) $(K)

# Every shared human clip onto G1, H1 and T1 (URDF, MJCF): issue 13's bounds.
bench-plausibility: all
	@sh bench/plausibility.sh $(B)

FUZZERS := $(patsubst tests/%.c,build/fuzz/%,$(wildcard tests/fuzz_*.c))
FUZZ_CC  := clang -std=c11 -D_GNU_SOURCE -g -O1 -ffp-contract=off -I$(CURDIR)
# fuzz_http reaches server/parse.c, the daemon's pure request parsing (it
# needs no MHD, store or solver).
FUZZ_SRC := $(wildcard base/*.c) $(wildcard kinematics/*.c) $(wildcard retarget/*.c) server/parse.c $(EMBEDDED)
# One archive, so that each fuzzer links only the objects it uses.
build/fuzz/libkin.a: $(FUZZ_SRC) $(wildcard kinematics/*.h) server/parse.h server/state.h
	@sh deploy/deps.sh libclang-rt-14-dev
	@rm -rf build/fuzz/obj && mkdir -p build/fuzz/obj
	cd build/fuzz/obj && $(FUZZ_CC) -fsanitize=fuzzer-no-link,address,undefined -c $(abspath $(FUZZ_SRC))
	ar rcs $@ build/fuzz/obj/*.o
build/fuzz/%: tests/%.c build/fuzz/libkin.a
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined $^ -lcjson -lzip -lexpat -lcrypto -lm -o $@
fuzz: $(FUZZERS)
	@sh tests/fuzz.sh $(FUZZ_SECONDS) $(FUZZERS)

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(SRV_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(O)/tests/*.d $(O)/bench/*.d \
         $(O)/clients/*.d $(O)/server/*.d
.SECONDARY:
