"""The ctypes structs of python/mmp/_lib.py against mmp/mmp.h: a C program built
against the header prints every field's offset and every struct's size."""
import ctypes
import os
import re
import shutil
import subprocess

import pytest

from mmp import _lib

from conftest import REPO

STRUCTS = {"mmp_image": _lib.Image, "mmp_chunk": _lib.Chunk,
           "mmp_settings": _lib.Settings, "mmp_file_info": _lib.FileInfo}


def test_struct_layouts_match_the_header(tmp_path):
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("no C compiler")
    lines = ["#include <stdio.h>", "#include <stddef.h>", '#include "mmp.h"', "int main(void) {"]
    for cname, py in STRUCTS.items():
        lines.append('printf("%s size %%zu\\n", sizeof(%s));' % (cname, cname))
        for field, _ in py._fields_:
            lines.append('printf("%s %s %%zu\\n", offsetof(%s, %s));'
                         % (cname, field, cname, field))
    lines += ["return 0;", "}"]
    src = tmp_path / "layout.c"
    src.write_text("\n".join(lines) + "\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I", os.path.join(REPO, "mmp"), "-o", str(exe), str(src)], check=True)
    out = subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout
    want = {}
    for line in out.splitlines():
        cname, field, value = line.split()
        want[(cname, field)] = int(value)
    got = {}
    for cname, py in STRUCTS.items():
        got[(cname, "size")] = ctypes.sizeof(py)
        for field, _ in py._fields_:
            got[(cname, field)] = getattr(py, field).offset
    assert got == want


def test_soname_version_is_the_headers():
    with open(os.path.join(REPO, "mmp", "mmp.h"), encoding="utf-8") as f:
        abi = re.search(r'#define MMP_ABI_VERSION ([0-9]+)', f.read()).group(1)
    assert _lib.SONAME_VERSION == abi
