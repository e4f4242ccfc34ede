"""Shared paths of the tests: the repository's conformance streams and
images, and mmp-dec (MMP_DEC, else the one on PATH, else bin/mmp-dec)."""
import os
import shutil

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CONFORMANCE = os.path.join(REPO, "tests", "conformance")
IMAGES = os.path.join(REPO, "images")


def manifest():
    """The lines of tests/conformance/MANIFEST as dicts."""
    out = []
    with open(os.path.join(CONFORMANCE, "MANIFEST"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            p = line.split()
            out.append({"name": p[0], "md5": p[1], "width": int(p[2]), "height": int(p[3]),
                        "channels": int(p[4]), "maxval": int(p[5]),
                        "chunks": [] if p[6] == "-" else p[6].split(",")})
    return out


def read_stream(name):
    with open(os.path.join(CONFORMANCE, name), "rb") as f:
        return f.read()


@pytest.fixture(scope="module")
def mmp_dec():
    path = os.environ.get("MMP_DEC") or shutil.which("mmp-dec") or \
        os.path.join(REPO, "bin", "mmp-dec")
    if not os.access(path, os.X_OK):
        pytest.fail("mmp-dec not found (set MMP_DEC)")
    return path
