"""A Pillow plugin for .mmp files: `import mmp.pil`, then

    Image.open("x.mmp")                  # any .mmp file
    im.save("y.mmp", quality=80)         # or lambda_=10, lossless=True, max_error=N, ...

Opening gives the modes Pillow gives for the PNG file that `mmp-dec x.mmp
-o x.png` writes, and the same pixels: L, LA, RGB, RGBA for 8 bits; mode
I for grey of more than 8 bits (the samples scaled to 16 bits); LA, RGB,
RGBA of more than 8 bits keep their top 8 bits (Pillow has no 16-bit
colour mode). Samples of a maxval 2^k - 1 are scaled by repeating their
bits from the top (PNG's scaling for sBIT), others by rounding
v * full / maxval. The file's own maxval is in im.info["maxval"] and its
ancillary chunks in im.info (icc_profile, exif, xmp; "mmp_chunks": all of
them as (type, bytes)). mmp.decode gives the samples as they are.

Saving takes modes 1 (a bilevel file, maxval 1), L, LA, RGB, RGBA, I;16
and I (values 0..65535, as 16 bits); P and PA are converted to RGB or
RGBA first. The keyword arguments are mmp.encode's.
"""
import numpy as np
from PIL import Image, ImageFile

from . import MAGIC, Error, decode, encode, info

FORMAT = "MMP"
_MODES_8 = {1: "L", 2: "LA", 3: "RGB", 4: "RGBA"}


def _accept(prefix):
    return prefix[:4] == MAGIC


def _scale(samples, maxval, depth):
    """Samples of [0, maxval] to `depth` bits (uint32)."""
    v = samples.astype(np.uint32)
    full = (1 << depth) - 1
    if maxval == full:
        return v
    k = maxval.bit_length()
    if maxval == (1 << k) - 1 and k < depth:
        r = np.zeros_like(v)
        shift = depth - k
        while shift > -k:
            r |= (v << shift) if shift >= 0 else (v >> -shift)
            shift -= k
        return r
    return (v * full + maxval // 2) // maxval


def _pillow_pixels(arr, maxval):
    """(mode, rawmode, bytes) of a decoded array for Pillow."""
    channels = 1 if arr.ndim == 2 else arr.shape[2]
    if channels == 1 and maxval > 255:
        return "I", "I;16", _scale(arr, maxval, 16).astype("<u2").tobytes()
    if maxval > 255:
        v = _scale(arr, maxval, 16) >> 8
    else:
        v = _scale(arr, maxval, 8)
    mode = _MODES_8[channels]
    return mode, mode, v.astype(np.uint8).tobytes()


class MmpImageFile(ImageFile.ImageFile):
    format = FORMAT
    format_description = "mmp image (Multidimensional Multiscale Parser)"

    def _open(self):
        data = self.fp.read()
        if not _accept(data):
            raise SyntaxError("not an mmp file")
        try:
            hdr = info(data)
        except Exception as e:  # a corrupt header: Pillow tries other plugins
            raise SyntaxError(str(e)) from e
        channels = hdr["channels"]
        maxval = hdr["maxval"]
        if channels == 1 and maxval > 255:
            self.mode = "I"
        else:
            self.mode = _MODES_8[channels]
        self._size = (hdr["width"], hdr["height"])
        self.info["maxval"] = maxval
        self.info["mmp_chunks"] = hdr["chunk_list"]
        for typ, payload in hdr["chunk_list"]:
            if typ == "iccp":
                self.info["icc_profile"] = payload
            elif typ == "exif":
                self.info["exif"] = payload
            elif typ == "xmpd":
                self.info["xmp"] = payload
        self.tile = [("mmp", (0, 0) + self.size, 0, None)]


class MmpDecoder(ImageFile.PyDecoder):
    _pulls_fd = True

    def decode(self, buffer):
        data = self.fd.read()
        try:
            arr = decode(data)
        except Error as e:  # Pillow's load() reports failures as OSError
            raise OSError(str(e)) from e
        maxval = info(data)["maxval"]
        mode, rawmode, raw = _pillow_pixels(arr, maxval)
        if mode != self.mode:
            raise ValueError("mmp: decoded mode %s, expected %s" % (mode, self.mode))
        self.set_as_raw(raw, rawmode)
        return -1, 0


def _save(im, fp, filename):
    params = dict(im.encoderinfo)
    for k in ("lambda", "lam"):
        if k in params:
            params["lambda_"] = params.pop(k)
    allowed = {"lambda_", "quality", "lossless", "max_error", "speed", "chroma", "transform",
               "alpha", "engine", "threads", "tile", "dict_cap", "deblock",
               "residual_mix", "residual_context"}
    kwargs = {k: v for k, v in params.items() if k in allowed}
    mode = im.mode
    maxval = None
    if mode in ("P", "PA"):
        im = im.convert("RGBA" if mode == "PA" or "transparency" in im.info else "RGB")
        mode = im.mode
    if mode == "1":
        arr = np.asarray(im.convert("L")) // 255
        maxval = 1
    elif mode in ("L", "LA", "RGB", "RGBA"):
        arr = np.asarray(im)
    elif mode in ("I;16", "I"):
        arr = np.asarray(im)
        if arr.min() < 0 or arr.max() > 65535:
            raise ValueError("mmp: mode %s values outside 0..65535" % mode)
        arr = arr.astype(np.uint16)
    else:
        raise OSError("mmp: cannot write mode %s" % mode)
    fp.write(encode(np.ascontiguousarray(arr, dtype=arr.dtype), maxval=maxval, **kwargs))


Image.register_open(FORMAT, MmpImageFile, _accept)
Image.register_decoder("mmp", MmpDecoder)
Image.register_save(FORMAT, _save)
Image.register_extension(FORMAT, ".mmp")
Image.register_mime(FORMAT, "image/x-mmp")
