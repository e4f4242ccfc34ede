"""The Pillow plugin: Image.open of .mmp files against mmp-dec's PNG, and
im.save."""
import io
import os
import subprocess

import numpy as np
import pytest
from PIL import Image, UnidentifiedImageError

import mmp
import mmp.pil  # noqa: F401  (registers the plugin)

from conftest import CONFORMANCE, read_stream


@pytest.mark.parametrize("name", [
    "grey-l10.mmp", "ycocg444-l30.mmp", "rgba-exact-l10.mmp", "greyalpha-mmp-l30.mmp",
    "tiles-420-273x141.mmp", "bilevel-l10.mmp", "grey4-lossless.mmp", "grey10-l10.mmp",
    "grey16-l1.mmp", "colour16-ycbcr-l3.mmp"])
def test_open_equals_mmp_dec_png(name, mmp_dec, tmp_path):
    src = os.path.join(CONFORMANCE, name)
    png = tmp_path / (name + ".png")
    subprocess.run([mmp_dec, src, "-o", str(png)], check=True)
    with Image.open(src) as im, Image.open(png) as ref:
        assert im.format == "MMP"
        ref.load()
        if ref.mode == "1":
            ref = ref.convert("L")
        assert (im.mode, im.size) == (ref.mode, ref.size)
        assert np.array_equal(np.asarray(im), np.asarray(ref))


def test_open_keeps_maxval_and_chunks():
    with Image.open(os.path.join(CONFORMANCE, "meta-profile.mmp")) as im:
        chunks = dict(mmp.info(read_stream("meta-profile.mmp"))["chunk_list"])
        assert im.info["maxval"] == 255
        assert im.info["icc_profile"] == chunks["iccp"]


@pytest.mark.parametrize("mode", ["L", "LA", "RGB", "RGBA", "I;16", "1"])
def test_save_lossless_round_trip(mode, tmp_path):
    rng = np.random.default_rng(7)
    base = Image.fromarray(rng.integers(0, 256, size=(24, 40, 4), dtype=np.uint8), "RGBA")
    if mode == "I;16":
        im = Image.fromarray((rng.integers(0, 65536, size=(24, 40))).astype(np.uint16))
        assert im.mode == "I;16"
    else:
        im = base.convert(mode)
    path = tmp_path / "x.mmp"
    im.save(path, lossless=True)
    with Image.open(path) as back:
        back.load()
        want = im.convert("L") if mode == "1" else im
        if mode == "I;16":
            assert back.mode == "I"
            assert np.array_equal(np.asarray(back), np.asarray(im).astype(np.int32))
        else:
            assert back.mode == want.mode
            assert np.array_equal(np.asarray(back), np.asarray(want))


def test_save_lossy_to_file_object():
    im = Image.open(os.path.join(CONFORMANCE, "ycocg444-l30.mmp")).convert("RGB")
    buf = io.BytesIO()
    im.save(buf, format="MMP", lambda_=300, speed=4)
    assert mmp.info(buf.getvalue())["lambda"] == 300.0
    # Pillow's quality keyword, as for JPEG and WebP: mmp-enc -q's scale.
    buf = io.BytesIO()
    im.save(buf, format="MMP", quality=100, speed=4)
    assert mmp.info(buf.getvalue())["max_error"] == 0
    assert np.array_equal(np.asarray(Image.open(buf)), np.asarray(im))


def test_open_refuses_what_is_not_mmp(tmp_path):
    bad = tmp_path / "bad.mmp"
    bad.write_bytes(b"MMPi" + b"\0" * 40)
    with pytest.raises(UnidentifiedImageError):
        Image.open(bad)
    data = read_stream("grey-l10.mmp")
    cut = tmp_path / "cut.mmp"
    cut.write_bytes(data[: len(data) - 40])
    with pytest.raises(OSError):  # a header that probes, a payload that does not decode
        Image.open(cut).load()


def _decode8(kind, data):
    """The pixels of mmp_decode_KIND8 as an array (H, W, channels)."""
    from mmp import _lib
    lib = _lib.load()
    w, h, px = _lib.c_int(), _lib.c_int(), _lib.c_uint8_p()
    rc = getattr(lib, "mmp_decode_%s8" % kind)(data, len(data), w, h, px)
    assert rc == 0
    ch = {"grey": 1, "rgb": 3, "rgba": 4}[kind]
    try:
        return np.ctypeslib.as_array(px, shape=(h.value, w.value, ch)).copy()
    finally:
        _lib.free(px)


@pytest.mark.parametrize("name", [
    "grey-l10.mmp", "ycocg444-l30.mmp", "rgba-exact-l10.mmp", "greyalpha-mmp-l30.mmp",
    "bilevel-l10.mmp", "grey4-lossless.mmp", "grey10-l10.mmp", "grey16-l1.mmp",
    "colour16-ycbcr-l3.mmp"])
def test_8bit_helpers_equal_the_plugin(name):
    """mmp_decode_rgb8, _rgba8 and _grey8 give the plugin's 8-bit pixels
    (the top byte of mode I), converted by Pillow to RGB, RGBA and L."""
    data = read_stream(name)
    with Image.open(io.BytesIO(data)) as im:
        im.load()
        if im.mode == "I":
            im = Image.fromarray((np.asarray(im) >> 8).astype(np.uint8), "L")
        for kind, mode in (("rgb", "RGB"), ("rgba", "RGBA")):
            assert np.array_equal(_decode8(kind, data), np.asarray(im.convert(mode)))
        grey = im.convert("RGB").convert("L") if im.mode in ("RGB", "RGBA") else im.convert("L")
        assert np.array_equal(_decode8("grey", data)[:, :, 0], np.asarray(grey))
