#!/usr/bin/env python3
"""Move kept fuzz inputs to a new format version.

    python3 tests/fuzz/set-version.py OLD NEW FILE...

Every FILE whose container is an MMP file of version OLD with a correct CRC
(docs/format.md section 2) gets the version byte NEW and the CRC of its new
header and payload, in place; the other files are left as they are. When a
format change keeps the header, the kept corpora then reach the new syntax
at once instead of stopping at the version check. Prints how many files
were moved and how many left.
"""
import sys
import zlib

HEADER, CRC_AT, VERSION_AT = 48, 44, 4


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old, new = int(sys.argv[1]), int(sys.argv[2])
    moved = left = 0
    for path in sys.argv[3:]:
        with open(path, "rb") as f:
            b = bytearray(f.read())
        ok = (len(b) >= HEADER and b[:4] == b"MMPi" and b[VERSION_AT] == old and
              int.from_bytes(b[CRC_AT:HEADER], "little") ==
              zlib.crc32(bytes(b[:CRC_AT]) + bytes(b[HEADER:])))
        if not ok:
            left += 1
            continue
        b[VERSION_AT] = new
        b[CRC_AT:HEADER] = zlib.crc32(bytes(b[:CRC_AT]) + bytes(b[HEADER:])).to_bytes(4, "little")
        with open(path, "wb") as f:
            f.write(b)
        moved += 1
    print(f"set-version: {moved} files moved from version {old} to {new}, {left} left as they were")


if __name__ == "__main__":
    main()
