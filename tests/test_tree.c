/*
 * Tests of the checks that keep the tree in order, run on small trees made
 * in a private mkdtemp directory (make check runs the tests from the
 * repository root, where the scripts are):
 *
 *  - scripts/check-layers: a file of each folder that includes only what
 *    its folder may passes; the decoder side including the encoder side,
 *    the shared code including the decoder, the engines or the front ends
 *    (the browser's too) reaching into the library's insides (mmp-enc-mpi
 *    into the encoder's beyond mmp/enc/tiled.h), a plugin
 *    including anything but mmp/mmp.h and its own folder, and the public
 *    header including a project header each fail, naming the file and the
 *    include;
 *  - scripts/check-history: present-tense comments pass; a numbered working
 *    period (also wrapped onto a second line), a date, a commit hash and a
 *    timing each fail, naming the file and line; docs/results.md may hold
 *    dates and timings, and no page may name a working period.
 *
 * The offending words are assembled at run time, so that this file passes
 * check-history itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

static char dir[64];
static char out[8192];

/* Files the tests plant, named in two pieces so that check-references,
 * which reads this file too, does not look for them in the tree. */
#define STRAY "mmp/stray" ".c"
#define PLANTED "mmp/enc/planted" ".c"
#define OTHER_PLUGIN "plugins/other/plugin" ".h"

/* Writes TEXT to DIR/PATH, making the folders on the way. */
static void put(const char *path, const char *text)
{
    char full[512], cmd[600];
    snprintf(full, sizeof full, "%s/%s", dir, path);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", full);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(full, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Runs scripts/SCRIPT on the tree in dir with its output in out; returns
 * the exit status. */
static int check(const char *script)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "sh scripts/%s %s 2>&1", script, dir);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/mmp-tree-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

