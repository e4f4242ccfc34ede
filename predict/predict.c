/*
 * Intra prediction of rectangular blocks: V, H, DC, the six H.264 directional
 * modes generalised to h x w blocks, LSP (lsp.c), the angular mode (HEVC's
 * angles) and chroma from luma.
 *
 * Normative (docs/format.md section 6). All modes but LSP are integer-only.
 *
 * The reference samples are kept as one "edge" array E(i), i = -n..n
 * (n = w + h): E(-1-i) = L[i], E(0) = C, E(1+j) = T[j], i.e. the substitution
 * walk order. Every directional mode is then a lookup into the 2-tap and 3-tap
 * filtered edges F2, F3, which are computed once per block and shared by all
 * modes (mmp_predict_all calls this ~170 times per 16x16 block).
 */
#include "predict/predict.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "common/arith.h"
#include "predict/lsp.h"

/* Largest n = w + h. */
#define REF_MAX (2 * MMP_PRED_MAX)
/* Arrays indexed by i + EOFF for i = -(REF_MAX+1)..REF_MAX+1. */
#define EOFF (REF_MAX + 1)
#define EDGE_LEN (2 * EOFF + 1)

typedef struct refs {
    int n;
    int32_t dc;
    /* E(i) at e[EOFF+i], i = -n-1..n+1; E(+-(n+1)) repeat E(+-n), which is
     * the "clamp the index to n-1" rule for T and L. */
    int32_t e[EDGE_LEN];
    /* F2(i) = (E(i) + E(i+1) + 1) >> 1,          i = -n..n-1 */
    int32_t f2[EDGE_LEN];
    /* F3(i) = (E(i-1) + 2 E(i) + E(i+1) + 2) >> 2, i = -n..n */
    int32_t f3[EDGE_LEN];
} refs;

static int valid_shape(int h, int w)
{
    return (h == 4 || h == 8 || h == 16) && (w == 4 || w == 8 || w == 16);
}

/* Reference samples, substitution and DC (rule 1 and the DC rule). */
static void build_refs(const mmp_plane *p, int y0, int x0, int h, int w, refs *r)
{
    const int n = w + h;
    int32_t *E = r->e + EOFF;
    uint8_t okbuf[EDGE_LEN];
    uint8_t *ok = okbuf + EOFF;

    r->n = n;
    /* Left column, going down: L[i] = (y0+i, x0-1) = E(-1-i). */
    {
        for (int i = 0; i < n; i++)
            ok[-1 - i] = (uint8_t)mmp_plane_get(p, y0 + i, x0 - 1, &E[-1 - i]);
    }
    /* Corner and top row: C = (y0-1, x0-1) = E(0), T[j] = (y0-1, x0+j) = E(1+j). */
    {
        for (int j = -1; j < n; j++)
            ok[1 + j] = (uint8_t)mmp_plane_get(p, y0 - 1, x0 + j, &E[1 + j]);
    }
    /* Substitution walk L[n-1] .. L[0], C, T[0] .. T[n-1] = E(-n) .. E(n). */
    int first = -n;
    while (first <= n && !ok[first])
        first++;
    if (first > n) {
        const int32_t mid = (int32_t)((p->maxval + 1) >> 1);
        for (int i = -n; i <= n; i++)
            E[i] = mid;
    } else {
        for (int i = -n; i < first; i++)
            E[i] = E[first];
        for (int i = first + 1; i <= n; i++)
            if (!ok[i])
                E[i] = E[i - 1];
    }
    E[-n - 1] = E[-n];
    E[n + 1] = E[n];

    /* DC = (sum T[0..w-1] + sum L[0..h-1] + (w+h)/2) / (w+h). */
    int64_t sum = 0;
    for (int j = 1; j <= w; j++)
        sum += E[j];
    for (int i = 1; i <= h; i++)
        sum += E[-i];
    r->dc = (int32_t)((sum + (w + h) / 2) / (w + h));
}

static void build_filters(refs *r)
{
    const int n = r->n;
    const int32_t *E = r->e + EOFF;
    int32_t *F2 = r->f2 + EOFF, *F3 = r->f3 + EOFF;
    for (int i = -n; i < n; i++)
        F2[i] = (E[i] + E[i + 1] + 1) >> 1;
    for (int i = -n; i <= n; i++)
        F3[i] = (E[i - 1] + 2 * E[i] + E[i + 1] + 2) >> 2;
}

