/* dp's group placer and schedule simulator (docs/dp.md): the placement step
 * of dp's grouped search, usable by any policy that cuts a schedule into
 * groups separated by barriers, and the exact makespan of a placed order by
 * the simulator's rules.  tests/test_dp.c brute-forces every grouping through
 * sb_dp_plan; tests/test_resources.c checks its packing against the
 * simulator.
 *
 * Placement mirrors harness/src/core/sim.c: a group's tasks in upward-rank
 * order (the longest ready one first when packing), each on the device where
 * it finishes first, copies queued FIFO per link and made once per
 * (producer, device). */

#include "schedbench/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- graph-wide facts ----------------------------------------------------- */

int sb_dp_is_view(const struct sb_graph_view *g, uint32_t v)
{
    return (g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE;
}

/* root[v]: the node owning the buffer v views (a view's first input's
 * root), v itself for every other node. */
void sb_dp_view_roots(const struct sb_graph_view *g, uint32_t *root)
{
    for (uint32_t v = 0; v < g->n_nodes; v++)
        root[v] = sb_dp_is_view(g, v) && g->pred_off[v] < g->pred_off[v + 1]
                      ? root[g->pred[g->pred_off[v]]] : v;
}

static double mean_cost(const struct sb_dp_ctx *c, uint32_t v)
{
    if (c->g->kind[v] != SB_KIND_COMPUTE)
        return 0;
    double sum = 0;
    uint32_t k = 0;
    for (uint32_t a = 0; a < c->nd; a++) {
        double t = c->g->dev_dur_us[(size_t)v * c->nd + a];
        if (isfinite(t))
            sum += t, k++;
    }
    return k ? sum / k : 0;
}

/* HEFT's upward rank: ids are topological, so one reverse pass suffices.  It
 * orders a group's tasks (rank never grows along an edge, ids break ties, so
 * the order is topological) and defines the critical-path-first order. */
static void upward_rank(struct sb_dp_ctx *c)
{
    const struct sb_graph_view *g = c->g;
    const struct sb_machine_view *m = g->machine;
    double lat = 0, inv = 0;
    uint32_t k = 0;
    for (uint32_t a = 0; a < c->nd; a++)
        for (uint32_t b = 0; b < c->nd; b++)
            if (a != b && !m->can_read[(size_t)b * c->nd + a]) {
                lat += m->link_lat_us[(size_t)a * c->nd + b];
                inv += 1.0 / (m->link_gbps[(size_t)a * c->nd + b] * 1e3);
                k++;
            }
    if (k)
        lat /= k, inv /= k;
    for (uint32_t v = c->n; v-- > 0;) {
        double tail = 0, w = lat + (double)g->out_bytes[c->root[v]] * inv;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++) {
            uint32_t s = g->succ[e];
            double x = g->kind[v] == SB_KIND_START && g->partner[v] == s ? g->dur_us[v] : w;
            if (x + c->rank[s] > tail)
                tail = x + c->rank[s];
        }
        c->rank[v] = mean_cost(c, v) + tail;
    }
}

int sb_dp_ctx_init(struct sb_dp_ctx *c, const struct sb_graph_view *g)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    memset(c, 0, sizeof *c);
    c->g = g, c->n = n, c->nd = nd;
    c->root = malloc(((size_t)n + 1) * sizeof *c->root);
    c->rank = malloc(((size_t)n + 1) * sizeof *c->rank);
    c->stamp = calloc((size_t)n + 1, sizeof *c->stamp);
    c->dev = malloc(((size_t)n + 1) * sizeof *c->dev);
    c->fin = malloc(((size_t)n + 1) * sizeof *c->fin);
    c->cend = malloc(((size_t)n + 1) * sizeof *c->cend);
    c->copy = malloc(((size_t)n * nd + 1) * sizeof *c->copy);
    c->sorted = malloc(((size_t)n + 1) * sizeof *c->sorted);
    c->newin = malloc(((size_t)n + 1) * sizeof *c->newin);
    c->stream = malloc(nd * sizeof *c->stream);
    c->res = malloc(nd * sizeof *c->res);
    c->link = malloc((size_t)nd * nd * sizeof *c->link);
    c->jcopy = malloc(((size_t)g->n_edges + 1) * sizeof *c->jcopy);
    c->pack = g->res_use && g->machine->n_res;
    if (c->pack) {
        c->iv = malloc(((size_t)n + 1) * sizeof *c->iv);
        c->slot_first = malloc(nd * sizeof *c->slot_first);
        c->slot_start = malloc(nd * sizeof *c->slot_start);
        c->slot_end = malloc(nd * sizeof *c->slot_end);
        if (!c->iv || !c->slot_first || !c->slot_start || !c->slot_end) {
            sb_dp_ctx_free(c);
            return -1;
        }
    }
    if (!c->jcopy || !c->root || !c->rank || !c->stamp || !c->dev || !c->fin || !c->cend || !c->copy ||
        !c->sorted || !c->newin || !c->stream || !c->res || !c->link) {
        sb_dp_ctx_free(c);
        return -1;
    }
    sb_dp_view_roots(g, c->root);
    for (uint32_t v = 0; v < n; v++)
        c->n_tasks += g->kind[v] != SB_KIND_INPUT;
    upward_rank(c);
    return 0;
}

