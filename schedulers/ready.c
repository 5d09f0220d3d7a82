/* ready: the order in which ASTRA-sim's workload layer issues a graph
 * (astra-sim/workload/Workload.cc, issue_dep_free_nodes, with Chakra's
 * ETFeeder): a node is issued as soon as every node it depends on is done;
 * among the ready nodes the lowest id goes first; each rank runs at most one
 * compute node and one collective at a time.  A collective (start and done)
 * is one node there: it is done when its collective ends.
 *
 * pass 1 replays that rule in time on each device (a device is a rank), with
 *        the run's durations (docs/cost-model.md);
 * pass 2 turns the replay into an order the simulator runs with the same
 *        times: computes in issue order; a start just before the compute
 *        running when it was issued (so the stream is free by then and the
 *        collective queues behind the one running, as the rank's queue
 *        does); a done just before the first compute that begins after its
 *        collective ended (so it never waits where ASTRA-sim would not);
 *        nops where they became ready.  Ties keep the replay's times, then
 *        ids, and a final pass keeps the order topological.
 * docs/ready.md states the rule and where the two models part. */
#include "schedbench/plugin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Layout (issue 25): at a million nodes the ready sets hold tens of thousands
 * of nodes (computes that read only weights are ready at time 0), so nothing
 * here keeps them as tuples of doubles: ready computes are a bitset per
 * device, ready collectives a heap of ids, and nodes that take no time never
 * enter the event heap; the final pass sorts node ids by a counting sort on
 * ranks, and heaps uint32 positions only when the keys' order is not
 * topological (docs/ready.md, "Speed"). */

/* ---- a 4-ary min-heap of uint32 keys --------------------------------------- */

struct ids {
    uint32_t *a;
    uint32_t n;
};

static void ids_push(struct ids *h, uint32_t x)
{
    uint32_t c = h->n++;
    for (; c && x < h->a[(c - 1) / 4]; c = (c - 1) / 4)
        h->a[c] = h->a[(c - 1) / 4];
    h->a[c] = x;
}

static uint32_t ids_pop(struct ids *h)
{
    uint32_t top = h->a[0], last = h->a[--h->n], c = 0;
    for (;;) {
        uint32_t l = 4 * c + 1, m = c, best = last;
        for (uint32_t k = l; k < l + 4 && k < h->n; k++)
            if (h->a[k] < best)
                best = h->a[k], m = k;
        if (m == c)
            break;
        h->a[c] = h->a[m];
        c = m;
    }
    if (h->n)
        h->a[c] = last;
    return top;
}

/* ---- a set of small integers, the smallest first --------------------------- */

/* One bit per member, and above each level a bit per nonzero word of the
 * level below, up to a single word: adding, and taking the smallest, touch
 * one word per level (4 levels for 2^24 members). */
struct idset {
    uint64_t *w;        /* the levels' words, level 0 first */
    uint32_t off[7];    /* first word of each level */
    uint32_t n_levels;
    uint32_t n;         /* members */
};

static int idset_init(struct idset *s, uint32_t cap)
{
    uint32_t words = cap / 64 + 1, total = 0;
    s->n_levels = 0, s->n = 0;
    for (;;) {
        s->off[s->n_levels++] = total;
        total += words;
        if (words == 1)
            break;
        words = (words + 63) / 64;
    }
    s->w = calloc(total, sizeof *s->w);
    return s->w ? 0 : -1;
}

static void idset_add(struct idset *s, uint32_t i)
{
    s->n++;
    for (uint32_t k = 0; k < s->n_levels; k++, i /= 64) {
        uint64_t *w = &s->w[s->off[k] + i / 64];
        int had = *w != 0;
        *w |= 1ull << (i % 64);
        if (had) /* the levels above know this word already */
            break;
    }
}

static uint32_t idset_take_min(struct idset *s)
{
    uint32_t i = 0;
    for (uint32_t k = s->n_levels; k-- > 0;)
        i = i * 64 + (uint32_t)__builtin_ctzll(s->w[s->off[k] + i]);
    s->n--;
    for (uint32_t k = 0, j = i; k < s->n_levels; k++, j /= 64) {
        uint64_t *w = &s->w[s->off[k] + j / 64];
        *w &= ~(1ull << (j % 64));
        if (*w)
            break;
    }
    return i;
}

/* ---- a binary min-heap of (time, id): running nodes, lane heads ------------ */

struct event {
    double t;
    uint32_t v; /* ties: the smaller first */
};

struct events {
    struct event *a;
    uint32_t n;
};

static int ev_less(struct event x, struct event y)
{
    return x.t != y.t ? x.t < y.t : x.v < y.v;
}

