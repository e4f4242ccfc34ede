"""Build hook: record where the installed mmp library lives.

At build time `pkg-config --variable=libdir mmp` (then mmpdec) names the
folder that `make install` put libmmp.so in; it is written into
python/mmp/_config.py of the built package, so that the package finds the library
it was installed against without MMP_LIBRARY or ldconfig. Where pkg-config
knows neither, LIBDIR is None and python/mmp/_lib.py falls back to
ctypes.util.find_library.
"""
import os
import subprocess

from setuptools import setup
from setuptools.command.build_py import build_py


def _libdir():
    for pkg in ("mmp", "mmpdec"):
        try:
            out = subprocess.run(["pkg-config", "--variable=libdir", pkg],
                                 capture_output=True, text=True, check=False)
        except OSError:
            return None
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return None


class BuildPy(build_py):
    def run(self):
        super().run()
        path = os.path.join(self.build_lib, "mmp", "_config.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write('"""Written by setup.py at build time: the libdir of the installed mmp."""\n')
            f.write("LIBDIR = %r\n" % (_libdir(),))


setup(cmdclass={"build_py": BuildPy})
