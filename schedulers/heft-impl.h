/* heft: the busy intervals of one device and the search for an idle gap,
 * shared with tests/test_heft.c, which checks the index against a plain scan.
 *
 * HEFT's insertion policy asks, for each node and device: the earliest start
 * t >= ready such that [t, t + w) is idle.  A sorted array answers it by
 * scanning every slot after `ready`; on one device with a million nodes most
 * nodes are ready long before the device is free, so the scan crosses most of
 * the lane and the policy becomes quadratic.  Here the slots live in blocks of
 * at most SB_LANE_BLOCK, and a max-tree over the blocks holds the widest gap
 * before a slot of each block, so whole blocks without a wide enough gap are
 * skipped: a query costs O(SB_LANE_BLOCK + log n), an insertion
 * O(SB_LANE_BLOCK), and a new block rebuilds the tree (O(n / SB_LANE_BLOCK)).
 *
 * The answer is exactly the scan's: the tree only prunes (with a margin for
 * rounding), and every candidate slot is tested with the scan's own comparison,
 * end[i-1] + w <= begin[i]. */
#ifndef SB_HEFT_IMPL_H
#define SB_HEFT_IMPL_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Slots per block: a query scans at most about two blocks, and a new block
 * costs a tree rebuild over n / SB_LANE_BLOCK blocks; 256 keeps both small at
 * 10^6 slots (measured with bench/bench_scale.cc). */
#define SB_LANE_BLOCK 256

struct sb_graph_view;
struct sb_schedule;
/* heft's plan (schedulers/heft.c): the schedule heft_run returns, and the
 * makespan its plan predicts (the latest planned finish of a non-input node)
 * when predicted_us is not NULL; capacity as heft's parameter.  Returns 0,
 * or -1 with out->err set. */
int sb_heft_plan(const struct sb_graph_view *g, struct sb_schedule *out, double *predicted_us,
                 int capacity);

struct slot {
    double begin, end; /* us */
    uint32_t id;       /* the node (heft.c), 0 in tests */
};

struct lane_block {
    uint32_t n;
    double max_gap; /* widest begin[i] - end[i-1] over the block's slots (the
                       lane's first slot has no gap: -INFINITY) */
    struct slot s[SB_LANE_BLOCK];
};

/* Busy intervals of one device, sorted by begin, not overlapping (so ends are
 * sorted too). */
struct lane {
    struct lane_block **b; /* [n_blocks] */
    uint32_t n_blocks, cap_blocks;
    double *tree;          /* [2 * n_leaves] max of max_gap; leaf j = block j */
    uint32_t n_leaves;     /* power of two >= n_blocks */
    double last_end;       /* end of the last slot (0 when empty) */
};

/* Where a slot goes: block and index in it. */
struct lane_pos {
    uint32_t blk, i;
};

static inline double lane_prev_end(const struct lane *L, uint32_t j, uint32_t i)
{
    if (i > 0)
        return L->b[j]->s[i - 1].end;
    if (j > 0)
        return L->b[j - 1]->s[L->b[j - 1]->n - 1].end;
    return -INFINITY;
}

static inline void lane_block_gap(struct lane *L, uint32_t j)
{
    struct lane_block *B = L->b[j];
    double g = -INFINITY;
    for (uint32_t i = 0; i < B->n; i++) {
        double d = B->s[i].begin - lane_prev_end(L, j, i);
        if (d > g)
            g = d;
    }
    B->max_gap = g;
}

static inline void lane_tree_set(struct lane *L, uint32_t j)
{
    uint32_t x = L->n_leaves + j;
    L->tree[x] = L->b[j]->max_gap;
    for (x /= 2; x >= 1; x /= 2)
        L->tree[x] = L->tree[2 * x] > L->tree[2 * x + 1] ? L->tree[2 * x] : L->tree[2 * x + 1];
}

static inline int lane_tree_build(struct lane *L)
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
static inline uint32_t lane_next_block(const struct lane *L, uint32_t j0, double thr)
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

static inline double lane_block_end(const struct lane *L, uint32_t j)
{
    return L->b[j]->s[L->b[j]->n - 1].end;
}

