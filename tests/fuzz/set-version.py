#!/usr/bin/env python3
"""Move kept fuzz inputs to a new format version.

    python3 tests/fuzz/set-version.py OLD NEW FILE...

Every FILE whose container is an MMP file of version OLD with a correct CRC
(docs/format.md section 2) gets the version byte NEW and the CRC of its new
header and payload, in place. A file with the magic and version OLD but a
wrong CRC or a short header gets the version byte NEW alone, so that it
still fails where it failed (the CRC, the payload length) rather than at
the version check. The other files are left as they are. When a format
change keeps the header, the kept corpora then reach the new syntax at once
instead of stopping at the version check. Prints how many files were moved
(with their CRC, or by the version byte alone) and how many left.
"""
import sys
import zlib

HEADER, CRC_AT, VERSION_AT = 48, 44, 4


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    old, new = int(sys.argv[1]), int(sys.argv[2])
    moved = byte_only = left = 0
    for path in sys.argv[3:]:
        with open(path, "rb") as f:
            b = bytearray(f.read())
        if len(b) <= VERSION_AT or b[:4] != b"MMPi" or b[VERSION_AT] != old:
            left += 1
            continue
        crc_ok = (len(b) >= HEADER and int.from_bytes(b[CRC_AT:HEADER], "little") ==
                  zlib.crc32(bytes(b[:CRC_AT]) + bytes(b[HEADER:])))
        b[VERSION_AT] = new
        if crc_ok:
            b[CRC_AT:HEADER] = zlib.crc32(bytes(b[:CRC_AT]) + bytes(b[HEADER:])).to_bytes(4, "little")
            moved += 1
        else:
            byte_only += 1
        with open(path, "wb") as f:
            f.write(b)
    print(f"set-version: {moved} files moved from version {old} to {new}, {byte_only} more by "
          f"the version byte alone (no valid CRC), {left} left as they were")


if __name__ == "__main__":
    main()