static void ev_push(struct events *h, double t, uint32_t v)
{
    struct event it = {t, v};
    uint32_t c = h->n++;
    for (; c && ev_less(it, h->a[(c - 1) / 2]); c = (c - 1) / 2)
        h->a[c] = h->a[(c - 1) / 2];
    h->a[c] = it;
}

static struct event ev_pop(struct events *h)
{
    struct event top = h->a[0], last = h->a[--h->n];
    uint32_t c = 0;
    for (;;) {
        uint32_t l = 2 * c + 1, m = c;
        if (l < h->n && ev_less(h->a[l], last))
            m = l;
        if (l + 1 < h->n && ev_less(h->a[l + 1], m == c ? last : h->a[m]))
            m = l + 1;
        if (m == c)
            break;
        h->a[c] = h->a[m];
        c = m;
    }
    if (h->n)
        h->a[c] = last;
    return top;
}

/* ---- pass 1: the replay ---------------------------------------------------- */

/* Per device, its computes in issue order (CSR by device over the computes). */
struct lanes {
    uint32_t *off;   /* [nd + 1] */
    uint32_t *n;     /* [nd] issued so far */
    uint32_t *v;     /* [n_computes] node */
    double *begin;   /* [n_computes] */
    double *end;     /* [n_computes] */
    uint32_t *n_at;  /* [nd] issued computes whose begin equals the last one's */
};

struct replay {
    const struct sb_graph_view *g;
    const int32_t *dev;
    uint32_t nd;
    double *t_key;   /* [n] a start's issue time; a nop's or done's end */
    uint32_t *slot;  /* [n] lane index: a compute's own (before it is issued, its
                      * index among its device's computes by id); a nop's or
                      * done's first compute beginning at or after its end */
    uint32_t *left;  /* [n] inputs not done yet */
    uint32_t *now;   /* [n] stack: nodes done at the current time (no duration) */
    uint32_t n_now;
    struct events events;           /* running computes and collectives by end */
    struct idset *comp;             /* [nd] ready computes by slot (= by id) */
    uint32_t *comp_v;               /* [n_computes] CSR by device: computes by id */
    struct ids *comm;               /* [nd] ready collectives by id */
    uint8_t *comp_busy, *comm_busy; /* [nd] */
    struct lanes L;
};

static double dur(const struct replay *R, uint32_t v)
{
    const struct sb_graph_view *g = R->g;
    if (g->kind[v] == SB_KIND_START)
        return g->dur_us[v];
    return g->dev_dur_us[(size_t)v * R->nd + (uint32_t)R->dev[v]];
}

static void becomes_ready(struct replay *R, uint32_t v)
{
    uint32_t d = (uint32_t)R->dev[v];
    switch (R->g->kind[v]) {
    case SB_KIND_COMPUTE:
        idset_add(&R->comp[d], R->slot[v]);
        break;
    case SB_KIND_START:
        ids_push(&R->comm[d], v);
        break;
    default: /* inputs, nops, dones: done as soon as ready */
        R->now[R->n_now++] = v;
    }
}

static void finish(struct replay *R, uint32_t v, double t)
{
    const struct sb_graph_view *g = R->g;
    uint32_t d = (uint32_t)R->dev[v];
    switch (g->kind[v]) {
    case SB_KIND_COMPUTE:
        R->comp_busy[d] = 0;
        R->L.end[R->L.off[d] + R->slot[v]] = t;
        break;
    case SB_KIND_START:
        R->comm_busy[d] = 0;
        break;
    case SB_KIND_INPUT:
        break;
    default: { /* the computes issued so far on d, less those beginning at t */
        uint32_t k = R->L.n[d];
        if (k && R->L.begin[R->L.off[d] + k - 1] >= t)
            k -= R->L.n_at[d];
        R->t_key[v] = t;
        R->slot[v] = k;
    }
    }
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++) {
        uint32_t w = g->succ[e];
        if (--R->left[w] == 0)
            becomes_ready(R, w);
    }
}

/* Each free resource takes its lowest ready id (issue_dep_free_nodes). */
static void issue(struct replay *R, double t)
{
    struct lanes *L = &R->L;
    for (uint32_t d = 0; d < R->nd; d++) {
        if (!R->comp_busy[d] && R->comp[d].n) {
            uint32_t v = R->comp_v[L->off[d] + idset_take_min(&R->comp[d])];
            uint32_t i = L->off[d] + L->n[d];
            R->comp_busy[d] = 1;
            L->n_at[d] = L->n[d] && L->begin[i - 1] == t ? L->n_at[d] + 1 : 1;
            L->v[i] = v, L->begin[i] = t;
            R->slot[v] = L->n[d]++;
            ev_push(&R->events, t + dur(R, v), v);
        }
        if (!R->comm_busy[d] && R->comm[d].n) {
            uint32_t v = ids_pop(&R->comm[d]);
            R->comm_busy[d] = 1;
            R->t_key[v] = t;
            ev_push(&R->events, t + dur(R, v), v);
        }
    }
}