/* Earliest start >= ready of an idle gap of length w >= 0 (w = 0: an
 * instant, which fits anywhere outside a busy slot's interior); *at = where
 * the slot would be inserted. */
static inline double lane_earliest_gap(const struct lane *L, double ready, double w,
                                       struct lane_pos *at)
{
    /* First block, then first slot, ending after ready.  Most nodes are ready
     * near the end of the lane, so both searches gallop back from the end
     * (steps 1, 2, 4, ...) and then bisect the last step: O(log distance),
     * and the few cache lines near the end instead of a bisection's spread. */
    if (ready >= L->last_end) {
        *at = (struct lane_pos){L->n_blocks ? L->n_blocks - 1 : 0,
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
    const struct lane_block *B = L->b[j];
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
        *at = (struct lane_pos){j, i};
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
                *at = (struct lane_pos){j, i};
                return lane_prev_end(L, j, i);
            }
    }
    *at = (struct lane_pos){L->n_blocks - 1, L->b[L->n_blocks - 1]->n};
    return L->last_end;
}

static inline struct lane_block *lane_block_new(void)
{
    struct lane_block *B = malloc(sizeof *B);
    if (B)
        B->n = 0, B->max_gap = -INFINITY;
    return B;
}

/* Room for a block at index j (blocks from j on move up one). */
static inline int lane_open_block(struct lane *L, uint32_t j, struct lane_block *B)
{
    if (L->n_blocks == L->cap_blocks) {
        uint32_t cap = L->cap_blocks ? 2 * L->cap_blocks : 16;
        struct lane_block **nb = realloc(L->b, cap * sizeof *nb);
        if (!nb)
            return -1;
        L->b = nb, L->cap_blocks = cap;
    }
    memmove(&L->b[j + 1], &L->b[j], (L->n_blocks - j) * sizeof *L->b);
    L->b[j] = B;
    L->n_blocks++;
    return 0;
}

