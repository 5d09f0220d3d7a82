/* Inductor's bucketers (docs/plugins.md, "Buckets"; schedbench/policy.h,
 * sb_bucket_*): which collectives of a
 * schedule go out as one, written into sb_schedule.bucket.
 *
 *   sb_bucket_greedy   torch/_inductor/fx_passes/bucketing.py,
 *                      greedy_bucket_collective_by_mb (pytorch/pytorch@e9f19e84):
 *                      runs of consecutive waits of one key, split greedily
 *                      by a byte cap, skipping descendants of the bucket.
 *   sb_bucket_overlap  fx_passes/overlap_preserving_bucketer.py,
 *                      OverlapPreservingBucketer (pytorch/pytorch@b0b4639f):
 *                      buckets that keep every collective's hiding compute
 *                      inside its start..wait, on a per-group timeline.
 *
 * Mapping: a collective is a start/done pair, its wait the done; a process
 * group is the start's group size (as in overlap_core.c) on its device (the
 * schedule's when the caller gives sb_bucket_params.device, else the
 * pre-assigned one; each rank of a job is a device); the bucket key is
 * the collective type (PyTorch's (group, reduce op, dtype) with the
 * "multidtype" mode: the view carries no dtype or reduce op); "compute
 * nodes" are sb_ovl_compute_nodes' (matmul-like ops).  Both then reorder the
 * schedule so each bucket can go out as one (every member's start before
 * every member's done), as PyTorch's merge and stable topological sort do. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

/* A start's process group: its group size on its device (the ranks of a
 * job are devices; each runs its own NCCL stream), the schedule's when the
 * caller gives it: a bucket cannot span devices (the validator refuses it),
 * and an unpinned start is on whichever device the schedule put it. */
static uint64_t pg_of(const struct sb_graph_view *g, const struct sb_bucket_params *p,
                      uint32_t s)
{
    int32_t d = p->device ? p->device[s] : g->device[s];
    return (uint64_t)(uint32_t)(d + 1) << 32 | g->group_size[s];
}

int sb_bucket_schedule(const struct sb_graph_view *g, enum sb_bucketer which,
                       const struct sb_bucket_params *p, struct sb_schedule *out)
{
    if (!out->bucket)
        return 0;
    struct sb_bucket_params q = *p;
    q.device = out->device; /* where the host or the policy put each start */
    int k = which == SB_BUCKET_GREEDY ? sb_bucket_greedy(g, out->order, &q, out->bucket)
                                      : sb_bucket_overlap(g, out->order, &q, out->bucket);
    return k < 0 ? sb_plugin_fail(out->err, out->n_err, "out of memory") : 0;
}

void sb_bucket_defaults(struct sb_bucket_params *p)
{
    memset(p, 0, sizeof *p);
    /* the types Inductor buckets (bucket_key: all_gather, reduce_scatter,
     * all_reduce) */
    p->kinds = (1u << SB_COLL_ALL_GATHER) | (1u << SB_COLL_REDUCE_SCATTER) |
               (1u << SB_COLL_ALL_REDUCE);
    p->cap_bytes = 2000.0 * 1048576.0;   /* bucket_cap_mb_by_bucket_idx_default: 2000 MB */
    p->max_bucket_bytes = 1.0 * SB_OVL_GIB; /* OverlapPreservingBucketer: 1.0 GB */
    p->max_coll_distance = 1000;
    p->max_failures = 20;
}

/* ---- reordering: each bucket's starts together, before its dones ----------
 * A stable topological sort keyed (anchor, class, position): a member start
 * takes its bucket's start anchor and class 0, a member done the later of
 * its position and the wait anchor, class 1; every other node keeps its
 * position.  A bucket the result still cannot send as one is dropped. */

struct heap {
    uint32_t *a, n;
    const uint32_t *prio, *pos;
    const uint8_t *cls;
};

static int before(const struct heap *h, uint32_t x, uint32_t y)
{
    if (h->prio[x] != h->prio[y])
        return h->prio[x] < h->prio[y];
    if (h->cls[x] != h->cls[y])
        return h->cls[x] < h->cls[y];
    return h->pos[x] < h->pos[y];
}

static void heap_push(struct heap *h, uint32_t v)
{
    uint32_t i = h->n++;
    h->a[i] = v;
    while (i && before(h, h->a[i], h->a[(i - 1) / 2])) {
        uint32_t p = (i - 1) / 2, t = h->a[p];
        h->a[p] = h->a[i], h->a[i] = t, i = p;
    }
}

static uint32_t heap_pop(struct heap *h)
{
    uint32_t top = h->a[0], i = 0;
    h->a[0] = h->a[--h->n];
    for (;;) {
        uint32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && before(h, h->a[l], h->a[m]))
            m = l;
        if (r < h->n && before(h, h->a[r], h->a[m]))
            m = r;
        if (m == i)
            return top;
        uint32_t t = h->a[m];
        h->a[m] = h->a[i], h->a[i] = t, i = m;
    }
}

