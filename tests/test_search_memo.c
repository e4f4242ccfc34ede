/*
 * The search's memo of whole leaf results (mmp/enc/search_memo.h): a kept
 * result comes back only for the very leaf, the very predictions of every
 * mode and the very angular direction it was kept for, and whole. The
 * encoder's bytes with the memo are checked against the other engines' and
 * thread counts' (whose schedules reach leaves in other orders, so that
 * other lookups hit) in tests/test_engines.c.
 */
#include "mmp/enc/search_memo.h"

#include "util.h"

/* A leaf of 2^a x 2^b with nm random predictions, and a result of ntok
 * tokens kept for it. */
typedef struct kept {
    int y0, x0, a, b, nm, angle, ntok;
    int64_t j;
    int32_t pred[(MMP_NUM_MODES + 1) * MMP_B * MMP_B];
    int32_t tok[MMP_MEMO_LEAF_TOKENS(MMP_B * MMP_B)];
    int32_t rec[MMP_B * MMP_B];
} kept;

static void random_result(kept *l, int y0, int x0, int a, int b, int nm)
{
    const int area = 1 << (a + b);
    l->y0 = y0;
    l->x0 = x0;
    l->a = a;
    l->b = b;
    l->nm = nm;
    l->angle = (int)rng_below(MMP_NUM_ANGLES);
    l->ntok = 1 + (int)rng_below(MMP_MEMO_LEAF_TOKENS(area));
    l->j = (int64_t)rng_next() >> 2;
    for (int i = 0; i < nm * area; i++)
        l->pred[i] = (int32_t)rng_below(256);
    for (int i = 0; i < l->ntok; i++)
        l->tok[i] = (int32_t)rng_below(1000);
    for (int i = 0; i < area; i++)
        l->rec[i] = (int32_t)rng_below(256);
}

static void put(mmp_memo *m, const kept *l)
{
    mmp_memo_leaf_put(m, l->y0, l->x0, l->a, l->b, l->angle, l->nm, l->pred,
                      mmp_memo_hash(l->pred, l->nm << (l->a + l->b)), l->j, l->tok, l->ntok,
                      l->rec);
}

/* Whether l's key finds a result, and (if so) that it is l's whole. */
static int get(mmp_memo *m, const kept *l)
{
    static int32_t tok[MMP_MEMO_LEAF_TOKENS(MMP_B * MMP_B)], rec[MMP_B * MMP_B];
    int64_t j = -1;
    int ntok = -1;
    uint32_t hash = 0;
    const int found = mmp_memo_leaf_get(m, l->y0, l->x0, l->a, l->b, l->angle, l->nm, l->pred,
                                        &hash, &j, tok, &ntok, rec);
    assert_int_equal(hash, mmp_memo_hash(l->pred, l->nm << (l->a + l->b)));
    if (!found)
        return 0;
    assert_int_equal(j, l->j);
    assert_int_equal(ntok, l->ntok);
    assert_memory_equal(tok, l->tok, sizeof(int32_t) * (size_t)ntok);
    assert_memory_equal(rec, l->rec, sizeof(int32_t) << (l->a + l->b));
    return 1;
}

/* Each part of the key on its own keeps a result from being found. */
static void test_key(void **state)
{
    (void)state;
    rng_seed(0x1eaf);
    mmp_memo *m;
    assert_int_equal(mmp_memo_create(&m), 0);
    static kept l, o;
    for (int a = MMP_LOG2_PMIN; a <= MMP_LOG2B; a++)
        for (int b = MMP_LOG2_PMIN; b <= MMP_LOG2B; b++) {
            const int area = 1 << (a + b);
            /* a leaf away from the block's corner where there is room */
            const int y0 = 32 + (MMP_B - (1 << a)), x0 = 48 + (MMP_B - (1 << b));
            random_result(&l, y0, x0, a, b, MMP_NUM_MODES - 1);
            assert_false(get(m, &l));
            put(m, &l);
            assert_true(get(m, &l));
            /* another direction */
            o = l;
            o.angle = (l.angle + 1) % MMP_NUM_ANGLES;
            assert_false(get(m, &o));
            /* one sample of any one prediction */
            for (int md = 0; md < l.nm; md++) {
                o = l;
                const int i = md * area + (int)rng_below((uint64_t)area);
                o.pred[i] ^= 1;
                assert_false(get(m, &o));
            }
            /* one mode more (the chroma planes' CfL) */
            o = l;
            o.nm = l.nm + 1;
            assert_false(get(m, &o));
            /* the same shape elsewhere in the block (where there is room),
             * and the same samples as another shape of the same area */
            if (a < MMP_LOG2B) {
                o = l;
                o.y0 -= 1 << a;
                assert_false(get(m, &o));
            }
            if (a != b) {
                o = l;
                o.a = b;
                o.b = a;
                o.y0 = 32 + (MMP_B - (1 << b));
                o.x0 = 48 + (MMP_B - (1 << a));
                assert_false(get(m, &o));
            }
            /* the same kept of the next block: the memo is the block's, and
             * is cleared between blocks, so it is the same entry */
            o = l;
            o.x0 += MMP_B;
            assert_true(get(m, &o));
        }
    mmp_memo_clear(m);
    assert_false(get(m, &l));
    mmp_memo_destroy(m);
}

