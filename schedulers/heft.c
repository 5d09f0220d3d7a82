/* heft: Heterogeneous Earliest Finish Time (Topcuoglu, Hariri and Wu, "Performance-
 * effective and low-complexity task scheduling for heterogeneous computing", IEEE
 * TPDS 13(3), 2002), the list-scheduling reference placement papers report
 * against.
 *
 * 1. Upward rank from mean costs: rank(v) = mean_a t(v, a) + max over successors
 *    s of (mean transfer time of v's output + rank(s)).
 * 2. Nodes in decreasing rank (ties by id, which keeps the order topological
 *    because ids are), each onto the device with the earliest finish time, where
 *    a node may be inserted into an idle gap between nodes already placed there
 *    (the paper's insertion-based policy).
 *
 * Adaptations to the graph model (docs/heft.md): inputs cost nothing and move
 * to the device of their first-placed consumer instead of being placed like
 * tasks (a weight lives where its layer runs); a collective's start and done stay
 * on one device and the done is ready when the collective's duration has passed;
 * pre-assigned devices are kept.  The returned order lists nodes by planned
 * start time, so each device runs them in the planned order. */
#include "heft-impl.h"
#include "schedbench/plugin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One copy of a producer's buffer on another device (docs/heft.md): the
 * simulator makes it when it reaches the first consumer there (the trigger)
 * and queues it on its link behind the copies of earlier triggers. */
struct copy {
    uint32_t dev, next; /* destination; next copy of the same producer */
    double end;         /* when the copy is on dev */
    double trig;        /* key of its trigger */
    double prev_trig;   /* key of the trigger of the copy before it on its
                           link (a new trigger must not pass it) */
};

struct heft {
    const struct sb_graph_view *g;
    uint32_t nd, ns;  /* devices, streams per device */
    uint32_t *root;  /* buffer of each node's output (views share their source's) */
    double *rank;
    double mean_lat, mean_inv_bw; /* mean over ordered pairs of distinct devices */
    double *aft;     /* planned finish (a start's: its issue) */
    double *ast;     /* planned start */
    double *key;     /* place in the order (>= ast; -INFINITY for inputs) */
    double *coll_end; /* starts: when the collective ends */
    int32_t *dev;
    struct lane *lane; /* [nd * ns]: the busy intervals of each stream */
    /* the simulator's links: FIFO in the order of the consumers */
    double *link_free; /* [nd * nd] end of the last copy queued on a->b */
    double *link_trig; /* [nd * nd] key of its trigger */
    /* each device's collective resource (one collective at a time, issued in
     * order: the simulator's default) */
    double *coll_free, *coll_last; /* [nd] */
    /* copies made so far */
    struct copy *cp;
    uint32_t n_cp, cap_cp;
    uint32_t *cp_head; /* [n] first copy of each producer, UINT32_MAX none */
    /* memory (capacity on): bytes each device holds in the plan so far, a
     * buffer counted from its producer or first copy until every use of it
     * is placed (planning order stands in for the order's positions; the
     * result is checked with the simulator's rules, place_dev_peaks) */
    int use_cap;
    double *cap;        /* [nd] the budget used, <= mem_cap_bytes */
    double *resident;   /* [nd] */
    uint32_t *pending;  /* [n] uses of each buffer not placed yet */
    uint8_t *pinned;    /* [n] buffer flagged weight or output (never freed) */
    uint32_t *res_head; /* [n] first residency of each buffer, UINT32_MAX none */
    struct residency { uint32_t dev, next; } *res;
    uint32_t n_res, cap_res;
    /* scratch of one candidate device: links and producers it queues copies for */
    uint32_t stamp;
    uint32_t *link_stamp; /* [nd * nd] */
    double *link_tmp;     /* [nd * nd] */
    uint32_t *node_stamp; /* [n] */
    double *node_tmp;     /* [n] a copy queued for this candidate: its end */
};

