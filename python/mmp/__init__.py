"""mmp: encode and decode .mmp images from Python (numpy arrays).

    import mmp
    data = mmp.encode(array, quality=80)          # bytes of an .mmp file (or lambda_=10.0)
    array = mmp.decode(data)                       # numpy array
    mmp.info(data)                                 # the header's fields, nothing decoded

Arrays are uint8 or uint16 of shape (H, W) grey, (H, W, 2) grey and alpha,
(H, W, 3) RGB or (H, W, 4) RGBA. The binding is ctypes over libmmp.so (or
libmmpdec.so, which decodes only), found as python/mmp/_lib.py describes. Errors of
the library raise mmp.Error with its one-line reason. `import mmp.pil`
registers the Pillow plugin (Image.open, Image.save).
"""
import ctypes

import numpy as np

from . import _lib

__all__ = ["Error", "encode", "decode", "decode_region", "info", "library_path",
           "MAX_SPEED", "MAX_ERROR", "DEFAULT_QUALITY"]
__version__ = "0.3.0"

MAGIC = b"MMPi"
MAX_SPEED = 10
MAX_ERROR = 32767
# mmp.h's MMP_DEFAULT_QUALITY: the quality of the default lambda, 10.
DEFAULT_QUALITY = 75


class Error(Exception):
    """A failure of the library: `code` is its negative MMP_E* code, the
    message its one-line reason."""

    def __init__(self, message, code=-1):
        super().__init__(message)
        self.code = code


def library_path():
    """The path of the shared library this package loaded."""
    return _lib.path()


def _check(rc, errbuf):
    if rc < 0:
        lib = _lib.load()
        msg = errbuf.value.decode("utf-8", "replace") if errbuf is not None else ""
        if not msg:
            msg = lib.mmp_strerror(rc).decode("utf-8", "replace")
        raise Error(msg, rc)
    return rc


def _as_bytes(data):
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise TypeError("mmp: expected bytes, got %s" % type(data).__name__)


def _settings():
    # The struct of this mirror, its size in its first field: the library
    # gives defaults to any field it has past it.
    s = _lib.Settings()
    _lib.load().mmp_settings_init(ctypes.byref(s), ctypes.sizeof(s))
    return s


def encode(array, lambda_=None, *, quality=None, lossless=False, max_error=None, speed=None,
           maxval=None, chroma=None, transform=None, alpha=None, engine=None, threads=0,
           tile=None, dict_cap=None, deblock=True, residual_mix=True,
           residual_context=True):
    """Encode a numpy array to the bytes of an .mmp file.

    array: uint8 or uint16, shape (H, W), (H, W, 2), (H, W, 3) or (H, W, 4).
    quality: 0 (the fewest bits) to 100 (lossless), as mmp-enc -q: the
        library's table of lambdas (mmp_set_quality); DEFAULT_QUALITY is the
        default lambda, 10. Not with lambda_, lossless or max_error.
    lambda_: weighs bits against squared error (mmp-enc -l): 10 (the
        default), 75 and 300 are the customary high, medium and low quality
        points.
    lossless: every sample back exactly (mmp-enc --lossless).
    max_error: N > 0: near-lossless, every sample within N (--max-error).
    speed: 0 (exhaustive) to MAX_SPEED; None: the library's default.
    maxval: the largest sample value; None: 255 for uint8, 65535 for uint16.
    chroma: "444" or "420"; transform: "auto", "ycocg-r", "ycbcr", "rgb" or
    (lossless) "rct", the reversible colour transform the encoder picks;
    alpha: "exact" or "mmp"; engine: "auto", "seq", "omp" or "opencl";
    threads: engine threads (0: the engine's default); tile: the tiles'
    side (multiple of 16, 128 to 65536; None: automatic); dict_cap:
    dictionary elements per scale (None: the speed's); deblock: False
    writes no deblocking filter (mmp-enc --deblock off), a file that a
    decoder of format 1.0 reads; residual_mix: False codes a lossless or
    near-lossless file's residual stage with format 1.0's models
    (mmp-enc --residual-mix off) instead of the mixing coder of format 1.2;
    residual_context: False leaves out the mixing coder's residual context
    (mmp-enc --residual-context off), a file that a decoder of format 1.2
    reads.
    """
    lib = _lib.load()
    if not _lib.has_encoder():
        raise Error("mmp: %s decodes only (libmmpdec); encoding needs libmmp"
                    % _lib.path(), -6)
    a = np.asarray(array)
    if a.dtype == np.uint8:
        default_max = 255
    elif a.dtype == np.uint16:
        default_max = 65535
    else:
        raise TypeError("mmp.encode: the array must be uint8 or uint16, not %s" % a.dtype)
    if a.ndim == 2:
        channels = 1
    elif a.ndim == 3 and 1 <= a.shape[2] <= 4:
        channels = a.shape[2]
    else:
        raise ValueError("mmp.encode: shape %s is not (H, W) or (H, W, 1..4)" % (a.shape,))
    height, width = a.shape[0], a.shape[1]
    samples = np.ascontiguousarray(a, dtype=np.uint16)

    s = _settings()
    if quality is not None:
        if lambda_ is not None or lossless or max_error is not None:
            raise ValueError("mmp.encode: quality sets the rate: not with lambda_, lossless "
                             "or max_error")
        q = float(quality)
        if lib.mmp_set_quality(ctypes.byref(s), q) != 0:
            raise ValueError("mmp.encode: quality %r is not a number from 0 to 100" % quality)
    elif lambda_ is not None:
        s.__setattr__("lambda", float(lambda_))
    if lossless and max_error:
        raise ValueError("mmp.encode: lossless and max_error > 0 exclude each other")
    if lossless:
        s.max_error = 0
    elif max_error is not None:
        s.max_error = int(max_error)
    if speed is not None:
        s.speed = int(speed)
    if chroma is not None:
        s.chroma = _lib.MMP_CHROMA[str(chroma)]
    if transform is not None:
        s.transform = _lib.MMP_TRANSFORM[transform]
    if alpha is not None:
        s.alpha = _lib.MMP_ALPHA[alpha]
    if engine is not None:
        s.engine = engine.encode()
    s.threads = int(threads)
    if tile is not None:
        s.tile_width = s.tile_height = int(tile)
    if dict_cap is not None:
        s.dict_cap = int(dict_cap)
    s.deblocking = 0 if deblock else -1
    s.residual_mix = 0 if residual_mix else -1
    s.residual_context = 0 if residual_context else -1

    img = _lib.Image()
    img.width, img.height, img.channels = width, height, channels
    img.maxval = default_max if maxval is None else int(maxval)
    img.pix = samples.ctypes.data_as(ctypes.POINTER(ctypes.c_uint16))
    out = _lib.c_uint8_p()
    outlen = ctypes.c_size_t()
    errbuf = ctypes.create_string_buffer(_lib.ERRBUF)
    rc = lib.mmp_encode(ctypes.byref(s), ctypes.byref(img), ctypes.byref(out),
                        ctypes.byref(outlen), None, None, errbuf, _lib.ERRBUF)
    _check(rc, errbuf)
    try:
        return ctypes.string_at(out, outlen.value)
    finally:
        _lib.free(out)


