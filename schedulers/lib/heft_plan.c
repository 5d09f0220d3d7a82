/* heft: the busy intervals of one device and the search for an idle gap
 * (shared with tests/test_heft.c, which checks the index against a plain
 * scan), the per-device memory of a placement by the simulator's rules, and
 * heft's planner itself, which schedulers/heft.c wraps as the policy and
 * schedulers/dp.c runs for its incumbent (schedbench/policy.h declares what
 * other files use).
 *
 * HEFT's insertion policy asks, for each node and device: the earliest start
 * t >= ready such that [t, t + w) is idle.  A sorted array answers it by
 * scanning every slot after `ready`; on one device with a million nodes most
 * nodes are ready long before the device is free, so the scan crosses most of
 * the lane and the policy becomes quadratic.  Here the slots live in blocks of
 * at most SB_HEFT_LANE_BLOCK, and a max-tree over the blocks holds the widest gap
 * before a slot of each block, so whole blocks without a wide enough gap are
 * skipped: a query costs O(SB_HEFT_LANE_BLOCK + log n), an insertion
 * O(SB_HEFT_LANE_BLOCK), and a new block rebuilds the tree (O(n / SB_HEFT_LANE_BLOCK)).
     *
     * The answer is exactly the scan's: the tree only prunes (with a margin for
     * rounding), and every candidate slot is tested with the scan's own comparison,
     * end[i-1] + w <= begin[i]. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"


static double lane_prev_end(const struct sb_heft_lane *L, uint32_t j, uint32_t i)
{
    if (i > 0)
        return L->b[j]->s[i - 1].end;
    if (j > 0)
        return L->b[j - 1]->s[L->b[j - 1]->n - 1].end;
    return -INFINITY;
}

static void lane_block_gap(struct sb_heft_lane *L, uint32_t j)
{
    struct sb_heft_lane_block *B = L->b[j];
    double g = -INFINITY;
    for (uint32_t i = 0; i < B->n; i++) {
        double d = B->s[i].begin - lane_prev_end(L, j, i);
        if (d > g)
            g = d;
    }
    B->max_gap = g;
}

static void lane_tree_set(struct sb_heft_lane *L, uint32_t j)
{
    uint32_t x = L->n_leaves + j;
    L->tree[x] = L->b[j]->max_gap;
    for (x /= 2; x >= 1; x /= 2)
        L->tree[x] = L->tree[2 * x] > L->tree[2 * x + 1] ? L->tree[2 * x] : L->tree[2 * x + 1];
}

static int lane_tree_build(struct sb_heft_lane *L)
{
    uint32_t leaves = L->n_leaves ? L->n_leaves : 1;
    while (leaves < L->n_blocks)
        leaves *= 2;
    if (leaves != L->n_leaves) {
        double *t = realloc(L->tree, 2 * (size_t)leaves * sizeof *t);
        if (!t)
            return -1;
        L->tree = t, L->n_leaves = leaves;
    }
    for (uint32_t j = 0; j < L->n_leaves; j++)
        L->tree[L->n_leaves + j] = j < L->n_blocks ? L->b[j]->max_gap : -INFINITY;
    for (uint32_t x = L->n_leaves; x-- > 1;)
        L->tree[x] = L->tree[2 * x] > L->tree[2 * x + 1] ? L->tree[2 * x] : L->tree[2 * x + 1];
    return 0;
}

/* First block >= j0 whose max_gap is >= thr, or n_blocks. */
static uint32_t lane_next_block(const struct sb_heft_lane *L, uint32_t j0, double thr)
{
    if (j0 >= L->n_blocks)
        return L->n_blocks;
    uint32_t x = L->n_leaves + j0;
    if (L->tree[x] >= thr)
        return j0;
    /* climb until a right sibling holds a candidate, then descend leftmost */
    for (;;) {
        if (x == 1)
            return L->n_blocks;
        if (!(x & 1) && L->tree[x + 1] >= thr) {
            x++;
            break;
        }
        x /= 2;
    }
    while (x < L->n_leaves)
        x = L->tree[2 * x] >= thr ? 2 * x : 2 * x + 1;
    uint32_t j = x - L->n_leaves;
    return j < L->n_blocks ? j : L->n_blocks;
}

static double lane_block_end(const struct sb_heft_lane *L, uint32_t j)
{
    return L->b[j]->s[L->b[j]->n - 1].end;
}

/* Earliest start >= ready of an idle gap of length w >= 0 (w = 0: an
 * instant, which fits anywhere outside a busy slot's interior); *at = where
 * the slot would be inserted. */