static int is_view(const struct sb_graph_view *g, uint32_t v)
{
    return (g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE;
}

static double t_on(const struct heft *H, uint32_t v, uint32_t a)
{
    return H->g->kind[v] == SB_KIND_COMPUTE ? H->g->dev_dur_us[(size_t)v * H->nd + a] : 0;
}

static double mean_cost(const struct heft *H, uint32_t v)
{
    double sum = 0;
    uint32_t k = 0;
    for (uint32_t a = 0; a < H->nd; a++)
        if (isfinite(t_on(H, v, a))) {
            sum += t_on(H, v, a);
            k++;
        }
    return k ? sum / k : 0;
}

static void mean_links(struct heft *H)
{
    const struct sb_machine_view *m = H->g->machine;
    double lat = 0, inv = 0;
    uint32_t k = 0;
    for (uint32_t a = 0; a < H->nd; a++)
        for (uint32_t b = 0; b < H->nd; b++)
            if (a != b) {
                lat += m->link_lat_us[(size_t)a * H->nd + b];
                inv += 1.0 / (m->link_gbps[(size_t)a * H->nd + b] * 1e3);
                k++;
            }
    H->mean_lat = k ? lat / k : 0;
    H->mean_inv_bw = k ? inv / k : 0;
}

/* Upward ranks; ids are topological, so one reverse pass suffices. */
static void upward_rank(struct heft *H)
{
    const struct sb_graph_view *g = H->g;
    for (uint32_t i = g->n_nodes; i-- > 0;) {
        double tail = 0, c = 0;
        if (H->nd > 1 && g->kind[i] != SB_KIND_INPUT)
            c = H->mean_lat + (double)g->out_bytes[H->root[i]] * H->mean_inv_bw;
        for (uint32_t e = g->succ_off[i]; e < g->succ_off[i + 1]; e++) {
            uint32_t s = g->succ[e];
            /* start -> done carries the collective's duration, on one device */
            double w = g->kind[i] == SB_KIND_START && g->partner[i] == s ? g->dur_us[i] : c;
            if (w + H->rank[s] > tail)
                tail = w + H->rank[s];
        }
        H->rank[i] = mean_cost(H, i) + tail;
    }
}

/* qsort has no context argument in C11: sort (rank, id) pairs instead. */
struct key {
    double k;
    uint32_t id, tie;
};

static int cmp_key_desc(const void *x, const void *y)
{
    const struct key *a = x, *b = y;
    if (a->k != b->k)
        return a->k > b->k ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_key_asc(const void *x, const void *y)
{
    const struct key *a = x, *b = y;
    if (a->k != b->k)
        return a->k < b->k ? -1 : 1;
    return a->tie < b->tie ? -1 : a->tie > b->tie;
}

static struct copy *copy_find(const struct heft *H, uint32_t p, uint32_t d)
{
    for (uint32_t k = H->cp_head[p]; k != UINT32_MAX; k = H->cp[k].next)
        if (H->cp[k].dev == d)
            return &H->cp[k];
    return NULL;
}

static int copy_add(struct heft *H, uint32_t p, struct copy c)
{
    if (H->n_cp == H->cap_cp) {
        uint32_t cap = H->cap_cp ? 2 * H->cap_cp : 64;
        struct copy *n = realloc(H->cp, cap * sizeof *n);
        if (!n)
            return -1;
        H->cp = n, H->cap_cp = cap;
    }
    c.next = H->cp_head[p];
    H->cp[H->n_cp] = c;
    H->cp_head[p] = H->n_cp++;
    return 0;
}

/* The earliest v may start on device a by the simulator's rules, its stream
 * aside (*ready): each input's finish, or its copy's arrival, plus the edge
 * latency, and a done's collective end.  And the least key v's position in
 * the order may have (*key, docs/heft.md): after its inputs; after the
 * triggers of the copies already queued on a link v queues a copy on, and
 * after the starts already issued on a when v is a start (the simulator's
 * FIFOs take them in order); after the trigger of the copy before it when v
 * may take over a copy made for a later consumer.  With commit (v's key is
 * `key_v`) the copies are recorded. */
static int inputs_ready(struct heft *H, uint32_t v, uint32_t a, int commit, double key_v,
                        double *ready, double *key)
{
    const struct sb_graph_view *g = H->g;
    const struct sb_machine_view *m = g->machine;
    double t = 0, k = -INFINITY;
    uint32_t e = g->pred_off[v];
    H->stamp++;
    if (g->kind[v] == SB_KIND_DONE) { /* its own start: the collective's end */
        t = H->coll_end[g->pred[e]];
        k = H->key[g->pred[e]];
        e++;
    }
    if (g->kind[v] == SB_KIND_START && H->coll_last[a] > k)
        k = H->coll_last[a];
    for (; e < g->pred_off[v + 1]; e++) {
        uint32_t p = g->pred[e], src = (uint32_t)H->dev[p];
        double r;
        if (H->key[p] > k)
            k = H->key[p];
        if (g->kind[p] == SB_KIND_INPUT && H->dev[p] < 0) {
            r = 0; /* it goes with v (place()) */
        } else if (src == a || m->can_read[(size_t)a * H->nd + src]) {
            r = H->aft[p];
        } else if (H->node_stamp[p] == H->stamp) {
            r = H->node_tmp[p]; /* read twice: one copy */
        } else {
            struct copy *c = copy_find(H, p, a);
            size_t L = (size_t)src * H->nd + a;
            if (c) {
                r = c->end;
                if (c->prev_trig > k)
                    k = c->prev_trig;
                if (commit && key_v < c->trig)
                    c->trig = key_v;
            } else {
                if (H->link_stamp[L] != H->stamp) {
                    H->link_stamp[L] = H->stamp;
                    H->link_tmp[L] = H->link_free[L];
                }
                double begin = H->aft[p] > H->link_tmp[L] ? H->aft[p] : H->link_tmp[L];
                r = begin + m->link_lat_us[L] +
                    (double)g->out_bytes[H->root[p]] / (m->link_gbps[L] * 1e3);
                H->link_tmp[L] = r;
                if (H->link_trig[L] > k)
                    k = H->link_trig[L];
                if (commit) {
                    if (copy_add(H, p, (struct copy){a, 0, r, key_v, H->link_trig[L]}))
                        return -1;
                    H->link_free[L] = r;
                    H->link_trig[L] = key_v;
                }
            }
            H->node_stamp[p] = H->stamp;
            H->node_tmp[p] = r;
        }
        r += g->edge_lat_us;
        if (r > t)
            t = r;
    }
    *ready = t;
    *key = k;
    return 0;
}

/* Earliest start >= ready of a gap of lane L for w where v can also keep
 * its place in the order: its key, at least kmin and the key of the slot
 * before, must stay below the key of the slot after (which runs after v on
 * the stream); a gap that fails is passed over.  The key is the planned
 * start where that fits, so keys follow time as far as the FIFOs allow. */
static double lane_slot(const struct heft *H, const struct lane *L, double ready, double w,
                        double kmin, struct lane_pos *at, double *key)
{
    /* a lane's keys rise with its slots: v goes after every slot whose key is
     * <= kmin, so begin the search at the end of the last of them (bisect the
     * blocks by their last key, then the block) */
    uint32_t lo = 0, hi = L->n_blocks;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct lane_block *B = L->b[mid];
        if (H->key[B->s[B->n - 1].id] <= kmin)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 || (lo < L->n_blocks && H->key[L->b[lo]->s[0].id] <= kmin)) {
        /* block lo holds the first slot with a key > kmin (or none does) */
        const struct slot *last;
        if (lo == L->n_blocks) {
            const struct lane_block *B = L->b[lo - 1];
            last = &B->s[B->n - 1];
        } else {
            const struct lane_block *B = L->b[lo];
            uint32_t i = 0, j = B->n;
            while (i < j) {
                uint32_t mid = i + (j - i) / 2;
                if (H->key[B->s[mid].id] <= kmin)
                    i = mid + 1;
                else
                    j = mid;
            }
            last = i ? &B->s[i - 1] : &L->b[lo - 1]->s[L->b[lo - 1]->n - 1];
        }
        if (last->end > ready)
            ready = last->end;
    }
    for (;;) {
        double est = lane_earliest_gap(L, ready, w, at);
        const struct slot *prev = lane_prev_slot(L, *at), *next = lane_next_slot(L, *at);
        double k = kmin;
        if (prev && H->key[prev->id] > k)
            k = H->key[prev->id];
        if (!next || k < H->key[next->id]) {
            /* the planned start when it keeps v before next, else the least
             * key v may have (an instant at the very start of next) */
            *key = est > k && (!next || est < H->key[next->id]) ? est : k;
            return est;
        }
        ready = next->end; /* > est >= ready: past the slot v cannot precede */
    }
}

static int resident_on(const struct heft *H, uint32_t r, uint32_t d)
{
    for (uint32_t k = H->res_head[r]; k != UINT32_MAX; k = H->res[k].next)
        if (H->res[k].dev == d)
            return 1;
    return 0;
}

static int resident_add(struct heft *H, uint32_t r, uint32_t d)
{
    if (resident_on(H, r, d) || !H->g->out_bytes[r])
        return 0;
    if (H->n_res == H->cap_res) {
        uint32_t cap = H->cap_res ? 2 * H->cap_res : 64;
        struct residency *n = realloc(H->res, cap * sizeof *n);
        if (!n)
            return -1;
        H->res = n, H->cap_res = cap;
    }
    H->res[H->n_res] = (struct residency){d, H->res_head[r]};
    H->res_head[r] = H->n_res++;
    H->resident[d] += (double)H->g->out_bytes[r];
    return 0;
}

static void resident_free(struct heft *H, uint32_t r)
{
    if (H->pinned[r])
        return;
    for (uint32_t k = H->res_head[r]; k != UINT32_MAX; k = H->res[k].next)
        H->resident[H->res[k].dev] -= (double)H->g->out_bytes[r];
    H->res_head[r] = UINT32_MAX;
}

/* One use of buffer r placed; the last frees it everywhere unless pinned. */
static void resident_use(struct heft *H, uint32_t r)
{
    if (H->pending[r] && --H->pending[r] == 0)
        resident_free(H, r);
}

/* Bytes v would add to device a: its own buffer, the inputs that go with it,
 * and the copies it needs there. */
static double mem_need(const struct heft *H, uint32_t v, uint32_t a)
{
    const struct sb_graph_view *g = H->g;
    double need = H->root[v] == v ? (double)g->out_bytes[v] : 0;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
        uint32_t p = g->pred[e], r = H->root[p];
        if (H->dev[p] < 0 || (!resident_on(H, r, a) &&
                              (uint32_t)H->dev[p] != a &&
                              !g->machine->can_read[(size_t)a * H->nd + (uint32_t)H->dev[p]]))
            need += (double)g->out_bytes[r];
    }
    return need;
}

