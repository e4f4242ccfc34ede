#!/usr/bin/env python3
"""Move kept fuzz inputs to the current format version, 1.0.

    python3 tests/fuzz/set-version.py FILE...

Format version 8 (a 48-byte header with a CRC over it and the payload, then
the payload) and the draft 0.9 to 1.0 (docs/format.md section 2: the
signature, then chunks):

 - a version-8 file whose CRC and payload length are right becomes the
   signature, a HEAD chunk with its header's fields (tools widened to 32
   bits; tiles as large as the image, its width and height rounded up to
   16, at least 128 and at most 65536: one tile, what the encoder writes for
   images up to 1024 a side) and one TILE chunk with its payload. A file
   the encoder wrote comes out as the encoder writes it now;
 - a version-8 file of 48 bytes or more whose CRC or payload length is
   wrong is converted the same way but keeps its defect, so that it fails
   where it failed: TILE's length is its payload_len (up to 2^32 - 1), so a
   payload_len past the end makes a truncated TILE chunk and one short of it
   leaves trailing bytes; with a wrong CRC, TILE's CRC is the old stored
   value (so a CRC check fails), HEAD's is right;
 - a file of the draft (major 0, whatever its minor) gets the signature of
   1.0 (the signature has no CRC; the draft's syntax is 1.0's);
 - every other file (another magic, a version before 8, a version-8 file
   shorter than its header, files of major 1, whatever their minor: every
   1.x decoder reads them) is left as it is: they exercise the signature
   and version checks as they are.

Prints how many files were converted, converted with their defect kept,
moved from the draft, and left as they were.
"""
import struct
import sys
import zlib

MAJOR, MINOR = 1, 0
DRAFT_MAJOR = 0
V8_HEADER, V8_CRC_AT = 48, 44


def chunk(ctype, data, crc=None):
    if crc is None:
        crc = zlib.crc32(ctype + data)
    return struct.pack("<I", len(data)) + ctype + data + struct.pack("<I", crc)


def tile_side(size):
    """The tile side of one tile covering `size` (a multiple of 16)."""
    side = (size + 15) // 16 * 16
    return min(max(side, 128), 65536)


def head_of_v8(b):
    """HEAD's 38 bytes from a version-8 header (docs/format.md section 2)."""
    (planes, log2_block, log2_pmin, width, height, maxval, max_error, dict_cap, residual,
     tools, redund_q4, lambda_q8, _payload_len, order, transform, chroma,
     alpha) = struct.unpack_from("<BBBIIHHHBBIIQBBBB", b, 5)
    return struct.pack("<BBBBIIHHHBBBBIIIHH", planes, log2_block, log2_pmin, residual, width,
                       height, maxval, max_error, dict_cap, order, transform, chroma, alpha,
                       tools, redund_q4, lambda_q8, tile_side(width) // 16,
                       tile_side(height) // 16)


def convert_v8(b):
    """(new bytes, 1 if the file was a right version-8 file else 0)."""
    payload = b[V8_HEADER:]
    payload_len = struct.unpack_from("<Q", b, 32)[0]
    stored = struct.unpack_from("<I", b, V8_CRC_AT)[0]
    right = (payload_len == len(payload) and stored == zlib.crc32(b[:V8_CRC_AT] + payload))
    out = bytes([0x4D, 0x4D, 0x50, 0x69, MAJOR, MINOR]) + chunk(b"HEAD", head_of_v8(b))
    if right:
        return out + chunk(b"TILE", payload), 1
    # The defect kept: TILE's length from payload_len, its CRC the old one
    # where the old one was wrong.
    length = min(payload_len, 0xFFFFFFFF)
    crc_right = stored == zlib.crc32(b[:V8_CRC_AT] + payload)
    tile_crc = zlib.crc32(b"TILE" + payload) if crc_right else stored
    return (out + struct.pack("<I", length) + b"TILE" + payload +
            struct.pack("<I", tile_crc)), 0


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    converted = defect = draft = left = 0
    for path in sys.argv[1:]:
        with open(path, "rb") as f:
            b = f.read()
        if len(b) >= V8_HEADER and b[:4] == b"MMPi" and b[4] == 8:
            new, ok = convert_v8(b)
            converted += ok
            defect += 1 - ok
        elif len(b) >= 6 and b[:4] == b"MMPi" and b[4] == DRAFT_MAJOR:
            new = b[:4] + bytes([MAJOR, MINOR]) + b[6:]
            draft += 1
        else:
            left += 1
            continue
        with open(path, "wb") as f:
            f.write(new)
    print(f"set-version: {converted} files converted from version 8 to {MAJOR}.{MINOR}, "
          f"{defect} more with their defect kept (a wrong CRC or payload length), {draft} "
          f"moved from the draft 0.x, {left} left as they were")


if __name__ == "__main__":
    main()
