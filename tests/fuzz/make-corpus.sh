#!/bin/sh
# Regenerate the seed corpora in tests/fuzz/corpus/ (each file < 4 KB).
# Needs a built bin/mmp-enc, the netpbm tools (pamcut, pamdepth,
# pnmtoplainpnm, rgb3toppm, pamstack, pnmtopng) and python3. Run from the repository root: sh tests/fuzz/make-corpus.sh
set -eu
BIN=${MMP_BIN:-bin}
C=tests/fuzz/corpus
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p $C/decode $C/pgm $C/roundtrip $C/decode_fast $C/roundtrip_fast $C/diff $C/png

# PGM seeds: P5 and P2, 8 and 16 bits, maxval 1, a comment, odd sizes.
pamcut -left 200 -top 200 -width 12 -height 9 images/camera.pgm > $C/pgm/camera-12x9-p5.pgm
pnmtoplainpnm $C/pgm/camera-12x9-p5.pgm > $C/pgm/camera-12x9-p2.pgm
pamcut -left 100 -top 100 -width 7 -height 5 images/moon.pgm | pamdepth 65535 > $C/pgm/moon-7x5-16bit-p5.pgm
pnmtoplainpnm $C/pgm/moon-7x5-16bit-p5.pgm > $C/pgm/moon-7x5-16bit-p2.pgm
printf 'P2\n# a comment\n4 3\n1\n0 1 0 1\n1 0 1 0\n0 0 1 1\n' > $C/pgm/maxval1-p2.pgm
printf 'P5 1 1 255\n\200' > $C/pgm/one-pixel-p5.pgm
printf 'P5\n2 2\n1023\n\000\001\003\377\002\000\000\007' > $C/pgm/maxval1023-p5.pgm

# Image reader seeds (fuzz_png): PNG of every colour type and depth, with
# palette, tRNS, sBIT, interlaced; PAM of every tuple type; PPM plain and
# raw, 8 and 16 bits. The PNGs are written by python3's zlib (pnmtopng
# would pick its own types), the interlaced ones by pnmtopng.
P=$C/png
pamcut -left 200 -top 200 -width 8 -height 6 images/camera.pgm > $T/r.pgm
pamcut -left 100 -top 100 -width 8 -height 6 images/moon.pgm > $T/g.pgm
pamcut -left 0 -top 0 -width 8 -height 6 images/brick.pgm > $T/b.pgm
rgb3toppm $T/r.pgm $T/g.pgm $T/b.pgm > $P/rgb-8x6-p6.ppm
pnmtoplainpnm $P/rgb-8x6-p6.ppm > $P/rgb-8x6-p3.ppm
pamdepth 65535 $P/rgb-8x6-p6.ppm > $P/rgb-8x6-16bit-p6.ppm
pnmtoplainpnm $P/rgb-8x6-16bit-p6.ppm > $P/rgb-8x6-16bit-p3.ppm
pamstack -tupletype=RGB_ALPHA $P/rgb-8x6-p6.ppm $T/g.pgm > $P/rgba-8x6.pam 2>/dev/null
pamstack -tupletype=GRAYSCALE_ALPHA $T/r.pgm $T/g.pgm > $P/ga-8x6.pam 2>/dev/null
pamdepth 65535 $P/rgba-8x6.pam > $P/rgba-8x6-16bit.pam
pamstack -tupletype=RGB $P/rgb-8x6-p6.ppm > $P/rgb-8x6.pam 2>/dev/null
pamstack -tupletype=GRAYSCALE $T/r.pgm > $P/grey-8x6.pam 2>/dev/null
printf 'P7\nWIDTH 4\nHEIGHT 2\nDEPTH 1\nMAXVAL 1\nTUPLTYPE BLACKANDWHITE\nENDHDR\n\0\1\1\0\1\1\0\0' > $P/bw-4x2.pam
printf 'P1\n5 2\n1 0 1 0 1\n0 1 0 1 0\n' > $P/bw-5x2-p1.pbm
pnmtopng -interlace -force $P/rgb-8x6-p6.ppm > $P/rgb-8x6-interlaced.png
pnmtopng -interlace $T/r.pgm > $P/grey-8x6-interlaced.png
python3 - "$P" <<'EOF'
import struct, sys, zlib
out = sys.argv[1]
def chunk(t, d):
    return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d))