def _to_array(img):
    n = img.width * img.height * img.channels
    samples = np.ctypeslib.as_array(img.pix, shape=(n,)).copy()
    if img.maxval <= 255:
        samples = samples.astype(np.uint8)
    if img.channels == 1:
        return samples.reshape(img.height, img.width)
    return samples.reshape(img.height, img.width, img.channels)


def _decoded(rc, img, errbuf):
    lib = _lib.load()
    try:
        _check(rc, errbuf)
        if img.channels == 0:
            img.channels = 1
        return _to_array(img)
    finally:
        lib.mmp_image_free(ctypes.byref(img))


def decode(data, max_pixels=0):
    """Decode the bytes of a whole .mmp file to a numpy array: uint8 when the
    file's maxval is at most 255, else uint16; shape (H, W) for grey, else
    (H, W, channels). max_pixels > 0 refuses a larger image before anything
    is allocated (mmp_decode_limited), for files from untrusted sources."""
    lib = _lib.load()
    data = _as_bytes(data)
    img = _lib.Image()
    errbuf = ctypes.create_string_buffer(_lib.ERRBUF)
    rc = lib.mmp_decode_limited(data, len(data), int(max_pixels), ctypes.byref(img), errbuf,
                                _lib.ERRBUF)
    return _decoded(rc, img, errbuf)


def decode_region(data, x, y, width, height, max_pixels=0):
    """The window [x, x + width) x [y, y + height) of the image, decoding only
    the tiles it touches; the same samples as decode(data)[y:y+height, x:x+width]."""
    lib = _lib.load()
    data = _as_bytes(data)
    img = _lib.Image()
    errbuf = ctypes.create_string_buffer(_lib.ERRBUF)
    rc = lib.mmp_decode_region(data, len(data), int(x), int(y), int(width), int(height),
                               int(max_pixels), ctypes.byref(img), errbuf, _lib.ERRBUF)
    return _decoded(rc, img, errbuf)


def info(data):
    """The header's fields of an .mmp file (mmp_probe), nothing decoded: a dict
    with mmp_file_info's fields, `lambda` and `redundancy` as numbers, the
    image's `channels`, and `chunk_list`: the ancillary chunks as (type, bytes)."""
    lib = _lib.load()
    data = _as_bytes(data)
    buf = ctypes.create_string_buffer(max(ctypes.sizeof(_lib.FileInfo), 1024))
    fi = _lib.FileInfo.from_buffer(buf)
    errbuf = ctypes.create_string_buffer(_lib.ERRBUF)
    _check(lib.mmp_probe(data, len(data), ctypes.byref(fi), errbuf, _lib.ERRBUF), errbuf)
    out = {name: getattr(fi, name) for name, _ in _lib.FileInfo._fields_}
    out["channels"] = fi.planes
    out["lambda"] = fi.lambda_q8 / 256.0
    out["redundancy"] = fi.redund_q4 / 16.0
    chunks = []
    if fi.chunks > 0:
        arr = (_lib.Chunk * fi.chunks)()
        n = _check(lib.mmp_chunks(data, len(data), arr, fi.chunks, errbuf, _lib.ERRBUF), errbuf)
        for c in arr[:n]:
            chunks.append((c.type.decode("ascii", "replace"), ctypes.string_at(c.data, c.len)))
    out["chunk_list"] = chunks
    return out