static int place(struct heft *H, uint32_t v)
{
    const struct sb_graph_view *g = H->g;
    uint32_t lo = 0, hi = H->nd, best = 0, st = g->stream[v];
    struct lane_pos best_at = {0, 0};
    double best_eft = INFINITY, best_est = 0, best_key = 0, ready, kmin;
    if (g->device[v] >= 0)
        lo = (uint32_t)g->device[v], hi = lo + 1;
    else if (g->kind[v] == SB_KIND_DONE)
        lo = (uint32_t)H->dev[g->partner[v]], hi = lo + 1;
    for (uint32_t a = lo; a < hi; a++) {
        double w = t_on(H, v, a), key;
        struct lane_pos at = {0, 0};
        if (!isfinite(w))
            continue;
        if (H->use_cap && lo + 1 < hi && H->resident[a] + mem_need(H, v, a) > H->cap[a])
            continue; /* does not fit: another device will, or none (below) */
        if (inputs_ready(H, v, a, 0, 0, &ready, &kmin))
            return -1;
        double est = lane_slot(H, &H->lane[(size_t)a * H->ns + st], ready, w, kmin, &at, &key);
        /* a collective's finish is its end on the device's resource */
        double eft = g->kind[v] == SB_KIND_START
                         ? (est > H->coll_free[a] ? est : H->coll_free[a]) + g->dur_us[v]
                         : est + w;
        if (eft < best_eft) {
            best_eft = eft;
            best_est = est;
            best_key = key;
            best = a;
            best_at = at;
        }
    }
    if (!isfinite(best_eft) && H->use_cap && lo + 1 < hi) {
        /* no device has room: the one with the most left (the check after
         * the plan reports an overflow) */
        double room = -INFINITY;
        uint32_t pick = UINT32_MAX;
        for (uint32_t a = lo; a < hi; a++)
            if (isfinite(t_on(H, v, a)) && H->cap[a] - H->resident[a] - mem_need(H, v, a) > room)
                room = H->cap[a] - H->resident[a] - mem_need(H, v, a), pick = a;
        if (pick != UINT32_MAX) {
            double w = t_on(H, v, pick), key;
            if (inputs_ready(H, v, pick, 0, 0, &ready, &kmin))
                return -1;
            best_est = lane_slot(H, &H->lane[(size_t)pick * H->ns + st], ready, w, kmin,
                                 &best_at, &key);
            best_eft = g->kind[v] == SB_KIND_START
                           ? (best_est > H->coll_free[pick] ? best_est : H->coll_free[pick]) +
                                 g->dur_us[v]
                           : best_est + w;
            best_key = key;
            best = pick;
        }
    }
    if (!isfinite(best_eft)) { /* no device can run v: leave it where validation reports it */
        best = lo;
        if (inputs_ready(H, v, lo, 0, 0, &ready, &kmin))
            return -1;
        best_est = best_eft = ready;
        best_key = ready > kmin ? ready : kmin;
    } else if (lane_insert(&H->lane[(size_t)best * H->ns + st], best_at, best_est,
                           best_est + t_on(H, v, best), v)) {
        return -1;
    }
    if (inputs_ready(H, v, best, 1, best_key, &ready, &kmin))
        return -1;
    H->dev[v] = (int32_t)best;
    H->ast[v] = best_est;
    H->key[v] = best_key;
    H->aft[v] = best_est + (isfinite(t_on(H, v, best)) ? t_on(H, v, best) : 0);
    if (g->kind[v] == SB_KIND_START) {
        H->coll_end[v] = best_eft;
        H->coll_free[best] = best_eft;
        H->coll_last[best] = best_key;
    }
    /* an input not placed yet goes with its first-placed consumer; later
     * consumers elsewhere pay its copy */
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
        if (g->kind[g->pred[e]] == SB_KIND_INPUT && H->dev[g->pred[e]] < 0)
            H->dev[g->pred[e]] = (int32_t)best;
    if (H->use_cap) {
        uint32_t r = H->root[v], d = (uint32_t)H->dev[r];
        if (H->dev[r] < 0 || d == best || g->machine->can_read[(size_t)best * H->nd + d])
            d = H->dev[r] < 0 ? best : d;
        else
            d = best; /* a view on another device holds its buffer there */
        if (resident_add(H, r, d))
            return -1;
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t p = g->pred[e], src = (uint32_t)H->dev[p];
            uint32_t at = src == best || g->machine->can_read[(size_t)best * H->nd + src]
                              ? (uint32_t)H->dev[H->root[p]] : best;
            if (resident_add(H, H->root[p], at))
                return -1;
        }
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            resident_use(H, H->root[g->pred[e]]);
        if (H->root[v] != v)
            resident_use(H, H->root[v]);
        else if (!H->pending[v])
            resident_free(H, v); /* nobody reads it: freed at once */
    }
    return 0;
}

