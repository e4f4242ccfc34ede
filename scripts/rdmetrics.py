"""The perceptual columns of make rd's CSVs, shared by scripts/rd-sweep and scripts/compare.

Each row of a sweep ends with two columns measured by mmp-metrics on the
original and the decoded image (mmp/cli/metrics_main.c):
    ms_ssim       MS-SSIM (Wang, Simoncelli and Bovik's; colour on BT.601 luma)
    ssimulacra2   SSIMULACRA 2 (libjxl's definition)
"nan" where an image is too small for the metric (MS-SSIM: a side under 161).

A CSV written before these columns existed is rewritten with them, its
rows' new cells empty; a row without them counts as not done, so the sweep
runs its job again, and the new row replaces the old one (tidy, at the
start and at the end of a sweep).
"""
import csv
import os
import subprocess
import tempfile

METRICS = ["ms_ssim", "ssimulacra2"]


def metrics_tool(bindir):
    """The path of mmp-metrics in bindir, or None when it is not there."""
    path = os.path.join(bindir, "mmp-metrics")
    return path if os.access(path, os.X_OK) else None


def measure(tool, original, decoded):
    """{"ms_ssim": ..., "ssimulacra2": ...} of decoded against original, as mmp-metrics prints them."""
    p = subprocess.run([tool, original, decoded], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        raise RuntimeError("mmp-metrics %s %s: %s" % (original, decoded, p.stderr.strip()))
    vals = dict(kv.split("=", 1) for kv in p.stdout.split() if "=" in kv)
    try:
        return {k: vals[k] for k in METRICS}
    except KeyError:
        raise RuntimeError("mmp-metrics printed %r" % p.stdout.strip())


def measured(row):
    return all((row.get(k) or "") != "" for k in METRICS)


def tidy(path, layouts):
    """Reads the CSV at path, whose header must be one of layouts (each a list of columns
    ending with METRICS) or one of them without METRICS (an older file). Rewrites the file
    when it is older or holds a row without METRICS: the header of its layout, and for each
    (image, codec, param) one row, the last measured one, else the last one. Returns the set
    of (image, codec, param) measured and the file's layout (None for a missing or empty
    file), or raises ValueError naming the header."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return set(), None
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        header = r.fieldnames
        rows = list(r)
    layout = None
    for lay in layouts:
        if header in (lay, lay[:-len(METRICS)]):
            layout = lay
    if layout is None:
        raise ValueError("%s has columns %s, not %s" % (
            path, ",".join(header or []), " nor ".join(",".join(lay) for lay in layouts)))
    keep, order = {}, []
    for row in rows:
        key = (row["image"], row["codec"], row["param"])
        if key not in keep:
            order.append(key)
            keep[key] = row
        elif measured(row) or not measured(keep[key]):
            keep[key] = row
    if header != layout or len(keep) != len(rows) or not all(measured(r) for r in rows):
        fd, tmp = tempfile.mkstemp(prefix=".rd.", dir=os.path.dirname(os.path.abspath(path)))
        try:
            with os.fdopen(fd, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=layout, extrasaction="ignore")
                w.writeheader()
                for key in order:
                    w.writerow({k: keep[key].get(k) or "" for k in layout})
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    return {k for k in order if measured(keep[k])}, layout
