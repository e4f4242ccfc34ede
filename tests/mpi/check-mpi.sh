#!/bin/sh
# make check-mpi: mmp-enc-mpi and scripts/rd-sweep --mpi under mpirun, on
# small crops, several ranks a core (--oversubscribe: CI has two cores).
#
#  - mmp-enc-mpi writes mmp-enc's bytes with the same options: a grey crop
#    of 4 tiles on 1, 3 and 5 ranks (more ranks than tiles); a colour crop
#    with alpha and text chunks, with --recon and --stats, on 3 ranks (the
#    same reconstruction, the same figures); a rate target on 2 ranks;
#  - a usage error is one line (every rank parses, rank 0 alone speaks);
#  - a rank whose coder fails, one whose coder is killed (SIGKILL) and
#    rank 0's own coder killed each fail the run with exit status 1 and
#    one line of mmp-enc-mpi naming the rank, and a rank's MPI process
#    killed ends the job through mpirun (its status and message); every
#    time OUT keeps what it held and no temporary file is left
#    (MMP_MPI_TEST, docs/cluster.md);
#  - mpirun -np 2 scripts/rd-sweep --mpi on two crops at two lambdas
#    writes the rows of a local sweep (order and timing columns aside),
#    both ranks coding, resumes a CSV that holds some of them, and does
#    the same through Open MPI's libmpi by ctypes (RD_SWEEP_MPI=ctypes).
#
#   tests/mpi/check-mpi.sh        with $MMP_BIN (default bin/) holding
#                                 mmp-enc, mmp-dec and mmp-enc-mpi
set -eu
cd "$(dirname "$0")/../.."
bin=${MMP_BIN:-$PWD/bin}
# mpirun refuses root without these (CI runs as root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# A hung run fails the check instead of stalling it.
mpirun_() { timeout 300 mpirun --oversubscribe "$@"; }
fail() {
    echo "check-mpi: FAILED: $*" >&2
    exit 1
}
n=0

pamcut -left 100 -top 100 -width 256 -height 256 images/camera.pgm > "$tmp/grey.pgm"
printf 'Title Tiles apart\nComment coded by several ranks\n' > "$tmp/text.txt"
pngtopam -alphapam images/colour/logo-alpha.png | pamcut -left 100 -top 50 -width 200 -height 150 |
    pamtopng -text "$tmp/text.txt" > "$tmp/logo.png"

# same NP WHAT IN [options]: mmp-enc-mpi on NP ranks writes mmp-enc's file.
same() {
    np=$1 what=$2 in=$3
    shift 3
    "$bin/mmp-enc" --quiet "$@" "$in" "$tmp/ref.mmp"
    mpirun_ -np "$np" "$bin/mmp-enc-mpi" --quiet "$@" "$in" "$tmp/mpi.mmp" ||
        fail "$what: mmp-enc-mpi on $np ranks failed"
    cmp -s "$tmp/ref.mmp" "$tmp/mpi.mmp" || fail "$what: $np ranks do not write mmp-enc's bytes"
    n=$((n + 1))
}
for np in 1 3 5; do
    same "$np" "grey, 4 tiles" "$tmp/grey.pgm" --tile 128 --speed 4 -l 20
done
same 2 "--target-bpp" "$tmp/grey.pgm" --tile 128 --speed 4 --target-bpp 1.5

# Colour, alpha and text chunks, with the reconstruction and the figures.
"$bin/mmp-enc" --quiet --stats --tile 128 --speed 3 --recon "$tmp/ref.pam" "$tmp/logo.png" \
    "$tmp/ref.mmp" > "$tmp/ref.stats"
mpirun_ -np 3 "$bin/mmp-enc-mpi" --quiet --stats --tile 128 --speed 3 --recon "$tmp/mpi.pam" \
    "$tmp/logo.png" "$tmp/mpi.mmp" > "$tmp/mpi.stats" || fail "colour: mmp-enc-mpi failed"
cmp -s "$tmp/ref.mmp" "$tmp/mpi.mmp" || fail "colour: 3 ranks do not write mmp-enc's bytes"
"$bin/mmp-dec" --info "$tmp/mpi.mmp" | grep -q '^chunk_list=text:.*text:' ||
    fail "colour: the text chunks are not in the file"
cmp -s "$tmp/ref.pam" "$tmp/mpi.pam" || fail "colour: --recon differs from mmp-enc's"
strip() { sed 's/ seconds=[0-9.]*//' "$1"; }
[ "$(strip "$tmp/ref.stats")" = "$(strip "$tmp/mpi.stats")" ] ||
    fail "colour: --stats says '$(cat "$tmp/mpi.stats")', mmp-enc '$(cat "$tmp/ref.stats")'"
n=$((n + 1))

# A usage error: one line, from rank 0.
set +e
mpirun_ -np 3 "$bin/mmp-enc-mpi" --no-such-option "$tmp/grey.pgm" "$tmp/x.mmp" \
    > /dev/null 2> "$tmp/err"