def png(name, w, h, depth, ctype, samples, extra=b''):
    ch = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    raw = b''
    for y in range(h):
        row = samples[y * w * ch:(y + 1) * w * ch]
        raw += b'\0'
        if depth == 16:
            raw += b''.join(struct.pack('>H', v) for v in row)
        elif depth == 8:
            raw += bytes(row)
        else:
            bits = ''.join(format(v, '0%db' % depth) for v in row)
            bits += '0' * (-len(bits) % 8)
            raw += bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8))
    ihdr = struct.pack('>IIBBBBB', w, h, depth, ctype, 0, 0, 0)
    data = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', ihdr) + extra +
            chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))
    open(out + '/' + name, 'wb').write(data)
def pattern(n, maxval, seed):
    return [(i * 7919 + seed * 104729 + (i * i) % 31) % (maxval + 1) for i in range(n)]
w, h = 7, 5
for d in (1, 2, 4, 8, 16):
    png('grey-%dbit.png' % d, w, h, d, 0, pattern(w * h, (1 << d) - 1, d))
for d in (8, 16):
    png('ga-%dbit.png' % d, w, h, d, 4, pattern(w * h * 2, (1 << d) - 1, d + 1))
    png('rgb-%dbit.png' % d, w, h, d, 2, pattern(w * h * 3, (1 << d) - 1, d + 2))
    png('rgba-%dbit.png' % d, w, h, d, 6, pattern(w * h * 4, (1 << d) - 1, d + 3))
pal = bytes([0, 0, 0, 255, 0, 0, 10, 200, 30, 1, 2, 3])
for d in (1, 2, 4, 8):
    n = min(4, 1 << d)
    png('palette-%dbit.png' % d, w, h, d, 3, pattern(w * h, n - 1, d), chunk(b'PLTE', pal[:3 * n]))
png('palette-trns.png', w, h, 8, 3, pattern(w * h, 3, 5),
    chunk(b'PLTE', pal) + chunk(b'tRNS', bytes([0, 128])))
png('grey-trns-16bit.png', w, h, 16, 0, pattern(w * h, 65535, 9), chunk(b'tRNS', struct.pack('>H', 0)))
png('rgb-trns.png', w, h, 8, 2, pattern(w * h * 3, 255, 11), chunk(b'tRNS', struct.pack('>HHH', 0, 0, 0)))
g5 = [((v << 3) | (v >> 2)) for v in pattern(w * h, 31, 13)]
png('grey-sbit5.png', w, h, 8, 0, g5, chunk(b'sBIT', bytes([5])))
EOF

# .mmp seeds: tiny crops at several lambdas, 8 and 16 bits, maxval 1, both
# coding orders (wavefront, the default, and raster), at the default speed.
enc() { "$BIN/mmp-enc" --quiet "$@"; }
# Files of several tiles and files with ancillary chunks (docs/format.md
# section 2). mmp-enc writes tiles (--tile) and the chunks of an input's
# metadata, not chunks of any type and text asked for, so each tile is
# coded alone by mmp-enc (a tile's data is the payload of its crop coded
# alone with the same settings, what mmp_encode writes with those tile
# sides) and the file is assembled here: the signature, HEAD with the image's size and the tile
# sides, the ancillary chunks asked for, the tile index, the tiles.
#   tiled OUT TW TH IMAGE [--chunk TYPE TEXT]... -- MMP-ENC OPTIONS
# TW, TH 0: one tile, the encoder's sides. IMAGE: PGM, PPM or PAM (raw).
# TEXT: \0 for a NUL.
cat > $T/tiled.py <<'EOF'
import struct, subprocess, sys, zlib
enc, tmp, out, tw, th, image = sys.argv[1:7]
rest = sys.argv[7:]
sep = rest.index('--')
opts, extra = rest[sep + 1:], []
for i in range(0, sep, 3):
    assert rest[i] == '--chunk'
    extra.append((rest[i + 1].encode(), rest[i + 2].encode().replace(b'\\0', b'\0')))
