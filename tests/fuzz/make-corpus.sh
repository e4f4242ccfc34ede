#!/bin/sh
# Regenerate the seed corpora in tests/fuzz/corpus/ (each file < 4 KB).
# Needs a built bin/mmp-enc and the netpbm tools (pamcut, pamdepth,
# pnmtoplainpnm). Run from the repository root: sh tests/fuzz/make-corpus.sh
set -eu
BIN=${MMP_BIN:-bin}
C=tests/fuzz/corpus
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p $C/decode $C/pgm $C/roundtrip $C/decode_fast $C/roundtrip_fast $C/diff

# PGM seeds: P5 and P2, 8 and 16 bits, maxval 1, a comment, odd sizes.
pamcut -left 200 -top 200 -width 12 -height 9 images/camera.pgm > $C/pgm/camera-12x9-p5.pgm
pnmtoplainpnm $C/pgm/camera-12x9-p5.pgm > $C/pgm/camera-12x9-p2.pgm
pamcut -left 100 -top 100 -width 7 -height 5 images/moon.pgm | pamdepth 65535 > $C/pgm/moon-7x5-16bit-p5.pgm
pnmtoplainpnm $C/pgm/moon-7x5-16bit-p5.pgm > $C/pgm/moon-7x5-16bit-p2.pgm
printf 'P2\n# a comment\n4 3\n1\n0 1 0 1\n1 0 1 0\n0 0 1 1\n' > $C/pgm/maxval1-p2.pgm
printf 'P5 1 1 255\n\200' > $C/pgm/one-pixel-p5.pgm
printf 'P5\n2 2\n1023\n\000\001\003\377\002\000\000\007' > $C/pgm/maxval1023-p5.pgm

# .mmp seeds: tiny crops at several lambdas, 8 and 16 bits, maxval 1, both
# coding orders (raster, the default, and wavefront).
enc() { "$BIN/mmp-enc" -q "$@"; }
pamcut -left 240 -top 240 -width 16 -height 16 images/camera.pgm > $T/c16.pgm
enc -l 10 $T/c16.pgm $C/decode/camera-16x16-l10.mmp
enc -l 300 $T/c16.pgm $C/decode/camera-16x16-l300.mmp
pamcut -left 100 -top 100 -width 37 -height 29 images/text.pgm > $T/t.pgm
enc -l 75 $T/t.pgm $C/decode/text-37x29-l75.mmp
pamcut -left 300 -top 300 -width 20 -height 12 images/moon.pgm > $T/m.pgm
enc -l 3 -d 64 $T/m.pgm $C/decode/moon-20x12-l3-d64.mmp
enc -l 10 $C/pgm/moon-7x5-16bit-p5.pgm $C/decode/moon-7x5-16bit-l10.mmp
enc -l 0 --redundancy 0 $C/pgm/maxval1-p2.pgm $C/decode/maxval1-4x3-l0.mmp
enc -l 10 $C/pgm/one-pixel-p5.pgm $C/decode/one-pixel.mmp
pamcut -left 0 -top 0 -width 33 -height 17 images/brick.pgm > $T/b.pgm
enc -l 1000 $T/b.pgm $C/decode/brick-33x17-l1000.mmp
pamcut -left 200 -top 150 -width 48 -height 32 images/camera.pgm > $T/c48.pgm
enc -l 2 $T/c48.pgm $C/decode/camera-48x32-l2.mmp
enc -l 2 --order wavefront $T/c48.pgm $C/decode/camera-48x32-l2-wavefront.mmp
enc -l 75 --order wavefront $T/t.pgm $C/decode/text-37x29-l75-wavefront.mmp