/* Time runs from event to event; at each, every node done by then finishes
 * (those of no duration at once), then the free resources issue. */
static void run_replay(struct replay *R)
{
    const struct sb_graph_view *g = R->g;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        R->left[v] = g->pred_off[v + 1] - g->pred_off[v];
        if (!R->left[v])
            becomes_ready(R, v);
    }
    issue(R, 0);
    double t = 0;
    while (R->n_now || R->events.n) {
        if (!R->n_now) /* else the nodes of no duration finish now, first */
            t = R->events.a[0].t;
        for (;;) {
            if (R->n_now) {
                finish(R, R->now[--R->n_now], t);
            } else if (R->events.n && R->events.a[0].t <= t) {
                struct event it = ev_pop(&R->events);
                finish(R, it.v, it.t);
            } else {
                break;
            }
        }
        issue(R, t);
    }
}

/* ---- pass 2: the order ---------------------------------------------------- */

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* A device runs one compute at a time, so its issue order is begin order;
 * computes beginning at the same time go by id. */
static void sort_lanes(struct replay *R)
{
    struct lanes *L = &R->L;
    for (uint32_t d = 0; d < R->nd; d++) {
        uint32_t lo = L->off[d], hi = L->off[d] + L->n[d];
        for (uint32_t i = lo; i < hi;) {
            uint32_t j = i + 1, sorted = 1;
            for (; j < hi && L->begin[j] == L->begin[i]; j++)
                sorted &= L->v[j - 1] < L->v[j];
            if (!sorted) { /* ends follow their nodes */
                for (uint32_t k = i; k < j; k++)
                    R->t_key[L->v[k]] = L->end[k];
                qsort(L->v + i, j - i, sizeof *L->v, cmp_u32);
                for (uint32_t k = i; k < j; k++)
                    L->end[k] = R->t_key[L->v[k]];
            }
            i = j;
        }
    }
}

/* Index of the first compute of device d whose end is after t; the lane's
 * length when none.  (The ends are in begin order, not sorted where computes
 * beginning together were reordered by id: the search is the same one the
 * key's definition makes, either way.) */