def pnm(path):
    b = open(path, 'rb').read()
    if b[:2] == b'P7':
        end = b.index(b'ENDHDR\n') + 7
        f = dict(l.split(None, 1) for l in b[3:end - 7].decode().split('\n') if ' ' in l)
        w, h, d, m = int(f['WIDTH']), int(f['HEIGHT']), int(f['DEPTH']), int(f['MAXVAL'])
        head = lambda cw, chh: ('P7\nWIDTH %d\nHEIGHT %d\nDEPTH %d\nMAXVAL %d\nTUPLTYPE %s\nENDHDR\n'
                                % (cw, chh, d, m, f['TUPLTYPE'].strip())).encode()
    else:
        t = b.split(None, 4)
        w, h, m = int(t[1]), int(t[2]), int(t[3])
        d = 3 if b[:2] == b'P6' else 1
        end = len(b) - w * h * d * (2 if m > 255 else 1)
        head = lambda cw, chh: b'%s\n%d %d\n%d\n' % (b[:2], cw, chh, m)
    return w, h, d * (2 if m > 255 else 1), b[end:], head
w, h, px, samples, head = pnm(image)
side = lambda s: max(128, (s + 15) // 16 * 16)
tw, th = int(tw) or side(w), int(th) or side(h)
heads, tiles = [], []
for y0 in range(0, h, th):
    for x0 in range(0, w, tw):
        cw, chh = min(tw, w - x0), min(th, h - y0)
        rows = b''.join(samples[((y0 + y) * w + x0) * px:((y0 + y) * w + x0 + cw) * px]
                        for y in range(chh))
        open(tmp + '/tile.pnm', 'wb').write(head(cw, chh) + rows)
        subprocess.run([enc, '--quiet'] + opts + [tmp + '/tile.pnm', tmp + '/tile.mmp'], check=True)
        f = open(tmp + '/tile.mmp', 'rb').read()
        assert f[:5] == b'MMPi\x01' and f[10:14] == b'HEAD' and f[60:64] == b'TILE'
        sig = f[:6]  # the encoder's version
        heads.append(f[14:52])
        tiles.append(f[64:-4])
def chunk(t, d):
    return struct.pack('<I', len(d)) + t + d + struct.pack('<I', zlib.crc32(t + d))
hd = bytearray(heads[0])
struct.pack_into('<II', hd, 4, w, h)
struct.pack_into('<HH', hd, 34, tw // 16, th // 16)
for x in heads:  # the tiles' headers differ in their sizes alone
    assert x[:4] + x[12:34] == hd[:4] + hd[12:34]
b = sig + chunk(b'HEAD', bytes(hd)) + b''.join(chunk(t, d) for t, d in extra)
if len(tiles) > 1:
    at = len(b) + 12 + 4 + 8 * len(tiles)
    offsets = []
    for t in tiles:
        offsets.append(at)
        at += 12 + len(t)
    b += chunk(b'TIDX', struct.pack('<I%dQ' % len(tiles), len(tiles), *offsets))
open(out, 'wb').write(b + b''.join(chunk(b'TILE', t) for t in tiles))
EOF
tiled() { python3 $T/tiled.py "$BIN/mmp-enc" $T "$@"; }
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
enc -l 2 --order raster $T/c48.pgm $C/decode/camera-48x32-l2-raster.mmp
enc -l 75 --order raster $T/t.pgm $C/decode/text-37x29-l75-raster.mmp
# Colour: RGB in both transforms and samplings, RGBA
# with exact and with MMP alpha, grey with alpha.
pamcut -left 200 -top 200 -width 24 -height 20 images/colour/face.ppm > $T/f.ppm
enc -l 30 $T/f.ppm $C/decode/face-24x20-ycocg444-l30.mmp
enc -l 30 --colour ycbcr --chroma 420 $T/f.ppm $C/decode/face-24x20-ycbcr420-l30.mmp
pngtopam -alphapam images/colour/logo-alpha.png | pamcut -left 230 -top 60 -width 20 -height 18 > $T/la.pam
enc -l 10 $T/la.pam $C/decode/logo-20x18-rgba-l10.mmp
# Restoration filters (docs/format.md 7.5): several filters and regions, a
# region switched off, filtered chroma.
pamcut -left 160 -top 160 -width 128 -height 64 images/camera.pgm > $T/c128.pgm
enc -l 100 $T/c128.pgm $C/decode/camera-128x64-l100-filters.mmp
pamcut -left 0 -top 0 -width 130 -height 70 images/brick.pgm > $T/b130.pgm
enc -l 300 $T/b130.pgm $C/decode/brick-130x70-l300-region-off.mmp
pamcut -left 200 -top 200 -width 64 -height 48 images/colour/face.ppm > $T/f64.ppm
enc -l 30 --chroma 420 $T/f64.ppm $C/decode/face-64x48-420-l30-filters.mmp
enc -l 30 --filter off $T/c16.pgm $C/decode/camera-16x16-l30-nofilter.mmp
enc -l 10 --alpha mmp --chroma 420 $T/la.pam $C/decode/logo-20x18-rgba-mmpalpha-420-l10.mmp
# Chroma from luma (docs/format.md 6, mode 10): a crop
# whose chroma planes choose CfL in a third of their leaves or more.
pamcut -left 200 -top 200 -width 48 -height 32 images/colour/logo.ppm > $T/l48.ppm
enc -l 30 $T/l48.ppm $C/decode/logo-48x32-cfl-l30.mmp
enc -l 30 --chroma 420 $T/l48.ppm $C/decode/logo-48x32-cfl-420-l30.mmp
# Lossless and near-lossless (docs/format.md 7.6): the
# residual stage alone and after MMP, grey, colour and 16 bits.
enc --lossless $T/c16.pgm $C/decode/camera-16x16-lossless.mmp
enc --lossless --residual mmp -l 30 $T/c48.pgm $C/decode/camera-48x32-lossless-after-mmp.mmp
enc --max-error 2 $T/f.ppm $C/decode/face-24x20-near2.mmp
enc --lossless $C/pgm/moon-7x5-16bit-p5.pgm $C/decode/moon-7x5-16bit-lossless.mmp
# The residual stage's mixing coder (docs/format.md 7.6, format 1.2) and
# its residual context (format 1.3) are every other lossless and
# near-lossless seed's; these two are without the mixing coder (tools bit 2
# clear), these two without the residual context (bit 3 clear).
enc --lossless --residual-mix off $T/c16.pgm $C/decode/camera-16x16-lossless-no-mix.mmp
enc --max-error 2 --residual-mix off $T/f.ppm $C/decode/face-24x20-near2-no-mix.mmp
enc --lossless --residual-context off $T/c16.pgm $C/decode/camera-16x16-lossless-no-context.mmp
enc --max-error 2 --residual-context off $T/f.ppm $C/decode/face-24x20-near2-no-context.mmp
# Lossless colour: a reversible colour transform the encoder picks (format
# 1.4, tools bit 4), and YCoCg-R (bit 4 clear).
enc --lossless $T/f.ppm $C/decode/face-24x20-lossless-rct.mmp
enc --lossless --colour ycocg-r $T/f.ppm $C/decode/face-24x20-lossless-ycocg.mmp
# Without the transform residual (tools 0, docs/format.md 4.4); every other
# lossy seed has it, the default.
enc -l 30 --dct off $T/c48.pgm $C/decode/camera-48x32-l30-no-dct.mmp
# The deblocking filter (docs/format.md 7.7, format 1.1): every other lossy
# seed has the tool, on or off by plane; this one is without it (tools bit
# 1 clear), and a smooth crop at a high lambda takes it.
enc -l 30 --deblock off $T/c48.pgm $C/decode/camera-48x32-l30-no-deblock.mmp
pamcut -left 150 -top 150 -width 64 -height 48 images/moon.pgm > $T/m64.pgm
enc -l 1000 $T/m64.pgm $C/decode/moon-64x48-l1000-deblock.mmp
# Several tiles: grey, colour 4:2:0 and RGBA with
# tiles of odd sides at the right and bottom, lossless; ancillary chunks (a
# colour profile's first bytes, a text, a type no decoder knows), in a file
# of one tile and of several.
pamcut -left 150 -top 150 -width 136 -height 40 images/camera.pgm > $T/c136.pgm
tiled $C/decode/camera-136x40-tiles128-l100.mmp 128 128 $T/c136.pgm -- -l 100
pamcut -left 0 -top 0 -width 150 -height 140 images/brick.pgm > $T/b150.pgm
tiled $C/decode/brick-150x140-tiles128-l1000-d64.mmp 128 128 $T/b150.pgm -- -l 1000 -d 64
pamcut -left 180 -top 190 -width 145 -height 133 images/colour/face.ppm > $T/f145.ppm
tiled $C/decode/face-145x133-tiles128-420-l300.mmp 128 128 $T/f145.ppm -- -l 300 --chroma 420
pngtopam -alphapam images/colour/logo-alpha.png | pamcut -left 180 -top 60 -width 140 -height 20 > $T/la140.pam
tiled $C/decode/logo-140x20-rgba-tiles128-l30.mmp 128 128 $T/la140.pam -- -l 30
pamcut -left 100 -top 100 -width 200 -height 16 images/text.pgm > $T/t200.pgm
tiled $C/decode/text-200x16-tiles128-lossless.mmp 128 128 $T/t200.pgm -- --lossless
tiled $C/decode/camera-16x16-l10-chunks.mmp 0 0 $T/c16.pgm --chunk iccp 'ICCprofile' \
    --chunk text 'Title\0a seed' --chunk zzzz '?' -- -l 10
tiled $C/decode/camera-136x40-tiles128-l100-chunks.mmp 128 128 $T/c136.pgm --chunk text 'k\0v' \
    --chunk exif 'MM' -- -l 100

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
enc -l 300 -d 256 --order raster $T/c16.pgm $F/camera-16x16-l300-d256-raster.mmp
enc -l 75 -d 128 $T/t.pgm $F/text-37x29-l75-d128.mmp
enc -l 75 -d 65 --order raster $T/t.pgm $F/text-37x29-l75-d65-raster.mmp
enc -l 3 -d 64 $T/m.pgm $F/moon-20x12-l3-d64.mmp
enc -l 10 -d 96 $C/pgm/moon-7x5-16bit-p5.pgm $F/moon-7x5-16bit-l10-d96.mmp
enc -l 0 -d 64 --redundancy 0 $C/pgm/maxval1-p2.pgm $F/maxval1-4x3-l0-d64.mmp
enc -l 10 -d 64 $C/pgm/one-pixel-p5.pgm $F/one-pixel-d64.mmp
enc -l 1000 -d 200 $T/b.pgm $F/brick-33x17-l1000-d200.mmp
enc -l 4 -d 128 --order raster $T/c48.pgm $F/camera-48x32-l4-d128-raster.mmp
enc -l 30 -d 64 --redundancy 40 $T/c48.pgm $F/camera-48x32-l30-d64-redund40.mmp
pamcut -left 64 -top 64 -width 64 -height 64 images/camera.pgm > $T/c64.pgm
enc -l 100 -d 64 --order raster $T/c64.pgm $F/camera-64x64-l100-d64-raster.mmp
pamcut -left 0 -top 100 -width 250 -height 16 images/text.pgm > $T/strip.pgm
enc -l 50 -d 64 $T/strip.pgm $F/text-250x16-l50-d64.mmp
pamcut -left 300 -top 300 -width 30 -height 30 images/moon.pgm | pamdepth 4095 > $T/m12.pgm
enc -l 1 -d 256 --order raster $T/m12.pgm $F/moon-30x30-12bit-l1-d256-raster.mmp
enc -l 30 -d 64 $T/f.ppm $F/face-24x20-ycocg444-l30-d64.mmp
enc -l 30 -d 96 --colour ycbcr --chroma 420 --order raster $T/f.ppm $F/face-24x20-ycbcr420-l30-d96-raster.mmp
enc -l 10 -d 64 $T/la.pam $F/logo-20x18-rgba-l10-d64.mmp
enc -l 100 -d 64 --alpha mmp $T/la.pam $F/logo-20x18-rgba-mmpalpha-l100-d64.mmp
pamchannel -tupletype GRAYSCALE_ALPHA -infile $T/la.pam 1 3 > $T/ga.pam
enc -l 10 -d 64 $T/ga.pam $F/logo-20x18-greyalpha-l10-d64.mmp
pamcut -left 200 -top 150 -width 64 -height 64 images/camera.pgm > $T/c64f.pgm
enc -l 30 -d 64 $T/c64f.pgm $F/camera-64x64-l30-d64-filter.mmp
pamcut -left 0 -top 0 -width 64 -height 48 $T/f64.ppm > $T/f64b.ppm
enc -l 30 -d 64 --chroma 420 $T/f64b.ppm $F/face-64x48-420-l30-d64-filters.mmp
enc -l 30 -d 64 $T/l48.ppm $F/logo-48x32-cfl-l30-d64.mmp
enc --lossless -d 64 $T/c48.pgm $F/camera-48x32-lossless-d64.mmp
enc --max-error 7 --residual mmp -l 100 -d 64 $T/f.ppm $F/face-24x20-near7-after-mmp-d64.mmp
enc --max-error 1 -d 64 $T/m12.pgm $F/moon-30x30-12bit-near1-d64.mmp
enc -l 30 -d 64 --dct off $T/c48.pgm $F/camera-48x32-l30-d64-no-dct.mmp
enc -l 3 -d 64 --order raster --chroma 420 $T/f64b.ppm $F/face-64x48-420-l3-d64-dct-raster.mmp
# Several tiles within the fast limits (a row or a column of two tiles),
# ancillary chunks.
pamcut -left 150 -top 150 -width 144 -height 16 images/camera.pgm > $T/c144.pgm
tiled $F/camera-144x16-tiles128-l30-d64.mmp 128 128 $T/c144.pgm -- -l 30 -d 64
pamcut -left 100 -top 0 -width 16 -height 200 images/brick.pgm > $T/b16.pgm
tiled $F/brick-16x200-tiles128-l75-d64-raster.mmp 128 128 $T/b16.pgm -- -l 75 -d 64 --order raster
pamcut -left 180 -top 190 -width 136 -height 16 images/colour/face.ppm > $T/f136.ppm
tiled $F/face-136x16-tiles128-420-l30-d64.mmp 128 128 $T/f136.ppm -- -l 30 -d 64 --chroma 420
pamcut -left 0 -top 6 -width 140 -height 8 $T/la140.pam > $T/la8.pam
tiled $F/logo-140x8-rgba-tiles128-mmpalpha-l10-d64.mmp 128 128 $T/la8.pam -- -l 10 -d 64 --alpha mmp
pamcut -left 0 -top 0 -width 130 -height 16 $T/c136.pgm > $T/c130.pgm
tiled $F/camera-130x16-tiles128-lossless-d64.mmp 128 128 $T/c130.pgm -- --lossless -d 64
tiled $F/camera-16x16-l10-d64-chunks.mmp 0 0 $T/c16.pgm --chunk iccp 'ICCprofile' \
    --chunk text 'Title\0a seed' --chunk zzzz '?' -- -l 10 -d 64

# fuzz_roundtrip_fast and fuzz_diff seeds (layout in fuzz_roundtrip.c and
# fuzz_roundtrip_fast.c: width - 1 (mod 48), height - 1 (mod 32) + 32 *
# cost class (the work the search may take: class 5 the most, 48 x 21 grey
# at speed 4), maxval, lambda (b % 8 of 0 1 4 10 30 100 300 1000) + 8 *
# speed index (0: speed 4, 6: 3, 10: 2, 13: 1, 15: 0), dict_cap (b % 4 of
# 64 65 96 128), redundancy, mode + 4 * raster, step, 16-bit maxval, then
# samples).
R=$C/roundtrip_fast
rm -f $R/* $C/diff/*
printf '\017\017\000\003\000\000\000\000\000\000' > $T/h1; head -c 256 $T/c16.pgm | tail -c 200 | cat $T/h1 - > $R/raw-16x16-8bit-l10-wavefront
printf '\017\117\000\063\000\000\000\000\000\000' > $T/h8; head -c 256 $T/c16.pgm | tail -c 200 | cat $T/h8 - > $R/raw-16x16-8bit-l10-speed3
printf '\057\264\000\004\003\000\004\000\000\000' > $T/h2; head -c 900 $T/c48.pgm | tail -c 800 | cat $T/h2 - > $R/raw-48x21-8bit-l30-raster
printf '\017\017\000\174\003\000\004\000\000\000' > $T/h4; head -c 900 $T/c48.pgm | tail -c 800 | cat $T/h4 - > $R/raw-16x16-8bit-l30-raster-speed0
printf '\057\264\000\004\003\000\204\000\000\000' > $T/h3; head -c 900 $T/c48.pgm | tail -c 800 | cat $T/h3 - > $R/raw-48x21-8bit-l30-raster-nofilter
# The transform residual off: byte 5 / 2 % 2 = 1.
printf '\057\264\000\004\003\002\004\000\000\000' > $T/h9; head -c 900 $T/c48.pgm | tail -c 800 | cat $T/h9 - > $R/raw-48x21-8bit-l30-raster-no-dct
printf '\057\264\000\002\001\000\001\002\000\000\001\002\003\004\005\006\007\010' > $R/ramp-48x21-l4-wavefront
printf '\037\277\001\121\001\000\005\003\000\000\001\002\003\004\005\006\007\010' > $R/ramp-32x32-16bit-l1-raster-speed2
printf '\011\262\002\155\002\240\006\000\000\000\003\144\005\310\017\000' > $R/runs-10x19-l100-raster-speed1
printf '\017\003\003\177\003\000\003\000\377\003\125\252\063\314' > $R/binary-16x4-l1000-speed0
# Restoration filter off: byte 6 / 128 = 1.
# Colour (byte 6 / 8 % 4 + 1 channels; / 32 % 2 YCoCg-R; / 64 % 2 4:4:4;
# byte 5 % 2 alpha as an MMP plane; a class whose work holds the planes).
printf '\037\267\000\003\000\000\021\002\000\000\001\002\003\004\005\006\007\010' > $R/ramp-32x24-rgb-ycbcr420-l10
printf '\021\256\000\004\001\000\160\001\000\000\003\144\005\310\017\000' > $R/raw-18x15-rgb-ycocg444-l30
printf '\027\211\000\002\000\000\030\003\000\000\377\000\200\100' > $R/raw-24x10-rgba-ycbcr420-exact-l4
printf '\013\147\001\125\002\201\011\000\000\000\011\022\033\044' > $R/ramp-12x8-greyalpha-16bit-mmp-l100-speed2
printf '\000\140\000\000\000\000\030\000\000\000' > $R/one-pixel-rgba
printf '\000\000\000\000\000\000\000\000\000\000' > $R/one-pixel-lambda0
printf '\037\117\003\000\002\377\000\000\321\007\377\000\000\377\200\100' > $R/raw-32x16-maxval2002-l0-redund
# Lossless and near-lossless (byte 4: b / 8 % 4 = 2 lossless, 3 max error
# b / 32 % 8; b / 4 % 2 = 1 the residual stage after MMP, else alone).
printf '\057\024\000\004\020\000\004\000\000\000' > $T/h5; head -c 900 $T/c48.pgm | tail -c 800 | cat $T/h5 - > $R/raw-48x21-8bit-lossless
printf '\057\264\000\004\024\000\004\000\000\000' > $T/h6; head -c 900 $T/c48.pgm | tail -c 800 | cat $T/h6 - > $R/raw-48x21-8bit-lossless-after-mmp
printf '\057\024\000\004\130\000\004\000\000\000' > $T/h7; head -c 900 $T/c48.pgm | tail -c 800 | cat $T/h7 - > $R/raw-48x21-8bit-near2
printf '\021\016\000\004\020\000\124\001\000\000\003\144\005\310\017\000' > $R/raw-18x15-rgb-lossless
cp $R/* $C/diff/

ls -l $C/*/ | awk '$5 > 4096 { print "too large:", $0; bad = 1 } END { exit bad }'