static void positions(const uint32_t *order, uint32_t n, uint32_t *pos)
{
    for (uint32_t i = 0; i < n; i++)
        pos[order[i]] = i;
}

/* start_anchor[k], wait_anchor[k]: positions for bucket k (1-based ids);
 * wait_anchor NULL: waits keep their places. */
static int reorder(const struct sb_graph_view *g, uint32_t *order, uint32_t *bucket,
                   const uint32_t *start_anchor, const uint32_t *wait_anchor, uint32_t n_ids)
{
    uint32_t n = g->n_nodes;
    uint32_t *pos = malloc((n + 1) * sizeof *pos), *prio = malloc((n + 1) * sizeof *prio);
    uint32_t *left = malloc((n + 1) * sizeof *left), *heap_a = malloc((n + 1) * sizeof *heap_a);
    uint32_t *lo = malloc((n_ids + 1) * sizeof *lo), *hi = malloc((n_ids + 1) * sizeof *hi);
    uint8_t *cls = malloc(n + 1);
    int rc = -1;
    if (!pos || !prio || !left || !heap_a || !lo || !hi || !cls)
        goto out;
    for (int changed = 1; changed;) {
        positions(order, n, pos);
        for (uint32_t v = 0; v < n; v++) {
            prio[v] = pos[v], cls[v] = 1;
            uint32_t s = g->kind[v] == SB_KIND_DONE ? g->partner[v] : v;
            uint32_t k = g->kind[v] == SB_KIND_INPUT || g->kind[v] == SB_KIND_COMPUTE ||
                                 g->kind[v] == SB_KIND_NOP
                             ? 0
                             : bucket[s];
            if (k && g->kind[v] == SB_KIND_START)
                prio[v] = start_anchor[k], cls[v] = 0;
            else if (k && wait_anchor && wait_anchor[k] > prio[v])
                prio[v] = wait_anchor[k];
            if (k && g->kind[v] == SB_KIND_DONE && prio[v] < start_anchor[k])
                prio[v] = start_anchor[k];
        }
        /* a member start moved up takes its ancestors with it (an input or
         * producer placed after the anchor would otherwise hold it back and
         * the bucket would be dropped); the merge checks made sure none of
         * them depends on the bucket.  Only what moved up passes it on: a
         * member done held back to the wait anchor stays there. */
        for (uint32_t i = n; i-- > 0;) {
            uint32_t v = order[i];
            if (prio[v] >= pos[v])
                continue;
            for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
                if (prio[g->pred[e]] > prio[v])
                    prio[g->pred[e]] = prio[v];
        }
        struct heap h = {heap_a, 0, prio, pos, cls};
        for (uint32_t v = 0; v < n; v++)
            if ((left[v] = g->pred_off[v + 1] - g->pred_off[v]) == 0)
                heap_push(&h, v);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t v = heap_pop(&h);
            order[i] = v;
            for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
                if (--left[g->succ[e]] == 0)
                    heap_push(&h, g->succ[e]);
        }
        /* pass 2: a bucket whose last start is not before its first done goes */
        positions(order, n, pos);
        for (uint32_t k = 0; k <= n_ids; k++)
            lo[k] = UINT32_MAX, hi[k] = 0;
        for (uint32_t v = 0; v < n; v++) {
            if (g->kind[v] != SB_KIND_START || !bucket[v])
                continue;
            uint32_t k = bucket[v], d = g->partner[v];
            hi[k] = pos[v] > hi[k] ? pos[v] : hi[k];
            lo[k] = pos[d] < lo[k] ? pos[d] : lo[k];
        }
        changed = 0;
        for (uint32_t v = 0; v < n; v++)
            if (g->kind[v] == SB_KIND_START && bucket[v] && hi[bucket[v]] > lo[bucket[v]])
                bucket[v] = 0, changed = 1;
    }
    rc = 0;
out:
    free(pos), free(prio), free(left), free(heap_a), free(lo), free(hi), free(cls);
    return rc;
}

/* Ids 1..k over buckets of two or more; a lone member goes back to 0.
 * Returns the number of buckets, -1 when out of memory.  The map is sized
 * by the ids handed out, not by the graph: a graph with no node (an empty
 * rank of a job) still hands out id 1. */
static int renumber(const struct sb_graph_view *g, uint32_t *bucket, uint32_t n_ids)
{
    uint32_t k = 0, *map = calloc((size_t)n_ids + 1, sizeof *map);
    if (!map)
        return -1;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (bucket[v] && bucket[v] <= n_ids)
            map[bucket[v]]++;
    for (uint32_t b = 1; b <= n_ids; b++)
        map[b] = map[b] >= 2 ? ++k : 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        bucket[v] = bucket[v] && bucket[v] <= n_ids ? map[bucket[v]] : 0;
    free(map);
    return (int)k;
}

