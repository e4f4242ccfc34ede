/*
 * The memo of leaf matches: per leaf of the block and mode, a few ways of
 * (prediction, matches), each empty, pending (a thread is computing it) or
 * valid. A parallel search waits for a pending entry rather than computing
 * it twice. No cycle of waits: a thread holds pending entries only while it
 * is inside the engine's match(), where it runs nothing but node matching,
 * and it waits for others' entries only after publishing its own; while it
 * waits it helps the engine, which runs nothing but node matching, or
 * sleeps when the engine cannot be helped.
 */
#include "mmp/enc/search_memo.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/wait.h"

/* Entries per (leaf, mode). Each holds a leaf's matches at every node (up
 * to 961 of them) for as long as the plane is searched; two ways find the
 * repeats almost as often as four, in half the memory (docs/tuning.md,
 * "Encoder memory"). */
#define WAYS 2
#define LEAVES 49 /* prediction leaves of a 16x16 block: 4x4 up to 16x16 */

enum { ENTRY_EMPTY, ENTRY_PENDING, ENTRY_VALID };

/* An entry's prediction and matches are allocated together (match first)
 * when the entry is first claimed: a small image's blocks use few of the
 * entries, and the memo is made for every plane. */
typedef struct entry {
    uint32_t hash;
    int state;
    int32_t *pred;
    mmp_match *match; /* NULL until the entry is first used */
} entry;

/* Ways of whole leaf results per leaf. */
#define LEAF_WAYS 2

/* A leaf's result and its key (the predictions and the direction), in one
 * allocation made when the entry is first used. */
typedef struct leaf_entry {
    int valid, angle, nm, ntok;
    uint32_t hash;
    int64_t j;
    int32_t *pred; /* nm predictions */
    int32_t *rec;
    int32_t *tok;
} leaf_entry;

struct mmp_memo {
    entry e[LEAVES][MMP_NUM_MODES][WAYS];
    leaf_entry le[LEAVES][LEAF_WAYS];
    uint8_t le_next[LEAVES];
    uint8_t next_way[LEAVES][MMP_NUM_MODES];
    pthread_mutex_t lock[LEAVES];
    pthread_cond_t done[LEAVES];
    _Atomic unsigned gen[LEAVES]; /* counts the broadcasts of done */
    int leaf_base[MMP_NPSCALES];  /* first leaf of each prediction scale */
};

int mmp_memo_create(mmp_memo **out)
{
    mmp_memo *m = calloc(1, sizeof *m);
    if (!m)
        return MMP_ENOMEM;
    int base = 0;
    for (int a = MMP_LOG2_PMIN; a <= MMP_LOG2B; a++)
        for (int b = MMP_LOG2_PMIN; b <= MMP_LOG2B; b++) {
            m->leaf_base[mmp_pscale(a, b)] = base;
            base += (MMP_B >> a) * (MMP_B >> b);
        }
    for (int i = 0; i < LEAVES; i++) {
        pthread_mutex_init(&m->lock[i], NULL);
        pthread_cond_init(&m->done[i], NULL);
        atomic_init(&m->gen[i], 0);
    }
    *out = m;
    return 0;
}

void mmp_memo_destroy(mmp_memo *m)
{
    if (!m)
        return;
    for (int i = 0; i < LEAVES; i++) {
        pthread_mutex_destroy(&m->lock[i]);
        pthread_cond_destroy(&m->done[i]);
    }
    for (int nd = 0; nd < LEAVES; nd++) {
        for (int md = 0; md < MMP_NUM_MODES; md++)
            for (int w = 0; w < WAYS; w++)
                free(m->e[nd][md][w].match);
        for (int w = 0; w < LEAF_WAYS; w++)
            free(m->le[nd][w].pred);
    }
    free(m);
}

void mmp_memo_clear(mmp_memo *m)
{
    for (int nd = 0; nd < LEAVES; nd++) {
        for (int md = 0; md < MMP_NUM_MODES; md++)
            for (int w = 0; w < WAYS; w++)
                m->e[nd][md][w].state = ENTRY_EMPTY;
        for (int w = 0; w < LEAF_WAYS; w++)
            m->le[nd][w].valid = 0;
    }
}

uint32_t mmp_memo_hash(const int32_t *p, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint32_t)p[i]) * 16777619u;
    return h;
}

/* The index of leaf (y0, x0, 2^a x 2^b) among the block's LEAVES. */
static int leaf_index(const mmp_memo *m, int y0, int x0, int a, int b)
{
    return m->leaf_base[mmp_pscale(a, b)] + ((y0 % MMP_B) >> a) * (MMP_B >> b) +
           ((x0 % MMP_B) >> b);
}

