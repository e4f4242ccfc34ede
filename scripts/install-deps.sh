#!/bin/sh
# Install the Debian packages that building and testing mmp need.
#   scripts/install-deps.sh              install (as root) or print the apt-get line
#   scripts/install-deps.sh --if-missing do that only when a package is missing
#   scripts/install-deps.sh --extra      also the other codecs and tools used by scripts/
#   scripts/install-deps.sh --fuzz       also clang 14 and libFuzzer (make fuzz only; make check
#                                        and make check-sanitize need neither)
#   scripts/install-deps.sh --python     also Python 3 with numpy, Pillow and pytest (make
#                                        check-python only)
#   scripts/install-deps.sh --viewers    also gdk-pixbuf's headers and tools, and ImageMagick
#                                        (make check-viewers only)
#   scripts/install-deps.sh --web        also emscripten, chromium and node (make web and make
#                                        check-web only)
#   scripts/install-deps.sh --mpi        also Open MPI and mpi4py (make mpi and make check-mpi
#                                        only)
set -eu

# netpbm: pamcut, which make check-opt's scripts/same-bytes crops with.
# file: file(1), which tests/test_cli.c runs with data/mmp.magic (not on a
# minimal Debian 12).
PKGS="gcc make libc6-dev pkgconf libnetpbm-dev libpng-dev libjpeg62-turbo-dev libtiff-dev libcmocka-dev zlib1g-dev ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd netpbm file"
FUZZ="clang-14 libclang-rt-14-dev libomp-14-dev"
# The Python package python/ and its tests: Debian's interpreter and modules,
# a venv (python3-venv) and pip with setuptools to install it.
PYTHON="python3 python3-venv python3-pip python3-setuptools python3-numpy python3-pil python3-pytest"
# The viewers' plugins (plugins/) and their tests: gdk-pixbuf's headers, its
# gdk-pixbuf-query-loaders and gdk-pixbuf-thumbnailer, update-mime-database
# (shared-mime-info), and ImageMagick 6 (convert, compare).
VIEWERS="libgdk-pixbuf-2.0-dev libgdk-pixbuf2.0-bin shared-mime-info imagemagick"
# The decoder in WebAssembly (emcc, with its own clang, lld and binaryen) and
# the page's test: headless chromium driven by node (which emscripten needs
# too).
WEB="emscripten chromium nodejs"
# mmp-enc-mpi and scripts/rd-sweep --mpi: Open MPI's headers, mpicc and
# mpirun, and its Python binding.
MPI="libopenmpi-dev openmpi-bin python3-mpi4py"
EXTRA="libjpeg-turbo-progs libopenjp2-tools webp libavif-bin libjxl-tools libheif-examples libcharls2 gnuplot-nox python3 time"

if_missing=0
for arg in "$@"; do
    case "$arg" in
    --if-missing) if_missing=1 ;;
    --extra) PKGS="$PKGS $EXTRA" ;;
    --fuzz) PKGS="$PKGS $FUZZ" ;;
    --python) PKGS="$PKGS $PYTHON" ;;
    --viewers) PKGS="$PKGS $VIEWERS" ;;
    --web) PKGS="$PKGS $WEB" ;;
    --mpi) PKGS="$PKGS $MPI" ;;
    *) echo "install-deps.sh: unknown option $arg" >&2; exit 2 ;;
    esac
done

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    [ "$if_missing" = 1 ] || echo "install-deps.sh: all packages are installed:$(echo " $PKGS")"
    exit 0
fi

line="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" = 0 ]; then
    echo "install-deps.sh: installing$missing" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing >&2
else
    echo "install-deps.sh: missing Debian packages:$missing" >&2
    echo "install-deps.sh: run as root:  apt-get update && $line" >&2
    exit 1
fi