static void pred_v(const refs *r, int h, int w, int32_t *out)
{
    const int32_t *T = r->e + EOFF + 1;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            out[y * w + x] = T[x];
}

static void pred_h(const refs *r, int h, int w, int32_t *out)
{
    const int32_t *E = r->e + EOFF;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            out[y * w + x] = E[-1 - y];
}

static void pred_dc(const refs *r, int h, int w, int32_t *out)
{
    for (int i = 0; i < h * w; i++)
        out[i] = r->dc;
}

/* DDL: (T[x+y] + 2T[x+y+1] + T[min(x+y+2, n-1)] + 2) >> 2 = F3(x+y+2). */
static void pred_ddl(const refs *r, int h, int w, int32_t *out)
{
    const int32_t *F3 = r->f3 + EOFF;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            out[y * w + x] = F3[x + y + 2];
}

/* DDR: centred on T[x-y-1] (x > y), C (x == y), L[y-x-1] (x < y) = F3(x-y). */
static void pred_ddr(const refs *r, int h, int w, int32_t *out)
{
    const int32_t *F3 = r->f3 + EOFF;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            out[y * w + x] = F3[x - y];
}

/* VR, z = 2x - y: even z >= 0: F2(z/2); odd z >= -1: F3((z+1)/2);
 * z <= -2: F3(z+1). */
static void pred_vr(const refs *r, int h, int w, int32_t *out)
{
    const int32_t *F2 = r->f2 + EOFF, *F3 = r->f3 + EOFF;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            const int z = 2 * x - y;
            int32_t v;
            if (z >= 0 && (z & 1) == 0)
                v = F2[z / 2];
            else if (z >= -1)
                v = F3[(z + 1) / 2];
            else
                v = F3[z + 1];
            out[y * w + x] = v;
        }
    }
}

/* HD, z = 2y - x: even z >= 0: F2(-1-z/2); odd z >= -1: F3(-(z+1)/2);
 * z <= -2: F3(-z-1). The mirror image of VR (T and L swapped). */
static void pred_hd(const refs *r, int h, int w, int32_t *out)
{
    const int32_t *F2 = r->f2 + EOFF, *F3 = r->f3 + EOFF;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            const int z = 2 * y - x;
            int32_t v;
            if (z >= 0 && (z & 1) == 0)
                v = F2[-1 - z / 2];
            else if (z >= -1)
                v = F3[-((z + 1) / 2)];
            else
                v = F3[-z - 1];
            out[y * w + x] = v;
        }
    }
}

/* VL, k = x + (y>>1): even y: F2(k+1); odd y: F3(k+2). */
static void pred_vl(const refs *r, int h, int w, int32_t *out)
{
    const int32_t *F2 = r->f2 + EOFF, *F3 = r->f3 + EOFF;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            const int k = x + (y >> 1);
            out[y * w + x] = (y & 1) ? F3[k + 2] : F2[k + 1];
        }
    }
}

/* HU, z = x + 2y: even z: F2(-2-z/2); odd z: F3(-2-(z-1)/2). */
static void pred_hu(const refs *r, int h, int w, int32_t *out)
{
    const int32_t *F2 = r->f2 + EOFF, *F3 = r->f3 + EOFF;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            const int z = x + 2 * y;
            out[y * w + x] = (z & 1) ? F3[-2 - (z - 1) / 2] : F2[-2 - z / 2];
        }
    }
}

/*
 * The angular mode (docs/format.md 6, mode 10): HEVC's angular equations
 * (ITU-T H.265 8.4.4.2.6) on the unfiltered references, for rectangles.
 * Directions 0 to 14 are HEVC's modes 2 to 17 without 10 (horizontal
 * class: they read the left column), 15 to 30 its modes 18 to 34 without
 * 26 (vertical class: the top row). The angle is the displacement, in
 * 1/32 sample, of the reference per row (column) of distance.
 */