/* Insert [begin, end) at `at` (from lane_earliest_gap). */
static inline int lane_insert(struct lane *L, struct lane_pos at, double begin, double end,
                              uint32_t id)
{
    int rebuild = 0;
    if (L->n_blocks == 0) {
        struct lane_block *B = lane_block_new();
        if (!B || lane_open_block(L, 0, B)) {
            free(B);
            return -1;
        }
        at = (struct lane_pos){0, 0};
        rebuild = 1;
    }
    struct lane_block *B = L->b[at.blk];
    if (B->n == SB_LANE_BLOCK) {
        struct lane_block *N = lane_block_new();
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
    B->s[at.i] = (struct slot){begin, end, id};
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
static inline const struct slot *lane_next_slot(const struct lane *L, struct lane_pos at)
{
    if (at.blk >= L->n_blocks || at.i >= L->b[at.blk]->n)
        return NULL;
    return &L->b[at.blk]->s[at.i];
}

static inline const struct slot *lane_prev_slot(const struct lane *L, struct lane_pos at)
{
    if (at.blk >= L->n_blocks)
        return NULL;
    if (at.i > 0)
        return &L->b[at.blk]->s[at.i - 1];
    if (at.blk > 0)
        return &L->b[at.blk - 1]->s[L->b[at.blk - 1]->n - 1];
    return NULL;
}

static inline void lane_free(struct lane *L)
{
    for (uint32_t j = 0; j < L->n_blocks; j++)
        free(L->b[j]);
    free(L->b), free(L->tree);
    memset(L, 0, sizeof *L);
}

/* ---- per-device memory, by the simulator's rules ---------------------------
 *
 * The peak of each device for a placed order (docs/machines.md, "Memory is
 * accounted per device"): a buffer lives on its producer's device from the
 * producer (position 0 for an input) through its last use there, a copy
 * leaving for device b counting as a use at its trigger's position; a copy
 * lives on b from its first use there through its last; a device reading
 * another's memory in place charges that one; a weight or output flag pins
 * the buffer on its node's account.  heft and dp check their placements with
 * it when `capacity` is on.  Returns -1 when out of memory. */
#include "schedbench/graph.h"

static inline uint32_t place_account(const struct sb_graph_view *g, const int32_t *dev,
                                     uint32_t r, uint32_t d)
{
    uint32_t home = (uint32_t)dev[r], nd = g->machine->n_devices;
    return home == d || g->machine->can_read[(size_t)d * nd + home] ? home : d;
}

static inline void place_use(uint32_t *first, uint32_t *last, size_t k, uint32_t pos)
{
    if (first[k] == UINT32_MAX || pos < first[k])
        first[k] = pos;
    if (last[k] == UINT32_MAX || pos > last[k])
        last[k] = pos;
}

static inline int place_dev_peaks(const struct sb_graph_view *g, const uint32_t *order,
                                  const int32_t *dev, const uint32_t *root, uint64_t *peak)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    size_t nn = (size_t)n * nd;
    uint32_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
    uint32_t *first = malloc((nn + 1) * sizeof *first);
    uint32_t *last = malloc((nn + 1) * sizeof *last);
    uint32_t *trig = malloc((nn + 1) * sizeof *trig);
    uint8_t *pin = calloc(nn + 1, 1);
    int64_t *delta = calloc(((size_t)n + 1) * nd, sizeof *delta);
    int rc = -1;
    if (!pos || !first || !last || !trig || !pin || !delta)
        goto out;
    for (uint32_t i = 0; i < n; i++)
        pos[order[i]] = i;
    for (size_t k = 0; k < nn; k++)
        first[k] = last[k] = trig[k] = UINT32_MAX;
    for (uint32_t v = 0; v < n; v++) {
        uint32_t d = (uint32_t)dev[v];
        place_use(first, last, (size_t)root[v] * nd + place_account(g, dev, root[v], d), pos[v]);
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t p = g->pred[e], src = (uint32_t)dev[p];
            place_use(first, last, (size_t)root[p] * nd + place_account(g, dev, root[p], d),
                      pos[v]);
            int own_start = g->kind[v] == SB_KIND_DONE && e == g->pred_off[v];
            int in_place = src == d || g->machine->can_read[(size_t)d * nd + src];
            size_t k = (size_t)p * nd + d;
            if (!own_start && !in_place && pos[v] < trig[k])
                trig[k] = pos[v];
            if (g->kind[v] == SB_KIND_START)
                place_use(first, last,
                          (size_t)root[p] * nd + place_account(g, dev, root[p], d),
                          pos[g->partner[v]]);
        }
        if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT))
            pin[(size_t)root[v] * nd + place_account(g, dev, root[v], d)] = 1;
    }
    for (uint32_t p = 0; p < n; p++)
        for (uint32_t d = 0; d < nd; d++)
            if (trig[(size_t)p * nd + d] != UINT32_MAX) {
                uint32_t src = (uint32_t)dev[p];
                place_use(first, last,
                          (size_t)root[p] * nd + place_account(g, dev, root[p], src),
                          trig[(size_t)p * nd + d]);
            }
    for (uint32_t v = 0; v < n; v++) {
        if (root[v] != v || !g->out_bytes[v])
            continue;
        for (uint32_t d = 0; d < nd; d++) {
            size_t k = (size_t)v * nd + d;
            if (first[k] == UINT32_MAX)
                continue;
            int home = d == (uint32_t)dev[v];
            uint32_t a = home ? (g->kind[v] == SB_KIND_INPUT ? 0 : pos[v]) : first[k];
            delta[(size_t)a * nd + d] += (int64_t)g->out_bytes[v];
            if (!pin[k])
                delta[((size_t)last[k] + 1) * nd + d] -= (int64_t)g->out_bytes[v];
        }
    }
    for (uint32_t d = 0; d < nd; d++) {
        int64_t cur = 0;
        peak[d] = 0;
        for (uint32_t i = 0; i < n; i++) {
            cur += delta[(size_t)i * nd + d];
            if (cur > 0 && (uint64_t)cur > peak[d])
                peak[d] = (uint64_t)cur;
        }
    }
    rc = 0;
out:
    free(pos), free(first), free(last), free(trig), free(pin), free(delta);
    return rc;
}

#endif