double sb_heft_lane_earliest_gap(const struct sb_heft_lane *L, double ready, double w,
                                 struct sb_heft_lane_pos *at)
{
    /* First block, then first slot, ending after ready.  Most nodes are ready
     * near the end of the lane, so both searches gallop back from the end
     * (steps 1, 2, 4, ...) and then bisect the last step: O(log distance),
     * and the few cache lines near the end instead of a bisection's spread. */
    if (ready >= L->last_end) {
        *at = (struct sb_heft_lane_pos){L->n_blocks ? L->n_blocks - 1 : 0,
                                L->n_blocks ? L->b[L->n_blocks - 1]->n : 0};
        return ready;
    }
    /* the last block ends after ready (its last end is last_end) */
    uint32_t hi = L->n_blocks - 1, step = 1, lo;
    while (hi >= step && lane_block_end(L, hi - step) > ready)
        hi -= step, step *= 2;
    lo = hi >= step ? hi - step + 1 : 0;
    while (lo < hi) { /* block hi ends after ready; find the first that does */
        uint32_t mid = lo + (hi - lo) / 2;
        if (lane_block_end(L, mid) <= ready)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t j = lo;
    const struct sb_heft_lane_block *B = L->b[j];
    uint32_t i = B->n - 1; /* B's last slot ends after ready */
    step = 1;
    while (i >= step && B->s[i - step].end > ready)
        i -= step, step *= 2;
    lo = i >= step ? i - step + 1 : 0;
    while (lo < i) {
        uint32_t mid = lo + (i - lo) / 2;
        if (B->s[mid].end <= ready)
            lo = mid + 1;
        else
            i = mid;
    }
    /* the first slot after ready: the gap runs from ready itself */
    if (ready + w <= B->s[i].begin) {
        *at = (struct sb_heft_lane_pos){j, i};
        return ready;
    }
    /* from there on the gap before slot i runs from end[i-1]: the rest of this
     * block, then the blocks the tree says may hold a wide enough gap */
    double thr = w - 1e-9 * (w + L->last_end); /* margin: rounding of end + w */
    if (B->max_gap < thr) /* nothing wide enough in the rest of this block */
        j = lane_next_block(L, j + 1, thr), i = 0;
    else
        i++;
    for (;; j = lane_next_block(L, j + 1, thr), i = 0) {
        if (j >= L->n_blocks)
            break;
        B = L->b[j];
        for (; i < B->n; i++)
            if (lane_prev_end(L, j, i) + w <= B->s[i].begin) {
                *at = (struct sb_heft_lane_pos){j, i};
                return lane_prev_end(L, j, i);
            }
    }
    *at = (struct sb_heft_lane_pos){L->n_blocks - 1, L->b[L->n_blocks - 1]->n};
    return L->last_end;
}

static struct sb_heft_lane_block *lane_block_new(void)
{
    struct sb_heft_lane_block *B = malloc(sizeof *B);
    if (B)
        B->n = 0, B->max_gap = -INFINITY;
    return B;
}

/* Room for a block at index j (blocks from j on move up one). */
static int lane_open_block(struct sb_heft_lane *L, uint32_t j, struct sb_heft_lane_block *B)
{
    if (L->n_blocks == L->cap_blocks) {
        uint32_t cap = L->cap_blocks ? 2 * L->cap_blocks : 16;
        struct sb_heft_lane_block **nb = realloc(L->b, cap * sizeof *nb);
        if (!nb)
            return -1;
        L->b = nb, L->cap_blocks = cap;
    }
    memmove(&L->b[j + 1], &L->b[j], (L->n_blocks - j) * sizeof *L->b);
    L->b[j] = B;
    L->n_blocks++;
    return 0;
}

/* Insert [begin, end) at `at` (from sb_heft_lane_earliest_gap). */
int sb_heft_lane_insert(struct sb_heft_lane *L, struct sb_heft_lane_pos at, double begin, double end,
                        uint32_t id)
{
    int rebuild = 0;
    if (L->n_blocks == 0) {
        struct sb_heft_lane_block *B = lane_block_new();
        if (!B || lane_open_block(L, 0, B)) {
            free(B);
            return -1;
        }
        at = (struct sb_heft_lane_pos){0, 0};
        rebuild = 1;
    }
    struct sb_heft_lane_block *B = L->b[at.blk];
    if (B->n == SB_HEFT_LANE_BLOCK) {
        struct sb_heft_lane_block *N = lane_block_new();
        if (!N || lane_open_block(L, at.blk + 1, N)) {
            free(N);
            return -1;
        }
        /* appending to the last block starts a new one; otherwise split in half */
        uint32_t keep = at.blk + 2 == L->n_blocks && at.i == B->n ? B->n : B->n / 2;
        N->n = B->n - keep;
        memcpy(N->s, &B->s[keep], N->n * sizeof *N->s);
        B->n = keep;
        if (at.i >= keep)
            at.blk++, at.i -= keep, B = N;
        rebuild = 1;
    }
    int append = at.i == B->n;
    memmove(&B->s[at.i + 1], &B->s[at.i], (B->n - at.i) * sizeof *B->s);
    B->s[at.i] = (struct sb_heft_slot){begin, end, id};
    B->n++;
    if (end > L->last_end)
        L->last_end = end;
    if (append && !rebuild && at.blk + 1 == L->n_blocks) {
        /* the common case: a new last slot adds one gap and changes no other */
        double d = begin - lane_prev_end(L, at.blk, at.i);
        if (d > B->max_gap) {
            B->max_gap = d;
            lane_tree_set(L, at.blk);
        }
        return 0;
    }
    /* gaps that moved: this block's, the next block's first, and after a
     * split the previous half's */
    if (at.blk > 0)
        lane_block_gap(L, at.blk - 1);
    lane_block_gap(L, at.blk);
    if (at.blk + 1 < L->n_blocks)
        lane_block_gap(L, at.blk + 1);
    if (rebuild || L->n_blocks > L->n_leaves)
        return lane_tree_build(L);
    if (at.blk > 0)
        lane_tree_set(L, at.blk - 1);
    lane_tree_set(L, at.blk);
    if (at.blk + 1 < L->n_blocks)
        lane_tree_set(L, at.blk + 1);
    return 0;
}

/* The slots a new slot at `at` would go between (NULL: none). */
static const struct sb_heft_slot *lane_next_slot(const struct sb_heft_lane *L, struct sb_heft_lane_pos at)
{
    if (at.blk >= L->n_blocks || at.i >= L->b[at.blk]->n)
        return NULL;
    return &L->b[at.blk]->s[at.i];
}

static const struct sb_heft_slot *lane_prev_slot(const struct sb_heft_lane *L, struct sb_heft_lane_pos at)
{
    if (at.blk >= L->n_blocks)
        return NULL;
    if (at.i > 0)
        return &L->b[at.blk]->s[at.i - 1];
    if (at.blk > 0)
        return &L->b[at.blk - 1]->s[L->b[at.blk - 1]->n - 1];
    return NULL;
}

void sb_heft_lane_free(struct sb_heft_lane *L)
{
    for (uint32_t j = 0; j < L->n_blocks; j++)
        free(L->b[j]);
    free(L->b), free(L->tree);
    memset(L, 0, sizeof *L);
}


/* ---- the planner (schedulers/heft.c's policy; dp takes its plan as an
 * incumbent, docs/dp.md) ---------------------------------------------------- */

/* One copy of a producer's buffer on another device (docs/heft.md): the
 * simulator makes it when it reaches the first consumer there (the trigger)
 * and queues it on its link behind the copies of earlier triggers. */
struct hp_copy {
    uint32_t dev, next; /* destination; next copy of the same producer */
    double end;         /* when the copy is on dev */
    double trig;        /* key of its trigger */
    double prev_trig;   /* key of the trigger of the copy before it on its
                           link (a new trigger must not pass it) */
};

struct hp_heft {
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
    struct sb_heft_lane *lane; /* [nd * ns]: the busy intervals of each stream */
    /* the simulator's links: FIFO in the order of the consumers */
    double *link_free; /* [nd * nd] end of the last copy queued on a->b */
    double *link_trig; /* [nd * nd] key of its trigger */
    /* each device's collective resource (one collective at a time, issued in
     * order: the simulator's default) */
    double *coll_free, *coll_last; /* [nd] */
    /* resources (docs/machines.md, "Resources"; NULL when the machine has
     * none): each device's use over time, as the simulator keeps it, and the
     * largest key of a node holding resources there.  A node that holds
     * resources on a gets a key at least that, so the simulator adds the
     * nodes of a device's profile in the order heft did and finds the same
     * starts. */
    struct hp_prof *prof; /* [nd] */
    double *res_key;      /* [nd] */
    /* copies made so far */
    struct hp_copy *cp;
    uint32_t n_cp, cap_cp;
    uint32_t *cp_head; /* [n] first copy of each producer, UINT32_MAX none */
    /* memory (capacity on): bytes each device holds in the plan so far, a
     * buffer counted from its producer or first copy until every use of it
     * is placed (planning order stands in for the order's positions; the
     * result is checked with the simulator's rules, sb_mem_dev_peaks) */
    int use_cap;
    double *cap;        /* [nd] the budget used, <= mem_cap_bytes */
    double *resident;   /* [nd] */
    uint32_t *pending;  /* [n] uses of each buffer not placed yet */
    uint8_t *pinned;    /* [n] buffer flagged weight or output (never freed) */
    uint32_t *res_head; /* [n] first residency of each buffer, UINT32_MAX none */
    struct hp_residency { uint32_t dev, next; } *res;
    uint32_t n_res, cap_res;
    /* scratch of one candidate device: links and producers it queues copies for */
    uint32_t stamp;
    uint32_t *link_stamp; /* [nd * nd] */
    double *link_tmp;     /* [nd * nd] */
    uint32_t *node_stamp; /* [n] */
    double *node_tmp;     /* [n] a copy queued for this candidate: its end */
};

/* A device's resources in use over time, the simulator's step function
 * (sim.c, "resources on a device"): breakpoints t[0] = 0 < t[1] < ..., and
 * use[j * K + k] of resource k on [t[j], t[j+1]); the last step holds
 * nothing.  Same comparisons as the simulator, so the same starts. */
struct hp_prof {
    uint32_t n, cap;
    double *t;
    uint32_t *use;
};

static uint32_t hp_prof_step(const struct hp_prof *P, double x)
{
    uint32_t lo = 0, hi = P->n - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo + 1) / 2;
        if (P->t[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

static double hp_prof_fit(const struct hp_prof *P, uint32_t K, const uint32_t *lim,
                          const uint32_t *need, double t0, double w)
{
    double t = t0;
    for (uint32_t j = hp_prof_step(P, t0); j < P->n && (P->t[j] < t + w || P->t[j] <= t); j++)
        for (uint32_t k = 0; k < K; k++)
            if (P->use[(size_t)j * K + k] + need[k] > lim[k]) {
                t = j + 1 < P->n ? P->t[j + 1] : t;
                break;
            }
    return t;
}

static int hp_prof_split(struct hp_prof *P, uint32_t K, double x, uint32_t *at)
{
    uint32_t j = hp_prof_step(P, x);
    if (P->t[j] == x) {
        *at = j;
        return 0;
    }
    if (P->n == P->cap) {
        uint32_t cap = 2 * P->cap;
        double *t = realloc(P->t, cap * sizeof *t);
        if (!t)
            return -1;
        P->t = t;
        uint32_t *u = realloc(P->use, (size_t)cap * K * sizeof *u);
        if (!u)
            return -1;
        P->use = u, P->cap = cap;
    }
    memmove(&P->t[j + 2], &P->t[j + 1], (P->n - j - 1) * sizeof *P->t);
    memmove(&P->use[(size_t)(j + 2) * K], &P->use[(size_t)(j + 1) * K],
            (size_t)(P->n - j - 1) * K * sizeof *P->use);
    P->t[j + 1] = x;
    memcpy(&P->use[(size_t)(j + 1) * K], &P->use[(size_t)j * K], K * sizeof *P->use);
    P->n++;
    *at = j + 1;
    return 0;
}

static int hp_prof_add(struct hp_prof *P, uint32_t K, const uint32_t *need, double b,
                       double e)
{
    uint32_t i, j;
    if (hp_prof_split(P, K, b, &i) || hp_prof_split(P, K, e, &j))
        return -1;
    for (; i < j; i++)
        for (uint32_t k = 0; k < K; k++)
            P->use[(size_t)i * K + k] += need[k];
    return 0;
}

static int hp_is_view(const struct sb_graph_view *g, uint32_t v)
{
    return (g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE;
}

static double hp_t_on(const struct hp_heft *H, uint32_t v, uint32_t a)
{
    return H->g->kind[v] == SB_KIND_COMPUTE ? H->g->dev_dur_us[(size_t)v * H->nd + a] : 0;
}

static double hp_mean_cost(const struct hp_heft *H, uint32_t v)
{
    double sum = 0;
    uint32_t k = 0;
    for (uint32_t a = 0; a < H->nd; a++)
        if (isfinite(hp_t_on(H, v, a))) {
            sum += hp_t_on(H, v, a);
            k++;
        }
    return k ? sum / k : 0;
}

static void hp_mean_links(struct hp_heft *H)
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
static void hp_upward_rank(struct hp_heft *H)
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
        H->rank[i] = hp_mean_cost(H, i) + tail;
    }
}

static int hp_cmp_key_desc(const void *x, const void *y)
{
    const struct sb_heft_key *a = x, *b = y;
    if (a->k != b->k)
        return a->k > b->k ? -1 : 1;
    return a->id < b->id ? -1 : a->id > b->id;
}

int sb_heft_key_cmp_asc(const void *x, const void *y)
{
    const struct sb_heft_key *a = x, *b = y;
    if (a->k != b->k)
        return a->k < b->k ? -1 : 1;
    return a->tie < b->tie ? -1 : a->tie > b->tie;
}

static struct hp_copy *hp_copy_find(const struct hp_heft *H, uint32_t p, uint32_t d)
{
    for (uint32_t k = H->cp_head[p]; k != UINT32_MAX; k = H->cp[k].next)
        if (H->cp[k].dev == d)
            return &H->cp[k];
    return NULL;
}

static int hp_copy_add(struct hp_heft *H, uint32_t p, struct hp_copy c)
{
    if (H->n_cp == H->cap_cp) {
        uint32_t cap = H->cap_cp ? 2 * H->cap_cp : 64;
        struct hp_copy *n = realloc(H->cp, cap * sizeof *n);
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
static int hp_inputs_ready(struct hp_heft *H, uint32_t v, uint32_t a, int commit, double key_v,
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
            r = 0; /* it goes with v (hp_place()) */
        } else if (src == a || m->can_read[(size_t)a * H->nd + src]) {
            r = H->aft[p];
        } else if (H->node_stamp[p] == H->stamp) {
            r = H->node_tmp[p]; /* read twice: one copy */
        } else {
            struct hp_copy *c = hp_copy_find(H, p, a);
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
                    if (hp_copy_add(H, p, (struct hp_copy){a, 0, r, key_v, H->link_trig[L]}))
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
static double hp_lane_slot(const struct hp_heft *H, const struct sb_heft_lane *L, double ready, double w,
                           double kmin, struct sb_heft_lane_pos *at, double *key)
{
    /* a lane's keys rise with its slots: v goes after every slot whose key is
     * <= kmin, so begin the search at the end of the last of them (bisect the
     * blocks by their last key, then the block) */
    uint32_t lo = 0, hi = L->n_blocks;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const struct sb_heft_lane_block *B = L->b[mid];
        if (H->key[B->s[B->n - 1].id] <= kmin)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo > 0 || (lo < L->n_blocks && H->key[L->b[lo]->s[0].id] <= kmin)) {
        /* block lo holds the first slot with a key > kmin (or none does) */
        const struct sb_heft_slot *last;
        if (lo == L->n_blocks) {
            const struct sb_heft_lane_block *B = L->b[lo - 1];
            last = &B->s[B->n - 1];
        } else {
            const struct sb_heft_lane_block *B = L->b[lo];
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
        double est = sb_heft_lane_earliest_gap(L, ready, w, at);
        const struct sb_heft_slot *prev = lane_prev_slot(L, *at), *next = lane_next_slot(L, *at);
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

/* What v holds of each resource on device a (need[]); 0 when it holds
 * nothing there for any time. */
static int hp_res_need(const struct hp_heft *H, uint32_t v, uint32_t a, uint32_t *need)
{
    const struct sb_graph_view *g = H->g;
    int any = 0;
    if (!H->prof || g->kind[v] != SB_KIND_COMPUTE || !(hp_t_on(H, v, a) > 0))
        return 0;
    for (uint32_t k = 0; k < g->machine->n_res; k++)
        any |= (need[k] = sb_res_need(g, v, a, k)) != 0;
    return any;
}

/* hp_lane_slot on device a's lane, also waiting until v's resources are
 * free for its duration (the insertion of HEFT at the earliest time its
 * resources are free); v's key follows every earlier holder's on a. */
static double hp_slot(const struct hp_heft *H, uint32_t v, uint32_t a, double ready,
                      double w, double kmin, struct sb_heft_lane_pos *at, double *key)
{
    const struct sb_heft_lane *L = &H->lane[(size_t)a * H->ns + sb_lane(H->g, v, a)];
    uint32_t need[SB_MAX_RES];
    if (!hp_res_need(H, v, a, need))
        return hp_lane_slot(H, L, ready, w, kmin, at, key);
    uint32_t K = H->g->machine->n_res;
    const uint32_t *lim = &H->g->machine->res_limit[(size_t)a * K];
    if (H->res_key[a] > kmin)
        kmin = H->res_key[a];
    for (;;) {
        double est = hp_lane_slot(H, L, ready, w, kmin, at, key);
        double t = hp_prof_fit(&H->prof[a], K, lim, need, est, w);
        if (t == est)
            return est;
        ready = t;
    }
}

static int hp_resident_on(const struct hp_heft *H, uint32_t r, uint32_t d)
{
    for (uint32_t k = H->res_head[r]; k != UINT32_MAX; k = H->res[k].next)
        if (H->res[k].dev == d)
            return 1;
    return 0;
}

static int hp_resident_add(struct hp_heft *H, uint32_t r, uint32_t d)
{
    if (hp_resident_on(H, r, d) || !H->g->out_bytes[r])
        return 0;
    if (H->n_res == H->cap_res) {
        uint32_t cap = H->cap_res ? 2 * H->cap_res : 64;
        struct hp_residency *n = realloc(H->res, cap * sizeof *n);
        if (!n)
            return -1;
        H->res = n, H->cap_res = cap;
    }
    H->res[H->n_res] = (struct hp_residency){d, H->res_head[r]};
    H->res_head[r] = H->n_res++;
    H->resident[d] += (double)H->g->out_bytes[r];
    return 0;
}

static void hp_resident_free(struct hp_heft *H, uint32_t r)
{
    if (H->pinned[r])
        return;
    for (uint32_t k = H->res_head[r]; k != UINT32_MAX; k = H->res[k].next)
        H->resident[H->res[k].dev] -= (double)H->g->out_bytes[r];
    H->res_head[r] = UINT32_MAX;
}

/* One use of buffer r placed; the last frees it everywhere unless pinned. */
static void hp_resident_use(struct hp_heft *H, uint32_t r)
{
    if (H->pending[r] && --H->pending[r] == 0)
        hp_resident_free(H, r);
}

/* Bytes v would add to device a: its own buffer, the inputs that go with it,
 * and the copies it needs there. */
static double hp_mem_need(const struct hp_heft *H, uint32_t v, uint32_t a)
{
    const struct sb_graph_view *g = H->g;
    double need = H->root[v] == v ? (double)g->out_bytes[v] : 0;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
        uint32_t p = g->pred[e], r = H->root[p];
        if (H->dev[p] < 0 || (!hp_resident_on(H, r, a) &&
                              (uint32_t)H->dev[p] != a &&
                              !g->machine->can_read[(size_t)a * H->nd + (uint32_t)H->dev[p]]))
            need += (double)g->out_bytes[r];
    }
    return need;
}

static int hp_place(struct hp_heft *H, uint32_t v)
{
    const struct sb_graph_view *g = H->g;
    uint32_t lo = 0, hi = H->nd, best = 0;
    struct sb_heft_lane_pos best_at = {0, 0};
    double best_eft = INFINITY, best_est = 0, best_key = 0, ready, kmin;
    /* room left on each device once v is there (capacity on): computed once,
     * the fallback below reads it again */
    double room_on[SB_MAX_DEVICES];
    if (g->device[v] >= 0)
        lo = (uint32_t)g->device[v], hi = lo + 1;
    else if (g->kind[v] == SB_KIND_DONE)
        lo = (uint32_t)H->dev[g->partner[v]], hi = lo + 1;
    for (uint32_t a = lo; a < hi; a++) {
        double w = hp_t_on(H, v, a), key;
        struct sb_heft_lane_pos at = {0, 0};
        if (!isfinite(w))
            continue;
        if (H->use_cap && lo + 1 < hi) {
            double need = hp_mem_need(H, v, a);
            room_on[a] = H->cap[a] - H->resident[a] - need;
            if (H->resident[a] + need > H->cap[a])
                continue; /* does not fit: another device will, or none (below) */
        }
        if (hp_inputs_ready(H, v, a, 0, 0, &ready, &kmin))
            return -1;
        double est = hp_slot(H, v, a, ready, w, kmin, &at, &key);
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
            if (isfinite(hp_t_on(H, v, a)) && room_on[a] > room)
                room = room_on[a], pick = a;
        if (pick != UINT32_MAX) {
            double w = hp_t_on(H, v, pick), key;
            if (hp_inputs_ready(H, v, pick, 0, 0, &ready, &kmin))
                return -1;
            best_est = hp_slot(H, v, pick, ready, w, kmin, &best_at, &key);
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
        if (hp_inputs_ready(H, v, lo, 0, 0, &ready, &kmin))
            return -1;
        best_est = best_eft = ready;
        best_key = ready > kmin ? ready : kmin;
    } else if (sb_heft_lane_insert(&H->lane[(size_t)best * H->ns + sb_lane(g, v, best)], best_at, best_est,
                           best_est + hp_t_on(H, v, best), v)) {
        return -1;
    }
    if (hp_inputs_ready(H, v, best, 1, best_key, &ready, &kmin))
        return -1;
    uint32_t need[SB_MAX_RES];
    if (isfinite(best_eft) && hp_res_need(H, v, best, need)) {
        if (hp_prof_add(&H->prof[best], g->machine->n_res, need, best_est,
                        best_est + hp_t_on(H, v, best)))
            return -1;
        if (best_key > H->res_key[best])
            H->res_key[best] = best_key;
    }
    H->dev[v] = (int32_t)best;
    H->ast[v] = best_est;
    H->key[v] = best_key;
    H->aft[v] = best_est + (isfinite(hp_t_on(H, v, best)) ? hp_t_on(H, v, best) : 0);
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
        if (hp_resident_add(H, r, d))
            return -1;
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t p = g->pred[e], src = (uint32_t)H->dev[p];
            uint32_t at = src == best || g->machine->can_read[(size_t)best * H->nd + src]
                              ? (uint32_t)H->dev[H->root[p]] : best;
            if (hp_resident_add(H, H->root[p], at))
                return -1;
        }
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            hp_resident_use(H, H->root[g->pred[e]]);
        if (H->root[v] != v)
            hp_resident_use(H, H->root[v]);
        else if (!H->pending[v])
            hp_resident_free(H, v); /* nobody reads it: freed at once */
                             }
                             return 0;
}

/* Inputs nobody reads stay on device 0. */
static void hp_place_inputs(struct hp_heft *H)
{
    for (uint32_t v = 0; v < H->g->n_nodes; v++)
        if (H->dev[v] < 0)
            H->dev[v] = 0;
}

int sb_heft_plan_caps(const struct sb_graph_view *g, struct sb_schedule *out, double *predicted_us,
                      const double *cap)
{
    uint32_t n = g->n_nodes;
    struct hp_heft H = {.g = g, .nd = g->machine->n_devices, .ns = g->n_streams ? g->n_streams : 1};
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
    struct sb_heft_key *k = malloc(((size_t)n + 1) * sizeof *k);
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
    if (g->machine->n_res && g->res_use) {
        uint32_t K = g->machine->n_res;
        H.prof = calloc(H.nd, sizeof *H.prof);
        H.res_key = malloc(H.nd * sizeof *H.res_key);
        if (!H.prof || !H.res_key) {
            rc = -1;
            goto out;
        }
        for (uint32_t a = 0; a < H.nd; a++) {
            H.res_key[a] = -INFINITY;
            H.prof[a].n = 1, H.prof[a].cap = 16;
            H.prof[a].t = calloc(16, sizeof *H.prof[a].t);
            H.prof[a].use = calloc((size_t)16 * K, sizeof *H.prof[a].use);
            if (!H.prof[a].t || !H.prof[a].use) {
                rc = -1;
                goto out;
            }
        }
    }
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
        H.root[v] = hp_is_view(g, v) ? H.root[g->pred[g->pred_off[v]]] : v;
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
    hp_mean_links(&H);
    hp_upward_rank(&H);
    for (uint32_t v = 0; v < n; v++)
        k[v] = (struct sb_heft_key){H.rank[v], v, 0};
    qsort(k, n, sizeof *k, hp_cmp_key_desc);
    for (uint32_t i = 0; i < n && !rc; i++)
        if (g->kind[k[i].id] != SB_KIND_INPUT)
            rc = hp_place(&H, k[i].id);
    if (rc)
        goto out;
    hp_place_inputs(&H);
    /* by key (the planned start unless a FIFO holds the node back in the
     * order, docs/heft.md); ties in rank order, which puts producers first */
    for (uint32_t i = 0; i < n; i++)
        k[i] = (struct sb_heft_key){H.key[k[i].id], k[i].id, i};
    qsort(k, n, sizeof *k, sb_heft_key_cmp_asc);
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
            sb_heft_lane_free(&H.lane[a]);
    free(H.lane), free(H.root), free(H.rank), free(H.aft), free(H.ast), free(H.dev), free(k);
    free(H.coll_end), free(H.key), free(H.cp_head), free(H.node_stamp), free(H.node_tmp), free(H.cp);
    free(H.link_free), free(H.link_trig), free(H.link_stamp), free(H.link_tmp);
    free(H.coll_free), free(H.coll_last);
    for (uint32_t a = 0; H.prof && a < H.nd; a++)
        free(H.prof[a].t), free(H.prof[a].use);
    free(H.prof), free(H.res_key);
    free(H.resident), free(H.pending), free(H.pinned), free(H.res_head), free(H.res);
    return rc ? sb_plugin_fail(out->err, out->n_err, "heft: out of memory") : 0;
}

/* bytes over capacity, summed over devices; the worst device in *worst */
static double hp_excess(const struct sb_machine_view *m, const uint64_t *peak,
                        uint32_t *worst)
{
    double excess = 0;
    *worst = UINT32_MAX;
    for (uint32_t a = 0; a < m->n_devices; a++)
        if (peak[a] > m->mem_cap_bytes[a]) {
            excess += (double)(peak[a] - m->mem_cap_bytes[a]);
            if (*worst == UINT32_MAX ||
                peak[a] - m->mem_cap_bytes[a] > peak[*worst] - m->mem_cap_bytes[*worst])
                *worst = a;
        }
    return excess;
}

#define HP_PATIENT 4000000u

/* With capacity on, HEFT's own plan first: kept when the simulator's rules
 * (sb_mem_dev_peaks) find it within every device's memory.  Otherwise plan
 * against each device's memory, cutting a device's budget by its excess each
 * time, a few times, then give up and say so (the row's status).  Steering
 * moves nodes between devices but keeps HEFT's order, so where the order
 * itself holds too much (a layered DAG whose sinks HEFT ranks last keeps
 * their inputs to the end: 1 TB at 1M nodes) the excess barely moves; a plan
 * costs O(n p), so on graphs of more than HP_PATIENT node-device pairs it
 * stops once an attempt takes off less than a tenth of what is over.  With
 * `own_only`, HEFT's own plan is the only one made and
 * *fits says whether it fits (dp, whose own schedule already fits, wants
 * heft's only when it is shorter). */
int sb_heft_plan_memory(const struct sb_graph_view *g, struct sb_schedule *out,
                        double *predicted_us, int own_only, int *fits)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t nd = m->n_devices, n = g->n_nodes, worst = UINT32_MAX;
    double *cap = malloc(nd * sizeof *cap);
    uint64_t *peak = malloc(nd * sizeof *peak);
    uint32_t *root = malloc(((size_t)n + 1) * sizeof *root);
    int rc = -1;
    *fits = 0;
    if (!cap || !peak || !root) {
        sb_plugin_fail(out->err, out->n_err, "heft: out of memory");
        goto out;
    }
    for (uint32_t v = 0; v < n; v++)
        root[v] = hp_is_view(g, v) ? root[g->pred[g->pred_off[v]]] : v;
    if (sb_heft_plan_caps(g, out, predicted_us, NULL))
        goto out;
    if (sb_mem_dev_peaks(g, out->order, out->device, root, peak)) {
        sb_plugin_fail(out->err, out->n_err, "heft: out of memory");
        goto out;
    }
    double excess = hp_excess(m, peak, &worst), last = excess;
    uint64_t need = worst == UINT32_MAX ? 0 : peak[worst];
    uint32_t need_on = worst;
    if (worst == UINT32_MAX || own_only) {
        *fits = worst == UINT32_MAX;
        rc = 0;
        goto out;
    }
    for (uint32_t a = 0; a < nd; a++)
        cap[a] = m->mem_cap_bytes[a] == SB_MEM_UNLIMITED ? INFINITY : (double)m->mem_cap_bytes[a];
    /* up to HP_PATIENT node-device steps a plan, all six attempts are made
     * (on small graphs the excess can rise before it falls: stopping at the
     * first stall finds no fit on 251 more of 5,000 random graphs) */
    int patient = (uint64_t)n * nd <= HP_PATIENT;
    for (uint32_t attempt = 0; attempt < 6; attempt++) {
        if (sb_heft_plan_caps(g, out, predicted_us, cap))
            goto out;
        if (sb_mem_dev_peaks(g, out->order, out->device, root, peak)) {
            sb_plugin_fail(out->err, out->n_err, "heft: out of memory");
            goto out;
        }
        excess = hp_excess(m, peak, &worst);
        if (worst == UINT32_MAX) {
            *fits = 1;
            rc = 0;
            goto out;
        }
        if (!patient && excess > 0.9 * last)
            break;
        last = excess;
        for (uint32_t a = 0; a < nd; a++)
            if (peak[a] > m->mem_cap_bytes[a])
                cap[a] *= 0.95 * (double)m->mem_cap_bytes[a] / (double)peak[a];
    }
    sb_plugin_fail(out->err, out->n_err,
                   "heft: no placement within device memory found: %s needs %llu "
                   "bytes, capacity %llu (capacity=0 ignores memory)",
                   m->dev_name[need_on], (unsigned long long)need,
                   (unsigned long long)m->mem_cap_bytes[need_on]);
out:
    free(cap), free(peak), free(root);
    return rc;
}

int sb_heft_plan(const struct sb_graph_view *g, struct sb_schedule *out,
                 double *predicted_us, int capacity)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t limited = 0;
    int fits;
    for (uint32_t a = 0; a < m->n_devices; a++)
        limited |= m->mem_cap_bytes[a] != SB_MEM_UNLIMITED;
    /* on one device there is no placement to search: the plan is the order,
     * and a refusal would only hide it; the row's over_capacity says whether
     * it fits (the built-in device has 80 GB, so this is every run without a
     * machine) */
    if (!capacity || !limited || m->n_devices == 1)
        return sb_heft_plan_caps(g, out, predicted_us, NULL);
    return sb_heft_plan_memory(g, out, predicted_us, 0, &fits);
}