void sb_dp_ctx_free(struct sb_dp_ctx *c)
{
    free(c->root), free(c->rank), free(c->stamp), free(c->dev), free(c->fin);
    free(c->cend), free(c->copy), free(c->sorted), free(c->newin), free(c->stream);
    free(c->res);
    free(c->link), free(c->jcopy);
    free(c->iv), free(c->slot_first), free(c->slot_start), free(c->slot_end);
    memset(c, 0, sizeof *c);
}

/* ---- states --------------------------------------------------------------- */

static size_t words(const struct sb_dp_ctx *c) { return ((size_t)c->n + 63) / 64; }

static int is_done(const uint64_t *d, uint32_t v) { return (int)(d[v / 64] >> (v % 64) & 1); }

static struct sb_dp_state *state_new(const struct sb_dp_ctx *c, uint32_t n_orders)
{
    struct sb_dp_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->done = calloc(words(c) + 1, sizeof *s->done);
    s->link = calloc((size_t)c->nd * c->nd, sizeof *s->link);
    s->cursor = calloc(n_orders + 1, sizeof *s->cursor);
    if (!s->done || !s->link || !s->cursor) {
        sb_dp_state_free(s);
        return NULL;
    }
    return s;
}

struct sb_dp_state *sb_dp_initial(const struct sb_dp_ctx *c, uint32_t n_orders)
{
    return state_new(c, n_orders);
}

static void cut_free(struct sb_dp_cut *k)
{
    free(k->node), free(k->dev), free(k->fin), free(k->cend), free(k->copy);
    memset(k, 0, sizeof *k);
}

/* The search drops a state's working data once it is expanded and keeps only
 * what reconstruction needs. */
void sb_dp_state_shrink(struct sb_dp_state *s)
{
    cut_free(&s->cut);
    free(s->done), free(s->link), free(s->cursor);
    s->done = NULL, s->link = NULL, s->cursor = NULL;
}

void sb_dp_state_free(struct sb_dp_state *s)
{
    if (!s)
        return;
    sb_dp_state_shrink(s);
    free(s->group), free(s->gdev), free(s->in_node), free(s->in_dev);
    free(s);
}

/* ---- the placer: one group after a barrier, mirroring harness/src/core/sim.c ---- */

static int reads_in_place(const struct sb_dp_ctx *c, uint32_t b, uint32_t a)
{
    return a == b || c->g->machine->can_read[(size_t)b * c->nd + a];
}

static int known(const struct sb_dp_ctx *c, uint32_t v) { return c->stamp[v] == c->epoch; }

static void mark(struct sb_dp_ctx *c, uint32_t v, int32_t d, double fin, double cend)
{
    c->stamp[v] = c->epoch;
    c->dev[v] = d, c->fin[v] = fin, c->cend[v] = cend;
    for (uint32_t b = 0; b < c->nd; b++)
        c->copy[(size_t)v * c->nd + b] = -1;
}

/* Load the parent's cut and links into the scratch arrays. */
void sb_dp_load(struct sb_dp_ctx *c, const struct sb_dp_state *s)
{
    if (++c->epoch == 0) { /* wrapped: forget every stamp */
        memset(c->stamp, 0, (size_t)c->n * sizeof *c->stamp);
        c->epoch = 1;
    }
    for (uint32_t i = 0; i < s->cut.n; i++) {
        uint32_t v = s->cut.node[i];
        mark(c, v, s->cut.dev[i], s->cut.fin[i], s->cut.cend[i]);
        memcpy(&c->copy[(size_t)v * c->nd], &s->cut.copy[(size_t)i * c->nd],
               c->nd * sizeof *c->copy);
    }
    memcpy(c->link, s->link, (size_t)c->nd * c->nd * sizeof *c->link);
    for (uint32_t a = 0; a < c->nd; a++)
        c->stream[a] = c->res[a] = s->t;
}

