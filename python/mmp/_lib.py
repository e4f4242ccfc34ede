"""ctypes declarations of mmp/mmp.h and the loading of the shared library.

The structs below mirror those of mmp.h field by field, in order, with the
same C types; python/tests/test_abi.py compiles a small C program against
the header and checks every offset and size against these. The library is
looked for in this order:

1. the path in the environment variable MMP_LIBRARY (libmmp.so or, for
   decoding alone, libmmpdec.so);
2. libmmp.so.SONAME_VERSION, then libmmpdec.so.SONAME_VERSION, in the
   libdir recorded when the package was installed (python/setup.py asks
   pkg-config; python/mmp/_config.py holds it);
3. the same names through the dynamic loader's search path, as
   ctypes.util.find_library finds them.

The soname carries mmp.h's MMP_ABI_VERSION, whose structs these are: a
library of another ABI may lay them out differently and is not loaded.
Within one ABI the library takes Settings of any size (its first field),
so this mirror keeps working with a library that has added fields.
"""
import ctypes
import ctypes.util
import os

from . import _config

# mmp.h's MMP_ABI_VERSION: the Makefile's SO_MAJOR.
SONAME_VERSION = "1"

c_int = ctypes.c_int
c_double = ctypes.c_double
c_char_p = ctypes.c_char_p
c_void_p = ctypes.c_void_p
c_size_t = ctypes.c_size_t
c_uint8_p = ctypes.POINTER(ctypes.c_uint8)


class Image(ctypes.Structure):
    _fields_ = [
        ("width", c_int),
        ("height", c_int),
        ("maxval", c_int),
        ("pix", ctypes.POINTER(ctypes.c_uint16)),
        ("channels", c_int),
    ]


class Chunk(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_char * 5),
        ("data", c_uint8_p),
        ("len", c_size_t),
    ]


class Settings(ctypes.Structure):
    _fields_ = [
        ("size", c_size_t),
        ("lambda", c_double),
        ("engine", c_char_p),
        ("threads", c_int),
        ("dict_cap", c_int),
        ("redundancy", c_double),
        ("order", c_int),
        ("speed", c_int),
        ("transform", c_int),
        ("chroma", c_int),
        ("alpha", c_int),
        ("chroma_lambda", c_double),
        ("max_error", c_int),
        ("residual", c_int),
        ("restoration", c_int),
        ("dct", c_int),
        ("device", c_char_p),
        ("engine_tune", c_char_p),
        ("head_start", c_int),
        ("tile_width", c_int),
        ("tile_height", c_int),
        ("chunks", ctypes.POINTER(Chunk)),
        ("nchunks", c_int),
        ("verbose", c_int),
        ("log", c_void_p),
        ("log_opaque", c_void_p),
        ("progress", c_void_p),
        ("progress_opaque", c_void_p),
        ("deblocking", c_int),
        ("residual_mix", c_int),
        ("residual_context", c_int),
        ("spare", c_int),
    ]


class FileInfo(ctypes.Structure):
    _fields_ = [
        ("version", c_int),
        ("version_minor", c_int),
        ("planes", c_int),
        ("log2_block", c_int),
        ("log2_pmin", c_int),
        ("width", c_int),
        ("height", c_int),
        ("maxval", c_int),
        ("dict_cap", c_int),
        ("redund_q4", ctypes.c_uint32),
        ("lambda_q8", ctypes.c_uint32),
        ("payload_len", ctypes.c_uint64),
        ("order", c_int),
        ("transform", c_int),
        ("chroma", c_int),
        ("alpha", c_int),
        ("residual", c_int),
        ("max_error", c_int),
        ("crc", ctypes.c_uint32),
        ("dct", c_int),
        ("tile_width", c_int),
        ("tile_height", c_int),
        ("tiles", c_int),
        ("chunks", c_int),
        ("deblock", c_int),
        ("residual_mix", c_int),
        ("residual_context", c_int),
        ("reserved", c_int * 13),
    ]