st=$?
set -e
[ $st -eq 2 ] || fail "a usage error: exit status $st"
[ "$(grep -c '^mmp-enc-mpi:' "$tmp/err")" -eq 1 ] || fail "a usage error: $(cat "$tmp/err")"
n=$((n + 1))

# broken MODE STATUS WHAT: with MMP_MPI_TEST=MODE the run on 3 ranks exits
# with STATUS ("any": not 0), OUT keeps its bytes, no temporary is left,
# and with status 1 mmp-enc-mpi says one line matching WHAT.
broken() {
    mode=$1 want=$2 what=$3
    mkdir -p "$tmp/b"
    rm -f "$tmp/b/"*
    cp "$tmp/grey.pgm" "$tmp/b/in.pgm"
    echo old > "$tmp/b/out.mmp"
    set +e
    MMP_MPI_TEST=$mode mpirun_ -np 3 "$bin/mmp-enc-mpi" --tile 128 --speed 4 "$tmp/b/in.pgm" \
        "$tmp/b/out.mmp" > /dev/null 2> "$tmp/err"
    st=$?
    set -e
    if [ "$want" = any ]; then
        [ $st -ne 0 ] || fail "$mode: exit status 0"
    else
        [ $st -eq "$want" ] || fail "$mode: exit status $st, not $want: $(cat "$tmp/err")"
        lines=$(grep '^mmp-enc-mpi:' "$tmp/err" || true)
        [ "$(echo "$lines" | grep -c .)" -eq 1 ] && echo "$lines" | grep -q "$what" ||
            fail "$mode: mmp-enc-mpi said: $lines"
    fi
    [ "$(cat "$tmp/b/out.mmp")" = old ] || fail "$mode: OUT was written"
    [ "$(ls "$tmp/b")" = "$(printf 'in.pgm\nout.mmp')" ] || fail "$mode: left $(ls "$tmp/b")"
    n=$((n + 1))
}
broken fail:1 1 'rank 1, tile [0-9]*: failed as MMP_MPI_TEST asks'
broken kill-coder:1 1 'rank 1, tile [0-9]*: its coder process was killed by signal 9'
broken kill-coder:0 1 'rank 0, tile [0-9]*: its coder process was killed by signal 9'
broken kill-rank:2 any ''

# rd-sweep --mpi: the rows of a local sweep, then a resumed one.
pamcut -left 100 -top 100 -width 64 -height 48 images/camera.pgm > "$tmp/c1.pgm"
pamcut -left 10 -top 300 -width 48 -height 64 images/moon.pgm > "$tmp/c2.pgm"
rows() { cut -d, -f1-8 "$1" | sort; }
sweep="-l 10,100 --bin $bin --enc-args=--speed=4"
scripts/rd-sweep -j 2 $sweep -o "$tmp/local.csv" "$tmp/c1.pgm" "$tmp/c2.pgm" 2> /dev/null
mpirun_ -np 2 scripts/rd-sweep --mpi $sweep -o "$tmp/mpi.csv" "$tmp/c1.pgm" "$tmp/c2.pgm" \
    2> "$tmp/err" || fail "rd-sweep --mpi failed: $(cat "$tmp/err")"
[ "$(rows "$tmp/local.csv")" = "$(rows "$tmp/mpi.csv")" ] ||
    fail "rd-sweep --mpi wrote $(rows "$tmp/mpi.csv"), a local sweep $(rows "$tmp/local.csv")"
grep -q 'rank 1:' "$tmp/err" || fail "rd-sweep --mpi: rank 1 coded nothing: $(cat "$tmp/err")"
head -3 "$tmp/local.csv" > "$tmp/resumed.csv"
mpirun_ -np 2 scripts/rd-sweep --mpi $sweep -o "$tmp/resumed.csv" "$tmp/c1.pgm" "$tmp/c2.pgm" \
    2> "$tmp/err" || fail "rd-sweep --mpi, resumed, failed: $(cat "$tmp/err")"
[ "$(rows "$tmp/local.csv")" = "$(rows "$tmp/resumed.csv")" ] ||
    fail "rd-sweep --mpi, resumed, wrote $(rows "$tmp/resumed.csv")"
[ "$(grep -c '^\[' "$tmp/err")" -eq 2 ] || fail "rd-sweep --mpi, resumed, ran: $(cat "$tmp/err")"
# Through Open MPI's libmpi by ctypes, as where no mpi4py fits the python3.
RD_SWEEP_MPI=ctypes mpirun_ -np 2 -x RD_SWEEP_MPI scripts/rd-sweep --mpi $sweep \
    -o "$tmp/ctypes.csv" "$tmp/c1.pgm" "$tmp/c2.pgm" 2> "$tmp/err" ||
    fail "rd-sweep --mpi through ctypes failed: $(cat "$tmp/err")"
[ "$(rows "$tmp/local.csv")" = "$(rows "$tmp/ctypes.csv")" ] ||
    fail "rd-sweep --mpi through ctypes wrote $(rows "$tmp/ctypes.csv")"
n=$((n + 3))
echo "check-mpi: $n checks passed (mmp-enc-mpi on 1 to 5 ranks, rd-sweep --mpi on 2)"