/* When p's output is on device b if v is placed there.  The sim makes a copy
 * once per (node, device) when its first consumer there is reached, on the
 * link's FIFO; `lf` holds the links into b, updated as this node's copies
 * queue; `commit` records the copy. */
static double arrival(struct sb_dp_ctx *c, uint32_t p, uint32_t b, double *lf, int commit)
{
    const struct sb_machine_view *m = c->g->machine;
    if (!known(c, p) && c->g->device[p] >= 0) { /* a pre-assigned input: there from the start */
        mark(c, p, c->g->device[p], 0, 0);
        c->newin[c->n_newin++] = p;
    }
    if (!known(c, p)) /* an input nobody has placed: it goes with this consumer */
        return 0;
    uint32_t a = (uint32_t)c->dev[p];
    if (reads_in_place(c, b, a))
        return c->fin[p];
    double *cp = &c->copy[(size_t)p * c->nd + b];
    if (*cp >= 0)
        return *cp;
    size_t L = (size_t)a * c->nd + b;
    double begin = c->fin[p] > lf[a] ? c->fin[p] : lf[a];
    double end = begin + m->link_lat_us[L] + (double)c->g->out_bytes[c->root[p]] /
                                                 (m->link_gbps[L] * 1e3);
    lf[a] = end;
    if (commit) {
        *cp = end;
        if (c->journal)
            c->jcopy[c->n_jcopy++] = (size_t)p * c->nd + b;
    }
    return end;
}

/* ---- named resources: booking as the simulator books -------------------- */

/* What v holds on device b (need[]); 0 when nothing. */
static int pack_need(const struct sb_dp_ctx *c, uint32_t v, uint32_t b, uint32_t *need)
{
    int any = 0;
    for (uint32_t k = 0; k < c->g->machine->n_res; k++)
        any |= (need[k] = sb_res_need(c->g, v, b, k)) != 0;
    return any;
}

/* Whether [t, t + w) on device b, holding need[], stays within the limits at
 * every instant beside this group's bookings.  Returns 1 when it fits, else 0
 * with *next = the first booking end after t (where to try again). */
static int pack_fits(const struct sb_dp_ctx *c, uint32_t b, const uint32_t *need, double t,
                     double w, double *next)
{
    const struct sb_machine_view *m = c->g->machine;
    uint32_t K = m->n_res;
    const uint32_t *lim = &m->res_limit[(size_t)b * K];
    int ok = 1;
    *next = INFINITY;
    for (uint32_t i = 0; i < c->n_iv; i++) {
        const struct sb_dp_iv *x = &c->iv[i];
        if (x->dev != b || !(x->en > t))
            continue;
        if (x->en < *next)
            *next = x->en;
        if (!(x->st < t + w))
            continue;
        /* the use at the instant x starts (or at t), over every booking */
        double at = x->st > t ? x->st : t;
        for (uint32_t k = 0; k < K && ok; k++) {
            if (!need[k])
                continue;
            uint64_t sum = need[k];
            for (uint32_t j = 0; j < c->n_iv; j++) {
                const struct sb_dp_iv *y = &c->iv[j];
                if (y->dev == b && y->st <= at && y->en > at)
                    sum += y->need[k];
            }
            if (lim[k] && sum > lim[k])
                ok = 0;
        }
    }
    return ok;
}

/* The earliest start >= t of v (duration w) on device b: after the last
 * booking of its lane (a stream runs its nodes in order, as in sim.c), then
 * where its resources fit. */
static double pack_start(const struct sb_dp_ctx *c, uint32_t v, uint32_t b, double t, double w)
{
    uint32_t need[SB_MAX_RES], lane = sb_lane(c->g, v, b);
    for (uint32_t i = 0; i < c->n_iv; i++)
        if (c->iv[i].dev == b && c->iv[i].lane == lane && c->iv[i].en > t)
            t = c->iv[i].en;
    if (c->g->kind[v] != SB_KIND_COMPUTE || !pack_need(c, v, b, need))
        return t;
    double next;
    while (!pack_fits(c, b, need, t, w, &next) && isfinite(next))
        t = next;
    return t;
}