/* Gives ce room for a leaf of `area` samples and `count` matches (every
 * entry of a leaf has the same size) unless it has it; 0 when out of memory. */
static int entry_room(entry *ce, int area, int count)
{
    if (!ce->match) {
        mmp_match *mem = malloc(sizeof(mmp_match) * count + sizeof(int32_t) * area);
        if (!mem)
            return 0;
        ce->match = mem;
        ce->pred = (int32_t *)(mem + count);
    }
    return 1;
}

/* The entry of leaf nd, mode md holding prediction pm (any state but empty). */
static entry *find(mmp_memo *m, int nd, int md, uint32_t hv, const int32_t *pm, int area)
{
    for (int w = 0; w < WAYS; w++) {
        entry *ce = &m->e[nd][md][w];
        if (ce->state != ENTRY_EMPTY && ce->hash == hv &&
            !memcmp(ce->pred, pm, sizeof(int32_t) * area))
            return ce;
    }
    return NULL;
}

/* Until the entries of leaf nd change: help the engine (with that very
 * match, among others) or sleep. Called and returns with the lock held. */
static void wait_change(mmp_memo *m, const mmp_memo_engine *e, int nd)
{
    if (e->eng->help) {
        const unsigned g = atomic_load_explicit(&m->gen[nd], memory_order_acquire);
        pthread_mutex_unlock(&m->lock[nd]);
        for (int i = 0; atomic_load_explicit(&m->gen[nd], memory_order_acquire) == g; i++)
            if (!e->eng->help(e->es))
                mmp_wait_step(i);
        pthread_mutex_lock(&m->lock[nd]);
    } else {
        pthread_cond_wait(&m->done[nd], &m->lock[nd]);
    }
}

int mmp_memo_matches(mmp_memo *m, const mmp_memo_engine *e, int y0, int x0, int a, int b,
                     unsigned modes, const int32_t *orig, const int32_t *pred,
                     const uint8_t *real, mmp_memo_scratch *x, mmp_match *matches,
                     uint64_t *hits, void (*work)(void *), void *work_arg)
{
    const int count = mmp_match_count(a, b), area = 1 << (a + b);
    const int nd = leaf_index(m, y0, x0, a, b);
    /* Per mode: a hit is copied now; a miss claims an entry (when one is not
     * pending) and goes to the engine; a pending match is waited for. */
    int missing[MMP_NUM_MODES], nmiss = 0, waiting[MMP_NUM_MODES], nwait = 0;
    entry *claim[MMP_NUM_MODES];
    uint32_t hashes[MMP_NUM_MODES];
    pthread_mutex_t *lock = &m->lock[nd];
    pthread_mutex_lock(lock);
    for (int md = 0; md < MMP_NUM_MODES; md++) {
        if (!(modes >> md & 1))
            continue;
        const int32_t *pm = pred + (long)md * area;
        const uint32_t hv = mmp_memo_hash(pm, area);
        entry *found = find(m, nd, md, hv, pm, area);
        hashes[md] = hv;
        if (found && found->state == ENTRY_VALID) {
            (*hits)++;
            memcpy(matches + (long)md * count, found->match, sizeof(mmp_match) * count);
            continue;
        }
        if (found) {
            waiting[nwait++] = md;
            continue;
        }
        /* The next entry in turn that nobody is computing, if any. */
        entry *ce = NULL;
        for (int k = 0; k < WAYS && !ce; k++) {
            entry *c = &m->e[nd][md][m->next_way[nd][md]];
            m->next_way[nd][md] = (uint8_t)((m->next_way[nd][md] + 1) % WAYS);
            if (c->state != ENTRY_PENDING)
                ce = c;
        }
        if (ce && !entry_room(ce, area, count))
            ce = NULL; /* out of memory: computed, not kept */
        if (ce) {
            ce->state = ENTRY_PENDING;
            ce->hash = hv;
            memcpy(ce->pred, pm, sizeof(int32_t) * area);
        }
        claim[nmiss] = ce;
        memcpy(x->pred + (long)nmiss * area, pm, sizeof(int32_t) * area);
        missing[nmiss++] = md;
    }
    pthread_mutex_unlock(lock);
    /* The work goes between submit and wait, when there are both. */
    const int overlap = work && nmiss && e->eng->submit;
    if (nmiss) {
        int err;
        if (overlap) {
            mmp_engine_ticket tk;
            err = e->eng->submit(e->es, e->tab, orig, x->pred, nmiss, real, a, b, x->res, &tk);
            work(work_arg);
            if (!err)
                err = e->eng->wait(e->es, &tk);
        } else {
            err = e->eng->match(e->es, e->tab, orig, x->pred, nmiss, real, a, b, x->res);
        }
        pthread_mutex_lock(lock);
        for (int k = 0; k < nmiss; k++) {
            entry *ce = claim[k];
            const mmp_match *res = x->res + (long)k * count;
            memcpy(matches + (long)missing[k] * count, res, sizeof(mmp_match) * count);
            if (ce) {
                ce->state = err ? ENTRY_EMPTY : ENTRY_VALID;
                if (!err)
                    memcpy(ce->match, res, sizeof(mmp_match) * count);
            }
        }
        atomic_fetch_add_explicit(&m->gen[nd], 1, memory_order_release);
        pthread_cond_broadcast(&m->done[nd]);
        pthread_mutex_unlock(lock);
        if (err)
            return err;
    }
    /* Matches others were computing: wait for them; one that failed or was
     * replaced meanwhile is computed here. */
    for (int k = 0; k < nwait; k++) {
        const int md = waiting[k];
        const int32_t *pm = pred + (long)md * area;
        int done = 0;
        pthread_mutex_lock(lock);
        for (;;) {
            entry *found = find(m, nd, md, hashes[md], pm, area);
            if (!found)
                break;
            if (found->state == ENTRY_VALID) {
                memcpy(matches + (long)md * count, found->match, sizeof(mmp_match) * count);
                (*hits)++;
                done = 1;
                break;
            }
            wait_change(m, e, nd);
        }
        pthread_mutex_unlock(lock);
        if (!done) {
            const int err = e->eng->match(e->es, e->tab, orig, pm, 1, real, a, b,
                                          matches + (long)md * count);
            if (err)
                return err;
        }
    }
    return 0;
}