/* ---- greedy_bucket_collective_by_mb ---------------------------------------- */

struct greedy {
    const struct sb_graph_view *g;
    const struct sb_bucket_params *p;
    uint32_t *bucket, *stamp, *stack, gen, next_id;
    uint32_t *members, n_members, *anchor;
    const uint32_t *pos;
};

/* Marks v's descendants with the bucket's generation (v itself is not one
 * of them: PyTorch's descendants exclude the node). */
static void mark_descendants(struct greedy *G, uint32_t v)
{
    const struct sb_graph_view *g = G->g;
    uint32_t n = 0;
    G->stack[n++] = v;
    while (n) {
        uint32_t u = G->stack[--n];
        for (uint32_t e = g->succ_off[u]; e < g->succ_off[u + 1]; e++) {
            uint32_t w = g->succ[e];
            if (G->stamp[w] != G->gen)
                G->stamp[w] = G->gen, G->stack[n++] = w;
        }
    }
}

static void close_bucket(struct greedy *G)
{
    if (G->n_members >= 2) {
        uint32_t id = G->next_id++, last = 0;
        for (uint32_t i = 0; i < G->n_members; i++) {
            G->bucket[G->members[i]] = id;
            if (G->pos[G->members[i]] > last)
                last = G->pos[G->members[i]];
        }
        G->anchor[id] = last; /* merged where its last member starts */
    }
    G->n_members = 0;
    G->gen++;
}

/* One run of same-key collectives (in wait order): greedy by the cap. */
static void split_run(struct greedy *G, const uint32_t *run, uint32_t n_run)
{
    double cur_bytes = 0;
    G->gen++;
    G->n_members = 0;
    for (uint32_t i = 0; i < n_run; i++) {
        uint32_t s = run[i];
        if (G->stamp[s] == G->gen)
            continue; /* a path from the bucket to it: not horizontally fusable */
        /* max(output, input) bytes: the full tensor either way */
        double size = (double)G->g->comm_bytes[s];
        if (cur_bytes + size > G->p->cap_bytes && G->n_members) {
            close_bucket(G);
            cur_bytes = 0;
        }
        cur_bytes += size;
        G->members[G->n_members++] = s;
        mark_descendants(G, s);
    }
    close_bucket(G);
}

int sb_bucket_greedy(const struct sb_graph_view *g, uint32_t *order,
                     const struct sb_bucket_params *p, uint32_t *out_bucket)
{
    uint32_t n = g->n_nodes;
    struct greedy G = {.g = g, .p = p, .bucket = out_bucket, .next_id = 1};
    uint32_t *pos = malloc((n + 1) * sizeof *pos), *run = malloc((n + 1) * sizeof *run);
    G.stamp = calloc(n + 1, sizeof *G.stamp);
    G.stack = malloc((n + 1) * sizeof *G.stack);
    G.members = malloc((n + 1) * sizeof *G.members);
    G.anchor = calloc(n + 2, sizeof *G.anchor);
    int rc = -1;
    if (!pos || !run || !G.stamp || !G.stack || !G.members || !G.anchor)
        goto out;
    positions(order, n, pos);
    G.pos = pos;
    memset(out_bucket, 0, n * sizeof *out_bucket);
    /* bucket_all_gather and bucket_reduce_scatter are separate passes: a
     * run is broken only by a wait of the same type with another key */
    for (uint32_t t = 1; t < SB_COLL_COUNT; t++) {
        if (!(p->kinds & (1u << t)))
            continue;
        uint32_t n_run = 0;
        uint64_t key = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t v = order[i];
            if (g->kind[v] != SB_KIND_DONE || g->coll[v] != t)
                continue;
            uint32_t s = g->partner[v];
            if (n_run && pg_of(g, p, s) == key) {
                run[n_run++] = s;
                continue;
            }
            if (n_run > 1)
                split_run(&G, run, n_run);
            run[0] = s, n_run = 1, key = pg_of(g, p, s);
        }
        if (n_run > 1)
            split_run(&G, run, n_run);
    }
    rc = reorder(g, order, out_bucket, G.anchor, NULL, G.next_id); /* waits stay put */
    if (!rc)
        rc = renumber(g, out_bucket, G.next_id);
out:
    free(pos), free(run), free(G.stamp), free(G.stack), free(G.members);
    free(G.anchor);
    return rc;
}

/* ---- OverlapPreservingBucketer --------------------------------------------- */

struct vec {
    uint32_t *a, n, cap;
};

static int vec_add(struct vec *v, uint32_t x)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->a[i] == x)
            return 0; /* a set */
    if (v->n == v->cap) {
        uint32_t cap = v->cap ? 2 * v->cap : 4;
        uint32_t *a = realloc(v->a, cap * sizeof *a);
        if (!a)
            return -1;
        v->a = a, v->cap = cap;
    }
    v->a[v->n++] = x;
    return 0;
}