static const int8_t angle_disp[MMP_NUM_ANGLES] = {
    32, 26, 21, 17, 13, 9, 5, 2, -2, -5, -9, -13, -17, -21, -26, /* horizontal */
    -32, -26, -21, -17, -13, -9, -5, -2, 2, 5, 9, 13, 17, 21, 26, 32, /* vertical */
};
#define ANGLE_FIRST_VERTICAL 15

static void pred_angle(const refs *r, int k, int h, int w, int32_t *out)
{
    const int32_t *E = r->e + EOFF;
    const int n = r->n, vert = k >= ANGLE_FIRST_VERTICAL, disp = angle_disp[k];
    /* Along the main reference: len samples; away from it: dist rows. */
    const int dist = vert ? h : w, len = vert ? w : h;
    /* ref(i), i = -dist..n: the main reference from the corner, ref(0) = C,
     * and where the direction points back, the other side projected onto
     * its extension as HEVC does (with inverse angle 8192 / |disp|). */
    int32_t buf[2 * REF_MAX + 2];
    int32_t *ref = buf + REF_MAX;
    for (int i = 0; i <= n; i++)
        ref[i] = vert ? E[i] : E[-i];
    if (disp < 0) {
        const int ad = -disp, inv = (8192 + ad / 2) / ad;
        /* The lowest index read: floor(dist * disp / 32) + 1. */
        const int lo = -((dist * ad + 31) >> 5) + 1;
        for (int i = lo; i < 0; i++) {
            const int j = ((-i * inv + 128) >> 8) - 1; /* 0 .. dist-1 */
            ref[i] = vert ? E[-1 - j] : E[1 + j];
        }
    }
    for (int y = 0; y < dist; y++) {
        const int pos = (y + 1) * disp;
        /* pos = 32 * idx + f with 0 <= f < 32 (floor, also for pos < 0). */
        const int idx = pos >= 0 ? pos >> 5 : -((-pos + 31) >> 5), f = pos - 32 * idx;
        const int32_t *rr = ref + idx + 1;
        for (int x = 0; x < len; x++) {
            const int32_t v = f ? ((32 - f) * rr[x] + f * rr[x + 1] + 16) >> 5 : rr[x];
            if (vert)
                out[y * w + x] = v;
            else
                out[x * w + y] = v;
        }
    }
}

/* CfL's slope is in 1/CFL_ONE and at most CFL_MAX in magnitude. */
#define CFL_ONE 64
#define CFL_MAX (4 * CFL_ONE)

/* CfL sums of one neighbour (y, x): its chroma where usable, paired with
 * the luma reference there. */
typedef struct cfl_sums {
    int64_t n, sl, sc, sll, slc;
} cfl_sums;

static void cfl_add(const mmp_plane *p, int y, int x, cfl_sums *s)
{
    int32_t c;
    if (!mmp_plane_get(p, y, x, &c))
        return;
    const int64_t l = p->cfl[(size_t)y * p->width + x];
    s->n++;
    s->sl += l;
    s->sc += c;
    s->sll += l * l;
    s->slc += l * c;
}

/*
 * CfL (docs/format.md 6, mode 11): the line fitted by least squares to the
 * usable neighbours above (T[0..2w-1], above-right included) and to the
 * left (L[0..2h-1], below-left included), chroma against the luma
 * reference, applied to the block's luma reference. Without a reference,
 * or without usable neighbours, the DC prediction. The extended neighbours
 * fit better than T[0..w-1] and L[0..h-1] alone
 * (docs/tuning.md, "Chroma from luma").
 */
static void pred_cfl(const mmp_plane *p, const refs *r, int y0, int x0, int h, int w,
                     int32_t *out)
{
    cfl_sums s = {0};
    if (p->cfl) {
        for (int j = 0; j < 2 * w; j++)
            cfl_add(p, y0 - 1, x0 + j, &s);
        for (int i = 0; i < 2 * h; i++)
            cfl_add(p, y0 + i, x0 - 1, &s);
    }
    if (s.n == 0) {
        pred_dc(r, h, w, out);
        return;
    }
    const int64_t den = s.n * s.sll - s.sl * s.sl, num = s.n * s.slc - s.sl * s.sc;
    int64_t alpha = 0;
    if (den > 0) {
        alpha = mmp_floor_div(2 * CFL_ONE * num + den, 2 * den);
        alpha = alpha < -CFL_MAX ? -CFL_MAX : alpha > CFL_MAX ? CFL_MAX : alpha;
    }
    const int64_t ml = (s.sl + s.n / 2) / s.n, mc = (s.sc + s.n / 2) / s.n;
    for (int y = 0; y < h; y++) {
        const int32_t *lr = p->cfl + (size_t)(y0 + y) * p->width + x0;
        for (int x = 0; x < w; x++) {
            const int64_t v = mc + mmp_floor_div(alpha * (lr[x] - ml) + CFL_ONE / 2, CFL_ONE);
            out[y * w + x] = (int32_t)(v < 0 ? 0 : v > p->maxval ? p->maxval : v);
        }
    }
}