static uint32_t first_end_after(const struct lanes *L, uint32_t d, double t)
{
    const double *x = L->end + L->off[d];
    uint32_t lo = 0, hi = L->n[d];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (x[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* Doubles as integers in the same order (finite or infinite, not NaN). */
static uint64_t ordered(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u >> 63 ? ~u : u | (1ull << 63);
}

/* Dense ranks (from 1) of the lanes' begin times merged across devices;
 * rank[off[d] + i] for lane entry i, and *r_inf the rank of +infinity. */
static int rank_begins(const struct replay *R, uint32_t *rank, uint32_t *r_inf)
{
    const struct lanes *L = &R->L;
    struct events heads = {malloc(((size_t)R->nd + 1) * sizeof(struct event)), 0};
    uint32_t *at = calloc((size_t)R->nd + 1, sizeof *at);
    if (!heads.a || !at) {
        free(heads.a), free(at);
        return -1;
    }
    for (uint32_t d = 0; d < R->nd; d++)
        if (L->n[d])
            ev_push(&heads, L->begin[L->off[d]], d);
    uint32_t r = 0;
    double prev = -INFINITY;
    while (heads.n) {
        struct event h = ev_pop(&heads);
        uint32_t d = h.v;
        if (r == 0 || h.t != prev)
            r++, prev = h.t;
        rank[L->off[d] + at[d]++] = r;
        if (at[d] < L->n[d])
            ev_push(&heads, L->begin[L->off[d] + at[d]], d);
    }
    *r_inf = r > 0 && prev == INFINITY ? r : r + 1;
    free(heads.a), free(at);
    return 0;
}

/* The order of the keys (slot time, 0 before the slot's compute / 1 the
 * compute, the node's own time, id), where the slot time is -infinity for
 * inputs, a compute's begin, or +infinity: as (r0, the rank of the slot time;
 * the rest as one uint64; id), sorted by a counting sort on r0 (ids ascend in
 * each rank), then by the rest within each rank. */
struct rest {
    uint64_t k;
    uint32_t v;
};

static uint64_t rest_of(const struct replay *R, uint32_t v)
{
    uint8_t kind = R->g->kind[v];
    return kind == SB_KIND_COMPUTE ? UINT64_MAX
           : kind == SB_KIND_INPUT ? ordered(0)
                                   : ordered(R->t_key[v]);
}

static int rest_less(struct rest a, struct rest b)
{
    return a.k != b.k ? a.k < b.k : a.v < b.v;
}

static int cmp_rest(const void *a, const void *b)
{
    const struct rest *x = a, *y = b;
    return rest_less(*x, *y) ? -1 : rest_less(*y, *x);
}

/* key(a) < key(b) */
static int key_less(const struct replay *R, const uint32_t *r0, uint32_t a, uint32_t b)
{
    if (r0[a] != r0[b])
        return r0[a] < r0[b];
    return rest_less((struct rest){rest_of(R, a), a}, (struct rest){rest_of(R, b), b});
}

static int sort_keys(const struct replay *R, uint32_t *r0, uint32_t *sorted)
{
    const struct sb_graph_view *g = R->g;
    const struct lanes *L = &R->L;
    uint32_t n = g->n_nodes, nc = L->off[R->nd], r_inf, most = 0;
    uint32_t *rank = malloc(((size_t)nc + 1) * sizeof *rank);
    uint32_t *cnt = NULL;
    struct rest *tmp = NULL;
    int rc = -1;
    if (!rank || rank_begins(R, rank, &r_inf))
        goto out;
    if (!(cnt = calloc((size_t)r_inf + 2, sizeof *cnt)))
        goto out;
    for (uint32_t v = 0; v < n; v++) {
        uint32_t d = (uint32_t)R->dev[v], i;
        switch (g->kind[v]) {
        case SB_KIND_INPUT:
            r0[v] = 0;
            break;
        case SB_KIND_COMPUTE:
            r0[v] = rank[L->off[d] + R->slot[v]];
            break;
        case SB_KIND_START: /* before the compute running at its issue */
            i = first_end_after(L, d, R->t_key[v]);
            r0[v] = i < L->n[d] ? rank[L->off[d] + i] : r_inf;
            break;
        default: /* dones after their collective's end, nops when ready */
            i = R->slot[v];
            r0[v] = i < L->n[d] ? rank[L->off[d] + i] : r_inf;
        }
        cnt[r0[v] + 1]++;
    }
    for (uint32_t r = 0; r <= r_inf; r++) {
        most = cnt[r + 1] > most ? cnt[r + 1] : most;
        cnt[r + 1] += cnt[r];
    }
    for (uint32_t v = 0; v < n; v++)
        sorted[cnt[r0[v]]++] = v;
    if (!(tmp = malloc(((size_t)most + 1) * sizeof *tmp)))
        goto out;
    /* cnt[r] is now where rank r + 1 begins */
    for (uint32_t r = 0, lo = 0; r <= r_inf; lo = cnt[r++]) {
        uint32_t m = cnt[r] - lo;
        if (m < 2)
            continue;
        for (uint32_t i = 0; i < m; i++)
            tmp[i] = (struct rest){rest_of(R, sorted[lo + i]), sorted[lo + i]};
        if (m > 16) {
            qsort(tmp, m, sizeof *tmp, cmp_rest);
        } else {
            for (uint32_t i = 1; i < m; i++) {
                struct rest x = tmp[i];
                uint32_t j = i;
                for (; j > 0 && rest_less(x, tmp[j - 1]); j--)
                    tmp[j] = tmp[j - 1];
                tmp[j] = x;
            }
        }
        for (uint32_t i = 0; i < m; i++)
            sorted[lo + i] = tmp[i].v;
    }
    rc = 0;
out:
    free(rank), free(cnt), free(tmp);
    return rc;
}

/* Kahn's algorithm taking the smallest key among the nodes whose inputs are
 * placed: the keys' order wherever it is topological.  When all of it is
 * (every edge goes from a smaller key to a larger one), that order is the
 * answer (the smallest unplaced node is always ready); else a heap of
 * positions in it. */
static int place(const struct replay *R, const uint32_t *r0, const uint32_t *sorted,
                 uint32_t *order)
{
    const struct sb_graph_view *g = R->g;
    uint32_t n = g->n_nodes, k = 0, topo = 1;
    for (uint32_t v = 0; v < n && topo; v++)
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1] && topo; e++)
            topo = key_less(R, r0, v, g->succ[e]);
    if (topo) {
        memcpy(order, sorted, (size_t)n * sizeof *order);
        return 0;
    }
    uint32_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
    uint32_t *left = malloc(((size_t)n + 1) * sizeof *left);
    struct ids h = {malloc(((size_t)n + 1) * sizeof *h.a), 0};
    if (!pos || !left || !h.a) {
        free(pos), free(left), free(h.a);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        pos[sorted[i]] = i;
    for (uint32_t v = 0; v < n; v++) {
        left[v] = g->pred_off[v + 1] - g->pred_off[v];
        if (!left[v])
            ids_push(&h, pos[v]);
    }
    while (h.n) {
        uint32_t v = sorted[ids_pop(&h)];
        order[k++] = v;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--left[g->succ[e]] == 0)
                ids_push(&h, pos[g->succ[e]]);
    }
    free(pos), free(left), free(h.a);
    return 0;
}

static int ready_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    (void)state;
    uint32_t n = g->n_nodes, nd = g->machine->n_devices, nc = 0;
    size_t n1 = (size_t)n + 1;
    struct replay R = {.g = g, .dev = out->device, .nd = nd};
    struct lanes *L = &R.L;
    uint32_t *sorted = NULL;
    int rc = -1;
    R.t_key = malloc(n1 * sizeof *R.t_key);
    R.slot = malloc(n1 * sizeof *R.slot);
    R.left = malloc(n1 * sizeof *R.left);
    R.now = malloc(n1 * sizeof *R.now);
    R.events.a = malloc((2 * (size_t)nd + 1) * sizeof *R.events.a);
    R.comp = calloc(nd, sizeof *R.comp);
    R.comm = calloc(nd, sizeof *R.comm);
    R.comp_busy = calloc(nd, 1);
    R.comm_busy = calloc(nd, 1);
    L->off = calloc((size_t)nd + 1, sizeof *L->off);
    L->n = calloc(nd, sizeof *L->n);
    L->n_at = calloc(nd, sizeof *L->n_at);
    if (!R.t_key || !R.slot || !R.left || !R.now || !R.events.a || !R.comp || !R.comm ||
        !R.comp_busy || !R.comm_busy || !L->off || !L->n || !L->n_at)
        goto out;
    for (uint32_t v = 0; v < n; v++)
        if (g->kind[v] == SB_KIND_COMPUTE)
            R.slot[v] = L->off[out->device[v] + 1]++, nc++;
        else if (g->kind[v] == SB_KIND_START)
            R.comm[out->device[v]].n++; /* counted here, emptied below */
    for (uint32_t d = 0; d < nd; d++) {
        R.comm[d].a = malloc(((size_t)R.comm[d].n + 1) * sizeof *R.comm[d].a);
        R.comm[d].n = 0;
        if (idset_init(&R.comp[d], L->off[d + 1]) || !R.comm[d].a)
            goto out;
        L->off[d + 1] += L->off[d];
    }
    R.comp_v = malloc(((size_t)nc + 1) * sizeof *R.comp_v);
    L->v = malloc(((size_t)nc + 1) * sizeof *L->v);
    L->begin = malloc(((size_t)nc + 1) * sizeof *L->begin);
    L->end = malloc(((size_t)nc + 1) * sizeof *L->end);
    sorted = malloc(n1 * sizeof *sorted);
    if (!R.comp_v || !L->v || !L->begin || !L->end || !sorted)
        goto out;
    for (uint32_t v = 0; v < n; v++)
        if (g->kind[v] == SB_KIND_COMPUTE)
            R.comp_v[L->off[out->device[v]] + R.slot[v]] = v;
    run_replay(&R);
    sort_lanes(&R);
    /* the slot ranks reuse left[], which the replay has brought to 0 */
    rc = sort_keys(&R, R.left, sorted) || place(&R, R.left, sorted, out->order) ? -1 : 0;
out:
    for (uint32_t d = 0; d < nd && R.comp && R.comm; d++)
        free(R.comp[d].w), free(R.comm[d].a);
    free(R.comp), free(R.comp_v), free(R.comm), free(R.comp_busy), free(R.comm_busy);
    free(R.t_key), free(R.slot), free(R.left), free(R.now), free(R.events.a);
    free(L->off), free(L->n), free(L->n_at), free(L->v), free(L->begin), free(L->end);
    free(sorted);
    return rc ? sb_plugin_fail(out->err, out->n_err, "ready: out of memory") : 0;
}

static const struct sb_plugin ready = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "ready",
    .summary = "ASTRA-sim's workload layer: each node as soon as its inputs are done, lowest "
               "id first, one compute and one collective at a time per device",
    .run = ready_run,
};

const struct sb_plugin *sb_plugin_ready(void) { return &ready; }

SB_PLUGIN_EXPORT(sb_plugin_ready)