static void vec_del(struct vec *v, uint32_t x)
{
    for (uint32_t i = 0; i < v->n; i++)
        if (v->a[i] == x) {
            v->a[i] = v->a[--v->n];
            return;
        }
}

enum { EV_COMPUTE, EV_START, EV_WAIT };

struct event {
    uint32_t node, type, position, prev, next; /* prev/next: event index or SB_NONE */
};

struct opb {
    const struct sb_graph_view *g;
    const struct sb_bucket_params *p;
    uint32_t n;
    uint32_t *pos;
    uint8_t *is_compute, *exposed, *in_hiding;
    uint32_t *hid_off, *hid;      /* hiding nodes per start (CSR over node ids) */
    struct vec *aug_in;           /* hiding deps, for ancestors: [n] */
    struct vec *extra;            /* the augmented graph's extra deps: [n] */
    struct vec *merged;           /* [n] on a set's first node: the others */
    uint32_t *set_of;             /* [n] the set's first node */
    struct event *ev;             /* the current group's timeline */
    uint32_t n_ev, *node_ev;      /* [n] node -> event, SB_NONE when none */
    uint32_t *seen, *queue, gen;
    uint32_t *bucket, next_id, *start_anchor, *wait_anchor;
    int oom;
};

static uint32_t wait_of(const struct opb *B, uint32_t s)
{
    return B->g->partner[s];
}

/* a is an ancestor of b through graph edges and the hiding deps of hidden
 * collectives (_compute_node_ancestors): searched backwards from b, never
 * below a's position, since the schedule orders both. */
static int is_ancestor(struct opb *B, uint32_t a, uint32_t b)
{
    const struct sb_graph_view *g = B->g;
    if (a == b || B->pos[a] > B->pos[b])
        return 0;
    uint32_t n = 0;
    B->gen++;
    B->queue[n++] = b;
    while (n) {
        uint32_t u = B->queue[--n];
        for (uint32_t k = 0, m = g->pred_off[u + 1] - g->pred_off[u] + B->aug_in[u].n; k < m;
             k++) {
            uint32_t d = k < g->pred_off[u + 1] - g->pred_off[u]
                             ? g->pred[g->pred_off[u] + k]
                             : B->aug_in[u].a[k - (g->pred_off[u + 1] - g->pred_off[u])];
            if (d == a)
                return 1;
            if (B->seen[d] != B->gen && B->pos[d] > B->pos[a])
                B->seen[d] = B->gen, B->queue[n++] = d;
        }
    }
    return 0;
}

/* AugmentedGraphHelper.has_path: source reaches target through graph edges
 * and extra deps, merged sets acting as one node. */
static int has_path(struct opb *B, uint32_t source, uint32_t target)
{
    const struct sb_graph_view *g = B->g;
    uint32_t src_set = B->set_of[source], n = 0;
    B->gen++;
    B->queue[n++] = target;
    B->seen[target] = B->gen;
    while (n) {
        uint32_t cur = B->queue[--n], rep = B->set_of[cur];
        for (uint32_t j = 0; j <= B->merged[rep].n; j++) {
            uint32_t m = j == 0 ? rep : B->merged[rep].a[j - 1];
            uint32_t n_pred = g->pred_off[m + 1] - g->pred_off[m];
            for (uint32_t k = 0; k < n_pred + B->extra[m].n; k++) {
                uint32_t d = k < n_pred ? g->pred[g->pred_off[m] + k] : B->extra[m].a[k - n_pred];
                if (B->set_of[d] == src_set)
                    return 1;
                if (B->seen[d] != B->gen)
                    B->seen[d] = B->gen, B->queue[n++] = d;
            }
        }
    }
    return 0;
}

static void dep_add(struct opb *B, uint32_t n, uint32_t dep)
{
    B->oom |= vec_add(&B->extra[n], dep);
}

/* remove_from_event: unlink node's event, bypass it in the extra deps. */
static void ev_remove(struct opb *B, uint32_t node, uint32_t *prev, uint32_t *next)
{
    struct event *e = &B->ev[B->node_ev[node]];
    *prev = e->prev, *next = e->next;
    if (*prev != SB_NONE)
        B->ev[*prev].next = *next;
    if (*next != SB_NONE)
        B->ev[*next].prev = *prev;
    e->prev = e->next = SB_NONE;
    if (*prev != SB_NONE)
        vec_del(&B->extra[node], B->ev[*prev].node);
    if (*next != SB_NONE)
        vec_del(&B->extra[B->ev[*next].node], node);
    if (*prev != SB_NONE && *next != SB_NONE)
        dep_add(B, B->ev[*next].node, B->ev[*prev].node);
}

