"""Image samples for the measurement scripts: 8-bit PNM and PNG read and written
without third-party modules, and PSNR (scripts/compare, scripts/pareto).

read_image gives (width, height, channels, samples) of a P2/P3/P5/P6 or PNG file;
read_gray and read_rgb give the grey plane (Rec. 601 luma of a colour file) or
interleaved RGB; psnr is one MSE over all the samples, psnr_luma that of the
BT.601 luma of two RGB images.
"""
import math
import operator
import struct
import zlib

def read_pnm(path):
    """(width, height, channels, samples) of a P2/P3/P5/P6 file, 8 bits per sample."""
    with open(path, "rb") as f:
        data = f.read()
    toks, i = [], 0
    while len(toks) < 4:
        while i < len(data) and data[i:i + 1].isspace():
            i += 1
        if data[i:i + 1] == b"#":
            while i < len(data) and data[i:i + 1] not in (b"\n", b"\r"):
                i += 1
            continue
        j = i
        while j < len(data) and not data[j:j + 1].isspace() and data[j:j + 1] != b"#":
            j += 1
        if j == i:
            raise ValueError("%s: truncated PNM header" % path)
        toks.append(data[i:j])
        i = j
    magic, w, h, maxval = toks[0], int(toks[1]), int(toks[2]), int(toks[3])
    if magic not in (b"P2", b"P3", b"P5", b"P6"):
        raise ValueError("%s: not a PGM/PPM file" % path)
    if maxval > 255:
        raise ValueError("%s: %d-bit samples; compare works on 8-bit gray" % (path, maxval.bit_length()))
    ch = 3 if magic in (b"P3", b"P6") else 1
    n = w * h * ch
    if magic in (b"P5", b"P6"):
        px = data[i + 1:i + 1 + n]
    else:
        px = bytes(int(t) for t in data[i:].split()[:n])
    if len(px) != n:
        raise ValueError("%s: truncated pixel data" % path)
    if maxval != 255:
        px = bytes((v * 255 + maxval // 2) // maxval for v in px)
    return w, h, ch, px


def read_png(path, keep_alpha=False):
    """(width, height, channels, samples) of a non-interlaced PNG, 8 bits per sample; an alpha
    channel is dropped unless keep_alpha (channels 2 and 4 then)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG file" % path)
    pos, idat, hdr, plte = 8, [], None, None
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"PLTE":
            plte = body
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    w, h, depth, ctype, _, _, interlace = hdr
    if interlace or depth not in (8, 16) or ctype not in (0, 2, 3, 4, 6):
        raise ValueError("%s: unsupported PNG (depth %d, colour type %d, interlace %d)"
                         % (path, depth, ctype, interlace))
    ch = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    bpp = ch * depth // 8
    stride = w * bpp
    raw = zlib.decompress(b"".join(idat))
    out = bytearray(h * stride)
    prev = bytearray(stride)
    for y in range(h):
        ft = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if ft == 1:
            for x in range(bpp, stride):
                line[x] = (line[x] + line[x - bpp]) & 255
        elif ft == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, prev))
        elif ft == 3:
            for x in range(stride):
                left = line[x - bpp] if x >= bpp else 0
                line[x] = (line[x] + ((left + prev[x]) >> 1)) & 255
        elif ft == 4:
            for x in range(stride):
                a = line[x - bpp] if x >= bpp else 0
                b = prev[x]
                c = prev[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        elif ft != 0:
            raise ValueError("%s: bad PNG filter %d" % (path, ft))
        out[y * stride:(y + 1) * stride] = line
        prev = line
    px = bytes(out)
    if depth == 16:
        px = px[0::2]  # most significant bytes
    if ctype == 3:
        px = b"".join(plte[3 * i:3 * i + 3] for i in px)
        ch = 3
    elif keep_alpha:
        pass
    elif ctype == 4:
        px, ch = px[0::2], 1
    elif ctype == 6:
        px = bytes(v for i, v in enumerate(px) if i % 4 != 3)
        ch = 3
    return w, h, ch, px


def write_png(path, w, h, px, ch=1):
    """An 8-bit PNG of the w x h samples: gray (ch 1) or RGB (ch 3), no other chunk."""
    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    stride = w * ch
    raw = b"".join(b"\0" + px[y * stride:(y + 1) * stride] for y in range(h))
    ctype = 2 if ch == 3 else 0
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, ctype, 0, 0, 0))
                + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def write_pnm(path, w, h, px, ch=1):
    """An 8-bit binary PGM (ch 1) or PPM (ch 3)."""
    with open(path, "wb") as f:
        f.write(b"%s\n%d %d\n255\n" % (b"P6" if ch == 3 else b"P5", w, h) + px)


def read_image(path, keep_alpha=False):
    """(width, height, channels, samples) of a PNG or PNM file."""
    with open(path, "rb") as f:
        head = f.read(8)
    return read_png(path, keep_alpha) if head == b"\x89PNG\r\n\x1a\n" else read_pnm(path)


def read_rgb(path):
    """Decoded image as 8-bit interleaved RGB (a gray plane is repeated three times)."""
    w, h, ch, px = read_image(path)
    if ch == 1:
        px = bytes(v for v in px for _ in range(3))
    return w, h, px


def read_gray(path):
    """Decoded image as 8-bit gray: the gray plane, or the rounded Rec. 601 luma of RGB."""
    w, h, ch, px = read_image(path)
    if ch == 3:
        r, g, b = px[0::3], px[1::3], px[2::3]
        if r == g == b:
            px = g
        else:
            px = bytes((299 * x + 587 * y + 114 * z + 500) // 1000 for x, y, z in zip(r, g, b))
    return w, h, px


def psnr(a, b):
    """PSNR of two equal-length 8-bit sample strings: one MSE over all their samples (for
    interleaved RGB, the RGB PSNR)."""
    if len(a) != len(b) or not a:
        raise ValueError("psnr: %d and %d samples" % (len(a), len(b)))
    se = sum(map(_SQUARE.__getitem__, map(operator.sub, a, b)))
    return float("inf") if se == 0 else 10 * math.log10(255.0 * 255.0 * len(a) / se)


# _SQUARE[d] = d * d for d in -255..255 (negative indices count from the end)
_SQUARE = [d * d for d in range(256)] + [(256 - i) * (256 - i) for i in range(1, 256)]


def psnr_luma(a, b):
    """PSNR of the BT.601 luma (0.299 R + 0.587 G + 0.114 B, not rounded) of two interleaved
    8-bit RGB sample strings."""
    if len(a) != len(b) or not a or len(a) % 3:
        raise ValueError("psnr_luma: %d and %d samples" % (len(a), len(b)))
    d = list(map(operator.sub, a, b))
    se = sum((0.299 * r + 0.587 * g + 0.114 * bl) ** 2 for r, g, bl in zip(d[0::3], d[1::3], d[2::3]))
    return float("inf") if se == 0 else 10 * math.log10(255.0 * 255.0 * (len(a) // 3) / se)


def fmt_db(db):
    return "inf" if math.isinf(db) else "%.4f" % db
