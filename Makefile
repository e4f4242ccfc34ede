# mmp: Multidimensional Multiscale Parser image codec.
#
#   make          build bin/mmp-enc, bin/mmp-dec and bin/mmp-metrics (make rd's measure)
#   make check    build and run every test (cmocka)
#   make check-python  the Python package python/ against the installed library
#   make check-viewers the viewers' plugins (plugins/) as installed, through the viewers
#   make web      the decoder in WebAssembly and the page that shows .mmp files: build/web/
#   make check-web     that page in headless Chromium against mmp-dec
#   make mpi      bin/mmp-enc-mpi, the tiles spread over the ranks of an MPI job
#   make check-mpi     mmp-enc-mpi and scripts/rd-sweep --mpi under mpirun
#   make demo     encode images/camera.pgm at lambda 10, decode it, print figures
#   make deps     install the Debian packages the build needs (root), or print the line
#   make install  mmp-enc, mmp-dec, <mmp.h>, libmmp and libmmpdec (.a, .so, .pc),
#                 manual pages, file(1) magic and MIME type, the viewers' plugins
#                 (plugins/plugins.mk) under $(DESTDIR)$(PREFIX) (default /usr/local);
#                 make uninstall
#
# Switches: OPENCL=0 builds without the opencl engine (and without the
# OpenCL ICD loader), OPENMP=0 without the omp engine and without OpenMP.
# Either way seq is there and every output byte is the same.
#
# Libraries, one per role, each built from whole folders (docs/architecture.md):
#   build/libmmpdec.a  the decoder: common/, dict/, predict/, filter/, and mmp/common/
#                      (the normative code both sides share) with mmp/dec/; no search,
#                      no engine; compiled without OpenMP (its threads are pthreads), so
#                      that it needs libc, libm and pthreads alone (also as libmmpdec.so)
#   build/libmmp.a     the whole codec: libmmpdec's objects, mmp/enc/ (the encoder and
#                      its search) and the engines of kernels/
#   build/libmmpcli.a  the front ends' helpers: mmp/imageio/ (netpbm files through
#                      libnetpbm, PNG through libpng) and mmp/cli/'s shared parts
# mmp-dec links libmmpdec.a alone: the proof that decoding needs no search.

CC      ?= cc
OPT     ?= -O3
CFLAGS  ?= $(OPT) -g
OPENCL  ?= 1
OPENMP  ?= 1
# Normative floating point (LSP) must not be contracted into FMAs or reassociated.
MMP_CFLAGS = -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wshadow -Wno-unused-parameter \
             -ffp-contract=off -fno-fast-math -pthread -I. -MMD -MP
ifeq ($(OPENMP),1)
MMP_CFLAGS += -fopenmp -DMMP_HAVE_OPENMP
OMP_LIBS    = -fopenmp
else
MMP_CFLAGS += -Wno-unknown-pragmas
OMP_LIBS    =
endif
ifeq ($(OPENCL),1)
MMP_CFLAGS += -DMMP_HAVE_OPENCL
CL_LIBS     = -lOpenCL
else
CL_LIBS     =
endif
DEC_LIBS = -lm -pthread
ENC_LIBS = $(DEC_LIBS) $(OMP_LIBS) $(CL_LIBS)
CLI_LIBS = -lz -lnetpbm $(shell pkg-config --libs libpng 2>/dev/null || echo -lpng) $(shell pkg-config --libs libjpeg 2>/dev/null || echo -ljpeg) $(shell pkg-config --libs libtiff-4 2>/dev/null || echo -ltiff)

BUILD ?= build
BIN   ?= bin