/* restore_to_event, as PyTorch writes it */
static void ev_restore(struct opb *B, uint32_t node, uint32_t prev, uint32_t next)
{
    uint32_t i = B->node_ev[node];
    struct event *e = &B->ev[i];
    if (prev != SB_NONE)
        B->ev[prev].next = i;
    e->prev = prev;
    if (next != SB_NONE)
        B->ev[next].prev = i;
    e->next = next;
    if (prev != SB_NONE)
        dep_add(B, node, B->ev[prev].node);
    if (next != SB_NONE && prev == SB_NONE)
        dep_add(B, B->ev[next].node, node);
    if (prev != SB_NONE && next != SB_NONE)
        vec_del(&B->extra[B->ev[next].node], B->ev[prev].node);
}

static void set_merge(struct opb *B, uint32_t existing, uint32_t add)
{
    uint32_t rep = B->set_of[existing];
    B->oom |= vec_add(&B->merged[rep], add);
    B->set_of[add] = rep;
}

static void set_unmerge(struct opb *B, uint32_t node)
{
    uint32_t rep = B->set_of[node];
    if (rep != node) {
        vec_del(&B->merged[rep], node);
        B->set_of[node] = node;
    }
}

/* Timeline of group `pg` (build_timeline): starts and waits of the group,
 * and compute nodes or hiding nodes of its starts seen so far, chained by
 * extra deps. */
static void build_timeline(struct opb *B, const uint32_t *order, uint64_t pg, int add_deps)
{
    const struct sb_graph_view *g = B->g;
    B->n_ev = 0;
    for (uint32_t v = 0; v < B->n; v++)
        B->node_ev[v] = SB_NONE, B->in_hiding[v] = 0;
    for (uint32_t i = 0; i < B->n; i++) {
        uint32_t v = order[i], type;
        if (g->kind[v] == SB_KIND_START && pg_of(g, B->p, v) == pg) {
            type = EV_START;
            for (uint32_t k = B->hid_off[v]; k < B->hid_off[v + 1]; k++)
                B->in_hiding[B->hid[k]] = 1;
        } else if (g->kind[v] == SB_KIND_DONE && pg_of(g, B->p, g->partner[v]) == pg) {
            type = EV_WAIT;
        } else if (g->kind[v] == SB_KIND_DONE || g->kind[v] == SB_KIND_START) {
            continue;
        } else if (B->is_compute[v] || B->in_hiding[v]) {
            type = EV_COMPUTE;
        } else {
            continue;
        }
        uint32_t e = B->n_ev++;
        B->ev[e] = (struct event){v, type, e, e ? e - 1 : SB_NONE, SB_NONE};
        if (e)
            B->ev[e - 1].next = e;
        B->node_ev[v] = e;
        if (e && add_deps)
            dep_add(B, v, B->ev[e - 1].node);
    }
}

/* _get_intervals of an event: its collective's (start, wait) positions and
 * (start, hiding) ones; 0 when it is not a start or wait. */
static int intervals(struct opb *B, const struct event *e, uint32_t *ex, uint32_t *hid,
                     uint32_t *n_hid, uint32_t max_hid)
{
    if (e->type == EV_COMPUTE)
        return 0;
    uint32_t s = e->type == EV_START ? e->node : B->g->partner[e->node];
    uint32_t sp = B->ev[B->node_ev[s]].position;
    ex[0] = sp, ex[1] = B->ev[B->node_ev[wait_of(B, s)]].position;
    for (uint32_t k = B->hid_off[s]; k < B->hid_off[s + 1] && *n_hid < max_hid; k++)
        if (B->node_ev[B->hid[k]] != SB_NONE) {
            hid[2 * *n_hid] = sp;
            hid[2 * *n_hid + 1] = B->ev[B->node_ev[B->hid[k]]].position;
            (*n_hid)++;
        }
    return 1;
}

static int in_list(const uint32_t *a, uint32_t n, uint32_t x)
{
    for (uint32_t i = 0; i < n; i++)
        if (a[i] == x)
            return 1;
    return 0;
}

/* _preserves_hiding_intervals for the bucket b[0..nb) plus cand, placed at
 * the events of start_at and wait_at. */