static void pack_book(struct sb_dp_ctx *c, uint32_t v, uint32_t b, double st, double en)
{
    struct sb_dp_iv *x = &c->iv[c->n_iv++];
    x->dev = b, x->lane = sb_lane(c->g, v, b), x->st = st, x->en = en;
    pack_need(c, v, b, x->need);
}

/* The note's heuristic on device b: the group's tasks, longest first, fill the
 * device's open time slot while every resource stays within its limit (and
 * its lane is free in the slot); otherwise a new slot opens when the open one
 * ends.  The finish it predicts for v with inputs ready at `ready`; *opens
 * says whether v opens a new slot. */
static double note_finish(const struct sb_dp_ctx *c, uint32_t v, uint32_t b, double ready,
                          double w, int *opens)
{
    const struct sb_machine_view *m = c->g->machine;
    uint32_t need[SB_MAX_RES], K = m->n_res, lane = sb_lane(c->g, v, b);
    pack_need(c, v, b, need);
    int fits = c->slot_first[b] < c->n_iv || c->slot_end[b] > c->slot_start[b];
    for (uint32_t k = 0; k < K && fits; k++) {
        uint64_t sum = need[k];
        for (uint32_t i = c->slot_first[b]; i < c->n_iv; i++)
            if (c->iv[i].dev == b)
                sum += c->iv[i].need[k];
        uint32_t lim = m->res_limit[(size_t)b * K + k];
        if (lim && sum > lim)
            fits = 0;
    }
    for (uint32_t i = c->slot_first[b]; i < c->n_iv && fits; i++)
        if (c->iv[i].dev == b && c->iv[i].lane == lane)
            fits = 0;
    double st = fits ? c->slot_start[b] : c->slot_end[b];
    *opens = !fits;
    return (ready > st ? ready : st) + w;
}

/* Finish (and start) of v on device b; INFINITY when b cannot take it. */
static double try_on(struct sb_dp_ctx *c, uint32_t v, uint32_t b, double barrier, int commit,
                     double *start)
{
    const struct sb_graph_view *g = c->g;
    double lf[SB_MAX_DEVICES], t = 0;
    for (uint32_t a = 0; a < c->nd; a++)
        lf[a] = c->link[(size_t)a * c->nd + b];
    uint32_t e = g->pred_off[v] + (g->kind[v] == SB_KIND_DONE);
    for (; e < g->pred_off[v + 1]; e++) {
        double r = arrival(c, g->pred[e], b, lf, commit) + g->edge_lat_us;
        if (r > t)
            t = r;
    }
    if (commit)
        for (uint32_t a = 0; a < c->nd; a++)
            c->link[(size_t)a * c->nd + b] = lf[a];
    if (c->pack) {
        if (t < barrier)
            t = barrier;
        c->ready = t;
        double w = g->kind[v] == SB_KIND_COMPUTE ? g->dev_dur_us[(size_t)v * c->nd + b] : 0;
        t = pack_start(c, v, b, t, w);
    } else if (t < c->stream[b])
        t = c->stream[b];
    if (t < barrier)
        t = barrier;
    *start = t;
    switch ((enum sb_kind)g->kind[v]) {
    case SB_KIND_COMPUTE:
        return t + g->dev_dur_us[(size_t)v * c->nd + b];
    case SB_KIND_START: /* one collective at a time per device, as the default --sim */
        return (t > c->res[b] ? t : c->res[b]) + g->dur_us[v];
    case SB_KIND_DONE: {
        double end = c->cend[g->partner[v]];
        return end > t ? end : t;
    }
    default:
        return t;
    }
}

/* Whether b can run v.  A node's units, like any resource, are the
 * machine's to judge (docs/machines.md, "Resources"): a device that declares
 * `units: M` gives a node needing more an infinite time, and a device that
 * declares none limits nothing, so the finite time says it all.  (dp used to
 * compare units with the view's `units` array, which is 1 on a device
 * without the key, and refused workloads every other policy runs.) */
static int allowed(const struct sb_dp_ctx *c, uint32_t v, uint32_t b)
{
    const struct sb_graph_view *g = c->g;
    return g->kind[v] != SB_KIND_COMPUTE || isfinite(g->dev_dur_us[(size_t)v * c->nd + b]);
}

