#!/bin/sh
# Regenerate the seed corpora in tests/fuzz/corpus/ (each file < 4 KB).
# Needs a built bin/mmp-enc and the netpbm tools (pamcut, pamdepth,
# pnmtoplainpnm). Run from the repository root: sh tests/fuzz/make-corpus.sh
set -eu
BIN=${MMP_BIN:-bin}
C=tests/fuzz/corpus
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p $C/decode $C/pgm $C/roundtrip

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
ls -l $C/*/ | awk '$5 > 4096 { print "too large:", $0; bad = 1 } END { exit bad }'