static int preserves(struct opb *B, const uint32_t *b, uint32_t nb, uint32_t cand,
                     uint32_t start_at, uint32_t wait_at, uint32_t *scratch, uint32_t cap)
{
    uint32_t *colls = scratch, *waits = scratch + nb + 1, n_c = 0;
    uint32_t *ex = scratch + 2 * (nb + 1), *hid = ex + cap, n_ex = 0, n_hid = 0;
    uint32_t max_pairs = cap / 2;
    colls[n_c] = cand, waits[n_c++] = wait_of(B, cand);
    for (uint32_t i = 0; i < nb; i++)
        colls[n_c] = b[i], waits[n_c++] = wait_of(B, b[i]);
    const struct event *ns = &B->ev[B->node_ev[start_at]], *nw = &B->ev[B->node_ev[wait_at]];
    if (B->p->no_interval_check)
        return 1;
    /* check 1: the bucket's hiding compute stays strictly inside */
    for (uint32_t i = 0; i < n_c; i++)
        for (uint32_t k = B->hid_off[colls[i]]; k < B->hid_off[colls[i] + 1]; k++) {
            if (B->node_ev[B->hid[k]] == SB_NONE)
                continue;
            uint32_t cp = B->ev[B->node_ev[B->hid[k]]].position;
            if (!(ns->position < cp && cp < nw->position))
                return 0;
            if (n_hid < max_pairs)
                hid[2 * n_hid] = ns->position, hid[2 * n_hid + 1] = cp, n_hid++;
        }
    uint32_t ps = B->ev[B->node_ev[cand]].position, p0 = B->ev[B->node_ev[b[0]]].position;
    uint32_t latest_start = ps > p0 ? ps : p0;
    uint32_t wc = B->ev[B->node_ev[wait_of(B, cand)]].position;
    uint32_t w0 = B->ev[B->node_ev[wait_of(B, b[0])]].position;
    uint32_t earliest_wait = wc < w0 ? wc : w0;
    ex[0] = ns->position, ex[1] = nw->position, n_ex = 1;
    /* the regions a move crosses: old start -> new start, new wait <- old wait */
    for (int dir = 0; dir < 2; dir++) {
        uint32_t i = dir == 0 ? ns->next : nw->prev;
        while (i != SB_NONE && (dir == 0 ? B->ev[i].position < latest_start
                                         : B->ev[i].position > earliest_wait)) {
            const struct event *e = &B->ev[i];
            if (!in_list(colls, n_c, e->node) && !in_list(waits, n_c, e->node) &&
                n_ex < max_pairs &&
                intervals(B, e, &ex[2 * n_ex], hid, &n_hid, max_pairs))
                n_ex++;
            i = dir == 0 ? e->next : e->prev;
        }
    }
    /* no hiding interval strictly inside an execution interval */
    for (uint32_t h = 0; h < n_hid; h++)
        for (uint32_t x = 0; x < n_ex; x++)
            if (ex[2 * x] < hid[2 * h] && hid[2 * h + 1] < ex[2 * x + 1])
                return 0;
    return 1;
}

static int try_position(struct opb *B, const uint32_t *b, uint32_t nb, uint32_t cand,
                        uint32_t start_at, uint32_t wait_at, uint32_t *scratch, uint32_t cap)
{
    if (!preserves(B, b, nb, cand, start_at, wait_at, scratch, cap))
        return 0;
    uint32_t existing = b[0], cw = wait_of(B, cand), ew = wait_of(B, existing);
    uint32_t move_s = start_at == existing ? cand : existing, sp, sn, wp, wn;
    ev_remove(B, move_s, &sp, &sn);
    if (has_path(B, existing, cand) || has_path(B, cand, existing)) {
        ev_restore(B, move_s, sp, sn);
        return 0;
    }
    set_merge(B, existing, cand);
    uint32_t move_w = wait_at == ew ? cw : ew;
    ev_remove(B, move_w, &wp, &wn);
    if (has_path(B, ew, cw) || has_path(B, cw, ew)) {
        ev_restore(B, move_w, wp, wn);
        set_unmerge(B, cand);
        ev_restore(B, move_s, sp, sn);
        return 0;
    }
    set_merge(B, ew, cw);
    uint32_t ts = B->node_ev[start_at], tw = B->node_ev[wait_at];
    B->node_ev[cand] = ts, B->node_ev[cw] = tw;
    B->node_ev[existing] = ts, B->node_ev[ew] = tw;
    return 1;
}

/* _has_ancestor_conflicts */
static int conflicts(struct opb *B, const uint32_t *b, uint32_t nb, uint32_t cand)
{
    uint32_t cw = wait_of(B, cand);
    for (uint32_t i = 0; i < nb; i++) {
        uint32_t c = b[i], w = wait_of(B, c);
        if (is_ancestor(B, c, cand) || is_ancestor(B, cand, c) || is_ancestor(B, w, cw) ||
            is_ancestor(B, cw, w))
            return 1;
        for (uint32_t k = B->hid_off[c]; k < B->hid_off[c + 1]; k++)
            if (is_ancestor(B, cw, B->hid[k]))
                return 1;
        for (uint32_t k = B->hid_off[cand]; k < B->hid_off[cand + 1]; k++)
            if (is_ancestor(B, w, B->hid[k]))
                return 1;
    }
    return 0;
}

static int can_add(struct opb *B, const uint32_t *b, uint32_t nb, uint32_t cand,
                   uint32_t *scratch, uint32_t cap)
{
    if (conflicts(B, b, nb, cand))
        return 0;
    uint32_t e = b[0], ew = wait_of(B, e), cw = wait_of(B, cand);
    /* early start and late wait first, as PyTorch tries them */
    const uint32_t combos[4][2] = {{e, cw}, {e, ew}, {cand, cw}, {cand, ew}};
    for (int i = 0; i < 4; i++)
        if (try_position(B, b, nb, cand, combos[i][0], combos[i][1], scratch, cap))
            return 1;
    return 0;
}