/* Earliest-finish device of v; -1 when none can run it. */
static int32_t best_device(struct sb_dp_ctx *c, uint32_t v, double barrier)
{
    const struct sb_graph_view *g = c->g;
    uint32_t lo = 0, hi = c->nd;
    if (g->device[v] >= 0)
        lo = (uint32_t)g->device[v], hi = lo + 1;
    else if (g->kind[v] == SB_KIND_DONE)
        lo = (uint32_t)c->dev[g->partner[v]], hi = lo + 1;
    int32_t best = -1;
    double best_end = INFINITY, st;
    for (uint32_t b = lo; b < hi && b < c->nd; b++) {
        if (!allowed(c, v, b))
            continue;
        double end = try_on(c, v, b, barrier, 0, &st);
        if (c->pack && c->placer == 1 && g->kind[v] == SB_KIND_COMPUTE && isfinite(end)) {
            int opens;
            end = note_finish(c, v, b, c->ready, g->dev_dur_us[(size_t)v * c->nd + b], &opens);
        }
        if (end < best_end)
            best_end = end, best = (int32_t)b;
    }
    return best;
}

int sb_dp_rank_cmp(const void *x, const void *y)
{
    const struct sb_dp_rank *a = x, *b = y;
    if (a->r != b->r)
        return a->r > b->r ? -1 : 1;
    return a->v < b->v ? -1 : a->v > b->v;
}

static int still_read(const struct sb_dp_ctx *c, const uint64_t *done, uint32_t v)
{
    const struct sb_graph_view *g = c->g;
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
        if (!is_done(done, g->succ[e]))
            return 1;
    return 0;
}

static int cmp_u32(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* The new state's cut: known nodes some unfinished node still reads. */
static int build_cut(struct sb_dp_ctx *c, const struct sb_dp_state *s, struct sb_dp_state *o)
{
    uint32_t cap = s->cut.n + o->k + o->n_in, n = 0;
    uint32_t *cand = malloc(((size_t)cap + 1) * sizeof *cand);
    if (!cand)
        return -1;
    for (uint32_t i = 0; i < s->cut.n; i++)
        cand[n++] = s->cut.node[i];
    for (uint32_t i = 0; i < o->k; i++)
        cand[n++] = o->group[i];
    for (uint32_t i = 0; i < o->n_in; i++)
        cand[n++] = o->in_node[i];
    qsort(cand, n, sizeof *cand, cmp_u32);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n; i++)
        if (still_read(c, o->done, cand[i]))
            cand[m++] = cand[i];
    struct sb_dp_cut *k = &o->cut;
    k->n = m;
    k->node = cand;
    k->dev = malloc(((size_t)m + 1) * sizeof *k->dev);
    k->fin = malloc(((size_t)m + 1) * sizeof *k->fin);
    k->cend = malloc(((size_t)m + 1) * sizeof *k->cend);
    k->copy = malloc(((size_t)m * c->nd + 1) * sizeof *k->copy);
    if (!k->dev || !k->fin || !k->cend || !k->copy)
        return -1;
    for (uint32_t i = 0; i < m; i++) {
        uint32_t v = cand[i];
        k->dev[i] = c->dev[v], k->fin[i] = c->fin[v], k->cend[i] = c->cend[v];
        memcpy(&k->copy[(size_t)i * c->nd], &c->copy[(size_t)v * c->nd],
               c->nd * sizeof *k->copy);
    }
    return 0;
}

struct sb_dp_state *sb_dp_plan_state(struct sb_dp_ctx *c, const struct sb_dp_state *s, uint32_t k,
                                     double t, uint32_t n_orders)
{
    struct sb_dp_state *o = state_new(c, n_orders);
    if (!o)
        return NULL;
    o->t = t, o->parent = s, o->k = k, o->n_done = s->n_done + k;
    memcpy(o->done, s->done, words(c) * sizeof *o->done);
    memcpy(o->cursor, s->cursor, n_orders * sizeof *o->cursor);
    memcpy(o->link, c->link, (size_t)c->nd * c->nd * sizeof *o->link);
    o->group = malloc(((size_t)k + 1) * sizeof *o->group);
    o->gdev = malloc(((size_t)k + 1) * sizeof *o->gdev);
    o->in_node = malloc(((size_t)c->n_newin + 1) * sizeof *o->in_node);
    o->in_dev = malloc(((size_t)c->n_newin + 1) * sizeof *o->in_dev);
    if (!o->group || !o->gdev || !o->in_node || !o->in_dev) {
        sb_dp_state_free(o);
        return NULL;
    }
    for (uint32_t i = 0; i < k; i++) {
        uint32_t v = c->sorted[i];
        o->group[i] = v, o->gdev[i] = c->dev[v];
        o->done[v / 64] |= 1ull << (v % 64);
    }
    o->n_in = c->n_newin;
    for (uint32_t i = 0; i < c->n_newin; i++)
        o->in_node[i] = c->newin[i], o->in_dev[i] = c->dev[c->newin[i]];
    if (build_cut(c, s, o)) {
        sb_dp_state_free(o);
        return NULL;
    }
    return o;
}