/* A tree of one file per folder, each including only what it may. */
static void good_tree(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s/*", dir);
    assert_int_equal(system(cmd), 0);
    put("common/error.h", "#include <stdio.h>\n");
    put("dict/dict.h", "#include \"common/error.h\"\n");
    put("predict/predict.h", "#include \"common/error.h\"\n");
    put("filter/restore.h", "#include \"common/error.h\"\n");
    put("kernels/engine.h", "#include \"dict/dict.h\"\n#include \"predict/predict.h\"\n");
    put("mmp/mmp.h", "#include <stdint.h>\n");
    put("mmp/common/syntax.h", "#include \"dict/dict.h\"\n#include \"mmp/mmp.h\"\n");
    put("mmp/dec/decoder.c", "#include \"mmp/common/syntax.h\"\n#include \"filter/restore.h\"\n");
    put("mmp/enc/search.c", "#include \"mmp/common/syntax.h\"\n#include \"kernels/engine.h\"\n");
    put("mmp/imageio/pnm.c", "#include \"common/error.h\"\n#include \"mmp/mmp.h\"\n");
    put("mmp/cli/enc_main.c", "#include \"mmp/imageio/pnm.h\"\n#include \"mmp/mmp.h\"\n");
    put("mmp/mpi/farm.c", "#include <mpi.h>\n#include \"mmp/cli/enc_run.h\"\n"
                          "#include \"mmp/enc/tiled.h\"\n#include \"mmp/mpi/coder.h\"\n");
    put("plugins/gdk-pixbuf/io-mmp.c", "#include <gdk-pixbuf/gdk-pixbuf-io.h>\n#include \"mmp/mmp.h\"\n");
    put("web/mmp_wasm.c", "#include \"mmp/mmp.h\"\n");
}

/* The good tree passes; each planted include fails and is named. */
static void test_layers(void **state)
{
    (void)state;
    static const struct {
        const char *file, *include;
    } bad[] = {
        {"mmp/dec/decoder.c", "mmp/enc/search.h"},   /* the decoder needs the encoder */
        {"mmp/dec/decoder.c", "kernels/engine.h"},   /* ... or an engine */
        {"mmp/common/syntax.h", "mmp/dec/decoder.h"}, /* shared code needs a side */
        {"mmp/common/syntax.h", "mmp/enc/search.h"},
        {"mmp/enc/search.c", "mmp/dec/decoder.h"},   /* the sides are siblings */
        {"mmp/cli/enc_main.c", "common/error.h"},     /* front ends through mmp.h */
        {"mmp/cli/enc_main.c", "mmp/common/syntax.h"},
        {"mmp/cli/enc_main.c", "mmp/enc/tiled.h"},    /* the tiles apart: mmp/mpi/ alone */
        {"mmp/mpi/farm.c", "mmp/enc/search.h"},      /* ... and nothing else of the encoder */
        {"mmp/mpi/farm.c", "common/error.h"},
        {"mmp/imageio/pnm.c", "mmp/cli/cli.h"},       /* upward */
        {"kernels/engine.h", "mmp/mmp.h"},
        {"dict/dict.h", "predict/predict.h"},         /* sideways in one layer */
        {"mmp/mmp.h", "common/error.h"},              /* the public header */
        {"plugins/gdk-pixbuf/io-mmp.c", "common/error.h"}, /* plugins through mmp.h */
        {"plugins/gdk-pixbuf/io-mmp.c", "mmp/dec/decoder.h"},
        {"plugins/gdk-pixbuf/io-mmp.c", OTHER_PLUGIN}, /* nor each other */
        {"web/mmp_wasm.c", "mmp/dec/decoder.h"},      /* the browser through mmp.h */
    };
    good_tree();
    assert_int_equal(check("check-layers"), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        good_tree();
        char path[256], line[256];
        snprintf(path, sizeof path, "%s/%s", dir, bad[i].file);
        FILE *f = fopen(path, "a");
        assert_non_null(f);
        snprintf(line, sizeof line, "#include \"%s\"\n", bad[i].include);
        fputs(line, f);
        fclose(f);
        const int st = check("check-layers");
        if (st != 1 || !strstr(out, bad[i].file) || !strstr(out, bad[i].include))
            fail_msg("%s including %s: status %d, output:\n%s", bad[i].file, bad[i].include, st,
                     out);
    }
    /* A file outside the known folders of mmp/ is named too. */
    good_tree();
    put(STRAY, "#include \"mmp/mmp.h\"\n");
    assert_int_equal(check("check-layers"), 1);
    assert_non_null(strstr(out, STRAY));
}

/* Each kind of history fails at its line; present tense passes. */
static void test_history(void **state)
{
    (void)state;
    char cmd[128], text[512];
    const char *clean = "/* The crew's helpers sleep between batches: a spinning helper\n"
                        " * takes a core from the search (docs/tuning.md). 16 x 16 blocks,\n"
                        " * 0x1F mask, MD5 0123456789abcdef0123456789abcdef, face-420. */\n";
    /* Words made at run time (this file is checked too). */
    const char *bad[][2] = {
        {"the Twelfth ", "sess" "ion"},
        {"in sess", "ion 14 we"},
        {"wrapped at the end: \"Sixteenth\n * ", "sess" "ion\")"},
        {"on 2026-", "11-23 it"},
        {"landed in a45c", "3f00 with"},
        {"costs 35 ", "ms on camera"},
        {"took 1.", "25 s"},
        {"1.8x the ", "speed of seq"},
    };
    snprintf(cmd, sizeof cmd, "rm -rf %s/*", dir);
    assert_int_equal(system(cmd), 0);
    put(PLANTED, clean);
    put("README.md", "# mmp\n\nSee docs/results.md.\n");
    assert_int_equal(check("check-history"), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "%s/* A comment %s%s. */\n", clean, bad[i][0], bad[i][1]);
        put(PLANTED, text);
        const int st = check("check-history");
        if (st != 1 || !strstr(out, PLANTED ":"))
            fail_msg("case %zu: status %d, output:\n%s", i, st, out);
    }
    put(PLANTED, clean);
    /* Measurements belong in docs/results.md: dates and timings pass there,
     * working periods do not; the same lines fail in README.md. */
    snprintf(text, sizeof text, "Measured on %s: 1.%s, 35 %s.\n", "2026-11-" "23", "25 s", "ms");
    put("docs/results.md", text);
    assert_int_equal(check("check-history"), 0);
    put("README.md", text);
    assert_int_equal(check("check-history"), 1);
    assert_non_null(strstr(out, "README.md:1:"));
    put("README.md", "# mmp\n");
    snprintf(text, sizeof text, "In the eleventh %s.\n", "sess" "ion");
    put("docs/results.md", text);
    assert_int_equal(check("check-history"), 1);
    assert_non_null(strstr(out, "docs/results.md:1:"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layers),
        cmocka_unit_test(test_history),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