/* estimate_fx_collective_memory_footprint: inputs + outputs, halved for an
 * all_reduce (in place) */
static double footprint(const struct sb_graph_view *g, uint32_t s)
{
    double full = (double)g->comm_bytes[s], p = g->group_size[s] ? g->group_size[s] : 1;
    switch (g->coll[s]) {
    case SB_COLL_ALL_GATHER:
    case SB_COLL_REDUCE_SCATTER:
        return full + full / p;
    case SB_COLL_ALL_REDUCE:
        return full;
    default:
        return 2 * full;
    }
}

/* _find_buckets over the sorted collectives c[0..nc) of one group and key */
static void find_buckets(struct opb *B, const uint32_t *c, uint32_t nc, uint8_t *done,
                         uint32_t *b, uint32_t *scratch, uint32_t cap)
{
    for (uint32_t i = 0; i < nc; i++) {
        if (done[c[i]])
            continue;
        uint32_t nb = 0, fails = 0;
        double bytes = footprint(B->g, c[i]);
        b[nb++] = c[i];
        done[c[i]] = 1;
        for (uint32_t j = i + 1; j < nc && j <= i + B->p->max_coll_distance; j++) {
            double add = footprint(B->g, c[j]);
            if (bytes + add > B->p->max_bucket_bytes)
                break; /* a bucket too large: no later one either */
            if (done[c[j]])
                continue;
            if (can_add(B, b, nb, c[j], scratch, cap)) {
                b[nb++] = c[j], bytes += add, done[c[j]] = 1, fails = 0;
            } else if (++fails >= B->p->max_failures) {
                break;
            }
        }
        if (nb < 2)
            continue;
        uint32_t id = B->next_id++;
        for (uint32_t k = 0; k < nb; k++)
            B->bucket[b[k]] = id;
        B->start_anchor[id] = B->pos[B->ev[B->node_ev[b[0]]].node];
        B->wait_anchor[id] = B->pos[B->ev[B->node_ev[wait_of(B, b[0])]].node];
    }
}

/* Hiding nodes when the caller gives none: compute nodes after the start,
 * in order, until their time covers the collective's or its done comes;
 * exposed when they do not cover it (exposed_time_ms != 0). */
static int derive_hiding(struct opb *B, const uint32_t *order)
{
    const struct sb_graph_view *g = B->g;
    const struct sb_bucket_params *p = B->p;
    uint32_t n = B->n; /* hid_off is zeroed (sb_bucket_overlap's calloc) */
    if (p->hiding_off) {
        memcpy(B->hid_off, p->hiding_off, (n + 1) * sizeof *B->hid_off);
        B->hid = malloc((p->hiding_off[n] + 1) * sizeof *B->hid);
        if (!B->hid)
            return -1;
        memcpy(B->hid, p->hiding, p->hiding_off[n] * sizeof *B->hid);
        for (uint32_t v = 0; v < n; v++)
            B->exposed[v] = p->exposed ? p->exposed[v] : B->hid_off[v] == B->hid_off[v + 1];
        return 0;
    }
    uint32_t *cnt = calloc(n + 1, sizeof *cnt);
    B->hid = malloc((n + 1) * sizeof *B->hid * 2);
    if (!cnt || !B->hid)
        return free(cnt), -1;
    /* pass 1: count; pass 2: fill */
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < n; i++) {
            uint32_t s = order[i];
            if (g->kind[s] != SB_KIND_START)
                continue;
            double left = g->dur_us[s];
            uint32_t k = 0;
            for (uint32_t j = i + 1; j < n && order[j] != g->partner[s] && left > 0; j++) {
                uint32_t v = order[j];
                if (!B->is_compute[v] || !(g->dur_us[v] > 0))
                    continue;
                if (pass)
                    B->hid[B->hid_off[s] + k] = v;
                k++;
                left -= g->dur_us[v];
            }
            if (!pass)
                cnt[s] = k;
            else
                B->exposed[s] = left > 0;
        }
        if (!pass) {
            for (uint32_t v = 0; v < n; v++)
                B->hid_off[v + 1] = B->hid_off[v] + cnt[v];
            uint32_t total = B->hid_off[n];
            if (total > 2 * n) {
                uint32_t *h = realloc(B->hid, (total + 1) * sizeof *h);
                if (!h)
                    return free(cnt), -1;
                B->hid = h;
            }
        }
    }
    free(cnt);
    return 0;
}

static void opb_free(struct opb *B)
{
    for (uint32_t v = 0; B->extra && v < B->n; v++)
        free(B->extra[v].a), free(B->merged[v].a), free(B->aug_in[v].a);
    free(B->pos), free(B->is_compute), free(B->exposed), free(B->in_hiding);
    free(B->hid_off), free(B->hid), free(B->aug_in), free(B->extra), free(B->merged);
    free(B->set_of), free(B->ev), free(B->node_ev), free(B->seen), free(B->queue);
    free(B->start_anchor), free(B->wait_anchor);
}