/* ------------------------------------------------------------ leaf results */

int mmp_memo_leaf_get(mmp_memo *m, int y0, int x0, int a, int b, int angle, int nm,
                      const int32_t *pred, uint32_t *hash, int64_t *j, int32_t *tok, int *ntok,
                      int32_t *rec)
{
    const int nd = leaf_index(m, y0, x0, a, b), area = 1 << (a + b);
    const uint32_t hv = *hash = mmp_memo_hash(pred, nm * area);
    int found = 0;
    pthread_mutex_lock(&m->lock[nd]);
    for (int w = 0; w < LEAF_WAYS && !found; w++) {
        const leaf_entry *le = &m->le[nd][w];
        if (le->valid && le->hash == hv && le->angle == angle && le->nm == nm &&
            !memcmp(le->pred, pred, sizeof(int32_t) * nm * area)) {
            *j = le->j;
            *ntok = le->ntok;
            memcpy(tok, le->tok, sizeof(int32_t) * le->ntok);
            memcpy(rec, le->rec, sizeof(int32_t) * area);
            found = 1;
        }
    }
    pthread_mutex_unlock(&m->lock[nd]);
    return found;
}

void mmp_memo_leaf_put(mmp_memo *m, int y0, int x0, int a, int b, int angle, int nm,
                       const int32_t *pred, uint32_t hash, int64_t j, const int32_t *tok,
                       int ntok, const int32_t *rec)
{
    const int nd = leaf_index(m, y0, x0, a, b), area = 1 << (a + b);
    if (ntok > MMP_MEMO_LEAF_TOKENS(area))
        return;
    pthread_mutex_lock(&m->lock[nd]);
    leaf_entry *le = &m->le[nd][m->le_next[nd]];
    m->le_next[nd] = (uint8_t)((m->le_next[nd] + 1) % LEAF_WAYS);
    if (!le->pred) {
        /* room for every mode's prediction, whatever the plane's count */
        le->pred = malloc(sizeof(int32_t) * ((size_t)(MMP_NUM_MODES + 1) * area +
                                             MMP_MEMO_LEAF_TOKENS(area)));
        le->rec = le->pred + (long)MMP_NUM_MODES * area;
        le->tok = le->rec + area;
    }
    if (le->pred) {
        le->valid = 1;
        le->hash = hash;
        le->angle = angle;
        le->nm = nm;
        le->j = j;
        le->ntok = ntok;
        memcpy(le->pred, pred, sizeof(int32_t) * nm * area);
        memcpy(le->rec, rec, sizeof(int32_t) * area);
        memcpy(le->tok, tok, sizeof(int32_t) * ntok);
    }
    pthread_mutex_unlock(&m->lock[nd]);
}
