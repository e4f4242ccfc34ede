/*
 * A decoding program of a library user, built by make check-install
 * (tests/install/decoder.sh) against an installed libmmpdec (pkg-config
 * --cflags --libs mmpdec): it sees nothing of the source tree but <mmp.h>,
 * and calls only what the decoder library holds. Decodes the .mmp file it
 * is given and writes the samples to stdout as the conformance manifest
 * hashes them (tests/conformance/MANIFEST: row by row, pixel by pixel,
 * channel by channel, two bytes big-endian each); says what went wrong on
 * stderr and exits 1 otherwise. It also decodes the file with
 * mmp_decode_rgba8 and checks it against the samples where they are
 * 8-bit RGBA already (the other conversions are tests/test_pixels8.c's).
 */
#include <mmp.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: decode FILE.mmp\n");
        return 1;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, room = 0, got;
    do {
        if (len == room) {
            uint8_t *more = realloc(buf, room = room ? 2 * room : 65536);
            if (!more) {
                fprintf(stderr, "decode: out of memory\n");
                return 1;
            }
            buf = more;
        }
        got = fread(buf + len, 1, room - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    mmp_image img;
    char why[256];
    if (mmp_decode(buf, len, &img, why, sizeof why)) {
        fprintf(stderr, "decode: %s: %s\n", argv[1], why);
        return 1;
    }
    const size_t n = (size_t)img.width * img.height * (size_t)mmp_image_channels(&img);
    for (size_t i = 0; i < n; i++) {
        putchar(img.pix[i] >> 8);
        putchar(img.pix[i] & 0xff);
    }
    uint8_t *px;
    int w, h, rc = mmp_decode_rgba8(buf, len, &w, &h, &px);
    if (rc || w != img.width || h != img.height) {
        fprintf(stderr, "decode: %s: mmp_decode_rgba8: %s\n", argv[1], mmp_strerror(rc));
        return 1;
    }
    for (size_t i = 0; img.maxval == 255 && img.channels == 4 && i < n; i++)
        if (px[i] != img.pix[i]) {
            fprintf(stderr, "decode: %s: mmp_decode_rgba8 differs at sample %zu\n", argv[1], i);
            return 1;
        }
    mmp_free(px);
    mmp_image_free(&img);
    free(buf);
    return fflush(stdout) ? 1 : 0;
}
