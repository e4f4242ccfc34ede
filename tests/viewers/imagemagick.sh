#!/bin/sh
# ImageMagick's delegates for .mmp files as installed, checked by make
# check-viewers:
#
#   sh tests/viewers/imagemagick.sh STAGE
#
# STAGE holds prefix/, a make install PREFIX=STAGE/prefix; the test points
# MAGICK_CONFIGURE_PATH at its share/mmp/imagemagick/ and works in
# STAGE/magick/. With Debian's ImageMagick 6 (/usr/bin/convert-im6.q16,
# MAGICK=... names another) it checks that convert reads .mmp files (grey,
# grey and alpha, colour, colour and alpha, 16 bits, and a maxval that PNG
# cannot hold) to the pixels of mmp-dec's output (compare -metric AE: no
# pixel differs), a file of another name by its "MMPi"; that convert writes
# .mmp files that mmp-dec decodes to the source's pixels exactly (8 and 16
# bits, with alpha); and that a broken file fails with mmp-dec's reason.
# Prints one line per failure and exits 1; one summary line otherwise.
set -e
stage=$1
[ -n "$stage" ] || { echo "usage: imagemagick.sh STAGE" >&2; exit 2; }
here=$(cd "$(dirname "$0")/../.." && pwd)
prefix=$stage/prefix
work=$stage/magick
magick=${MAGICK:-/usr/bin/convert-im6.q16}
compare=$(dirname "$magick")/$(basename "$magick" | sed 's/^convert/compare/')
fail() { echo "check-viewers: ImageMagick: $*"; exit 1; }

"$magick" -version | grep -q '^Version: ImageMagick' || fail "$magick is not ImageMagick's convert"
[ -f "$prefix/share/mmp/imagemagick/delegates.xml" ] || fail "make install put no delegates.xml"
export MAGICK_CONFIGURE_PATH="$prefix/share/mmp/imagemagick"
rm -rf "$work"
mkdir -p "$work"
dec=$prefix/bin/mmp-dec

# The number of pixels in which two images differ (compare prints it on
# stderr and exits 1 when it is not 0).
differ() { "$compare" -metric AE "$1" "$2" null: 2>&1 || true; }

# Reading: the PNG of convert against mmp-dec's own output.
n=0
for name in grey-l10 greyalpha-exact-l10 rgb444-l30 rgba-exact-l10 colour16-ycbcr-l3 grey10-l10; do
    f=$here/tests/conformance/$name.mmp
    "$magick" "$f" "$work/$name.png" || fail "convert $name.mmp $name.png failed"
    "$dec" --quiet "$f" -o "$work/$name-dec.png"
    d=$(differ "$work/$name.png" "$work/$name-dec.png")
    [ "$d" = 0 ] || fail "convert $name.mmp differs from mmp-dec's PNG in $d pixels"
    n=$((n + 1))
done
[ "$("$magick" "$work/colour16-ycbcr-l3.png" -format '%z' info:)" = 16 ] ||
    fail "a 16-bit file does not come to a 16-bit PNG"

# A maxval that PNG cannot hold: read through mmp-dec's PGM.
printf 'P2\n6 1\n1000\n0 1 250 500 999 1000\n' > "$work/odd.pgm"
"$prefix/bin/mmp-enc" --quiet --lossless "$work/odd.pgm" "$work/odd.mmp"
"$magick" "$work/odd.mmp" "$work/odd.png" || fail "convert odd.mmp (maxval 1000) failed"
[ "$(differ "$work/odd.png" "$work/odd.pgm")" = 0 ] || fail "maxval 1000 differs from its PGM"

# Told by its bytes, whatever its name.
cp "$here/tests/conformance/rgba-exact-l10.mmp" "$work/picture.dat"
"$magick" "$work/picture.dat" "$work/picture.png" || fail "convert picture.dat (an mmp file) failed"
[ "$(differ "$work/picture.png" "$work/rgba-exact-l10-dec.png")" = 0 ] ||
    fail "an .mmp file named .dat differs from mmp-dec's PNG"

# Writing: lossless, 8 and 16 bits, with alpha, by name and as mmp:.
for name in grey-l10 rgba-exact-l10 colour16-ycbcr-l3; do
    "$magick" "$work/$name-dec.png" "$work/$name-again.mmp" || fail "convert $name.png $name-again.mmp failed"
    [ "$(head -c 4 "$work/$name-again.mmp")" = MMPi ] || fail "$name-again.mmp is not an mmp file"
    "$dec" --quiet "$work/$name-again.mmp" -o "$work/$name-again.png"
    d=$(differ "$work/$name-again.png" "$work/$name-dec.png")
    [ "$d" = 0 ] || fail "$name-again.mmp decodes to an image $d pixels off its source"
done
"$dec" --info "$work/colour16-ycbcr-l3-again.mmp" | grep -q '^maxval=65535$' ||
    fail "a 16-bit PNG is not written as a file of maxval 65535"
"$dec" --info "$work/rgba-exact-l10-again.mmp" | grep -q '^planes=4$' ||
    fail "an RGBA PNG is not written as a file with alpha"
"$magick" "$work/odd.pgm" "mmp:$work/odd-again" || fail "convert odd.pgm mmp:odd-again failed"
"$dec" --quiet "$work/odd-again" -o "$work/odd-again.pgm"
[ "$(differ "$work/odd-again.pgm" "$work/odd.pgm")" = 0 ] || fail "mmp:odd-again differs from odd.pgm"

# A broken file: convert fails, with mmp-dec's reason.
head -c 200 "$here/tests/conformance/rgb444-l30.mmp" > "$work/short.mmp"
if "$magick" "$work/short.mmp" "$work/short.png" 2> "$work/short.txt"; then
    fail "convert short.mmp (cut short) succeeded"
fi
grep -q '^mmp-dec: .*truncated' "$work/short.txt" || fail "convert short.mmp does not say why: $(cat "$work/short.txt")"

echo "check-viewers: ImageMagick read $n conformance streams as mmp-dec does, maxval 1000, a misnamed file; wrote 4 files losslessly; refused a broken one with its reason"