/* Inputs nobody reads stay on device 0. */
static void place_inputs(struct heft *H)
{
    for (uint32_t v = 0; v < H->g->n_nodes; v++)
        if (H->dev[v] < 0)
            H->dev[v] = 0;
}

static int plan(const struct sb_graph_view *g, struct sb_schedule *out, double *predicted_us,
                const double *cap)
{
    uint32_t n = g->n_nodes;
    struct heft H = {.g = g, .nd = g->machine->n_devices, .ns = g->n_streams ? g->n_streams : 1};
    for (uint32_t v = 0; v < n; v++)
        if (g->device[v] >= (int32_t)H.nd)
            return sb_plugin_fail(out->err, out->n_err,
                                  "heft: node %u is pre-assigned to device %d; the machine "
                                  "has %u (run it with its --machine)", v, g->device[v], H.nd);
    H.root = malloc(((size_t)n + 1) * sizeof *H.root);
    H.rank = malloc(((size_t)n + 1) * sizeof *H.rank);
    H.aft = calloc((size_t)n + 1, sizeof *H.aft);
    H.ast = calloc((size_t)n + 1, sizeof *H.ast);
    H.dev = malloc(((size_t)n + 1) * sizeof *H.dev);
    H.lane = calloc((size_t)H.nd * H.ns, sizeof *H.lane);
    H.coll_end = calloc((size_t)n + 1, sizeof *H.coll_end);
    H.key = malloc(((size_t)n + 1) * sizeof *H.key);
    H.cp_head = malloc(((size_t)n + 1) * sizeof *H.cp_head);
    H.node_stamp = calloc((size_t)n + 1, sizeof *H.node_stamp);
    H.node_tmp = malloc(((size_t)n + 1) * sizeof *H.node_tmp);
    H.link_free = calloc((size_t)H.nd * H.nd, sizeof *H.link_free);
    H.link_trig = malloc((size_t)H.nd * H.nd * sizeof *H.link_trig);
    H.link_stamp = calloc((size_t)H.nd * H.nd, sizeof *H.link_stamp);
    H.link_tmp = malloc((size_t)H.nd * H.nd * sizeof *H.link_tmp);
    H.coll_free = calloc(H.nd, sizeof *H.coll_free);
    H.coll_last = malloc(H.nd * sizeof *H.coll_last);
    struct key *k = malloc(((size_t)n + 1) * sizeof *k);
    int rc = 0;
    if (!H.root || !H.rank || !H.aft || !H.ast || !H.dev || !H.lane || !H.coll_end ||
        !H.cp_head || !H.key || !H.node_stamp || !H.node_tmp || !H.link_free || !H.link_trig ||
        !H.link_stamp || !H.link_tmp || !H.coll_free || !H.coll_last || !k) {
        rc = -1;
        goto out;
    }
    for (size_t L = 0; L < (size_t)H.nd * H.nd; L++)
        H.link_trig[L] = -INFINITY;
    for (uint32_t a = 0; a < H.nd; a++)
        H.coll_last[a] = -INFINITY;
    if (cap) {
        H.use_cap = 1;
        H.cap = (double *)cap;
        H.resident = calloc(H.nd, sizeof *H.resident);
        H.pending = calloc((size_t)n + 1, sizeof *H.pending);
        H.pinned = calloc((size_t)n + 1, 1);
        H.res_head = malloc(((size_t)n + 1) * sizeof *H.res_head);
        if (!H.resident || !H.pending || !H.pinned || !H.res_head) {
            rc = -1;
            goto out;
        }
    }
    for (uint32_t v = 0; v < n; v++) {
        H.root[v] = is_view(g, v) ? H.root[g->pred[g->pred_off[v]]] : v;
        H.dev[v] = g->device[v];
        H.cp_head[v] = UINT32_MAX;
        H.key[v] = -INFINITY;
    }
    if (cap) /* uses of each buffer: its readers' edges, and its views */
        for (uint32_t v = 0; v < n; v++) {
            H.res_head[v] = UINT32_MAX;
            H.pending[H.root[v]] += g->succ_off[v + 1] - g->succ_off[v] + (H.root[v] != v);
            if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT))
                H.pinned[H.root[v]] = 1;
        }
    mean_links(&H);
    upward_rank(&H);
    for (uint32_t v = 0; v < n; v++)
        k[v] = (struct key){H.rank[v], v, 0};
    qsort(k, n, sizeof *k, cmp_key_desc);
    for (uint32_t i = 0; i < n && !rc; i++)
        if (g->kind[k[i].id] != SB_KIND_INPUT)
            rc = place(&H, k[i].id);
    if (rc)
        goto out;
    place_inputs(&H);
    /* by key (the planned start unless a FIFO holds the node back in the
     * order, docs/heft.md); ties in rank order, which puts producers first */
    for (uint32_t i = 0; i < n; i++)
        k[i] = (struct key){H.key[k[i].id], k[i].id, i};
    qsort(k, n, sizeof *k, cmp_key_asc);
    for (uint32_t i = 0; i < n; i++) {
        out->order[i] = k[i].id;
        out->device[k[i].id] = H.dev[k[i].id];
    }
    if (predicted_us) {
        *predicted_us = 0;
        for (uint32_t v = 0; v < n; v++)
            if (g->kind[v] != SB_KIND_INPUT && H.aft[v] > *predicted_us)
                *predicted_us = H.aft[v];
    }