/* Places group[0..k) after a barrier at t0 on the scratch arrays as they are
 * (stream, res and link set by the caller); returns the barrier time, or -1
 * when a node has no device that can run it. */
double sb_dp_place(struct sb_dp_ctx *c, double t0, const uint32_t *group, uint32_t k)
{
    const struct sb_graph_view *g = c->g;
    c->n_newin = 0, c->n_sorted = 0;
    struct sb_dp_rank *r = malloc(((size_t)k + 1) * sizeof *r);
    if (!r)
        return -1;
    for (uint32_t i = 0; i < k; i++)
        r[i] = (struct sb_dp_rank){c->rank[group[i]], group[i]};
    qsort(r, k, sizeof *r, sb_dp_rank_cmp);
    if (c->pack) {
        c->n_iv = 0;
        for (uint32_t a = 0; a < c->nd; a++)
            c->slot_first[a] = 0, c->slot_start[a] = c->slot_end[a] = t0;
    }
    double end_all = t0;
    for (uint32_t i = 0; i < k; i++) {
        if (c->pack) { /* the longest ready task next (ties: rank order) */
            uint32_t pick = k;
            double longest = -1;
            for (uint32_t j = i; j < k; j++) {
                uint32_t u = r[j].v, ready = 1;
                for (uint32_t e = g->pred_off[u]; e < g->pred_off[u + 1] && ready; e++)
                    ready = g->kind[g->pred[e]] == SB_KIND_INPUT || known(c, g->pred[e]);
                if (ready && mean_cost(c, u) > longest)
                    longest = mean_cost(c, u), pick = j;
            }
            if (pick == k) { /* cannot happen on a closed group */
                free(r);
                return -1;
            }
            struct sb_dp_rank t = r[pick];
            memmove(&r[i + 1], &r[i], (size_t)(pick - i) * sizeof *r);
            r[i] = t;
        }
        uint32_t v = r[i].v;
        c->sorted[i] = v;
        c->n_sorted = i + 1;
        int32_t d = best_device(c, v, t0);
        if (d < 0) {
            free(r);
            return -1;
        }
        double st, end = try_on(c, v, (uint32_t)d, t0, 1, &st);
        if (c->pack) {
            if (c->placer == 1 && g->kind[v] == SB_KIND_COMPUTE) {
                int opens;
                double w = g->dev_dur_us[(size_t)v * c->nd + (uint32_t)d];
                double nf = note_finish(c, v, (uint32_t)d, c->ready, w, &opens);
                if (opens)
                    c->slot_first[d] = c->n_iv, c->slot_start[d] = nf - w, c->slot_end[d] = nf;
                else if (nf > c->slot_end[d])
                    c->slot_end[d] = nf;
            }
            /* the lane is held until its finish (a start's is its issue) */
            pack_book(c, v, (uint32_t)d, st, g->kind[v] == SB_KIND_START ? st : end);
        }
        /* inputs nobody placed yet go with this consumer */
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            if (!known(c, g->pred[e])) {
                mark(c, g->pred[e], d, 0, 0);
                c->newin[c->n_newin++] = g->pred[e];
            }
        if (g->kind[v] == SB_KIND_START) {
            c->res[d] = end;
            mark(c, v, d, st, end);
            c->stream[d] = st;
        } else {
            mark(c, v, d, end, 0);
            c->stream[d] = end;
        }
        if (end > end_all)
            end_all = end;
    }
    free(r);
    return end_all;
}

double sb_dp_plan(struct sb_dp_ctx *c, const struct sb_dp_state *s, const uint32_t *group,
                  uint32_t k, struct sb_dp_state **out, uint32_t n_orders)
{
    sb_dp_load(c, s);
    double end_all = sb_dp_place(c, s->t, group, k);
    if (end_all < 0)
        return -1;
    if (out) {
        *out = sb_dp_plan_state(c, s, k, end_all, n_orders);
        if (!*out)
            return -1;
    }
    return end_all;
}


/* Forget what the last (trial) plan wrote to the scratch: the nodes it
 * placed and the copies it recorded (each was absent before: a plan only
 * records a copy that does not exist yet). */