int sb_bucket_overlap(const struct sb_graph_view *g, uint32_t *order,
                      const struct sb_bucket_params *p, uint32_t *out_bucket)
{
    uint32_t n = g->n_nodes;
    struct opb B = {.g = g, .p = p, .n = n, .bucket = out_bucket, .next_id = 1};
    B.pos = malloc((n + 1) * sizeof *B.pos);
    B.is_compute = calloc(n + 1, 1), B.exposed = calloc(n + 1, 1), B.in_hiding = calloc(n + 1, 1);
    B.hid_off = calloc(n + 2, sizeof *B.hid_off);
    B.aug_in = calloc(n + 1, sizeof *B.aug_in), B.extra = calloc(n + 1, sizeof *B.extra);
    B.merged = calloc(n + 1, sizeof *B.merged), B.set_of = malloc((n + 1) * sizeof *B.set_of);
    B.ev = malloc((n + 1) * sizeof *B.ev), B.node_ev = malloc((n + 1) * sizeof *B.node_ev);
    B.seen = calloc(n + 1, sizeof *B.seen), B.queue = malloc((4 * n + 4) * sizeof *B.queue);
    B.start_anchor = calloc(n + 2, sizeof *B.start_anchor);
    B.wait_anchor = calloc(n + 2, sizeof *B.wait_anchor);
    uint32_t cap = 2 * n + 16, *scratch = malloc((3 * (size_t)n + 2 * cap + 8) * sizeof *scratch);
    uint32_t *colls = malloc((n + 1) * sizeof *colls), *bk = malloc((n + 1) * sizeof *bk);
    uint8_t *done = calloc(n + 1, 1);
    int rc = -1;
    if (!B.pos || !B.is_compute || !B.exposed || !B.in_hiding || !B.hid_off || !B.aug_in ||
        !B.extra || !B.merged || !B.set_of || !B.ev || !B.node_ev || !B.seen || !B.queue ||
        !B.start_anchor || !B.wait_anchor || !scratch || !colls || !bk || !done)
        goto out;
    positions(order, n, B.pos);
    memset(out_bucket, 0, n * sizeof *out_bucket);
    for (uint32_t v = 0; v < n; v++)
        B.set_of[v] = v;
    sb_ovl_compute_nodes(g, SB_OVL_COMPUTE_FLOPS, B.is_compute);
    if (derive_hiding(&B, order))
        goto out;
    /* the hiding deps start -> hiding node -> wait of hidden collectives, in
     * the ancestors and as extra deps */
    for (uint32_t s = 0; s < n; s++) {
        if (g->kind[s] != SB_KIND_START || B.exposed[s])
            continue;
        for (uint32_t k = B.hid_off[s]; k < B.hid_off[s + 1]; k++) {
            uint32_t h = B.hid[k];
            B.oom |= vec_add(&B.aug_in[h], s) | vec_add(&B.aug_in[wait_of(&B, s)], h);
            dep_add(&B, h, s);
            dep_add(&B, wait_of(&B, s), h);
        }
    }
    /* every group's timeline adds its chain of deps; then each group is
     * bucketed on its own timeline, key by key */
    for (int phase = 0; phase < 2; phase++)
        for (uint32_t i = 0; i < n; i++) {
            uint32_t s = order[i], first = 1;
            if (g->kind[s] != SB_KIND_START)
                continue;
            uint64_t pg = pg_of(g, p, s);
            for (uint32_t j = 0; j < i && first; j++)
                first = !(g->kind[order[j]] == SB_KIND_START && pg_of(g, p, order[j]) == pg);
            if (!first)
                continue; /* the group's first start stands for it */
            build_timeline(&B, order, pg, phase == 0);
            if (phase == 0)
                continue;
            for (uint32_t t = 1; t < SB_COLL_COUNT; t++) {
                if (p->no_type_key ? t > 1 : !(p->kinds & (1u << t)))
                    continue;
                uint32_t nc = 0;
                for (uint32_t j = 0; j < n; j++) {
                    uint32_t c = order[j], tc = g->coll[c];
                    int key = p->no_type_key ? (p->kinds >> tc & 1u) != 0 : tc == t;
                    if (g->kind[c] == SB_KIND_START && key && pg_of(g, p, c) == pg)
                        colls[nc++] = c;
                }
                find_buckets(&B, colls, nc, done, bk, scratch, cap);
            }
        }
    if (B.oom)
        goto out;
    rc = reorder(g, order, out_bucket, B.start_anchor, B.wait_anchor, B.next_id);
    if (!rc)
        rc = renumber(g, out_bucket, B.next_id);
out:
    opb_free(&B);
    free(scratch), free(colls), free(bk), free(done);
    return rc;
}