# Round-trip seeds (layout in fuzz_roundtrip.c): width, height, maxval,
# lambda, dict_cap, redundancy, mode, step, 16-bit maxval, then samples.
printf '\017\017\000\050\005\000\000\000\000\000' > $T/h0; head -c 256 $T/c16.pgm | tail -c 200 | cat $T/h0 - > $C/roundtrip/raw-16x16-8bit
printf '\027\027\001\020\001\000\001\003\000\000\001\002\003\004\005\006\007\010' > $C/roundtrip/ramp-24x24-16bit
printf '\011\022\002\200\002\240\002\000\000\000\003\144\005\310\017\000' > $C/roundtrip/runs-10x19
printf '\020\003\003\377\003\000\003\000\377\003\125\252\063\314' > $C/roundtrip/binary-17x4
printf '\000\000\000\000\000\000\000\000\000\000' > $C/roundtrip/one-pixel-lambda0
# fuzz_decode_fast seeds: files it decodes past the header (at most 64 x 64
# padded pixels, dict_cap <= 256), both orders, wavefront steps of two and
# three blocks, every dictionary size class, lambda 0 to 1000.
F=$C/decode_fast
enc -l 10 -d 64 $T/c16.pgm $F/camera-16x16-l10-d64.mmp
enc -l 300 -d 256 --order wavefront $T/c16.pgm $F/camera-16x16-l300-d256-wavefront.mmp
enc -l 75 -d 128 $T/t.pgm $F/text-37x29-l75-d128.mmp
enc -l 75 -d 65 --order wavefront $T/t.pgm $F/text-37x29-l75-d65-wavefront.mmp
enc -l 3 -d 64 $T/m.pgm $F/moon-20x12-l3-d64.mmp
enc -l 10 -d 96 $C/pgm/moon-7x5-16bit-p5.pgm $F/moon-7x5-16bit-l10-d96.mmp
enc -l 0 -d 64 --redundancy 0 $C/pgm/maxval1-p2.pgm $F/maxval1-4x3-l0-d64.mmp
enc -l 10 -d 64 $C/pgm/one-pixel-p5.pgm $F/one-pixel-d64.mmp
enc -l 1000 -d 200 $T/b.pgm $F/brick-33x17-l1000-d200.mmp
enc -l 4 -d 128 --order wavefront $T/c48.pgm $F/camera-48x32-l4-d128-wavefront.mmp
enc -l 30 -d 64 --redundancy 40 $T/c48.pgm $F/camera-48x32-l30-d64-redund40.mmp
pamcut -left 64 -top 64 -width 64 -height 64 images/camera.pgm > $T/c64.pgm
enc -l 100 -d 64 --order wavefront $T/c64.pgm $F/camera-64x64-l100-d64-wavefront.mmp
pamcut -left 0 -top 100 -width 250 -height 16 images/text.pgm > $T/strip.pgm
enc -l 50 -d 64 $T/strip.pgm $F/text-250x16-l50-d64.mmp
pamcut -left 300 -top 300 -width 30 -height 30 images/moon.pgm | pamdepth 4095 > $T/m12.pgm
enc -l 1 -d 256 --order wavefront $T/m12.pgm $F/moon-30x30-12bit-l1-d256-wavefront.mmp

# fuzz_roundtrip_fast and fuzz_diff seeds (layout in fuzz_roundtrip.c and
# fuzz_roundtrip_fast.c: width - 1 (mod 48), height - 1 (mod 32), maxval,
# lambda (b % 8 of 0 1 4 10 30 100 300 1000), dict_cap (b % 4 of 64 65 96
# 128), redundancy, mode + 4 * raster, step, 16-bit maxval, then samples).
R=$C/roundtrip_fast
printf '\017\017\000\003\000\000\000\000\000\000' > $T/h1; head -c 256 $T/c16.pgm | tail -c 200 | cat $T/h1 - > $R/raw-16x16-8bit-l10-wavefront
printf '\057\024\000\004\003\000\004\000\000\000' > $T/h2; head -c 900 $T/c48.pgm | tail -c 800 | cat $T/h2 - > $R/raw-48x21-8bit-l30-raster
printf '\057\024\000\002\001\000\001\002\000\000\001\002\003\004\005\006\007\010' > $R/ramp-48x21-l4-wavefront
printf '\037\037\001\001\001\000\005\003\000\000\001\002\003\004\005\006\007\010' > $R/ramp-32x32-16bit-l1-raster
printf '\011\022\002\005\002\240\006\000\000\000\003\144\005\310\017\000' > $R/runs-10x19-l100-raster
printf '\020\003\003\007\003\000\003\000\377\003\125\252\063\314' > $R/binary-17x4-l1000
# Colour (byte 6 / 8 % 4 + 1 channels; / 32 % 2 YCoCg-R; / 64 % 2 4:4:4;
# byte 5 % 2 alpha as an MMP plane).
printf '\037\027\000\003\000\000\021\002\000\000\001\002\003\004\005\006\007\010' > $R/ramp-32x24-rgb-ycbcr420-l10
printf '\021\016\000\004\001\000\160\001\000\000\003\144\005\310\017\000' > $R/raw-18x15-rgb-ycocg444-l30
printf '\027\011\000\002\000\000\030\003\000\000\377\000\200\100' > $R/raw-24x10-rgba-ycbcr420-exact-l4
printf '\013\007\001\005\002\201\011\000\000\000\011\022\033\044' > $R/raw-12x8-greyalpha-16bit-mmp-l100
printf '\000\000\000\000\000\000\030\000\000\000' > $R/one-pixel-rgba
printf '\000\000\000\000\000\000\000\000\000\000' > $R/one-pixel-lambda0
printf '\037\017\003\000\002\377\000\000\321\007\377\000\000\377\200\100' > $R/raw-32x16-maxval2002-l0-redund
cp $R/* $C/diff/

ls -l $C/*/ | awk '$5 > 4096 { print "too large:", $0; bad = 1 } END { exit bad }'
