# mmp: Multidimensional Multiscale Parser image codec.
#
#   make          build bin/mmp-enc, bin/mmp-dec and lib/libmmp.a
#   make check    build and run every test (cmocka)
#   make demo     encode images/camera.pgm at lambda 10, decode it, print figures
#   make deps     install the Debian packages the build needs (root), or print the line

CC      ?= cc
OPT     ?= -O3
CFLAGS  ?= $(OPT) -g
# Normative floating point (LSP) must not be contracted into FMAs or reassociated.
MMP_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -Wno-unused-parameter \
             -ffp-contract=off -fno-fast-math -fopenmp -I. -MMD -MP
LDLIBS_ALL = -lnetpbm -lz -lm -fopenmp

BUILD ?= build
BIN   ?= bin

# Shared normative code (encoder and decoder) and the decoder driver.
DEC_SRC = $(wildcard common/*.c) $(wildcard dict/*.c) $(wildcard predict/*.c) \
          mmp/api.c mmp/syntax.c mmp/decoder.c
# Encoder-only code: search, engines.
ENC_SRC = mmp/encoder.c mmp/search.c mmp/engine.c $(wildcard mmp/engine_*.c)
LIB_SRC = $(DEC_SRC) $(ENC_SRC)
LIB_OBJ = $(LIB_SRC:%.c=$(BUILD)/%.o)
DEC_OBJ = $(DEC_SRC:%.c=$(BUILD)/%.o)

TEST_SRC = $(wildcard tests/test_*.c)
TEST_BIN = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

LIB = $(BUILD)/libmmp.a
DEC_LIB = $(BUILD)/libmmpdec.a

.PHONY: all check demo deps clean decoder-only
all: $(BIN)/mmp-enc $(BIN)/mmp-dec

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(MMP_CFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN)/mmp-enc: $(BUILD)/mmp/enc_main.o $(BUILD)/mmp/cli.o $(LIB)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS_ALL)

$(BIN)/mmp-dec: $(BUILD)/mmp/dec_main.o $(BUILD)/mmp/cli.o $(LIB)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS_ALL)

# Proof that the decoder needs no search code: link mmp-dec against the
# decoder sources only.
decoder-only: $(BUILD)/mmp-dec-only
$(BUILD)/mmp-dec-only: $(BUILD)/mmp/dec_main.o $(BUILD)/mmp/cli.o $(DEC_OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(LDLIBS_ALL)

$(BUILD)/tests/%: tests/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(MMP_CFLAGS) $(CFLAGS) -o $@ $< $(LIB) $(LDFLAGS) -lcmocka $(LDLIBS_ALL)

check: deps-check all decoder-only $(TEST_BIN)
	@MMP_BIN=$(abspath $(BIN)) sh tests/run-tests.sh $(TEST_BIN)

demo: deps-check all
	@sh scripts/demo.sh $(BIN) images/camera.pgm 10

deps:
	@sh scripts/install-deps.sh

deps-check:
	@sh scripts/install-deps.sh --if-missing

clean:
	rm -rf $(BUILD) $(BIN)

-include $(LIB_OBJ:.o=.d) $(BUILD)/mmp/enc_main.d $(BUILD)/mmp/dec_main.d $(BUILD)/mmp/cli.d

# ---------------------------------------------------------------- make rd
# Rate-distortion results in $(RD_DIR): the mmp sweep (rd-mmp.csv; resumable:
# rows already there are kept, so only missing image x lambda x engine runs
# are encoded; delete the file to measure a changed encoder), the standard
# codecs (rd-anchors-local.csv, also resumable), the BD-rates against JPEG
# 2000 (bdrate-vs-j2k.md) and the plots (rd-*.png, time-*.png). Override
# RD_IMAGES, RD_LAMBDAS, RD_ENGINES (comma-separated), RD_JOBS or RD_DIR.
# The codec tools come from scripts/install-deps.sh --extra; a
# codec whose tools are missing is skipped with a warning.
RD_DIR     ?= docs/results
RD_IMAGES  ?= $(wildcard images/*.pgm)
RD_LAMBDAS ?= 5,10,15,25,50,75,150,300,500,1000
RD_ENGINES ?= seq
RD_JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
RD_CSV      = $(RD_DIR)/rd-mmp.csv $(RD_DIR)/rd-anchors-local.csv

.PHONY: rd rd-deps
rd-deps:
	-@sh scripts/install-deps.sh --if-missing --extra

rd: all rd-deps
	python3 scripts/rd-sweep -j $(RD_JOBS) -l $(RD_LAMBDAS) -e $(RD_ENGINES) --bin $(abspath $(BIN)) \
	    -o $(RD_DIR)/rd-mmp.csv $(RD_IMAGES)
	python3 scripts/compare -j $(RD_JOBS) -o $(RD_DIR)/rd-anchors-local.csv $(RD_IMAGES)
	python3 scripts/bdrate --test all --ref j2k --markdown $(RD_CSV) > $(RD_DIR)/bdrate-vs-j2k.md.tmp \
	    && mv $(RD_DIR)/bdrate-vs-j2k.md.tmp $(RD_DIR)/bdrate-vs-j2k.md \
	    || { rm -f $(RD_DIR)/bdrate-vs-j2k.md.tmp; echo "make rd: no BD-rate table (no JPEG 2000 curves?)" >&2; }
	python3 scripts/plot -o $(RD_DIR) $(RD_CSV)
	@echo "make rd: results in $(RD_DIR): $(notdir $(RD_CSV)) bdrate-vs-j2k.md rd-*.png time-*.png"