/* Mode dispatch once the references (and, for directional modes, the
 * filters) are built. An out-of-range mode gives DC rather than garbage. */
static void predict_mode(const mmp_plane *p, const refs *r, int mode, int y0, int x0, int h, int w,
                         int32_t *out)
{
    switch (mode) {
    case MMP_PRED_V:   pred_v(r, h, w, out); break;
    case MMP_PRED_H:   pred_h(r, h, w, out); break;
    case MMP_PRED_DDL: pred_ddl(r, h, w, out); break;
    case MMP_PRED_DDR: pred_ddr(r, h, w, out); break;
    case MMP_PRED_VR:  pred_vr(r, h, w, out); break;
    case MMP_PRED_HD:  pred_hd(r, h, w, out); break;
    case MMP_PRED_VL:  pred_vl(r, h, w, out); break;
    case MMP_PRED_HU:  pred_hu(r, h, w, out); break;
    case MMP_PRED_LSP: (void)mmp_lsp_predict(p, y0, x0, h, w, r->dc, out); break;
    case MMP_PRED_ANG: pred_angle(r, 0, h, w, out); break;
    case MMP_PRED_CFL: pred_cfl(p, r, y0, x0, h, w, out); break;
    case MMP_PRED_DC:
    default:           pred_dc(r, h, w, out); break;
    }
}

void mmp_predict(const mmp_plane *p, int mode, int y0, int x0, int h, int w, int32_t *out)
{
    refs r;
    assert(valid_shape(h, w));
    (void)valid_shape;
    build_refs(p, y0, x0, h, w, &r);
    if (mode >= MMP_PRED_DDL && mode <= MMP_PRED_HU)
        build_filters(&r);
    predict_mode(p, &r, mode, y0, x0, h, w, out);
}

void mmp_predict_angle(const mmp_plane *p, int angle, int y0, int x0, int h, int w,
                       int32_t *out)
{
    refs r;
    assert(valid_shape(h, w));
    build_refs(p, y0, x0, h, w, &r);
    if ((unsigned)angle < MMP_NUM_ANGLES)
        pred_angle(&r, angle, h, w, out);
    else
        pred_dc(&r, h, w, out);
}

void mmp_predict_some(const mmp_plane *p, int y0, int x0, int h, int w, unsigned modes,
                      uint32_t dirs, int32_t *out, int32_t *angles)
{
    refs r;
    const int sz = h * w;
    assert(valid_shape(h, w));
    build_refs(p, y0, x0, h, w, &r);
    build_filters(&r);
    for (int mode = 0; mode < MMP_NUM_MODES; mode++)
        if ((modes >> mode & 1) && (mode != MMP_PRED_ANG || !angles))
            predict_mode(p, &r, mode, y0, x0, h, w, out + (size_t)mode * sz);
    if (!angles)
        return;
    for (int k = 0; k < MMP_NUM_ANGLES; k++)
        if (dirs >> k & 1)
            pred_angle(&r, k, h, w, angles + (size_t)k * sz);
    if (modes >> MMP_PRED_ANG & 1)
        memcpy(out + (size_t)MMP_PRED_ANG * sz, angles, sizeof(int32_t) * (size_t)sz);
}

void mmp_predict_all(const mmp_plane *p, int y0, int x0, int h, int w, int32_t *out,
                     int32_t *angles)
{
    mmp_predict_some(p, y0, x0, h, w, (1u << MMP_NUM_MODES) - 1,
                     (uint32_t)((1ull << MMP_NUM_ANGLES) - 1), out, angles);
}