void sb_dp_undo_plan(struct sb_dp_ctx *c)
{
    for (uint32_t i = 0; i < c->n_sorted; i++)
        c->stamp[c->sorted[i]] = 0;
    for (uint32_t i = 0; i < c->n_newin; i++)
        c->stamp[c->newin[i]] = 0;
    for (size_t i = 0; i < c->n_jcopy; i++)
        c->copy[c->jcopy[i]] = -1;
    c->n_jcopy = 0;
}


void sb_dp_sim_free(struct sb_dp_sim *L)
{
    free(L->start), free(L->fin), free(L->cend), free(L->why), free(L->copy);
    free(L->cstamp), free(L->link), free(L->stream), free(L->coll);
    free(L->stream_last), free(L->coll_last), free(L->link_last);
    memset(L, 0, sizeof *L);
}

int sb_dp_sim_init(struct sb_dp_sim *L, const struct sb_graph_view *g, const uint32_t *root)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices, ns = g->n_streams ? g->n_streams : 1;
    memset(L, 0, sizeof *L);
    L->g = g, L->n = n, L->nd = nd, L->ns = ns, L->root = root;
    L->start = malloc(((size_t)n + 1) * sizeof *L->start);
    L->fin = malloc(((size_t)n + 1) * sizeof *L->fin);
    L->cend = malloc(((size_t)n + 1) * sizeof *L->cend);
    L->why = malloc(((size_t)n + 1) * sizeof *L->why);
    L->copy = malloc(((size_t)n * nd + 1) * sizeof *L->copy);
    L->cstamp = calloc((size_t)n * nd + 1, sizeof *L->cstamp);
    L->link = malloc((size_t)nd * nd * sizeof *L->link);
    L->stream = malloc((size_t)nd * ns * sizeof *L->stream);
    L->coll = malloc(nd * sizeof *L->coll);
    L->stream_last = malloc((size_t)nd * ns * sizeof *L->stream_last);
    L->coll_last = malloc(nd * sizeof *L->coll_last);
    L->link_last = malloc((size_t)nd * nd * sizeof *L->link_last);
    if (!L->link_last || !L->start || !L->fin || !L->cend || !L->why || !L->copy || !L->cstamp || !L->link ||
        !L->stream || !L->coll || !L->stream_last || !L->coll_last) {
        sb_dp_sim_free(L);
        return -1;
    }
    return 0;
}

/* Forget the last simulation: nothing placed, every resource free at 0. */
void sb_dp_sim_reset(struct sb_dp_sim *L)
{
    uint32_t nd = L->nd, ns = L->ns;
    if (++L->epoch == 0) {
        memset(L->cstamp, 0, (size_t)L->n * nd * sizeof *L->cstamp);
        L->epoch = 1;
    }
    for (size_t k = 0; k < (size_t)nd * nd; k++)
        L->link[k] = 0, L->link_last[k] = UINT32_MAX;
    for (size_t k = 0; k < (size_t)nd * ns; k++)
        L->stream[k] = 0, L->stream_last[k] = UINT32_MAX;
    for (uint32_t a = 0; a < nd; a++)
        L->coll[a] = 0, L->coll_last[a] = UINT32_MAX;
    L->mk = 0;
    L->last = UINT32_MAX;
}

/* Node v (not an input) on device d, after every node simulated so far, by
 * the simulator's rules (run_order and transfer() in sim.c): its inputs'
 * finishes, or the arrival of a copy made once per (producer, device) and
 * queued FIFO on its link, plus the edge latency; its stream; for a start the
 * device's collective resource, for a done its collective's end.  Returns v's
 * finish.  With commit the state takes v (an unplaced input goes to d);
 * without, nothing changes and *xfer_us is the link time of the copies v
 * would queue. */