# Constants of mmp.h.
MMP_TRANSFORM = {"auto": 0, "ycocg-r": 1, "ycbcr": 2, "rgb": 3, "rct": 4}
MMP_CHROMA = {"444": 0, "420": 1}
MMP_ALPHA = {"exact": 1, "mmp": 2}
MMP_MAX_FILE_BYTES = (1 << 32) + 48
ERRBUF = 512


def _candidates():
    env = os.environ.get("MMP_LIBRARY")
    if env:
        return [env]
    names = ["libmmp.so." + SONAME_VERSION, "libmmpdec.so." + SONAME_VERSION]
    out = []
    if _config.LIBDIR:
        out += [os.path.join(_config.LIBDIR, n) for n in names]
    for short in ("mmp", "mmpdec"):
        found = ctypes.util.find_library(short)
        if found and found.endswith(".so." + SONAME_VERSION):
            out.append(found)
    return out


def _declare(lib):
    lib.mmp_strerror.restype = c_char_p
    lib.mmp_strerror.argtypes = [c_int]
    lib.mmp_settings_init.restype = c_int
    lib.mmp_settings_init.argtypes = [c_void_p, c_size_t]
    lib.mmp_free.restype = None
    lib.mmp_free.argtypes = [c_void_p]
    for name in ("mmp_decode_grey8", "mmp_decode_rgb8", "mmp_decode_rgba8"):
        f = getattr(lib, name)
        f.restype = c_int
        f.argtypes = [c_char_p, c_size_t, ctypes.POINTER(c_int), ctypes.POINTER(c_int),
                      ctypes.POINTER(c_uint8_p)]
    lib.mmp_image_free.restype = None
    lib.mmp_image_free.argtypes = [ctypes.POINTER(Image)]
    lib.mmp_decode_limited.restype = c_int
    lib.mmp_decode_limited.argtypes = [c_char_p, c_size_t, ctypes.c_uint64,
                                       ctypes.POINTER(Image), c_char_p, c_size_t]
    lib.mmp_decode_region.restype = c_int
    lib.mmp_decode_region.argtypes = [c_char_p, c_size_t, c_int, c_int, c_int, c_int,
                                      ctypes.c_uint64, ctypes.POINTER(Image), c_char_p,
                                      c_size_t]
    lib.mmp_probe.restype = c_int
    lib.mmp_probe.argtypes = [c_char_p, c_size_t, c_void_p, c_char_p, c_size_t]
    lib.mmp_chunks.restype = c_int
    lib.mmp_chunks.argtypes = [c_char_p, c_size_t, ctypes.POINTER(Chunk), c_int, c_char_p,
                               c_size_t]
    has_encoder = hasattr(lib, "mmp_encode")
    if has_encoder:
        lib.mmp_encode.restype = c_int
        lib.mmp_encode.argtypes = [c_void_p, ctypes.POINTER(Image),
                                   ctypes.POINTER(c_uint8_p), ctypes.POINTER(c_size_t),
                                   c_void_p, c_void_p, c_char_p, c_size_t]
        lib.mmp_set_quality.restype = c_int
        lib.mmp_set_quality.argtypes = [c_void_p, c_double]
    return has_encoder


_lib = None
_path = None
_has_encoder = False
_load_errors = []


def load():
    """The loaded library (ctypes.CDLL); raises OSError naming every path tried."""
    global _lib, _path, _has_encoder
    if _lib is not None:
        return _lib
    tried = []
    for cand in _candidates():
        try:
            lib = ctypes.CDLL(cand)
        except OSError as e:
            tried.append("%s (%s)" % (cand, e))
            continue
        _has_encoder = _declare(lib)
        _lib, _path = lib, cand
        return lib
    raise OSError("mmp: no libmmp.so.%s found; set MMP_LIBRARY to its path. Tried: %s"
                  % (SONAME_VERSION, "; ".join(tried) if tried else "nothing (no candidates)"))


def path():
    load()
    return _path


def has_encoder():
    load()
    return _has_encoder


def free(ptr):
    """Free a buffer the library returned (mmp_free)."""
    load().mmp_free(ptr)
