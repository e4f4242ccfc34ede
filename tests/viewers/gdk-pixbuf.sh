#!/bin/sh
# gdk-pixbuf's loader for .mmp files as installed, checked by make
# check-viewers:
#
#   CC=cc CFLAGS=... sh tests/viewers/gdk-pixbuf.sh STAGE
#
# STAGE holds prefix/, a make install PREFIX=STAGE/prefix with the loader,
# its loaders.cache (plugins/plugins.mk) and the MIME database; the test
# points GDK_PIXBUF_MODULE_FILE at that cache and XDG_DATA_DIRS at its
# share/, and works in STAGE/pixbuf/. Through gdk-pixbuf itself
# (tests/viewers/pixbuf_check.c, which links gdk-pixbuf alone), it checks
# that every conformance stream opens, whole and a few bytes at a time,
# with the size, alpha and pixels of the PNG that mmp-dec writes for it
# read by gdk-pixbuf's PNG loader (grey, grey and alpha, colour, colour and
# alpha; maxvals 1, 15, 255, 1023, 4095, 65535; and every sample of
# maxvals 31 and 63) and with its ICC profile; that a maxval PNG cannot
# hold (1000) comes to 8 bits by rounding, values worked out by hand; that a file of another name is told by its "MMPi"; that
# broken files fail with a GdkPixbufError that names MMP; and that
# gdk-pixbuf-thumbnailer makes a thumbnail. Prints one line per failure and
# exits 1; one summary line otherwise.
set -e
stage=$1
[ -n "$stage" ] || { echo "usage: gdk-pixbuf.sh STAGE" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$stage/prefix
work=$stage/pixbuf
fail() { echo "check-viewers: gdk-pixbuf: $*"; exit 1; }

loaders=$(ls -d "$prefix"/lib/gdk-pixbuf-2.0/*/loaders)
cache=$(dirname "$loaders")/loaders.cache
[ -f "$loaders/libpixbufloader-mmp.so" ] || fail "make install put no loader in $loaders"
grep -q '"libpixbufloader-mmp.so"\|/libpixbufloader-mmp.so"' "$cache" || fail "$cache does not list the loader"
needed=$(readelf -d "$loaders/libpixbufloader-mmp.so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$needed" | grep -q '^libmmpdec\.so' || fail "the loader does not link libmmpdec"
! echo "$needed" | grep -q '^libmmp\.so' || fail "the loader links libmmp, not libmmpdec alone"

export GDK_PIXBUF_MODULE_FILE="$cache" XDG_DATA_DIRS="$prefix/share:/usr/share" XDG_DATA_HOME="$work/none"
rm -rf "$work"
mkdir -p "$work"
# shellcheck disable=SC2086
${CC:-cc} $CFLAGS -o "$work/pixbuf_check" "$here/tests/viewers/pixbuf_check.c" \
    $(pkg-config --cflags --libs gdk-pixbuf-2.0)
check=$work/pixbuf_check
dec=$prefix/bin/mmp-dec

n=0
for f in "$here"/tests/conformance/*.mmp; do
    name=$(basename "$f" .mmp)
    "$dec" --quiet "$f" -o "$work/$name.png"
    "$check" same "$f" "$work/$name.png" || fail "$name.mmp differs from mmp-dec's PNG"
    n=$((n + 1))
done
"$check" info "$here/tests/conformance/rgba-lossless.mmp" | grep -q '^mmp image/x-mmp$' ||
    fail "gdk_pixbuf_get_file_info does not name the mmp loader and image/x-mmp"

# The ICC profile (136 bytes, too short for libpng to keep it in the PNG).
[ "$("$check" icc "$here/tests/conformance/meta-profile.mmp")" = 136 ] ||
    fail "meta-profile.mmp does not give its ICC profile of 136 bytes"

# Every sample of maxvals 31 and 63, whose bits repeated differ from
# v * 255 / maxval rounded for a few values (3 of 31: 24, not 25).
for m in 31 63; do
    { printf 'P2\n%d 1\n%d\n' $((m + 1)) $m; seq -s ' ' 0 $m; } > "$work/all$m.pgm"
    "$prefix/bin/mmp-enc" --quiet --lossless "$work/all$m.pgm" "$work/all$m.mmp"
    "$dec" --quiet "$work/all$m.mmp" -o "$work/all$m.png"
    "$check" same "$work/all$m.mmp" "$work/all$m.png" || fail "maxval $m differs from mmp-dec's PNG"
done

# A maxval that is not 2^k - 1: v * 65535 / 1000 rounded, then the top 8
# bits (rounding v * 255 / 1000 would give 63 for 250 and 127 for 500).
printf 'P2\n6 1\n1000\n0 1 250 500 999 1000\n' > "$work/odd.pgm"
"$prefix/bin/mmp-enc" --quiet --lossless "$work/odd.pgm" "$work/odd.mmp"
"$check" row "$work/odd.mmp" > "$work/odd.txt"
printf '6 1 0\n0 0 0\n0 0 0\n64 64 64\n128 128 128\n255 255 255\n255 255 255\n' |
    cmp -s - "$work/odd.txt" || fail "maxval 1000 comes to $(tr '\n' '/' < "$work/odd.txt")"

# Told by its bytes, whatever its name.
cp "$here/tests/conformance/rgba-lossless.mmp" "$work/picture.dat"
"$check" same "$work/picture.dat" "$work/rgba-lossless.png" || fail "an .mmp file named .dat does not open"

# Broken files: not an mmp file's version, cut short, a byte changed.
printf 'MMPi this is not an image' > "$work/bad.mmp"
head -c 200 "$here/tests/conformance/rgb444-l30.mmp" > "$work/short.mmp"
cp "$here/tests/conformance/rgb444-l30.mmp" "$work/flipped.mmp"
printf 'X' | dd of="$work/flipped.mmp" bs=1 seek=100 conv=notrunc 2>/dev/null
for b in bad short flipped; do
    "$check" error "$work/$b.mmp" > "$work/$b.txt" || fail "$b.mmp: no error that names MMP"
done

# The thumbnailer of mmp.thumbnailer: at most 16 pixels a side, the aspect kept.
gdk-pixbuf-thumbnailer -s 16 "$here/tests/conformance/tiles-grey-283x157.mmp" "$work/thumb.png" ||
    fail "gdk-pixbuf-thumbnailer failed"
size=$("$check" row "$work/thumb.png" | head -1)
[ "$size" = "16 9 0" ] || fail "the thumbnail of a 283x157 image is $size, not 16 9 0"
grep -q '^MimeType=image/x-mmp;$' "$prefix/share/thumbnailers/mmp.thumbnailer" ||
    fail "no thumbnailer entry for image/x-mmp"

echo "check-viewers: gdk-pixbuf opened $n conformance streams as mmp-dec's PNGs (whole and 7 bytes a write), maxval 1000, a misnamed file, refused 3 broken ones with their reason, made a thumbnail"
