"""mmp.encode, mmp.decode, mmp.info through the installed library."""
import hashlib
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

import mmp

from conftest import CONFORMANCE, IMAGES, REPO, manifest, read_stream


def crop(path, box):
    with Image.open(path) as im:
        return np.asarray(im.crop(box))


@pytest.fixture(scope="module")
def grey():
    return crop(os.path.join(IMAGES, "camera.pgm"), (100, 60, 148, 100))


@pytest.fixture(scope="module")
def rgb():
    return crop(os.path.join(IMAGES, "colour", "face.ppm"), (200, 150, 240, 182))


def psnr(a, b, maxval):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float("inf") if mse == 0 else 10 * np.log10(maxval * maxval / mse)


def test_installed_package_is_tested():
    # make check-python sets this: the tests must import the package pip
    # installed, which loads the library of the recorded libdir.
    if not os.environ.get("MMP_EXPECT_INSTALLED"):
        pytest.skip("not under make check-python")
    from mmp import _config
    assert not mmp.__file__.startswith(os.path.join(REPO, "python"))
    assert _config.LIBDIR is not None
    assert mmp.library_path().startswith(_config.LIBDIR)


@pytest.mark.parametrize("channels", [1, 2, 3, 4])
def test_lossless_uint8_is_exact(grey, rgb, channels):
    if channels == 1:
        a = grey
    elif channels == 2:
        a = np.dstack([grey, 255 - grey // 2])
    elif channels == 3:
        a = rgb
    else:
        h, w = rgb.shape[:2]
        alpha = np.fromfunction(lambda y, x: (x * 255) // (w - 1), (h, w)).astype(np.uint8)
        a = np.dstack([rgb, alpha])
    data = mmp.encode(a, lossless=True)
    assert data[:4] == mmp.MAGIC
    b = mmp.decode(data)
    assert b.dtype == np.uint8 and b.shape == a.shape
    assert np.array_equal(a, b)
    hdr = mmp.info(data)
    assert (hdr["width"], hdr["height"], hdr["channels"], hdr["maxval"], hdr["max_error"]) == \
        (a.shape[1], a.shape[0], channels, 255, 0)


@pytest.mark.parametrize("shape", [(40, 48), (32, 40, 3)])
def test_lossless_uint16_is_exact(shape):
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0:shape[0], 0:shape[1]]
    smooth = (y * 900 + x * 500).astype(np.int64)
    if len(shape) == 3:
        smooth = np.dstack([smooth, smooth[::-1], smooth[:, ::-1]])
    a = np.clip(smooth + rng.integers(0, 64, size=shape), 0, 65535).astype(np.uint16)
    b = mmp.decode(mmp.encode(a, lossless=True))
    assert b.dtype == np.uint16 and np.array_equal(a, b)


def test_maxval_given_for_uint16():
    a = (np.arange(32 * 24, dtype=np.uint16).reshape(24, 32) * 3) % 1024
    data = mmp.encode(a, lossless=True, maxval=1023)
    assert mmp.info(data)["maxval"] == 1023
    assert np.array_equal(mmp.decode(data), a)


def test_lossy_grey_and_lambda(grey):
    fine = mmp.encode(grey, lambda_=10)
    coarse = mmp.encode(grey, lambda_=300)
    assert len(coarse) < len(fine)
    a, b = mmp.decode(fine), mmp.decode(coarse)
    assert psnr(grey, a, 255) > psnr(grey, b, 255) > 25
    assert mmp.info(fine)["lambda"] == 10.0 and mmp.info(fine)["max_error"] == -1


def test_quality(grey):
    # The default quality is the default lambda, byte for byte.
    assert mmp.encode(grey, quality=mmp.DEFAULT_QUALITY) == mmp.encode(grey)
    assert mmp.info(mmp.encode(grey, quality=mmp.DEFAULT_QUALITY))["lambda"] == 10.0
    low, high = mmp.encode(grey, quality=20), mmp.encode(grey, quality=90)
    assert len(low) < len(high)
    assert mmp.info(low)["lambda"] > mmp.info(high)["lambda"]
    assert psnr(grey, mmp.decode(high), 255) > psnr(grey, mmp.decode(low), 255)
    # 100 is lossless, the bytes of lossless=True.
    exact = mmp.encode(grey, quality=100)
    assert mmp.info(exact)["max_error"] == 0 and exact == mmp.encode(grey, lossless=True)
    assert np.array_equal(mmp.decode(exact), grey)
    for bad in (-1, 100.5, float("nan")):
        with pytest.raises(ValueError):
            mmp.encode(grey, quality=bad)
    for other in ({"lambda_": 10}, {"lossless": True}, {"max_error": 2}):
        with pytest.raises(ValueError):
            mmp.encode(grey, quality=50, **other)


@pytest.mark.parametrize("name,macro", [("DEFAULT_QUALITY", "MMP_DEFAULT_QUALITY"),
                                        ("MAX_SPEED", "MMP_MAX_SPEED"),
                                        ("MAX_ERROR", "MMP_MAX_ERROR")])
def test_constants_are_the_headers(name, macro):
    with open(os.path.join(REPO, "mmp", "mmp.h"), encoding="utf-8") as f:
        text = f.read()
    want = re.search(r"#define %s ([0-9]+)" % macro, text).group(1)
    assert getattr(mmp, name) == int(want)


def test_deblock_setting(grey):
    # On by default: the header's tool bit (format 1.1); off writes a file
    # without it, which a 1.0 decoder reads, and is a different file.
    on, off = mmp.encode(grey, lambda_=300), mmp.encode(grey, lambda_=300, deblock=False)
    assert mmp.info(on)["deblock"] == 1 and mmp.info(off)["deblock"] == 0
    assert on == mmp.encode(grey, lambda_=300, deblock=True) and on != off
    assert psnr(grey, mmp.decode(off), 255) > 20
    # Lossless files never have it.
    assert mmp.info(mmp.encode(grey, lossless=True))["deblock"] == 0


def test_residual_mix_setting(grey):
    # On by default for lossless files: the header's tool bit (format 1.2);
    # off writes format 1.0's count models, a different file; both exact.
    on, off = mmp.encode(grey, lossless=True), mmp.encode(grey, lossless=True, residual_mix=False)
    assert mmp.info(on)["residual_mix"] == 1 and mmp.info(off)["residual_mix"] == 0
    # Without the mixing coder, no residual context either.
    assert mmp.info(off)["residual_context"] == 0
    assert on != off
    assert (mmp.decode(on) == grey).all() and (mmp.decode(off) == grey).all()
    # Lossy files never have it.
    assert mmp.info(mmp.encode(grey, lambda_=300))["residual_mix"] == 0


@pytest.mark.parametrize("bound", [0, 2])
def test_residual_context_setting(grey, rgb, bound):
    # On by default with the mixing coder, lossless and near-lossless, grey
    # and colour: the header's tool bit 3 (format 1.3); off writes format
    # 1.2's coder, a different file; both within the bound.
    kw = {"lossless": True} if bound == 0 else {"max_error": bound}
    for img in (grey, rgb):
        on = mmp.encode(img, **kw)
        off = mmp.encode(img, residual_context=False, **kw)
        i_on, i_off = mmp.info(on), mmp.info(off)
        assert i_on["residual_context"] == 1 and i_off["residual_context"] == 0
        assert i_on["residual_mix"] == 1 and i_off["residual_mix"] == 1
        assert i_on["version_minor"] == 4 and i_off["version_minor"] == 4
        assert on == mmp.encode(img, residual_context=True, **kw) and on != off
        for data in (on, off):
            d = np.abs(mmp.decode(data).astype(int) - img.astype(int))
            assert d.max() <= bound
    # Only with the mixing coder.
    no_mix = mmp.encode(grey, residual_mix=False, residual_context=True, **kw)
    assert mmp.info(no_mix)["residual_context"] == 0
    # Lossy files never have it, and their bytes do not depend on it.
    lossy = mmp.encode(grey, lambda_=300)
    assert mmp.info(lossy)["residual_context"] == 0
    assert lossy == mmp.encode(grey, lambda_=300, residual_context=False)


def test_near_lossless_bound(rgb):
    b = mmp.decode(mmp.encode(rgb, max_error=3))
    d = np.abs(rgb.astype(int) - b.astype(int))
    assert d.max() <= 3 and d.max() > 0


def test_reversible_colour_transform(rgb):
    # Lossless colour files by default use the reversible colour transform
    # the encoder picks (format 1.4): the header's transform 4 + 7 * order +
    # type, 4..45; transform="rct" asks for the same, byte for byte; both
    # exact. "ycocg-r" writes transform 1; near-lossless files keep RGB (3).
    default = mmp.encode(rgb, lossless=True)
    rct = mmp.encode(rgb, lossless=True, transform="rct")
    assert rct == default
    for data in (default, rct):
        hdr = mmp.info(data)
        assert 4 <= hdr["transform"] <= 45
        assert hdr["version_minor"] == 4
        assert np.array_equal(mmp.decode(data), rgb)
    ycocg = mmp.encode(rgb, lossless=True, transform="ycocg-r")
    assert mmp.info(ycocg)["transform"] == 1
    assert np.array_equal(mmp.decode(ycocg), rgb)
    assert mmp.info(mmp.encode(rgb, max_error=2))["transform"] == 3
    # Only for lossless files: refused with the library's reason.
    for other in ({"max_error": 2}, {"lambda_": 30}):
        with pytest.raises(mmp.Error, match="reversible") as e:
            mmp.encode(rgb, transform="rct", **other)
        assert e.value.code == -1  # MMP_EINVAL


def test_speed_and_chroma_settings(rgb):
    data = mmp.encode(rgb, lambda_=30, speed=4, chroma="420")
    assert mmp.info(data)["chroma"] == 1
    assert mmp.decode(data).shape == rgb.shape
    fastest = mmp.encode(rgb, lambda_=30, speed=mmp.MAX_SPEED)
    assert mmp.decode(fastest).shape == rgb.shape
    with pytest.raises(mmp.Error):
        mmp.encode(rgb, lambda_=30, speed=mmp.MAX_SPEED + 1)


@pytest.mark.parametrize("entry", manifest(), ids=lambda e: e["name"])
def test_conformance_stream_decodes_to_manifest(entry):
    data = read_stream(entry["name"])
    a = mmp.decode(data)
    h, w, c = a.shape[0], a.shape[1], 1 if a.ndim == 2 else a.shape[2]
    assert (w, h, c) == (entry["width"], entry["height"], entry["channels"])
    assert a.dtype == (np.uint8 if entry["maxval"] <= 255 else np.uint16)
    assert hashlib.md5(a.astype(">u2").tobytes()).hexdigest() == entry["md5"]
    hdr = mmp.info(data)
    assert (hdr["width"], hdr["height"], hdr["channels"], hdr["maxval"]) == \
        (entry["width"], entry["height"], entry["channels"], entry["maxval"])
    assert [t for t, _ in hdr["chunk_list"]] == entry["chunks"]


def test_decode_region_is_a_window_of_the_decode():
    data = read_stream("tiles-grey-283x157.mmp")
    whole = mmp.decode(data)
    assert np.array_equal(mmp.decode_region(data, 130, 20, 100, 90), whole[20:110, 130:230])


def test_errors_raise_with_the_library_message(grey):
    with pytest.raises(mmp.Error) as e:
        mmp.decode(b"not an mmp file at all")
    assert e.value.code < 0 and str(e.value)
    data = read_stream("grey-l10.mmp")
    with pytest.raises(mmp.Error) as e:
        mmp.decode(data[: len(data) // 2])
    assert e.value.code == -5  # MMP_EBITSTREAM
    with pytest.raises(mmp.Error) as e:
        mmp.decode(data, max_pixels=100)
    assert e.value.code == -7  # MMP_ELIMIT
    with pytest.raises(mmp.Error) as e:
        mmp.info(b"MMPi")
    with pytest.raises(mmp.Error) as e:
        mmp.encode(grey, maxval=100)  # samples above maxval
    assert e.value.code == -1 and str(e.value)
    with pytest.raises(mmp.Error):
        mmp.encode(grey, lambda_=-1)
    with pytest.raises(TypeError):
        mmp.encode(grey.astype(np.float32))
    with pytest.raises(ValueError):
        mmp.encode(np.zeros((4, 4, 5), np.uint8))


def test_decoder_library_alone():
    # libmmpdec.so beside libmmp.so: decoding works, encoding says why not.
    path = mmp.library_path()
    dec = os.path.join(os.path.dirname(path), os.path.basename(path).replace("libmmp.", "libmmpdec."))
    if not os.path.exists(dec):
        pytest.skip("no libmmpdec.so beside %s" % path)
    code = ("import mmp, numpy as np, hashlib, sys\n"
            "a = mmp.decode(open(sys.argv[1], 'rb').read())\n"
            "print(hashlib.md5(a.astype('>u2').tobytes()).hexdigest())\n"
            "try:\n    mmp.encode(np.zeros((8, 8), np.uint8))\n"
            "except mmp.Error as e:\n    print('refused', e.code)\n")
    env = dict(os.environ, MMP_LIBRARY=dec)
    out = subprocess.run([sys.executable, "-c", code, os.path.join(CONFORMANCE, "grey-l10.mmp")],
                         env=env, capture_output=True, text=True, check=True).stdout.split("\n")
    want = [e["md5"] for e in manifest() if e["name"] == "grey-l10.mmp"][0]
    assert out[0] == want and out[1] == "refused -6"
