#!/bin/sh
# Encode an image, decode it, check the decode equals the encoder's
# reconstruction, and print bytes, bpp, PSNR and times.
#   scripts/demo.sh BINDIR IMAGE LAMBDA   (any input mmp-enc reads: grey, colour, alpha;
#   both images are written as PAM, which holds every kind)
set -eu
bin=${1:-bin}
img=${2:-images/camera.pgm}
lambda=${3:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
name=$(basename "$img"); name=${name%.*}
echo "encoding $img at lambda $lambda ..."
stats=$("$bin/mmp-enc" --quiet --stats -l "$lambda" --recon "$tmp/recon.pam" "$img" "$tmp/$name.mmp")
dstats=$("$bin/mmp-dec" --stats "$tmp/$name.mmp" -o "$tmp/decoded.pam")
if cmp -s "$tmp/recon.pam" "$tmp/decoded.pam"; then same=yes; else same=NO; fi
get() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
printf '%-10s %s\n' image "$img" lambda "$lambda" bytes "$(get "$stats" bytes)" \
    bpp "$(get "$stats" bpp)" psnr "$(get "$stats" psnr) dB" \
    encode "$(get "$stats" seconds) s" decode "$(get "$dstats" seconds) s" \
    identical "$same (decoder output vs encoder reconstruction)"
[ "$same" = yes ]