# Shared normative code (encoder and decoder) and the decoder.
DEC_SRC = $(wildcard common/*.c) $(wildcard dict/*.c) $(wildcard predict/*.c) $(wildcard filter/*.c) \
          $(wildcard mmp/common/*.c) $(wildcard mmp/dec/*.c)
# The search engines: seq always, omp and opencl by switch.
KERN_SRC = kernels/registry.c kernels/cpu_match.c kernels/seq.c
ifeq ($(OPENMP),1)
KERN_SRC += kernels/omp.c
endif
ifeq ($(OPENCL),1)
KERN_SRC += $(wildcard kernels/opencl/*.c)
KERN_GEN  = $(BUILD)/kernels/opencl/cl_source.o
endif
# Encoder-only code: the encoder, the search, the engines.
ENC_SRC = $(wildcard mmp/enc/*.c) $(KERN_SRC)
# The front ends' shared code: image files, output handling, rate control.
# The programs' mains (mmp/cli/*_main.c) are linked one each.
CLI_MAINS = mmp/cli/enc_main.c mmp/cli/dec_main.c mmp/cli/metrics_main.c
CLI_SRC = $(wildcard mmp/imageio/*.c) $(filter-out $(CLI_MAINS),$(wildcard mmp/cli/*.c))
LIB_SRC = $(DEC_SRC) $(ENC_SRC) $(CLI_SRC)

DEC_OBJ = $(DEC_SRC:%.c=$(BUILD)/%.o)
LIB_OBJ = $(DEC_OBJ) $(ENC_SRC:%.c=$(BUILD)/%.o) $(KERN_GEN)
CLI_OBJ = $(CLI_SRC:%.c=$(BUILD)/%.o)

TEST_SRC = $(filter-out $(if $(filter 1,$(OPENCL)),,tests/test_opencl.c),$(wildcard tests/test_*.c))
TEST_BIN = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

LIB     = $(BUILD)/libmmp.a
DEC_LIB = $(BUILD)/libmmpdec.a
CLI_LIB = $(BUILD)/libmmpcli.a

.PHONY: all check demo deps clean decoder-only check-layers check-references check-history
all: $(BIN)/mmp-enc $(BIN)/mmp-dec $(BIN)/mmp-metrics

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(MMP_CFLAGS) $(CFLAGS) -c $< -o $@

# The decoder's objects (and so the shared code, in libmmp too) compile
# without -fopenmp: OpenMP is the encoder's alone. A `#pragma omp` there
# draws -Wunknown-pragmas, and a call into the OpenMP runtime fails the link
# of libmmpdec.so (-z defs).
DEC_CFLAGS = $(filter-out -fopenmp,$(MMP_CFLAGS))
$(DEC_OBJ) $(DEC_OBJ:$(BUILD)/%.o=$(BUILD)/pic/%.o): MMP_CFLAGS := $(DEC_CFLAGS)

# The OpenCL kernels, embedded in the binary as one C string: the layouts
# they share with the host code (kernels/opencl/layout.h) first, then the
# kernels.
CL_SRC = $(wildcard kernels/opencl/layout.h) $(sort $(wildcard kernels/opencl/*.cl))
$(BUILD)/kernels/opencl/cl_source.c: $(CL_SRC)
	@mkdir -p $(dir $@)
	{ echo '/* Generated from $(CL_SRC) by the Makefile: do not edit. */'; \
	  echo 'const char mmp_opencl_source[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$$/\\n"/' $(CL_SRC); \
	  echo '    ;'; } > $@.tmp && mv $@.tmp $@
$(BUILD)/kernels/opencl/cl_source.o: $(BUILD)/kernels/opencl/cl_source.c
	$(CC) $(MMP_CFLAGS) $(CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(DEC_LIB): $(DEC_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(CLI_LIB): $(CLI_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(BIN)/mmp-enc: $(BUILD)/mmp/cli/enc_main.o $(CLI_LIB) $(LIB)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(CLI_LIBS) $(ENC_LIBS)

$(BIN)/mmp-dec: $(BUILD)/mmp/cli/dec_main.o $(CLI_LIB) $(DEC_LIB)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(CLI_LIBS) $(DEC_LIBS)

# mmp-metrics (PSNR, MS-SSIM, SSIMULACRA 2 of two image files) is make rd's
# measure; built, not installed.
$(BIN)/mmp-metrics: $(BUILD)/mmp/cli/metrics_main.o $(CLI_LIB) $(DEC_LIB)
	@mkdir -p $(BIN)
	$(CC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(CLI_LIBS) $(DEC_LIBS)

# mmp-dec is linked against the decoder library alone; this target builds
# just it, as the proof that the decoder needs no search code.
decoder-only: $(BIN)/mmp-dec

$(BUILD)/tests/%: tests/%.c tests/util.h tests/container_util.h tests/cli_harness.h tests/meta_util.h $(CLI_LIB) $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(MMP_CFLAGS) $(CFLAGS) -o $@ $< $(CLI_LIB) $(LIB) $(LDFLAGS) -lcmocka $(CLI_LIBS) $(ENC_LIBS)

# Includes point down the layers (docs/architecture.md); every file a
# source or document names exists.
check-layers:
	@sh scripts/check-layers
check-references:
	@sh scripts/check-references
# Comments, --help and docs speak of the code, not of its history: no
# working periods, dates, commit hashes or timings outside docs/results.md
# and docs/tuning.md.
check-history:
	@sh scripts/check-history

check: deps-check check-layers check-references check-history all $(TEST_BIN)
	@MMP_BIN=$(abspath $(BIN)) sh tests/run-tests.sh $(TEST_BIN)
	@$(MAKE) --no-print-directory check-install

demo: deps-check all
	@sh scripts/demo.sh $(BIN) images/camera.pgm 10

deps:
	@sh scripts/install-deps.sh

deps-check:
	@sh scripts/install-deps.sh --if-missing

clean:
	rm -rf $(BUILD) $(BIN)

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(BUILD)/mmp/cli/enc_main.d $(BUILD)/mmp/cli/dec_main.d

# ------------------------------------------------ make install, make uninstall
# Installs mmp-enc, mmp-dec, the public header (as <mmp.h>), the static and
# the shared library (libmmp.so.$(SO_MAJOR), exporting only the functions of
# mmp.h: mmp/libmmp.map), mmp.pc for pkg-config, the decoder alone as
# libmmpdec.a and libmmpdec.so.$(SO_MAJOR) (the functions of mmp.h it
# defines: mmp/libmmpdec.map; libc, libm and pthreads its only dependencies)
# with mmpdec.pc, the manual pages, the file(1) magic (data/mmp.magic, as
# $(PREFIX)/share/mmp/mmp.magic: file reads no folder of a prefix, so it is
# named with file -m) and the MIME type (data/mmp.xml, into
# $(PREFIX)/share/mime/packages/), under $(DESTDIR)$(PREFIX). check-install
# installs into $(BUILD)/stage, builds tests/install/example.c there with
# pkg-config and runs it, builds and runs the decoding program of
# tests/install/decoder.sh against libmmpdec and checks that library's
# dependencies, checks that the manual pages name every option of
# --help-all, and uninstalls again.
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
DESTDIR ?=
VERSION  = $(shell sed -n 's/^\#define MMP_VERSION_STRING "\(.*\)"/\1/p' mmp/mmp.h)
# The soname's number is mmp.h's MMP_ABI_VERSION, which changes only when
# an existing function or field does (mmp.h says how the settings and the
# structs the library fills grow without it).
SO_MAJOR = $(shell sed -n 's/^\#define MMP_ABI_VERSION \([0-9]*\)/\1/p' mmp/mmp.h)
SHLIB    = $(BUILD)/libmmp.so.$(VERSION)
DEC_SHLIB = $(BUILD)/libmmpdec.so.$(VERSION)
PIC_OBJ  = $(LIB_OBJ:$(BUILD)/%.o=$(BUILD)/pic/%.o)
DEC_PIC_OBJ = $(DEC_OBJ:$(BUILD)/%.o=$(BUILD)/pic/%.o)
MAN_PAGES = mmp/cli/mmp-enc.1 mmp/cli/mmp-dec.1
STAGE    = $(BUILD)/stage

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(MMP_CFLAGS) $(CFLAGS) -fPIC -c $< -o $@
$(BUILD)/pic/%.o: $(BUILD)/%.c
	@mkdir -p $(dir $@)
	$(CC) $(MMP_CFLAGS) $(CFLAGS) -fPIC -c $< -o $@

# The PIC objects depend on the headers too (a struct that changes its
# layout must not leave stale objects in the shared library).
-include $(PIC_OBJ:.o=.d)

$(SHLIB): $(PIC_OBJ) mmp/libmmp.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,libmmp.so.$(SO_MAJOR) -Wl,--version-script=mmp/libmmp.map \
	    -o $@ $(PIC_OBJ) $(LDFLAGS) $(ENC_LIBS)

# -z defs: every symbol the decoder uses resolves in the libraries named
# here, so that it can need no other.
$(DEC_SHLIB): $(DEC_PIC_OBJ) mmp/libmmpdec.map
	$(CC) $(CFLAGS) -shared -Wl,-soname,libmmpdec.so.$(SO_MAJOR) \
	    -Wl,--version-script=mmp/libmmpdec.map -Wl,-z,defs -o $@ $(DEC_PIC_OBJ) $(LDFLAGS) $(DEC_LIBS)

# The .pc files hold PREFIX and LIBDIR, which change from one make install
# to the next (check-install and check-python stage their own): written on
# every install, never taken from an earlier one.
.PHONY: $(BUILD)/mmp.pc $(BUILD)/mmpdec.pc
# $(call pc_file,NAME,DESCRIPTION,PRIVATE LIBS): a pkg-config file into $@.
define pc_file
	@mkdir -p $(dir $@)
	{ echo 'prefix=$(PREFIX)'; echo 'libdir=$(LIBDIR)'; echo 'includedir=$${prefix}/include'; \
	  echo; echo 'Name: $(1)'; echo 'Description: $(2)'; echo 'Version: $(VERSION)'; \
	  echo 'Libs: -L$${libdir} -l$(1)'; echo 'Libs.private: $(3)'; \
	  echo 'Cflags: -I$${includedir}'; } > $@
endef
$(BUILD)/mmpdec.pc: Makefile mmp/mmp.h
	$(call pc_file,mmpdec,Multidimensional Multiscale Parser image codec: the decoder alone,$(DEC_LIBS))
$(BUILD)/mmp.pc: Makefile mmp/mmp.h
	$(call pc_file,mmp,Multidimensional Multiscale Parser image codec,$(ENC_LIBS))

.PHONY: install uninstall check-install
install: all $(LIB) $(SHLIB) $(BUILD)/mmp.pc $(DEC_LIB) $(DEC_SHLIB) $(BUILD)/mmpdec.pc
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(LIBDIR)/pkgconfig \
	    $(DESTDIR)$(PREFIX)/share/man/man1 $(DESTDIR)$(PREFIX)/share/mmp \
	    $(DESTDIR)$(PREFIX)/share/mime/packages
	install -m 755 $(BIN)/mmp-enc $(BIN)/mmp-dec $(DESTDIR)$(PREFIX)/bin/
	install -m 644 mmp/mmp.h $(DESTDIR)$(PREFIX)/include/mmp.h
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/libmmp.a
	install -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libmmp.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmmp.so.$(SO_MAJOR)
	ln -sf libmmp.so.$(SO_MAJOR) $(DESTDIR)$(LIBDIR)/libmmp.so
	install -m 644 $(BUILD)/mmp.pc $(DESTDIR)$(LIBDIR)/pkgconfig/mmp.pc
	install -m 644 $(DEC_LIB) $(DESTDIR)$(LIBDIR)/libmmpdec.a
	install -m 755 $(DEC_SHLIB) $(DESTDIR)$(LIBDIR)/
	ln -sf libmmpdec.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmmpdec.so.$(SO_MAJOR)
	ln -sf libmmpdec.so.$(SO_MAJOR) $(DESTDIR)$(LIBDIR)/libmmpdec.so
	install -m 644 $(BUILD)/mmpdec.pc $(DESTDIR)$(LIBDIR)/pkgconfig/mmpdec.pc
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 data/mmp.magic $(DESTDIR)$(PREFIX)/share/mmp/mmp.magic
	install -m 644 data/mmp.xml $(DESTDIR)$(PREFIX)/share/mime/packages/mmp.xml
	@$(MAKE) --no-print-directory install-plugins

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/mmp-enc $(DESTDIR)$(PREFIX)/bin/mmp-dec \
	    $(DESTDIR)$(PREFIX)/include/mmp.h $(DESTDIR)$(LIBDIR)/libmmp.a \
	    $(DESTDIR)$(LIBDIR)/libmmp.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libmmp.so.$(SO_MAJOR) \
	    $(DESTDIR)$(LIBDIR)/libmmp.so $(DESTDIR)$(LIBDIR)/pkgconfig/mmp.pc \
	    $(DESTDIR)$(LIBDIR)/libmmpdec.a $(DESTDIR)$(LIBDIR)/libmmpdec.so.$(VERSION) \
	    $(DESTDIR)$(LIBDIR)/libmmpdec.so.$(SO_MAJOR) $(DESTDIR)$(LIBDIR)/libmmpdec.so \
	    $(DESTDIR)$(LIBDIR)/pkgconfig/mmpdec.pc \
	    $(MAN_PAGES:mmp/cli/%=$(DESTDIR)$(PREFIX)/share/man/man1/%) \
	    $(DESTDIR)$(PREFIX)/share/mmp/mmp.magic $(DESTDIR)$(PREFIX)/share/mime/packages/mmp.xml
	@$(MAKE) --no-print-directory uninstall-plugins
	rmdir $(DESTDIR)$(PREFIX)/share/mmp 2>/dev/null || true

# The viewers' plugins (docs/viewers.md): install-plugins, uninstall-plugins,
# check-viewers.
include plugins/plugins.mk

check-install: all
	@rm -rf $(STAGE)
	@$(MAKE) --no-print-directory install DESTDIR=$(abspath $(STAGE)) PREFIX=/usr >/dev/null
	@set -e; stage=$(abspath $(STAGE)); \
	export PKG_CONFIG_PATH=$$stage/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$$stage; \
	$(CC) $(CFLAGS) -o $(STAGE)/example tests/install/example.c $$(pkg-config --cflags --libs mmp) \
	    $(LDFLAGS); \
	LD_LIBRARY_PATH=$$stage/usr/lib $(STAGE)/example; \
	LD_LIBRARY_PATH=$$stage/usr/lib ldd $(STAGE)/example | grep -q "libmmp.so.$(SO_MAJOR) => $$stage" \
	    || { echo "check-install: the example does not use the installed libmmp.so.$(SO_MAJOR)"; exit 1; }; \
	$(CC) $(CFLAGS) -o $(STAGE)/example-static tests/install/example.c \
	    $$(pkg-config --cflags mmp) $$stage/usr/lib/libmmp.a $$(pkg-config --static --libs-only-other --libs-only-l mmp | sed 's/-lmmp//') $(LDFLAGS); \
	$(STAGE)/example-static; \
	exported=$$(nm -D --defined-only $$stage/usr/lib/libmmp.so.$(SO_MAJOR) | awk '$$2 == "T" {print $$3}' | sed 's/@.*//' | sort); \
	public=$$(grep -v '^typedef' mmp/mmp.h | sed -nE 's/^[a-z].*[ *](mmp_[a-z_0-9]+)\(.*/\1/p' | sort); \
	[ "$$exported" = "$$public" ] || { echo "check-install: libmmp.so exports:" $$exported; \
	    echo "check-install: mmp.h declares:" $$public; exit 1; }; \
	for p in mmp-enc mmp-dec; do \
	    for o in $$($$stage/usr/bin/$$p --help-all | grep -oE -- '--[a-z][a-z-]*' | sort -u); do \
	        sed 's/\\-/-/g' $$stage/usr/share/man/man1/$$p.1 | grep -q -- "$$o" \
	            || { echo "check-install: $$p.1 does not describe $$o"; exit 1; }; \
	    done; \
	done; \
	CC="$(CC)" CFLAGS="$(CFLAGS)" LDFLAGS="$(LDFLAGS)" sh tests/install/decoder.sh $$stage/usr $(SO_MAJOR)
	@$(MAKE) --no-print-directory uninstall DESTDIR=$(abspath $(STAGE)) PREFIX=/usr >/dev/null
	@left=$$(find $(STAGE) -type f -o -type l | grep -v '/example' || true); \
	[ -z "$$left" ] || { echo "check-install: uninstall left $$left"; exit 1; }
	@echo "check-install: installed, built and ran tests/install/example.c (shared and static), exports = mmp.h, manual pages complete, uninstalled"
	@echo "check-install: libmmpdec built and ran tests/install/decode.c (shared and static), needs libc, libm, pthreads alone"

# ---------------------------------------------------------------- make check-python
# The Python package python/ (ctypes binding and Pillow plugin) against the
# library as installed: make install into $(PYSTAGE)/prefix, a venv with the
# Debian interpreter's packages (numpy, Pillow, pytest: install-deps.sh
# --python), pip install of a copy of python/ with no network and no build
# isolation (setup.py records the libdir pkg-config names), then the tests
# of python/tests/ with that prefix's mmp-dec; the stage is removed after a
# pass. PYTHON is /usr/bin/python3 by default: the interpreter whose
# packages those are, whatever python3 comes first on PATH.
PYTHON  ?= /usr/bin/python3
PYSTAGE  = $(BUILD)/pystage
.PHONY: check-python
check-python: all
	@sh scripts/install-deps.sh --if-missing --python
	@rm -rf $(PYSTAGE)
	@XDG_DATA_DIRS=$(abspath $(PYSTAGE))/prefix/share:/usr/share \
	    $(MAKE) --no-print-directory install PREFIX=$(abspath $(PYSTAGE))/prefix >/dev/null
	@set -e; st=$(abspath $(PYSTAGE)); \
	$(PYTHON) -m venv --system-site-packages $$st/venv; \
	mkdir -p $$st/src; cp -R python/pyproject.toml python/setup.py python/README.md python/mmp $$st/src/; \
	export PIP_DISABLE_PIP_VERSION_CHECK=1 PYTHONDONTWRITEBYTECODE=1; \
	PKG_CONFIG_PATH=$$st/prefix/lib/pkgconfig $$st/venv/bin/python -m pip install -q \
	    --no-deps --no-build-isolation --no-index --no-cache-dir $$st/src; \
	PATH=$$st/prefix/bin:$$PATH MMP_EXPECT_INSTALLED=1 \
	    $$st/venv/bin/python -m pytest -q -p no:cacheprovider python/tests; \
	rm -rf $$st
	@echo "check-python: installed the library and python/ into a venv, python/tests passed, removed"

# ---------------------------------------------------------------- make web, make check-web
# web: the decoder built to WebAssembly with emscripten (Debian's emcc:
# scripts/install-deps.sh --web) and the page that shows .mmp files, as a
# folder to serve over http: $(WEB_BUILD)/ holds index.html and view.js
# (from web/), mmp.js (emscripten's loader, createMmpModule()) and
# mmp.wasm. It compiles libmmpdec's sources (DEC_SRC) and web/mmp_wasm.c
# with the normative flags (-ffp-contract=off, no -ffast-math) and without
# pthreads: the module runs on one thread, its crews with no helper.
WEB_CC     ?= emcc
WEB_BUILD   = $(BUILD)/web
WEB_OPT    ?= -O3
WEB_CFLAGS  = $(filter-out -pthread -fopenmp -DMMP_HAVE_OPENMP -DMMP_HAVE_OPENCL,$(MMP_CFLAGS)) $(WEB_OPT)
WEB_OBJ     = $(DEC_SRC:%.c=$(WEB_BUILD)/obj/%.o) $(WEB_BUILD)/obj/web/mmp_wasm.o
WEB_LDFLAGS = $(WEB_OPT) -sMODULARIZE=1 -sEXPORT_NAME=createMmpModule -sENVIRONMENT=web \
              -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=2GB -sFILESYSTEM=0 \
              -sEXPORTED_FUNCTIONS=_malloc,_free -sEXPORTED_RUNTIME_METHODS=UTF8ToString
WEB_PAGE    = web/index.html web/view.js

.PHONY: web check-web web-cc
web: $(WEB_BUILD)/mmp.js $(WEB_PAGE:web/%=$(WEB_BUILD)/%)

web-cc:
	@command -v $(WEB_CC) >/dev/null || { echo "make web: no $(WEB_CC); scripts/install-deps.sh --web installs emscripten" >&2; exit 1; }

$(WEB_BUILD)/obj/%.o: %.c | web-cc
	@mkdir -p $(dir $@)
	$(WEB_CC) $(WEB_CFLAGS) -c $< -o $@

# emcc writes mmp.wasm beside mmp.js. Its JavaScript optimiser needs
# Debian's acorn (node-acorn, in /usr/share/nodejs), which a node not
# Debian's (NodeSource's) does not look for by itself.
$(WEB_BUILD)/mmp.js: $(WEB_OBJ)
	NODE_PATH=/usr/share/nodejs$${NODE_PATH:+:$$NODE_PATH} $(WEB_CC) $(WEB_LDFLAGS) -o $@ $^

$(WEB_BUILD)/%: web/%
	@mkdir -p $(dir $@)
	cp $< $@

-include $(WEB_OBJ:.o=.d)

# check-web: the page in headless Chromium (tests/web/check-web.js, on
# Debian's node and chromium alone, driven over the DevTools protocol):
# every conformance stream opened in it shows the pixels of mmp-dec's PNG
# output in 8 bits, one dropped on it too, and bad files show mmp-dec's
# error; so does tests/web/grad-2048.mmp (2048 x 2048, four tiles: its
# decode grows the module's memory past its start). The packages come
# from scripts/install-deps.sh --web.
check-web: all
	@sh scripts/install-deps.sh --if-missing --web
	@$(MAKE) --no-print-directory web
	node tests/web/check-web.js $(WEB_BUILD) $(BIN)/mmp-dec tests/conformance/*.mmp \
	    tests/web/grad-2048.mmp

# ---------------------------------------------------------------- make mpi, make check-mpi
# mpi: bin/mmp-enc-mpi (docs/cluster.md), mmp/mpi/ compiled with Open MPI's
# mpicc (Debian's libopenmpi-dev and openmpi-bin: scripts/install-deps.sh
# --mpi) and linked with libmmpcli.a and libmmp.a, whose internal
# mmp/enc/tiled.h it uses. make and make check need no MPI.
# check-mpi: tests/mpi/check-mpi.sh, mpirun --oversubscribe on small crops:
# mmp-enc-mpi writes mmp-enc's bytes, a rank that fails or is killed fails
# the run and leaves no file, and scripts/rd-sweep --mpi (python3-mpi4py)
# writes the rows of a local sweep.
MPICC  ?= mpicc
MPI_SRC = $(wildcard mmp/mpi/*.c)
MPI_OBJ = $(MPI_SRC:%.c=$(BUILD)/%.o)

.PHONY: mpi check-mpi check-mpi-sanitize mpi-cc
mpi: $(BIN)/mmp-enc-mpi

mpi-cc:
	@command -v $(MPICC) >/dev/null || { echo "make mpi: no $(MPICC); scripts/install-deps.sh --mpi installs Open MPI" >&2; exit 1; }

$(MPI_OBJ): $(BUILD)/%.o: %.c | mpi-cc
	@mkdir -p $(dir $@)
	$(MPICC) $(MMP_CFLAGS) $(CFLAGS) -c $< -o $@

$(BIN)/mmp-enc-mpi: $(MPI_OBJ) $(CLI_LIB) $(LIB)
	@mkdir -p $(BIN)
	$(MPICC) $(CFLAGS) -o $@ $^ $(LDFLAGS) $(CLI_LIBS) $(ENC_LIBS)

-include $(MPI_OBJ:.o=.d)

check-mpi: all
	@sh scripts/install-deps.sh --if-missing --mpi
	@$(MAKE) --no-print-directory mpi
	@MMP_BIN=$(abspath $(BIN)) sh tests/mpi/check-mpi.sh

# check-mpi-sanitize: check-mpi built with the sanitizers (build-san/,
# bin-san/, as check-sanitize). Open MPI's own leaks are suppressed by
# library (tests/fuzz/lsan.supp), which needs its frames named: its
# components stay loaded and the unwinder is the slow one.
MPI_SAN_ENV = ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
              UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
              LSAN_OPTIONS=suppressions=$(abspath tests/fuzz/lsan.supp):print_suppressions=0:fast_unwind_on_malloc=0 \
              OMPI_MCA_mca_base_component_disable_dlclose=1 PMIX_MCA_mca_base_component_disable_dlclose=1
check-mpi-sanitize:
	@$(MPI_SAN_ENV) $(MAKE) --no-print-directory check-mpi BUILD=$(SAN_BUILD) BIN=$(SAN_BIN) \
	    CFLAGS="$(SAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined"

# ---------------------------------------------------------------- make rd
# Rate-distortion results for two sets of images: make rd makes both, make
# rd-grey or make rd-colour one. The CSVs and plots go to $(RD_DIR), by
# default build/rd, and the tables and the plots' list to the sections of
# a results page that make rd writes (scripts/results-page; the page's
# other sections are left alone): $(RD_DIR)/results.md, or docs/results.md
# when RD_DIR is docs/results. So make rd leaves docs/ alone, and make
# rd-docs (make rd RD_DIR=docs/results) updates the project's results:
# docs/results/ and docs/results.md (which says which sections are whose).
#
# rd-grey, the gray images $(RD_IMAGES): the mmp sweep in both coding orders
# (rd-mmp.csv, codecs mmp and mmp-wavefront; resumable: rows already there
# are kept, so only missing image x lambda x engine x order runs are
# encoded: in docs/results none for an unchanged encoder, image set and
# lambdas, in a fresh build/rd all of them, hours on two cores; delete the
# file to measure a changed encoder), the standard codecs
# (rd-anchors-local.csv, also resumable), the plots (rd-*.png, time-*.png)
# and the page's sections grey-bdrate (BD-rates against JPEG 2000),
# grey-order (wavefront against raster) and grey-plots.
#
# rd-colour, the colour images $(RD_COLOUR_IMAGES): the same in colour,
# raster order only, at the default 4:4:4 (codec mmp) and at 4:2:0 (codec
# mmp-420): rd-mmp-colour.csv (psnr is the RGB PSNR),
# rd-anchors-colour-local.csv (the codecs' usual colour settings, with
# psnr_y and chroma), the plots rd-colour-IMAGE.png and time-colour-*.png
# (up to $(RD_COLOUR_MAX_BPP) bpp) and the sections colour-bdrate (BD-rates
# on RGB PSNR) and colour-plots. When an mmp colour sweep fails, the other
# codecs' rows, the table and the plots are still made, and rd-colour fails
# at the end, naming it.
#
# Override RD_IMAGES, RD_COLOUR_IMAGES, RD_LAMBDAS, RD_ENGINES
# (comma-separated), RD_JOBS, RD_DIR, RD_PAGE, RD_SPEED or RD_COLOUR_MAX_BPP.
# The codec tools come from scripts/install-deps.sh --extra; a
# codec whose tools are missing is skipped with a warning.
RD_DIR     ?= build/rd
RD_PAGE    ?= $(if $(filter docs/results docs/results/,$(RD_DIR)),docs/results.md,$(RD_DIR)/results.md)
RD_IMAGES  ?= $(wildcard images/*.pgm)
RD_COLOUR_IMAGES ?= $(wildcard images/colour/*.ppm)
RD_COLOUR_MAX_BPP ?= 4
RD_LAMBDAS ?= 0.1,0.3,1,3,10,30,100,300,1000,3000
RD_ENGINES ?= seq
RD_JOBS    ?= $(shell nproc 2>/dev/null || echo 2)
# The results' tables are of the exhaustive search (speed 0), whatever the
# default preset; the default's cost against it is the speed-preset table.
RD_SPEED   ?= 0
RD_CSV      = $(RD_DIR)/rd-mmp.csv $(RD_DIR)/rd-anchors-local.csv
RD_CSV_COLOUR = $(RD_DIR)/rd-mmp-colour.csv $(RD_DIR)/rd-anchors-colour-local.csv

.PHONY: rd rd-grey rd-colour rd-deps rd-docs
rd-deps:
	-@sh scripts/install-deps.sh --if-missing --extra

rd: rd-grey rd-colour

rd-docs:
	@$(MAKE) --no-print-directory rd RD_DIR=docs/results

rd-grey: all rd-deps
	python3 scripts/rd-sweep -j $(RD_JOBS) -l $(RD_LAMBDAS) -e $(RD_ENGINES) --bin $(abspath $(BIN)) \
	    --enc-args "--speed $(RD_SPEED)" -o $(RD_DIR)/rd-mmp.csv $(RD_IMAGES)
	python3 scripts/rd-sweep -j $(RD_JOBS) -l $(RD_LAMBDAS) -e $(RD_ENGINES) --bin $(abspath $(BIN)) \
	    --enc-args "--speed $(RD_SPEED)" --order wavefront -o $(RD_DIR)/rd-mmp.csv $(RD_IMAGES)
	python3 scripts/compare -j $(RD_JOBS) -o $(RD_DIR)/rd-anchors-local.csv $(RD_IMAGES)
	python3 scripts/plot -o $(RD_DIR) $(RD_CSV)
	python3 scripts/results-page --data $(RD_DIR) --page $(RD_PAGE) --set grey
	@echo "make rd-grey: results in $(RD_DIR) ($(notdir $(RD_CSV)) rd-*.png time-*.png) and $(RD_PAGE)"

rd-colour: all rd-deps
	@mmp=0; python3 scripts/rd-sweep -j $(RD_JOBS) -l $(RD_LAMBDAS) -e $(RD_ENGINES) --bin $(abspath $(BIN)) \
	    --enc-args "--speed $(RD_SPEED)" -o $(RD_DIR)/rd-mmp-colour.csv $(RD_COLOUR_IMAGES) || mmp=1; \
	python3 scripts/rd-sweep -j $(RD_JOBS) -l $(RD_LAMBDAS) -e $(RD_ENGINES) --bin $(abspath $(BIN)) \
	    --enc-args "--speed $(RD_SPEED) --chroma 420" --codec-name mmp-420 \
	    -o $(RD_DIR)/rd-mmp-colour.csv $(RD_COLOUR_IMAGES) || mmp=1; \
	[ $$mmp = 0 ] || echo "make rd-colour: the mmp colour sweep failed (see above); the other codecs go on" >&2; \
	python3 scripts/compare -j $(RD_JOBS) -o $(RD_DIR)/rd-anchors-colour-local.csv $(RD_COLOUR_IMAGES) || exit 1; \
	csv=$$(for f in $(RD_CSV_COLOUR); do [ -f $$f ] && echo $$f; done); \
	python3 scripts/plot -o $(RD_DIR) --tag colour --max-bpp $(RD_COLOUR_MAX_BPP) --ylabel 'RGB PSNR (dB)' $$csv \
	    || exit 1; \
	python3 scripts/results-page --data $(RD_DIR) --page $(RD_PAGE) --set colour || exit 1; \
	echo "make rd-colour: results in $(RD_DIR) ($(notdir $(RD_CSV_COLOUR)) rd-colour-*.png) and $(RD_PAGE)"; \
	[ $$mmp = 0 ] || { echo "make rd-colour: failed: the mmp colour sweep (rd-mmp-colour.csv) has failed jobs" >&2; exit 1; }

# Engine benchmark: median encode and decode seconds per engine and thread
# count (and speed preset), speedup over seq, and a check that every engine
# writes the same bytes. Override BENCH_IMAGES, BENCH_RUNS, BENCH_THREADS,
# BENCH_LAMBDA or BENCH_SPEEDS (e.g. "0 1 2 3 4").
BENCH_IMAGES  ?= images/camera.pgm
BENCH_RUNS    ?= 3
BENCH_THREADS ?= 1 2 4 8 16
BENCH_LAMBDA  ?= 10
BENCH_SPEEDS  ?= 0

.PHONY: bench
bench: all
	python3 scripts/bench -r $(BENCH_RUNS) -t "$(BENCH_THREADS)" -l $(BENCH_LAMBDA) \
	    -s "$(BENCH_SPEEDS)" --bin $(abspath $(BIN)) $(BENCH_IMAGES)

# ------------------------------------------------ make check-sanitize, make fuzz
# check-sanitize: the whole suite (the corpus test included) built with gcc's
# AddressSanitizer and UndefinedBehaviorSanitizer, in build-san/ and bin-san/
# so that the normal build is left alone. The runtimes (libasan8, libubsan1)
# come with gcc on Debian 12: no extra package.
SAN_BUILD = build-san
SAN_BIN   = bin-san
SAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_ENV   = ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
            UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
            LSAN_OPTIONS=suppressions=$(abspath tests/fuzz/lsan.supp):print_suppressions=0

# fuzz: libFuzzer targets (tests/fuzz/, docs/fuzzing.md) built with clang 14
# in build-fuzz/, each run for FUZZ_SECONDS (0: only replay the seed corpus
# and the regression files once) on a working corpus in build-fuzz/corpus/
# seeded from tests/fuzz/corpus/. Crashes go to build-fuzz/artifacts/. The
# packages (clang-14 libclang-rt-14-dev libomp-14-dev) are installed by
# `scripts/install-deps.sh --fuzz`; make check does not need them.
FUZZ_CC      ?= clang-14
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 60
# The fast targets by default (small images: about 1000 decodes, over 100
# round trips, a few engine comparisons per second and core); decode and
# roundtrip (larger images, ten to a hundred times slower) for rare runs.
FUZZ_ALL      = decode_fast roundtrip_fast diff pgm png decode roundtrip
FUZZ_TARGETS ?= decode_fast roundtrip_fast diff pgm png
FUZZ_MAX_LEN ?= 4096
FUZZ_LDFLAGS ?=
FUZZ_FLAGS    = -O2 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all
FUZZ_OBJ      = $(patsubst $(BUILD)/%,$(FUZZ_BUILD)/%,$(LIB_OBJ) $(CLI_OBJ))
FUZZ_LIB      = $(FUZZ_BUILD)/libmmp.a
FUZZ_BINS     = $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz_%)
FUZZ_ENV      = ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
                LSAN_OPTIONS=suppressions=$(abspath tests/fuzz/lsan.supp):print_suppressions=0

.PHONY: check-sanitize check-opt fuzz fuzz-build fuzz-deps fuzz-coverage
check-sanitize:
	@$(SAN_ENV) $(MAKE) --no-print-directory check BUILD=$(SAN_BUILD) BIN=$(SAN_BIN) \
	    CFLAGS="$(SAN_FLAGS)" LDFLAGS="-fsanitize=address,undefined"

# check-opt: the same bytes from a build at another optimisation level
# (-O2, as distributions build: build-O2/, bin-O2/) as from the default
# build, encoding and decoding crops (scripts/same-bytes).
OPT_OTHER ?= -O2
check-opt: all
	@$(MAKE) --no-print-directory all BUILD=build$(OPT_OTHER) BIN=bin$(OPT_OTHER) OPT=$(OPT_OTHER)
	sh scripts/same-bytes $(BIN) bin$(OPT_OTHER)

fuzz-deps:
	@sh scripts/install-deps.sh --if-missing --fuzz

$(FUZZ_BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(MMP_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(FUZZ_XFLAGS) -c $< -o $@
# The search's inner loops (the distance of a residual to every dictionary
# element) without libFuzzer's comparison tracing, which took three quarters
# of an encode's time there and guides nothing (the loops are the same for
# every input); edge coverage and the sanitizers stay. Likewise the
# encoder's other numeric code: the transform's search (quantisation, rates),
# the memo of matches (hashes), the restoration filter's fit. Likewise the
# code of the payload, on both sides: the range coder, the block syntax,
# the transform (transforms, scans, coefficient syntax), the residual stage,
# the restoration filter, the colour and alpha planes. Their comparisons
# meet values that the range decoder derives from the bytes (or that the
# encoder chose), never the bytes themselves, so they give libFuzzer's
# table of compared values nothing it can write back into an input; the
# container's and the image readers' code (header fields, literal bytes)
# keeps the tracing. On fuzz_decode_fast this keeps the coverage reached in
# a given time and runs more inputs in it (docs/fuzzing.md).
FUZZ_NO_CMP = kernels/cpu_match.c kernels/seq.c predict/lsp.c predict/predict.c dict/dict.c mmp/enc/search.c \
              mmp/enc/search_tx.c mmp/enc/search_memo.c mmp/enc/restore_fit.c \
              mmp/enc/deblock_fit.c \
              common/rangecoder.c mmp/common/syntax.c mmp/common/transform.c mmp/common/refine.c \
              mmp/common/refine_mix.c filter/restore.c \
              filter/deblock.c \
              mmp/common/colour.c mmp/common/alpha.c
$(FUZZ_NO_CMP:%.c=$(FUZZ_BUILD)/%.o): FUZZ_XFLAGS = -fno-sanitize-coverage=trace-cmp
# The engine's matching and the search (encoder only) with more inlining:
# under the sanitizers' checks clang leaves small helpers such as
# mmp_dict_elem out of line, called once per dictionary element in the
# exhaustive match of the partial blocks at the image's edges, which tiny
# images are made of. Every check and every edge counter stays (an inlined
# helper's edges are counted in its caller).
FUZZ_INLINE = kernels/cpu_match.c kernels/seq.c mmp/enc/search.c mmp/enc/search_tx.c
$(FUZZ_INLINE:%.c=$(FUZZ_BUILD)/%.o): FUZZ_XFLAGS += -mllvm -inline-threshold=1000
# Sources generated into $(BUILD) (the embedded OpenCL kernels).
$(FUZZ_BUILD)/%.o: $(BUILD)/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(MMP_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_LIB): $(FUZZ_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_util.h $(FUZZ_LIB)
	$(FUZZ_CC) $(MMP_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_LIB) $(FUZZ_LDFLAGS) \
	    $(CLI_LIBS) $(ENC_LIBS)

fuzz-build: fuzz-deps $(FUZZ_BINS)

# fuzz-portable: the FUZZ_TARGETS built as above into build-devfuzz/ for another
# x86-64 Linux machine without clang (docs/fuzzing.md, "On another machine"):
# linked with --as-needed, so that a target needs only the libraries it calls
# (the encoding and decoding targets not libnetpbm or libpng), with clang's
# libomp.so.5 and the leak suppressions beside them.
FUZZ_PORTABLE = build-devfuzz
.PHONY: fuzz-portable
fuzz-portable: fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZ_TARGETS:%=$(FUZZ_PORTABLE)/fuzz_%) \
	    FUZZ_BUILD=$(FUZZ_PORTABLE) FUZZ_LDFLAGS=-Wl,--as-needed
	cp /usr/lib/llvm-14/lib/libomp.so.5 tests/fuzz/lsan.supp $(FUZZ_PORTABLE)/

# Source-based line coverage of what the seeds, the kept minimised corpora
# (tests/fuzz/kept/TARGET), the regression files and the working corpora
# reach: build-fuzz-cov/report-TARGET.txt, summarised on stdout; for the
# decoding targets also the coverage of the decoder's code alone
# (scripts/decoder-coverage). Run it with the working corpora removed
# (rm -rf build-fuzz/corpus) to measure what the repository keeps.
FUZZ_COV = $(FUZZ_BUILD)-cov
fuzz-coverage: fuzz-deps
	@$(MAKE) --no-print-directory $(FUZZ_TARGETS:%=$(FUZZ_COV)/fuzz_%) FUZZ_BUILD=$(FUZZ_COV) \
	    FUZZ_FLAGS="-O1 -g -fprofile-instr-generate -fcoverage-mapping" >/dev/null
	@set -e; for t in $(FUZZ_TARGETS); do \
	    rm -f $(FUZZ_COV)/$$t.profraw; \
	    dirs=tests/fuzz/corpus/$$t; \
	    for d in tests/fuzz/kept/$$t tests/fuzz/regress/$$t $(FUZZ_BUILD)/corpus/$$t; do [ -d $$d ] && dirs="$$dirs $$d"; done; \
	    LLVM_PROFILE_FILE=$(FUZZ_COV)/$$t.profraw $(FUZZ_ENV) $(FUZZ_COV)/fuzz_$$t -runs=0 $$dirs \
	        >$(FUZZ_COV)/$$t.log 2>&1; \
	    llvm-profdata-14 merge -o $(FUZZ_COV)/$$t.profdata $(FUZZ_COV)/$$t.profraw; \
	    llvm-cov-14 report $(FUZZ_COV)/fuzz_$$t -instr-profile=$(FUZZ_COV)/$$t.profdata \
	        $(LIB_SRC) > $(FUZZ_COV)/report-$$t.txt; \
	    echo "== fuzz_$$t ($$dirs)"; \
	    grep -E '^(Filename|common|dict|predict|filter|mmp|kernels)/?|^TOTAL' $(FUZZ_COV)/report-$$t.txt; \
	    case $$t in decode*) echo "-- the decoder's code alone (scripts/decoder-coverage; --list for the lines missed):"; \
	        python3 scripts/decoder-coverage $(FUZZ_COV)/fuzz_$$t $(FUZZ_COV)/$$t.profdata;; esac; \
	done

# The encoding targets favour inputs that run fast (up to 30 times as often:
# libFuzzer's -entropic_scale_per_exec_time=1): three times the executions
# per second, and more coverage in a minute (docs/fuzzing.md).
fuzz: fuzz-build
	@set -e; for t in $(FUZZ_TARGETS); do \
	    mkdir -p $(FUZZ_BUILD)/corpus/$$t $(FUZZ_BUILD)/artifacts/$$t; \
	    dict=""; [ -f tests/fuzz/$${t%_fast}.dict ] && dict="-dict=tests/fuzz/$${t%_fast}.dict"; \
	    opts=""; case $$t in roundtrip*|diff) opts=-entropic_scale_per_exec_time=1;; esac; \
	    if [ "$(FUZZ_SECONDS)" = 0 ]; then \
	        dirs=tests/fuzz/corpus/$$t; \
	        [ -d tests/fuzz/regress/$$t ] && dirs="$$dirs tests/fuzz/regress/$$t"; \
	        echo "== fuzz_$$t: replaying $$dirs"; \
	        $(FUZZ_ENV) $(FUZZ_BUILD)/fuzz_$$t -runs=0 -timeout=25 $$dirs; \
	    else \
	        echo "== fuzz_$$t for $(FUZZ_SECONDS) s"; \
	        $(FUZZ_ENV) $(FUZZ_BUILD)/fuzz_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=25 \
	            -rss_limit_mb=3072 -max_len=$(FUZZ_MAX_LEN) -print_final_stats=1 $$dict $$opts \
	            -artifact_prefix=$(FUZZ_BUILD)/artifacts/$$t/ \
	            $(FUZZ_BUILD)/corpus/$$t tests/fuzz/corpus/$$t \
	            $$([ -d tests/fuzz/kept/$$t ] && echo tests/fuzz/kept/$$t); \
	    fi; \
	done

-include $(FUZZ_OBJ:.o=.d)