double sb_dp_sim_step(struct sb_dp_sim *L, int32_t *dev, uint32_t v, uint32_t d, int commit,
                      double *xfer_us)
{
    const struct sb_graph_view *g = L->g;
    const struct sb_machine_view *m = g->machine;
    uint32_t nd = L->nd, w = UINT32_MAX;
    double lf[SB_MAX_DEVICES], t = 0, xfer = 0;
    for (uint32_t a = 0; a < nd; a++)
        lf[a] = L->link[(size_t)a * nd + d];
    uint32_t e0 = g->pred_off[v] + (g->kind[v] == SB_KIND_DONE);
    for (uint32_t e = e0; e < g->pred_off[v + 1]; e++) {
        uint32_t p = g->pred[e], rb = p;
        double r;
        if (dev[p] < 0) { /* an input nobody placed yet: it goes with v */
            r = 0;
            if (commit)
                dev[p] = (int32_t)d, L->fin[p] = 0;
        } else {
            uint32_t a = (uint32_t)dev[p];
            r = L->fin[p];
            if (nd > 1 && a != d && !m->can_read[(size_t)d * nd + a]) {
                size_t k = (size_t)p * nd + d;
                int have = L->cstamp[k] == L->epoch;
                if (!have && !commit) /* read twice by v: one copy */
                    for (uint32_t f = e0; f < e && !have; f++)
                        have = g->pred[f] == p;
                if (have && commit) {
                    r = L->copy[k];
                } else if (have) {
                    r = L->cstamp[k] == L->epoch ? L->copy[k] : r; /* ready once queued */
                } else {
                    size_t Lk = (size_t)a * nd + d;
                    double begin = r > lf[a] ? r : lf[a];
                    /* a copy held back by the link: the consumer whose copy
                     * was queued before it is what binds */
                    if (lf[a] > r && L->link_last[Lk] != UINT32_MAX && L->link_last[Lk] != v)
                        rb = L->link_last[Lk];
                    double c = m->link_lat_us[Lk] +
                               (double)g->out_bytes[L->root[p]] / (m->link_gbps[Lk] * 1e3);
                    r = lf[a] = begin + c;
                    xfer += c;
                    if (commit)
                        L->copy[k] = r, L->cstamp[k] = L->epoch, L->link_last[Lk] = v;
                }
            }
        }
        r += g->edge_lat_us;
        if (r > t)
            t = r, w = rb;
    }
    size_t sl = (size_t)d * L->ns + g->stream[v];
    if (L->stream[sl] > t)
        t = L->stream[sl], w = L->stream_last[sl];
    double st = t, cend = 0;
    switch ((enum sb_kind)g->kind[v]) {
    case SB_KIND_COMPUTE:
        t += g->dev_dur_us[(size_t)v * nd + d];
        break;
    case SB_KIND_START: {
        double begin = t;
        if (L->coll[d] > begin)
            begin = L->coll[d], w = L->coll_last[d];
        cend = begin + g->dur_us[v];
        break;
    }
    case SB_KIND_DONE: {
        uint32_t s = g->partner[v];
        if (L->cend[s] > t)
            t = L->cend[s], w = s;
        break;
    }
    default:
        break;
    }
    if (xfer_us)
        *xfer_us = xfer;
    if (!commit)
        return g->kind[v] == SB_KIND_START ? cend : t;
    for (uint32_t a = 0; a < nd; a++)
        L->link[(size_t)a * nd + d] = lf[a];
    if (g->kind[v] == SB_KIND_START) {
        L->cend[v] = cend;
        L->coll[d] = cend, L->coll_last[d] = v;
    }
    L->start[v] = st, L->fin[v] = t, L->why[v] = w;
    L->stream[sl] = t, L->stream_last[sl] = v;
    if (t > L->mk || L->last == UINT32_MAX)
        L->mk = t, L->last = v;
    return t;
}

/* The makespan the simulator reports for (order, dev) without barriers,
 * under the default --sim (one collective at a time per device); fills the
 * times and the binding node of each. */
double sb_dp_sim_eval(struct sb_dp_sim *L, const uint32_t *order, const int32_t *dev)
{
    sb_dp_sim_reset(L);
    for (uint32_t i = 0; i < L->n; i++) {
        uint32_t v = order[i];
        if (L->g->kind[v] == SB_KIND_INPUT)
            L->start[v] = L->fin[v] = 0, L->why[v] = UINT32_MAX;
        else
            sb_dp_sim_step(L, (int32_t *)dev, v, (uint32_t)dev[v], 1, NULL);
    }
    return L->mk;
}

/* For tests/test_dp.c: the makespan sb_dp_sim_eval gives (order, device), which must
 * be the simulator's. */
double sb_dp_simulate(const struct sb_graph_view *g, const uint32_t *order, const int32_t *dev)
{
    uint32_t n = g->n_nodes;
    uint32_t *root = calloc((size_t)n + 1, sizeof *root);
    struct sb_dp_sim L;
    double t = -1;
    if (!root)
        return -1;
    sb_dp_view_roots(g, root);
    if (sb_dp_sim_init(&L, g, root) == 0) {
        t = sb_dp_sim_eval(&L, order, dev);
        sb_dp_sim_free(&L);
    }
    free(root);
    return t;
}