out:
    if (H.lane)
        for (size_t a = 0; a < (size_t)H.nd * H.ns; a++)
            lane_free(&H.lane[a]);
    free(H.lane), free(H.root), free(H.rank), free(H.aft), free(H.ast), free(H.dev), free(k);
    free(H.coll_end), free(H.key), free(H.cp_head), free(H.node_stamp), free(H.node_tmp), free(H.cp);
    free(H.link_free), free(H.link_trig), free(H.link_stamp), free(H.link_tmp);
    free(H.coll_free), free(H.coll_last);
    free(H.resident), free(H.pending), free(H.pinned), free(H.res_head), free(H.res);
    return rc ? sb_plugin_fail(out->err, out->n_err, "heft: out of memory") : 0;
}

/* With capacity on, plan against each device's memory; when the simulator's
 * rules (place_dev_peaks) still find a device over its capacity, plan again
 * with that device's budget cut by its excess, a few times, then give up and
 * say so (the row's status). */
int sb_heft_plan(const struct sb_graph_view *g, struct sb_schedule *out, double *predicted_us,
                 int capacity)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t nd = m->n_devices, n = g->n_nodes, limited = 0;
    for (uint32_t a = 0; a < nd; a++)
        limited |= m->mem_cap_bytes[a] != SB_MEM_UNLIMITED;
    if (!capacity || !limited)
        return plan(g, out, predicted_us, NULL);
    double *cap = malloc(nd * sizeof *cap);
    uint64_t *peak = malloc(nd * sizeof *peak);
    uint32_t *root = malloc(((size_t)n + 1) * sizeof *root);
    int rc = -1;
    if (!cap || !peak || !root) {
        sb_plugin_fail(out->err, out->n_err, "heft: out of memory");
        goto out;
    }
    for (uint32_t v = 0; v < n; v++)
        root[v] = is_view(g, v) ? root[g->pred[g->pred_off[v]]] : v;
    for (uint32_t a = 0; a < nd; a++)
        cap[a] = m->mem_cap_bytes[a] == SB_MEM_UNLIMITED ? INFINITY : (double)m->mem_cap_bytes[a];
    for (uint32_t attempt = 0; attempt < 6; attempt++) {
        uint32_t worst = UINT32_MAX;
        if (plan(g, out, predicted_us, cap))
            goto out;
        if (place_dev_peaks(g, out->order, out->device, root, peak)) {
            sb_plugin_fail(out->err, out->n_err, "heft: out of memory");
            goto out;
        }
        for (uint32_t a = 0; a < nd; a++)
            if (peak[a] > m->mem_cap_bytes[a]) {
                cap[a] *= 0.95 * (double)m->mem_cap_bytes[a] / (double)peak[a];
                if (worst == UINT32_MAX || peak[a] - m->mem_cap_bytes[a] >
                                               peak[worst] - m->mem_cap_bytes[worst])
                    worst = a;
            }
        if (worst == UINT32_MAX) {
            rc = 0;
            goto out;
        }
        if (attempt == 5)
            sb_plugin_fail(out->err, out->n_err,
                           "heft: no placement within device memory found: %s needs %llu "
                           "bytes, capacity %llu (capacity=0 ignores memory)",
                           m->dev_name[worst], (unsigned long long)peak[worst],
                           (unsigned long long)m->mem_cap_bytes[worst]);
    }
out:
    free(cap), free(peak), free(root);
    return rc;
}

static const struct sb_param heft_params[] = {
    {"capacity", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "keep each device within its mem_bytes (the machine file's); 0 ignores memory"},
};

static int heft_init(const double *p, void **state, char *err, size_t n_err)
{
    int *c = malloc(sizeof *c);
    if (!c)
        return sb_plugin_fail(err, n_err, "heft: out of memory");
    *c = p[0] != 0;
    *state = c;
    return 0;
}

static void heft_free(void *state) { free(state); }

static int heft_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    return sb_heft_plan(g, out, NULL, state ? *(const int *)state : 1);
}

static const struct sb_plugin heft = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "heft",
    .summary = "HEFT (Topcuoglu et al. 2002): upward rank, insertion-based earliest "
               "finish time placement",
    .params = heft_params,
    .n_params = 1,
    .init = heft_init,
    .run = heft_run,
    .free = heft_free,
};

const struct sb_plugin *sb_plugin_heft(void) { return &heft; }

SB_PLUGIN_EXPORT(sb_plugin_heft)
