#!/bin/sh
# The decoder library as installed, checked by make check-install:
#
#   CC=cc CFLAGS=... LDFLAGS=... sh tests/install/decoder.sh ROOT SO_MAJOR
#
# ROOT is an installed prefix inside the stage (its lib/ and include/),
# SO_MAJOR the soname's version. Builds tests/install/decode.c against
# libmmpdec through pkg-config mmpdec, shared and static, next to ROOT (as
# example-decode*, which the uninstall check leaves alone); decodes
# conformance streams with both (several tiles, and colour with alpha) and
# compares the samples with the manifest's MD5; checks that the shared
# program loads the installed libmmpdec.so.SO_MAJOR and not libmmp, that
# the library's NEEDED entries are libc, libm, libpthread and the dynamic
# loader alone (and the sanitizers' runtimes in a sanitizer build) and that
# it exports exactly the functions of mmp/libmmpdec.map, each declared in
# mmp/mmp.h. Prints one line per failure and exits 1; silent otherwise.
set -e
root=$1
major=$2
[ -n "$root" ] && [ -n "$major" ] || { echo "usage: decoder.sh ROOT SO_MAJOR" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
stage=$(dirname "$root")
lib=$root/lib/libmmpdec.so.$major
fail() { echo "check-install: $*"; exit 1; }

export PKG_CONFIG_PATH="$root/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
${CC:-cc} $CFLAGS -o "$stage/example-decode" "$here/tests/install/decode.c" \
    $(pkg-config --cflags --libs mmpdec) $LDFLAGS
${CC:-cc} $CFLAGS -o "$stage/example-decode-static" "$here/tests/install/decode.c" \
    $(pkg-config --cflags mmpdec) "$root/lib/libmmpdec.a" \
    $(pkg-config --static --libs-only-other --libs-only-l mmpdec | sed 's/-lmmpdec//') $LDFLAGS

LD_LIBRARY_PATH=$root/lib ldd "$stage/example-decode" | grep -q "libmmpdec.so.$major => $root/lib/" ||
    fail "example-decode does not use the installed libmmpdec.so.$major"
! LD_LIBRARY_PATH=$root/lib ldd "$stage/example-decode" | grep -q "libmmp\.so" ||
    fail "example-decode loads libmmp.so"

for name in tiles-grey-283x157 tiles-420-273x141 rgba-exact-l10 grey-l10; do
    want=$(awk -v f="$name.mmp" '$1 == f {print $2}' "$here/tests/conformance/MANIFEST")
    [ -n "$want" ] || fail "$name.mmp is not in tests/conformance/MANIFEST"
    for prog in example-decode example-decode-static; do
        got=$(LD_LIBRARY_PATH=$root/lib "$stage/$prog" "$here/tests/conformance/$name.mmp" |
              md5sum | cut -d' ' -f1)
        [ "$got" = "$want" ] || fail "$prog decodes $name.mmp to $got, the manifest says $want"
    done
done

needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
for n in $needed; do
    case $n in
    libc.so.* | libm.so.* | libpthread.so.* | ld-linux*.so.*) ;;
    libasan.so.* | libubsan.so.*)
        case "$CFLAGS $LDFLAGS" in
        *-fsanitize*) ;;
        *) fail "libmmpdec.so needs $n" ;;
        esac
        ;;
    *) fail "libmmpdec.so needs $n (only libc, libm and pthreads are allowed)" ;;
    esac
done

exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $3}' | sed 's/@.*//' | sort)
listed=$(sed -n 's/^ *\(mmp_[a-z_0-9]*\);$/\1/p' "$here/mmp/libmmpdec.map" | sort)
[ "$exported" = "$listed" ] || fail "libmmpdec.so exports" $exported "; mmp/libmmpdec.map lists" $listed
for f in $listed; do
    grep -q "[ *]$f(" "$here/mmp/mmp.h" || fail "mmp/libmmpdec.map lists $f, which mmp/mmp.h does not declare"
done