/*
 * Keys of one hash: the last two samples of the predictions changed so
 * that FNV-1a (h = (h ^ s) * P mod 2^32, P odd, so invertible) ends where it
 * did. The memo must compare the samples, every mode's, and the count.
 */
static void collide(kept *o, const kept *l, int n)
{
    static const uint32_t P = 16777619u;
    uint32_t inv = P; /* P^-1 mod 2^32 by Newton's iteration */
    for (int i = 0; i < 5; i++)
        inv *= 2u - P * inv;
    const uint32_t target = mmp_memo_hash(l->pred, l->nm << (l->a + l->b));
    /* the hash after the first n - 2 samples of o, then sample n - 2 changed */
    const uint32_t h = mmp_memo_hash(o->pred, n - 2);
    o->pred[n - 2] ^= 0x5a5a;
    const uint32_t h1 = (h ^ (uint32_t)o->pred[n - 2]) * P;
    o->pred[n - 1] = (int32_t)((target * inv) ^ h1);
    assert_int_equal(mmp_memo_hash(o->pred, n), target);
}

static void test_same_hash(void **state)
{
    (void)state;
    rng_seed(0xc0de);
    mmp_memo *m;
    assert_int_equal(mmp_memo_create(&m), 0);
    static kept l, o;
    random_result(&l, 16, 16, 3, 3, MMP_NUM_MODES - 1);
    put(m, &l);
    const int n = l.nm << (l.a + l.b);
    /* the last mode's prediction differs, the hash does not */
    o = l;
    collide(&o, &l, n);
    assert_false(get(m, &o));
    /* one mode more, whose prediction brings the hash back to the others' */
    const int area = 1 << (l.a + l.b);
    o = l;
    o.nm = l.nm + 1;
    for (int i = n; i < n + area; i++)
        o.pred[i] = (int32_t)rng_below(256);
    collide(&o, &l, n + area);
    assert_false(get(m, &o));
    /* and so where the entry's room still holds that mode's prediction:
     * o kept, then another leaf, then l in o's place */
    mmp_memo_clear(m);
    static kept other;
    random_result(&other, 16, 16, 3, 3, MMP_NUM_MODES - 1);
    put(m, &o);
    put(m, &other);
    put(m, &l);
    assert_false(get(m, &o));
    assert_true(get(m, &l));
    mmp_memo_destroy(m);
}

/* Two results per leaf are kept: a third replaces the older. A result with
 * more tokens than a leaf can have is not kept. */
static void test_ways(void **state)
{
    (void)state;
    rng_seed(0x3a7);
    mmp_memo *m;
    assert_int_equal(mmp_memo_create(&m), 0);
    static kept r[3];
    for (int k = 0; k < 3; k++)
        random_result(&r[k], 0, 8, 3, 2, MMP_NUM_MODES - 1);
    put(m, &r[0]);
    put(m, &r[1]);
    assert_true(get(m, &r[0]));
    assert_true(get(m, &r[1]));
    put(m, &r[2]);
    assert_false(get(m, &r[0]));
    assert_true(get(m, &r[1]));
    assert_true(get(m, &r[2]));
    static kept big;
    random_result(&big, 4, 4, 2, 2, MMP_NUM_MODES - 1);
    big.ntok = MMP_MEMO_LEAF_TOKENS(16) + 1;
    put(m, &big);
    assert_false(get(m, &big));
    mmp_memo_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key),
        cmocka_unit_test(test_same_hash),
        cmocka_unit_test(test_ways),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
