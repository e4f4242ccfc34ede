#!/usr/bin/env python3
"""Multi-variant rate-distortion sweep for tuning the redundancy threshold.

Same encode/decode/check and CSV rows as scripts/rd-sweep, but many variants
(dictionary size, threshold rule T(lambda)) share one pool of workers, jobs of
a tier are started longest-first (baseline timings as estimates), and each
variant writes its own CSV OUTDIR/<variant>.csv (codec column "mmp").
Rows already present in a CSV are skipped (resumable).

    sweep.py -j 16 --deadline 550 --outdir DIR --bin bin \
        --variants 'l16:1024:l/16,c0:1024:0' --images camera,ascent \
        [--tier2 'd2048:2048:l/4' --tier2-images ...]

A variant is NAME:DICTSIZE:EXPR where EXPR is a Python expression in l (lambda).
"""
import argparse
import csv
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

FIELDS = ["image", "width", "height", "codec", "param", "bytes", "bpp", "psnr",
          "enc_seconds", "dec_seconds"]
HERE = os.path.dirname(os.path.abspath(__file__))
BASELINE = os.path.join(HERE, "..", "rd-baseline.csv")
T0 = time.monotonic()
procs = set()
plock = threading.Lock()
stop = threading.Event()


def est_times():
    est = {}
    try:
        with open(BASELINE) as f:
            for r in csv.DictReader(f):
                est[(r["image"], r["param"].split("=")[1])] = float(r["enc_seconds"])
    except OSError:
        pass
    return est


def run(cmd, timeout):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with plock:
        procs.add(p)
    try:
        out, err = p.communicate(timeout=min(max(timeout, 1), 1e6))
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise RuntimeError("deadline")
    finally:
        with plock:
            procs.discard(p)
    return p.returncode, out, err


def run_one(bindir, img, lam, dsize, thr, deadline):
    if stop.is_set():
        raise RuntimeError("deadline")
    name = os.path.splitext(os.path.basename(img))[0]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "o.mmp")
        rec = os.path.join(tmp, "r.pgm")
        dec = os.path.join(tmp, "d.pgm")
        cmd = [os.path.join(bindir, "mmp-enc"), "-q", "--stats", "-l", str(lam), "-e", "seq",
               "-d", str(dsize), "--recon", rec, "--redundancy", "%.4f" % thr, img, out]
        t0 = time.monotonic()
        rc, so, se = run(cmd, deadline - (t0 - T0))
        enc_s = time.monotonic() - t0
        if rc != 0:
            raise RuntimeError("%s: %s" % (" ".join(cmd), se.strip()))
        st = dict(kv.split("=", 1) for kv in so.split())
        t0 = time.monotonic()
        rc, _, se = run([os.path.join(bindir, "mmp-dec"), "-q", out, "-o", dec], 60)
        dec_s = time.monotonic() - t0
        if rc != 0:
            raise RuntimeError("mmp-dec failed on %s: %s" % (img, se.strip()))
        with open(rec, "rb") as a, open(dec, "rb") as b:
            if a.read() != b.read():
                raise RuntimeError("decoder output differs from the encoder's reconstruction: "
                                   "%s lambda %s" % (img, lam))
        return {"image": name, "width": st["width"], "height": st["height"], "codec": "mmp",
                "param": "lambda=%s" % lam, "bytes": st["bytes"], "bpp": st["bpp"],
                "psnr": st["psnr"], "enc_seconds": "%.3f" % enc_s, "dec_seconds": "%.3f" % dec_s}


def parse_variants(s):
    out = []
    for v in filter(None, s.split(",")):
        name, d, expr = v.split(":", 2)
        out.append((name, int(d), expr))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("-l", "--lambdas", default="1,3,10,30,100,300,1000")
    ap.add_argument("--variants", required=True)
    ap.add_argument("--images", required=True)
    ap.add_argument("--tier2", default="")
    ap.add_argument("--tier2-images", default="")
    ap.add_argument("--tier3", default="")
    ap.add_argument("--tier3-images", default="")
    ap.add_argument("--imgdir", default="images")
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--bin", default="bin")
    ap.add_argument("--deadline", type=float, default=1e9, help="seconds from start")
    a = ap.parse_args()
    os.makedirs(a.outdir, exist_ok=True)
    est = est_times()
    lams = a.lambdas.split(",")
    tiers = [(parse_variants(a.variants), a.images.split(",")),
             (parse_variants(a.tier2), a.tier2_images.split(",")),
             (parse_variants(a.tier3), a.tier3_images.split(","))]
    writers, files, locks = {}, {}, {}
    jobs = []
    for tier, (variants, images) in enumerate(tiers):
        tj = []
        for name, d, expr in variants:
            path = os.path.join(a.outdir, name + ".csv")
            done = set()
            if os.path.exists(path):
                with open(path) as f:
                    for row in csv.DictReader(f):
                        done.add((row["image"], row["param"]))
            if name not in files:
                new = not os.path.exists(path) or os.path.getsize(path) == 0
                files[name] = open(path, "a", newline="")
                writers[name] = csv.DictWriter(files[name], fieldnames=FIELDS)
                locks[name] = threading.Lock()
                if new:
                    writers[name].writeheader()
            for img in filter(None, images):
                for lam in lams:
                    if (img, "lambda=" + lam) in done:
                        continue
                    thr = eval(expr, {}, {"l": float(lam)})
                    e = est.get((img, lam), 60.0) * (1.6 if d > 1024 else 1.0)
                    tj.append((e, name, d, thr, img, lam))
        tj.sort(key=lambda j: -j[0])
        jobs += tj
    print("%d jobs, est %.0f core-s" % (len(jobs), sum(j[0] for j in jobs)), file=sys.stderr)

    def on_deadline():
        stop.set()
        with plock:
            for p in list(procs):
                p.kill()
    timer = threading.Timer(a.deadline, on_deadline)
    timer.daemon = True
    timer.start()
    fails = 0
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = {ex.submit(run_one, a.bin, os.path.join(a.imgdir, img + ".pgm"), lam, d, thr,
                          a.deadline): (name, img, lam, thr) for e, name, d, thr, img, lam in jobs}
        for i, fu in enumerate(as_completed(futs), 1):
            name, img, lam, thr = futs[fu]
            try:
                row = fu.result()
            except Exception as ex_:
                fails += 1
                if "deadline" not in str(ex_):
                    print("FAILED %s %s %s: %s" % (name, img, lam, ex_), file=sys.stderr)
                continue
            with locks[name]:
                writers[name].writerow(row)
                files[name].flush()
            print("[%d/%d %.0fs] %s %s l=%s T=%g: %s B %s dB enc %ss" % (
                i, len(jobs), time.monotonic() - T0, name, img, lam, thr, row["bytes"],
                row["psnr"], row["enc_seconds"]), file=sys.stderr)
    print("done, %d not finished/failed, %.0fs" % (fails, time.monotonic() - T0), file=sys.stderr)


if __name__ == "__main__":
    main()
