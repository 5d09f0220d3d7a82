/* dp: the design note's grouper + placer (docs/dp.md).
 *
 * The schedule is a sequence of groups separated by barriers: after a group
 * every device synchronises.  A grouper proposes candidate groups on the
 * frontier of what is left (the first k unfinished tasks of one of several
 * topological orders: a prefix of a topological order is closed under
 * predecessors, so it can run once everything before it has); a placer lists a
 * group's tasks in upward-rank order and puts each on the device where it
 * finishes first, counting copies over the links exactly as the simulator
 * does.  Over the remaining set C,
 *
 *     DP(C) = min over candidate groups g of  profile(placer(g)) + DP(C - g),
 *     DP(empty) = 0.
 *
 * The note writes max; the makespan is what we minimise, so the best
 * continuation is the smallest one: min.  The recurrence is evaluated forwards,
 * memoised on the set of finished tasks, bucket by bucket in the number of
 * finished tasks, so every state is final before it is expanded.  A group's
 * profile depends on where earlier groups put the data it reads, so keeping one
 * state per finished set is exact only when copies cost nothing; the beam
 * (best `beam` states per bucket) and the state cap bound the search on large
 * graphs.
 *
 * The placer (context, states, sb_dp_plan) and the exact simulator the local
 * search scores with (sb_dp_sim_*) are the toolkit's: schedulers/lib/
 * group_place.c, documented in schedbench/policy.h.  This file is dp's
 * search: the grouper's orders, the DP/beam over groups, greedy completion,
 * the incumbent and the local search. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "schedbench/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ORD_ORIGINAL, ORD_BFS, ORD_DFS, ORD_CRITICAL, N_ORDERS };

enum {
    P_MIN_GROUP, P_MAX_GROUP, P_BEAM, P_MAX_PLANS, P_TIME_MS, P_EXHAUSTIVE, P_CAPACITY,
    P_SYNC, P_BUDGET, P_PLACER, P_COUNT
};

static const struct sb_param dp_params[] = {
    {"min_group", SB_PARAM_INT, 1, 1, 1 << 20, NULL, "smallest group, in tasks"},
    {"max_group", SB_PARAM_INT, 64, 1, 1 << 20, NULL,
     "largest group, in tasks; sizes tried are min_group, doubling, and max_group"},
    {"beam", SB_PARAM_INT, 4, 0, 1 << 16, NULL,
     "states kept per number of finished tasks; 0 keeps every state (exact search)"},
    {"max_plans", SB_PARAM_INT, 20000, 0, 1e12, NULL,
     "candidate groups placed before the search turns greedy (0: no cap); "
     "deterministic"},
    {"time_ms", SB_PARAM_DOUBLE, 0, 0, 1e9, NULL,
     "wall-clock budget before the search turns greedy (0: none); makes results "
     "depend on the machine's speed, so off by default"},
    {"exhaustive", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "groups are every closed subset of what is left, not order prefixes "
     "(graphs of at most 16 tasks; for tests)"},
    {"capacity", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "keep each device within its mem_bytes: every placement is checked, a cut of the "
     "file order per device is tried when nothing else fits, and the row says so when "
     "nothing does; 0 ignores memory"},
    {"sync", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "1: the design note's model alone (groups and barriers); 0: HEFT's schedule is "
     "the incumbent, returned when the search finds nothing better or nothing that fits"},
    {"budget", SB_PARAM_INT, 10, 0, 1e9, NULL,
     "work of the search from the incumbent (sync=0), in millions of node-steps: a "
     "simulation costs nodes + edges, a list schedule that times the devices; 0: none; "
     "deterministic"},
    {"placer", SB_PARAM_ENUM, 0, 0, 0, "skyline|note",
     "on devices with named resources: skyline = longest ready task first, each at "
     "its earliest fit in the device's resource profile on the device where it "
     "finishes first; note = the design note's time slots choose the device"},
};

struct dp_conf {
    uint32_t min_group, max_group, beam, exhaustive, capacity, sync, placer;
    uint64_t max_plans, budget;
    double time_ms;
};

static size_t words(const struct sb_dp_ctx *c) { return ((size_t)c->n + 63) / 64; }

static int is_done(const uint64_t *d, uint32_t v) { return (int)(d[v / 64] >> (v % 64) & 1); }

/* ---- the grouper's orders --------------------------------------------------- */

/* Kahn's algorithm over tasks (inputs count as finished): FIFO gives a
 * breadth-first order, LIFO a depth-first one. */
static void kahn(const struct sb_dp_ctx *c, uint32_t *ord, uint32_t *indeg, uint32_t *q, int lifo)
{
    const struct sb_graph_view *g = c->g;
    uint32_t head = 0, tail = 0, n = 0;
    for (uint32_t v = 0; v < c->n; v++) {
        indeg[v] = 0;
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            indeg[v] += g->kind[g->pred[e]] != SB_KIND_INPUT;
    }
    for (uint32_t v = 0; v < c->n; v++)
        if (g->kind[v] != SB_KIND_INPUT && indeg[v] == 0)
            q[tail++] = v;
    while (head < tail) {
        uint32_t v = lifo ? q[--tail] : q[head++];
        ord[n++] = v;
        /* successors pushed in decreasing id when LIFO, so the smallest id pops first */
        uint32_t e0 = g->succ_off[v], e1 = g->succ_off[v + 1];
        for (uint32_t i = 0; i < e1 - e0; i++) {
            uint32_t s = g->succ[lifo ? e1 - 1 - i : e0 + i];
            if (--indeg[s] == 0)
                q[tail++] = s;
        }
        if (lifo && head > 0) { /* keep the stack at the front of q */
            memmove(q, q + head, (tail - head) * sizeof *q);
            tail -= head, head = 0;
        }
    }
}

static int make_orders(const struct sb_dp_ctx *c, uint32_t **ord)
{
    const struct sb_graph_view *g = c->g;
    uint32_t *indeg = malloc(((size_t)c->n + 1) * sizeof *indeg);
    uint32_t *q = malloc(((size_t)c->n + 1) * sizeof *q);
    struct sb_dp_rank *r = malloc(((size_t)c->n + 1) * sizeof *r);
    int rc = -1;
    for (int o = 0; o < N_ORDERS; o++)
        ord[o] = malloc(((size_t)c->n_tasks + 1) * sizeof **ord);
    if (!indeg || !q || !r || !ord[0] || !ord[1] || !ord[2] || !ord[3])
        goto out;
    uint32_t n = 0;
    for (uint32_t v = 0; v < c->n; v++)
        if (g->kind[v] != SB_KIND_INPUT) {
            ord[ORD_ORIGINAL][n] = v;
            r[n++] = (struct sb_dp_rank){c->rank[v], v};
        }
    qsort(r, n, sizeof *r, sb_dp_rank_cmp); /* topological: see upward_rank */
    for (uint32_t i = 0; i < n; i++)
        ord[ORD_CRITICAL][i] = r[i].v;
    kahn(c, ord[ORD_BFS], indeg, q, 0);
    kahn(c, ord[ORD_DFS], indeg, q, 1);
    rc = 0;
out:
    free(indeg), free(q), free(r);
    return rc;
}

/* ---- the search ---------------------------------------------------------- */

struct bucket {
    struct sb_dp_state **s;
    uint32_t n, cap;
};

struct search {
    struct sb_dp_ctx c;
    struct dp_conf conf;
    uint32_t *ord[N_ORDERS];
    uint64_t *key;        /* [n] Zobrist keys: a finished set's hash is their xor */
    struct bucket *b;     /* [n_tasks + 1], by number of finished tasks */
    uint32_t *grp;        /* candidate group */
    uint64_t *tmp_done;   /* scratch bitset */
    uint64_t seq, plans;
    struct timespec t0;
    int oom;
};

static uint64_t splitmix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int worse(const struct sb_dp_state *a, const struct sb_dp_state *b)
{
    return a->t > b->t || (a->t == b->t && a->seq > b->seq);
}

/* The candidate's finished set equals s's? */
static int same_done(struct search *S, const struct sb_dp_state *parent, uint32_t k,
                     const struct sb_dp_state *s)
{
    size_t w = words(&S->c);
    memcpy(S->tmp_done, parent->done, w * sizeof *S->tmp_done);
    for (uint32_t i = 0; i < k; i++)
        S->tmp_done[S->grp[i] / 64] |= 1ull << (S->grp[i] % 64);
    return memcmp(S->tmp_done, s->done, w * sizeof *S->tmp_done) == 0;
}

static int bucket_put(struct bucket *B, struct sb_dp_state *s, uint32_t at)
{
    if (at == B->n) {
        if (B->n == B->cap) {
            uint32_t cap = B->cap ? 2 * B->cap : 8;
            struct sb_dp_state **ns = realloc(B->s, cap * sizeof *ns);
            if (!ns)
                return -1;
            B->s = ns, B->cap = cap;
        }
        B->n++;
    } else {
        sb_dp_state_free(B->s[at]);
    }
    B->s[at] = s;
    return 0;
}

/* Plan the candidate S->grp[0..k) after `parent` and keep it if it is the best
 * way found to its finished set and fits the beam. */
static void offer(struct search *S, const struct sb_dp_state *parent, uint64_t ph, uint32_t k)
{
    double t = sb_dp_plan(&S->c, parent, S->grp, k, NULL, N_ORDERS);
    S->plans++;
    if (t < 0) {
        S->oom = 1;
        return;
    }
    uint64_t h = ph;
    for (uint32_t i = 0; i < k; i++)
        h ^= S->key[S->grp[i]];
    struct bucket *B = &S->b[parent->n_done + k];
    uint32_t at = B->n;
    for (uint32_t i = 0; i < B->n; i++)
        if (B->s[i]->hash == h && same_done(S, parent, k, B->s[i])) {
            if (t >= B->s[i]->t) /* ties keep the first found: deterministic */
                return;
            at = i;
            break;
        }
    if (at == B->n && S->conf.beam && B->n >= S->conf.beam) {
        at = 0;
        for (uint32_t i = 1; i < B->n; i++)
            if (worse(B->s[i], B->s[at]))
                at = i;
        if (t >= B->s[at]->t)
            return;
    }
    struct sb_dp_state *s = sb_dp_plan_state(&S->c, parent, k, t, N_ORDERS);
    if (!s || bucket_put(B, s, at)) {
        sb_dp_state_free(s);
        S->oom = 1;
        return;
    }
    s->seq = S->seq++;
    s->hash = h;
}

/* Groups of the prefix kind: the first k unfinished tasks of each order. */
/* The first `want` unfinished tasks of order o into S->grp; returns how many.
 * cursor[o] is the order's first position not done. */
static uint32_t prefix(struct search *S, const uint64_t *done, uint32_t *cursor, int o,
                       uint32_t want)
{
    const uint32_t *ord = S->ord[o];
    uint32_t k = 0;
    while (cursor[o] < S->c.n_tasks && is_done(done, ord[cursor[o]]))
        cursor[o]++;
    for (uint32_t p = cursor[o]; p < S->c.n_tasks && k < want; p++)
        if (!is_done(done, ord[p]))
            S->grp[k++] = ord[p];
    return k;
}

static void expand_prefixes(struct search *S, struct sb_dp_state *s, uint64_t h)
{
    uint32_t left = S->c.n_tasks - s->n_done;
    uint32_t want = S->conf.max_group < left ? S->conf.max_group : left;
    for (int o = 0; o < N_ORDERS && !S->oom; o++) {
        uint32_t k = prefix(S, s->done, s->cursor, o, want), size = S->conf.min_group;
        for (; k > 0 && size < k && !S->oom; size *= 2)
            offer(S, s, h, size);
        if (k > 0 && !S->oom)
            offer(S, s, h, k);
    }
}

/* Groups of the exhaustive kind: every closed subset of what is left. */
static void expand_all(struct search *S, struct sb_dp_state *s, uint64_t h)
{
    const struct sb_graph_view *g = S->c.g;
    uint32_t rem[16], r = 0, predmask[16];
    for (uint32_t v = 0; v < S->c.n; v++)
        if (g->kind[v] != SB_KIND_INPUT && !is_done(s->done, v))
            rem[r++] = v;
    for (uint32_t i = 0; i < r; i++) {
        predmask[i] = 0;
        for (uint32_t e = g->pred_off[rem[i]]; e < g->pred_off[rem[i] + 1]; e++)
            for (uint32_t j = 0; j < r; j++)
                if (rem[j] == g->pred[e])
                    predmask[i] |= 1u << j;
    }
    for (uint32_t mask = 1; mask < (1u << r) && !S->oom; mask++) {
        uint32_t k = 0, closed = 1;
        for (uint32_t i = 0; i < r; i++)
            if (mask >> i & 1) {
                closed &= (predmask[i] & ~mask) == 0;
                S->grp[k++] = rem[i];
            }
        if (closed && k >= S->conf.min_group && k <= S->conf.max_group)
            offer(S, s, h, k);
    }
}

static double elapsed_ms(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

static int by_t(const void *x, const void *y)
{
    const struct sb_dp_state *a = *(const struct sb_dp_state *const *)x;
    const struct sb_dp_state *b = *(const struct sb_dp_state *const *)y;
    return worse(a, b) ? 1 : worse(b, a) ? -1 : 0;
}

static int spent(const struct search *S)
{
    return (S->conf.max_plans && S->plans >= S->conf.max_plans) ||
           (S->conf.time_ms > 0 && elapsed_ms(&S->t0) > S->conf.time_ms);
}

/* A state of the greedy chain: what reconstruction needs, taken from the
 * scratch after its group was placed. */
static struct sb_dp_state *chain_state(struct search *S, const struct sb_dp_state *parent,
                                    uint32_t k, double t)
{
    const struct sb_dp_ctx *c = &S->c;
    struct sb_dp_state *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->t = t, o->parent = parent, o->k = k, o->n_done = parent->n_done + k;
    o->group = malloc(((size_t)k + 1) * sizeof *o->group);
    o->gdev = malloc(((size_t)k + 1) * sizeof *o->gdev);
    o->in_node = malloc(((size_t)c->n_newin + 1) * sizeof *o->in_node);
    o->in_dev = malloc(((size_t)c->n_newin + 1) * sizeof *o->in_dev);
    if (!o->group || !o->gdev || !o->in_node || !o->in_dev) {
        sb_dp_state_free(o);
        return NULL;
    }
    for (uint32_t i = 0; i < k; i++)
        o->group[i] = c->sorted[i], o->gdev[i] = c->dev[c->sorted[i]];
    o->n_in = c->n_newin;
    for (uint32_t i = 0; i < c->n_newin; i++)
        o->in_node[i] = c->newin[i], o->in_dev[i] = c->dev[c->newin[i]];
    o->seq = S->seq++;
    return o;
}

/* Once the budget is spent: from s, repeatedly take the order whose next
 * max_group tasks finish first.  Each step places N_ORDERS groups, so the rest
 * of a large graph costs about N_ORDERS * n / max_group placements.
 *
 * The steps form a chain, so the scratch is loaded from s once and then
 * carries every group placed since: a node that has left the cut is never read
 * again (only inputs of unfinished tasks are), so planning on it is planning
 * on the cut, without copying the cut into every state.  Trial plans are
 * undone; the chosen one is placed again and kept.  (Reloading the cut per
 * plan made this phase quadratic: the cut of a Llama backward grows with the
 * graph.) */
static const struct sb_dp_state *greedy(struct search *S, struct sb_dp_state *s)
{
    struct sb_dp_ctx *c = &S->c;
    size_t nd2 = (size_t)c->nd * c->nd;
    double *link = malloc((nd2 + 1) * sizeof *link);
    if (!link) {
        S->oom = 1;
        return NULL;
    }
    sb_dp_load(c, s);
    memcpy(link, s->link, nd2 * sizeof *link);
    /* s is not expanded again: its done set and cursors become the chain's */
    uint64_t *done = s->done;
    uint32_t *cursor = s->cursor;
    s->done = NULL, s->cursor = NULL;
    double t = s->t;
    c->journal = 1, c->n_jcopy = 0;
    while (s->n_done < c->n_tasks && !S->oom) {
        uint32_t left = c->n_tasks - s->n_done;
        uint32_t want = S->conf.max_group < left ? S->conf.max_group : left;
        int best_o = -1;
        double best_t = INFINITY;
        for (int o = 0; o <= N_ORDERS; o++) {
            int keep = o == N_ORDERS;
            if (keep && best_o < 0) {
                S->oom = 1;
                break;
            }
            uint32_t k = prefix(S, done, cursor, keep ? best_o : o, want);
            memcpy(c->link, link, nd2 * sizeof *link);
            for (uint32_t a = 0; a < c->nd; a++)
                c->stream[a] = c->res[a] = t;
            double tt = sb_dp_place(c, t, S->grp, k);
            if (!keep) {
                S->plans++;
                sb_dp_undo_plan(c);
                if (tt >= 0 && tt < best_t)
                    best_t = tt, best_o = o;
                continue;
            }
            /* the chosen group, placed for good */
            struct sb_dp_state *n = tt < 0 ? NULL : chain_state(S, s, k, tt);
            if (!n || bucket_put(&S->b[n->n_done], n, S->b[n->n_done].n)) {
                sb_dp_state_free(n);
                S->oom = 1;
                break;
            }
            for (uint32_t i = 0; i < k; i++)
                done[S->grp[i] / 64] |= 1ull << (S->grp[i] % 64);
            memcpy(link, c->link, nd2 * sizeof *link);
            c->n_jcopy = 0;
            t = tt;
            sb_dp_state_shrink(s);
            s = n;
        }
    }
    c->journal = 0;
    free(link), free(done), free(cursor);
    return S->oom ? NULL : s;
}

/* Expands bucket by bucket, best states first; once the budget is spent the
 * best state of the next bucket is completed greedily. */
static const struct sb_dp_state *search(struct search *S)
{
    for (uint32_t n = 0; n < S->c.n_tasks && !S->oom; n++) {
        struct bucket *B = &S->b[n];
        if (!B->n)
            continue;
        qsort(B->s, B->n, sizeof *B->s, by_t);
        if (spent(S))
            return greedy(S, B->s[0]);
        for (uint32_t i = 0; i < B->n && !S->oom; i++) {
            if (S->conf.exhaustive)
                expand_all(S, B->s[i], B->s[i]->hash);
            else
                expand_prefixes(S, B->s[i], B->s[i]->hash);
            sb_dp_state_shrink(B->s[i]);
        }
    }
    const struct bucket *F = &S->b[S->c.n_tasks];
    const struct sb_dp_state *best = NULL;
    for (uint32_t i = 0; i < F->n; i++)
        if (!best || worse(best, F->s[i]))
            best = F->s[i];
    return best;
}

/* ---- the schedule ----------------------------------------------------------- */

/* Inputs first (each where its first consumer was placed; unread ones on
 * their pre-assigned device or 0), then the groups in order, a barrier after
 * every group but the last. */
static int emit(const struct search *S, const struct sb_dp_state *best, struct sb_schedule *out)
{
    const struct sb_graph_view *g = S->c.g;
    uint32_t n_groups = 0, pos = 0;
    for (const struct sb_dp_state *s = best; s && s->parent; s = s->parent)
        n_groups++;
    const struct sb_dp_state **chain = malloc(((size_t)n_groups + 1) * sizeof *chain);
    if (!chain)
        return -1;
    uint32_t i = n_groups;
    for (const struct sb_dp_state *s = best; s && s->parent; s = s->parent)
        chain[--i] = s;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->kind[v] == SB_KIND_INPUT) {
            out->order[pos++] = v;
            out->device[v] = g->device[v] >= 0 ? g->device[v] : 0;
        }
    for (i = 0; i < n_groups; i++) {
        const struct sb_dp_state *s = chain[i];
        for (uint32_t j = 0; j < s->n_in; j++)
            out->device[s->in_node[j]] = s->in_dev[j];
        for (uint32_t j = 0; j < s->k; j++) {
            out->order[pos] = s->group[j];
            out->device[s->group[j]] = s->gdev[j];
            pos++;
        }
        if (i + 1 < n_groups && out->barrier)
            out->barrier[pos - 1] = 1;
    }
    free(chain);
    return 0;
}

static void search_free(struct search *S)
{
    if (S->b)
        for (uint32_t n = 0; n <= S->c.n_tasks; n++) {
            for (uint32_t i = 0; i < S->b[n].n; i++)
                sb_dp_state_free(S->b[n].s[i]);
            free(S->b[n].s);
        }
    free(S->b);
    for (int o = 0; o < N_ORDERS; o++)
        free(S->ord[o]);
    free(S->key), free(S->grp), free(S->tmp_done);
    sb_dp_ctx_free(&S->c);
}

static int check_graph(const struct sb_graph_view *g, const struct dp_conf *conf,
                       uint32_t n_tasks, struct sb_schedule *out)
{
    uint32_t nd = g->machine->n_devices;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->device[v] >= (int32_t)nd)
            return sb_plugin_fail(out->err, out->n_err,
                                  "dp: node %u is pre-assigned to device %d; the machine "
                                  "has %u (run it with its --machine)", v, g->device[v], nd);
    if (conf->exhaustive && n_tasks > 16)
        return sb_plugin_fail(out->err, out->n_err,
                              "dp: exhaustive=1 enumerates every subset and takes graphs of "
                              "at most 16 non-input nodes; this one has %u", n_tasks);
    return 0;
}

/* capacity=1: the placement's per-device peaks by the simulator's rules
 * (sb_mem_dev_peaks); one over a device's mem_bytes is refused with a message
 * the row keeps (docs/dp.md, "What it does not model"). */
/* Per-device peaks of (order, dev) by the simulator's rules: 0 when every
 * device is within its mem_bytes, 1 when one is not (its index and need in
 * *over and peak[*over]), -1 when out of memory.  peak has n_devices. */
static int memory_fits(const struct sb_graph_view *g, const uint32_t *order, const int32_t *dev,
                       uint64_t *peak, uint32_t *over)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t *root = malloc(((size_t)g->n_nodes + 1) * sizeof *root);
    if (!root)
        return -1;
    sb_dp_view_roots(g, root);
    int rc = sb_mem_dev_peaks(g, order, dev, root, peak) ? -1 : 0;
    free(root);
    for (uint32_t a = 0; a < m->n_devices && !rc; a++)
        if (peak[a] > m->mem_cap_bytes[a])
            *over = a, rc = 1;
    return rc;
}

/* Some device of m has a memory capacity. */
static int has_capacity(const struct sb_machine_view *m)
{
    for (uint32_t a = 0; a < m->n_devices; a++)
        if (m->mem_cap_bytes[a] != SB_MEM_UNLIMITED)
            return 1;
    return 0;
}

static int check_capacity(const struct sb_graph_view *g, struct sb_schedule *out)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t nd = m->n_devices, a = 0;
    if (!has_capacity(m))
        return 0;
    uint64_t *peak = malloc(nd * sizeof *peak);
    int rc = peak ? memory_fits(g, out->order, out->device, peak, &a) : -1;
    if (rc < 0)
        rc = sb_plugin_fail(out->err, out->n_err, "dp: out of memory");
    else if (rc)
        rc = sb_plugin_fail(out->err, out->n_err,
                            "dp: its placement needs %llu bytes on %s, capacity %llu; "
                            "dp found none within device memory (capacity=0 ignores "
                            "memory)", (unsigned long long)peak[a], m->dev_name[a],
                            (unsigned long long)m->mem_cap_bytes[a]);
    free(peak);
    return rc;
}

/* The schedule (order, dev) into out, without barriers. */
static void emit_plain(struct sb_schedule *out, const uint32_t *order, const int32_t *dev,
                       uint32_t n)
{
    memcpy(out->order, order, (size_t)n * sizeof *out->order);
    memcpy(out->device, dev, (size_t)n * sizeof *out->device);
    if (out->barrier)
        memset(out->barrier, 0, n);
}

/* ---- placements built for memory --------------------------------------------
 *
 * When neither the grouped search nor heft finds a placement within device
 * memory, that does not mean none exists: heft and the grouped search both
 * keep an order that overlaps work, and an order that overlaps holds many
 * buffers at once.  The plainest placement that spreads memory is a pipeline
 * split: the file's order (topological) cut into one contiguous stretch per
 * device, each stretch's share in proportion to its device's memory.  Two
 * such cuts are tried, by the bytes the nodes own and by their time; the
 * shorter one within memory is kept and stage 3 improves it (keeping only
 * candidates that fit).  `llama-h8192-...` on four 40 GB GPUs: heft's own
 * plan needs 90 GB on one device; both cuts fit at 24 to 26 GB each. */
static double split_share(const struct sb_machine_view *m, uint32_t a, double largest)
{
    return m->mem_cap_bytes[a] == SB_MEM_UNLIMITED ? largest : (double)m->mem_cap_bytes[a];
}

static void split_place(const struct sb_graph_view *g, int by_time, int32_t *dev)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t n = g->n_nodes, nd = m->n_devices;
    double total = 0, largest = 0, shares = 0, acc = 0;
    for (uint32_t a = 0; a < nd; a++)
        if (m->mem_cap_bytes[a] != SB_MEM_UNLIMITED && (double)m->mem_cap_bytes[a] > largest)
            largest = (double)m->mem_cap_bytes[a];
    for (uint32_t a = 0; a < nd; a++)
        shares += split_share(m, a, largest);
    for (uint32_t v = 0; v < n; v++)
        total += by_time ? g->dur_us[v] : (double)g->out_bytes[v];
    uint32_t a = 0;
    double end = total * split_share(m, 0, largest) / shares;
    for (uint32_t v = 0; v < n; v++) {
        while (a + 1 < nd && acc >= end && total > 0)
            a++, end += total * split_share(m, a, largest) / shares;
        acc += by_time ? g->dur_us[v] : (double)g->out_bytes[v];
        uint32_t d = a;
        /* a compute that cannot run on its stretch's device: the next that can */
        for (uint32_t k = 0; k < nd && g->kind[v] == SB_KIND_COMPUTE &&
                             !isfinite(g->dev_dur_us[(size_t)v * nd + d]); k++)
            d = (d + 1) % nd;
        if (g->device[v] >= 0)
            d = (uint32_t)g->device[v];
        else if (g->kind[v] == SB_KIND_DONE)
            d = (uint32_t)dev[g->partner[v]];
        else if (sb_dp_is_view(g, v))
            d = (uint32_t)dev[g->pred[g->pred_off[v]]];
        dev[v] = (int32_t)d;
    }
}

/* Returns 0 when a cut fits (out then holds it), -1 otherwise; out->err is
 * left as it was. */
static int split_fallback(const struct sb_graph_view *g, struct sb_schedule *out)
{
    uint32_t n = g->n_nodes, over;
    uint32_t *order = malloc(((size_t)n + 1) * sizeof *order);
    int32_t *dev = malloc(((size_t)n + 1) * sizeof *dev);
    int32_t *keep = malloc(((size_t)n + 1) * sizeof *keep);
    uint64_t *peak = malloc(g->machine->n_devices * sizeof *peak);
    double best = INFINITY;
    if (!order || !dev || !keep || !peak)
        goto out;
    for (uint32_t v = 0; v < n; v++)
        order[v] = v;
    for (int by_time = 0; by_time < 2; by_time++) {
        split_place(g, by_time, dev);
        if (memory_fits(g, order, dev, peak, &over) != 0)
            continue;
        double t = sb_dp_simulate(g, order, dev);
        if (t < best)
            best = t, memcpy(keep, dev, (size_t)n * sizeof *dev);
    }
    if (isfinite(best))
        emit_plain(out, order, keep, n);
out:
    free(order), free(dev), free(keep), free(peak);
    return isfinite(best) ? 0 : -1;
}

/* HEFT's schedule as the incumbent (sync=0): heft plans with the
 * simulator's rules, so its predicted makespan is the simulated one, as dp's
 * is; it replaces dp's schedule when it is shorter, or when dp's does not fit
 * in memory and heft's does.  Returns 0 when it replaced it. */
static int incumbent(const struct sb_graph_view *g, struct sb_schedule *out, double dp_us,
                     int fits, int capacity)
{
    uint32_t n = g->n_nodes;
    struct sb_schedule h = {.n_nodes = n, .n_devices = out->n_devices, .n_err = 256};
    double heft_us = INFINITY;
    int rc = -1;
    h.order = malloc(((size_t)n + 1) * sizeof *h.order);
    h.device = malloc(((size_t)n + 1) * sizeof *h.device);
    h.err = malloc(h.n_err);
    if (!h.order || !h.device || !h.err)
        goto out;
    for (uint32_t v = 0; v < n; v++)
        h.device[v] = g->device[v] >= 0 ? g->device[v] : 0;
    if (fits && capacity) {
        /* dp's schedule fits: heft's replaces it only when shorter and within
         * memory, so HEFT's own plan is the only one worth making (steering
         * it into memory costs a plan per attempt, 3 s each at 1M nodes on
         * 8 GPUs, and only lengthens it) */
        int heft_fits;
        if (sb_heft_plan_memory(g, &h, &heft_us, 1, &heft_fits) || !heft_fits)
            goto out;
    } else if (capacity && has_capacity(g->machine)) {
        /* dp's does not fit: heft's replaces it only if it does (on one
         * device sb_heft_plan returns the order whether or not it fits,
         * so the search within memory is asked for by name) */
        int heft_fits;
        if (sb_heft_plan_memory(g, &h, &heft_us, 0, &heft_fits) || !heft_fits)
            goto out;
    } else if (sb_heft_plan_caps(g, &h, &heft_us, NULL)) {
        goto out;
    }
    if (fits && !(heft_us < dp_us))
        goto out;
    emit_plain(out, h.order, h.device, n);
    rc = 0;
out:
    free(h.order), free(h.device), free(h.err);
    return rc;
}

/* ---- local search from the incumbent (sync=0) --------------------------------
 *
 * The schedule returned so far (HEFT's, or the grouped search's when shorter)
 * is improved by moves, each scored by simulating the whole schedule with the
 * simulator's rules (sb_dp_simulate: harness/src/core/sim.c under the default
 * --sim, docs/machines.md), so a move is kept only when the makespan the
 * harness will report goes down.  Barriers are dropped first: without them
 * every start time is the same max-plus expression with fewer terms, so the
 * makespan can only fall.  The moves are driven by the critical path of the
 * current schedule (the chain of nodes whose finish bound the next one's
 * start, from the node that ends last):
 *
 *   1. move a node of the path to another device, keeping the order (a start
 *      takes its done along; a done moves with its start);
 *   2. move a node of the path to just before the node that held its stream
 *      (when its producers all come before that one);
 *   3. after a kept move, re-sort the order by simulated start time (ties by
 *      position, so producers stay first) and keep that when not worse.
 *
 * The first improving move is kept and the path recomputed; the search stops
 * when no move of the path improves, when the makespan reaches the lower
 * bound, or when `budget` simulations have run.  Each simulation is one pass
 * over the order (O(nodes + edges)); the path is short, so a pass of moves
 * costs a few hundred simulations on the 8k-node Llama backward. */

/* Lower bound as bound.c's (docs/machines.md): the critical path with every
 * node on its fastest device, and the fastest work spread over the devices. */
static double ls_bound(const struct sb_graph_view *g)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    double *up = malloc(((size_t)n + 1) * sizeof *up), cp = 0, work = 0;
    if (!up)
        return 0;
    for (uint32_t v = 0; v < n; v++) {
        double w = 0;
        if (g->kind[v] == SB_KIND_COMPUTE) {
            w = INFINITY;
            for (uint32_t a = 0; a < nd; a++)
                if (g->dev_dur_us[(size_t)v * nd + a] < w)
                    w = g->dev_dur_us[(size_t)v * nd + a];
            if (!isfinite(w))
                w = 0;
            work += w;
        } else if (g->kind[v] == SB_KIND_START) {
            w = g->dur_us[v];
        }
        double t = 0;
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            if (up[g->pred[e]] > t)
                t = up[g->pred[e]];
        up[v] = t + w;
        if (up[v] > cp)
            cp = up[v];
    }
    free(up);
    /* 1e-9 below: the bound is a stopping test, never a claim */
    double lb = cp > work / nd ? cp : work / nd;
    return lb * (1 - 1e-9);
}

struct dp_improve {
    struct sb_dp_sim L;
    uint32_t *order, *pos, *tmp;
    int32_t *dev;
    struct sb_heft_key *key;
    double *kt;      /* [n] sort key of each node */
    uint32_t *heap, *indeg; /* [n] ready nodes and producers left (list schedules) */
    uint32_t *path, n_path;
    uint8_t *on_path;
    uint64_t evals, budget; /* work done and allowed, in node-steps (eval_cost per
                               simulation, list_cost per list schedule) */
    uint64_t eval_cost, list_cost;
    int capacity;  /* check memory before keeping a move */
    int free_done; /* list schedules may put a done on another device than its start */
    uint32_t *root;
    uint64_t *peak;
};

static int ls_fits(struct dp_improve *I)
{
    const struct sb_graph_view *g = I->L.g;
    const struct sb_machine_view *m = g->machine;
    if (!I->capacity)
        return 1;
    if (sb_mem_dev_peaks(g, I->order, I->dev, I->root, I->peak))
        return 0;
    for (uint32_t a = 0; a < m->n_devices; a++)
        if (I->peak[a] > m->mem_cap_bytes[a])
            return 0;
    return 1;
}

/* The budget still pays for work `cost` (a simulation or a list schedule):
 * stage 3 never starts one it cannot finish within `budget`. */
static int ls_afford(const struct dp_improve *I, uint64_t cost)
{
    return I->evals + cost <= I->budget;
}

static double ls_score(struct dp_improve *I)
{
    I->evals += I->eval_cost;
    return sb_dp_sim_eval(&I->L, I->order, I->dev);
}

/* The critical path of the last simulation, from the node that ends last. */
static void ls_path(struct dp_improve *I)
{
    for (uint32_t i = 0; i < I->n_path; i++)
        I->on_path[I->path[i]] = 0;
    I->n_path = 0;
    for (uint32_t v = I->L.last; v != UINT32_MAX && !I->on_path[v]; v = I->L.why[v]) {
        I->on_path[v] = 1;
        I->path[I->n_path++] = v;
    }
}

/* Re-sort the order by the last simulation's start times (inputs first,
 * ties by position). */
static void ls_resort(struct dp_improve *I)
{
    const struct sb_graph_view *g = I->L.g;
    /* a node's key is at least its producers' (a done may start before its
     * own start when they sit on different devices: the done's wait for the
     * collective is not an input edge), so the order stays topological */
    for (uint32_t i = 0; i < I->L.n; i++) {
        uint32_t v = I->order[i];
        double k = g->kind[v] == SB_KIND_INPUT ? -1 : I->L.start[v];
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            if (I->kt[g->pred[e]] > k)
                k = I->kt[g->pred[e]];
        I->kt[v] = k;
        I->key[i] = (struct sb_heft_key){k, v, i};
    }
    qsort(I->key, I->L.n, sizeof *I->key, sb_heft_key_cmp_asc);
    for (uint32_t i = 0; i < I->L.n; i++)
        I->order[i] = I->key[i].id, I->pos[I->key[i].id] = i;
}

static int ls_better(double a, double b) { return a < b - 1e-9 * (b > 1 ? b : 1); }

/* The node that moves when v does (a done moves with its start in the first
 * round, alone in the second); UINT32_MAX when it cannot move. */
static uint32_t ls_mover(const struct sb_graph_view *g, uint32_t v, int alone)
{
    if (g->kind[v] == SB_KIND_DONE && !alone)
        v = g->partner[v];
    else if (g->kind[v] != SB_KIND_DONE && alone)
        return UINT32_MAX;
    return g->device[v] >= 0 ? UINT32_MAX : v;
}

/* The done that moves with v: a start's, when they are on one device and the
 * done is free to move; UINT32_MAX none. */
static uint32_t ls_follower(const struct dp_improve *I, uint32_t v)
{
    const struct sb_graph_view *g = I->L.g;
    if (g->kind[v] != SB_KIND_START || g->partner[v] == SB_NONE)
        return UINT32_MAX;
    uint32_t w = g->partner[v];
    return g->device[w] < 0 && I->dev[w] == I->dev[v] ? w : UINT32_MAX;
}

/* Move v from position from to position to < from. */
static void ls_move_up(struct dp_improve *I, uint32_t from, uint32_t to)
{
    uint32_t v = I->order[from];
    memmove(&I->order[to + 1], &I->order[to], (size_t)(from - to) * sizeof *I->order);
    I->order[to] = v;
    for (uint32_t i = to; i <= from; i++)
        I->pos[I->order[i]] = i;
}

static void ls_move_down(struct dp_improve *I, uint32_t from, uint32_t to)
{
    uint32_t v = I->order[from];
    memmove(&I->order[from], &I->order[from + 1], (size_t)(to - from) * sizeof *I->order);
    I->order[to] = v;
    for (uint32_t i = from; i <= to; i++)
        I->pos[I->order[i]] = i;
}

/* One pass over the critical path; returns 1 when a move was kept (*best
 * updated, the last simulation is of the new schedule). */
static int ls_pass(struct dp_improve *I, double *best, double lb)
{
    const struct sb_graph_view *g = I->L.g;
    uint32_t nd = I->L.nd;
    for (uint32_t k = 0; k < I->n_path && ls_afford(I, I->eval_cost); k++) {
        uint32_t v = I->path[k];
        /* 1. another device (a done: with its start, then alone) */
        for (int alone = 0; alone < 2 && nd > 1; alone++) {
            uint32_t mv = ls_mover(g, v, alone);
            if (mv == UINT32_MAX)
                continue;
            int32_t old = I->dev[mv];
            uint32_t fw = ls_follower(I, mv);
            for (uint32_t d = 0; d < nd && ls_afford(I, I->eval_cost); d++) {
                if ((int32_t)d == old || (g->kind[mv] == SB_KIND_COMPUTE &&
                                          !isfinite(g->dev_dur_us[(size_t)mv * nd + d])))
                    continue;
                I->dev[mv] = (int32_t)d;
                if (fw != UINT32_MAX)
                    I->dev[fw] = (int32_t)d;
                double t = ls_score(I);
                if (ls_better(t, *best) && ls_fits(I)) {
                    *best = t;
                    return 1;
                }
                I->dev[mv] = old;
                if (fw != UINT32_MAX)
                    I->dev[fw] = old;
            }
        }
        /* 2. ahead of the node that held its stream */
        uint32_t u = I->L.why[v];
        if (u != UINT32_MAX && g->kind[v] != SB_KIND_INPUT && I->dev[u] == I->dev[v] &&
            I->pos[u] < I->pos[v] && ls_afford(I, I->eval_cost)) {
            int ok = 1;
            for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1] && ok; e++)
                ok = I->pos[g->pred[e]] < I->pos[u];
            if (ok) {
                uint32_t from = I->pos[v], to = I->pos[u];
                ls_move_up(I, from, to);
                double t = ls_score(I);
                if (ls_better(t, *best) && ls_fits(I)) {
                    *best = t;
                    return 1;
                }
                ls_move_down(I, to, from);
            }
        }
        if (*best <= lb)
            return 0;
    }
    return 0;
}

/* ---- list schedules scored exactly ------------------------------------------
 *
 * Before the local search, a few list schedules compete with the incumbent.
 * Nodes are taken in decreasing upward rank (`alpha` weighs the mean copy
 * time on each edge: 0 ranks by compute alone, 1 is HEFT's rank) and each is
 * appended on the device that minimises finish + beta * (link time of the
 * copies it queues there): beta = 0 is earliest finish without insertion,
 * a larger beta keeps data where it is.  Appending is exactly what the
 * simulator does when it reaches the node, so each step is priced with
 * sb_dp_sim_step and the list is the simulated schedule. */

static void ls_rank(const struct sb_graph_view *g, const uint32_t *root, double alpha,
                    double *rank)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t nd = m->n_devices, k = 0;
    double lat = 0, inv = 0;
    for (uint32_t a = 0; a < nd; a++)
        for (uint32_t b = 0; b < nd; b++)
            if (a != b && !m->can_read[(size_t)b * nd + a]) {
                lat += m->link_lat_us[(size_t)a * nd + b];
                inv += 1.0 / (m->link_gbps[(size_t)a * nd + b] * 1e3);
                k++;
            }
    if (k)
        lat /= k, inv /= k;
    for (uint32_t v = g->n_nodes; v-- > 0;) {
        double tail = 0, w = alpha * (lat + (double)g->out_bytes[root[v]] * inv), sum = 0;
        uint32_t n_ok = 0;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++) {
            uint32_t s = g->succ[e];
            double x = g->kind[v] == SB_KIND_START && g->partner[v] == s ? g->dur_us[v] : w;
            if (x + rank[s] > tail)
                tail = x + rank[s];
        }
        if (g->kind[v] == SB_KIND_COMPUTE)
            for (uint32_t a = 0; a < nd; a++)
                if (isfinite(g->dev_dur_us[(size_t)v * nd + a]))
                    sum += g->dev_dur_us[(size_t)v * nd + a], n_ok++;
        rank[v] = (n_ok ? sum / n_ok : 0) + tail;
    }
}

static uint64_t ls_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double ls_unit(uint64_t *s) { return (double)(ls_rand(s) >> 11) * 0x1.0p-53; }

/* Ready nodes, highest priority first (ties: lowest id). */
struct ls_heap {
    uint32_t *a, n;
    const double *prio;
};

static int ls_heap_before(const struct ls_heap *H, uint32_t x, uint32_t y)
{
    return H->prio[x] > H->prio[y] || (H->prio[x] == H->prio[y] && x < y);
}

static void ls_heap_push(struct ls_heap *H, uint32_t v)
{
    uint32_t i = H->n++;
    while (i > 0 && ls_heap_before(H, v, H->a[(i - 1) / 2])) {
        H->a[i] = H->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    H->a[i] = v;
}

static uint32_t ls_heap_pop(struct ls_heap *H)
{
    uint32_t top = H->a[0], v = H->a[--H->n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= H->n)
            break;
        if (c + 1 < H->n && ls_heap_before(H, H->a[c + 1], H->a[c]))
            c++;
        if (!ls_heap_before(H, H->a[c], v))
            break;
        H->a[i] = H->a[c];
        i = c;
    }
    if (H->n)
        H->a[i] = v;
    return top;
}

/* One list schedule into I->order and I->dev: among the nodes whose
 * producers are placed, the one of highest prio[] next, on the device that
 * minimises finish + beta * its copies' link time; returns its simulated
 * makespan. */
static double ls_list(struct dp_improve *I, const double *prio, double beta, double q,
                      uint64_t *seed)
{
    const struct sb_graph_view *g = I->L.g;
    uint32_t n = I->L.n, nd = I->L.nd, pos = 0;
    struct sb_dp_sim *L = &I->L;
    struct ls_heap H = {I->heap, 0, prio};
    sb_dp_sim_reset(L);
    for (uint32_t v = 0; v < n; v++) {
        I->dev[v] = g->device[v];
        I->indeg[v] = 0;
        if (g->kind[v] == SB_KIND_INPUT) {
            I->order[pos++] = v;
            L->start[v] = L->fin[v] = 0, L->why[v] = UINT32_MAX;
            continue;
        }
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            I->indeg[v] += g->kind[g->pred[e]] != SB_KIND_INPUT;
        if (!I->indeg[v])
            ls_heap_push(&H, v);
    }
    while (H.n) {
        uint32_t v = ls_heap_pop(&H), lo = 0, hi = nd, best = UINT32_MAX;
        if (g->device[v] >= 0)
            lo = (uint32_t)g->device[v], hi = lo + 1;
        else if (g->kind[v] == SB_KIND_DONE && I->dev[g->partner[v]] >= 0 && !I->free_done)
            lo = (uint32_t)I->dev[g->partner[v]], hi = lo + 1;
        double best_s = INFINITY, second_s = INFINITY;
        uint32_t second = UINT32_MAX;
        for (uint32_t d = lo; d < hi && lo + 1 < hi; d++) {
            if (g->kind[v] == SB_KIND_COMPUTE && !isfinite(g->dev_dur_us[(size_t)v * nd + d]))
                continue;
            double x, f = sb_dp_sim_step(L, I->dev, v, d, 0, &x);
            if (f + beta * x < best_s) {
                second_s = best_s, second = best;
                best_s = f + beta * x, best = d;
            } else if (f + beta * x < second_s) {
                second_s = f + beta * x, second = d;
            }
        }
        /* randomised runs take the runner-up now and then (GRASP's
         * restricted candidate list of two) */
        if (q > 0 && second != UINT32_MAX && ls_unit(seed) < q)
            best = second;
        if (best == UINT32_MAX)
            best = lo; /* no device can run it: validation says so */
        I->dev[v] = (int32_t)best;
        sb_dp_sim_step(L, I->dev, v, best, 1, NULL);
        I->order[pos++] = v;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--I->indeg[g->succ[e]] == 0)
                ls_heap_push(&H, g->succ[e]);
    }
    for (uint32_t v = 0; v < n; v++)
        if (I->dev[v] < 0)
            I->dev[v] = 0; /* inputs nobody reads */
    return sb_dp_sim_eval(L, I->order, I->dev);
}

/* The list schedules: HEFT's rank (alpha = 1), compute alone (0) and copies
 * doubled (2), each with every beta below; then, while the budget's share
 * lasts (a quarter), random priorities around the best so far: each node's
 * key is its start in the best schedule (or its rank) plus noise of up to
 * its mean duration, so nearby nodes change places (randomised list
 * scheduling, a deterministic generator).  The best that fits replaces I's
 * schedule when shorter than *best. */
static const double ls_alpha[] = {1, 0, 2};
/* random list schedules in a row without a better one before the phase
 * ends (tiny graphs stop early instead of spending the budget) */
#define LS_STALE 1000
static const double ls_beta[] = {0, 0.5, 1, 2, 4};

static int ls_lists(struct dp_improve *I, double *best, double lb)
{
    const struct sb_graph_view *g = I->L.g;
    uint32_t n = I->L.n, nd = I->L.nd;
    int32_t *keep_dev = malloc(((size_t)n + 1) * sizeof *keep_dev);
    uint32_t *keep_order = malloc(((size_t)n + 1) * sizeof *keep_order);
    double *rank = malloc(((size_t)n + 1) * sizeof *rank);
    double *prio = malloc(((size_t)n + 1) * sizeof *prio);
    double *keep_start = malloc(((size_t)n + 1) * sizeof *keep_start);
    double *scale = malloc(((size_t)n + 1) * sizeof *scale);
    int changed = 0;
    uint64_t seed = 0x5eed;
    if (!keep_dev || !keep_order || !rank || !prio || !keep_start || !scale) {
        changed = -1;
        goto out;
    }
    memcpy(keep_order, I->order, (size_t)n * sizeof *keep_order);
    memcpy(keep_dev, I->dev, (size_t)n * sizeof *keep_dev);
    sb_dp_sim_eval(&I->L, I->order, I->dev);
    memcpy(keep_start, I->L.start, (size_t)n * sizeof *keep_start);
    double best_beta = 0;
    for (size_t ia = 0; ia < sizeof ls_alpha / sizeof *ls_alpha; ia++) {
        ls_rank(g, I->root, ls_alpha[ia], rank);
        for (size_t ib = 0; ib < sizeof ls_beta / sizeof *ls_beta && ls_afford(I, I->list_cost); ib++) {
            I->evals += I->list_cost;
            I->free_done = ia == 0 && ib == 1;
            double t = ls_list(I, rank, ls_beta[ib], 0, &seed);
            if (ls_better(t, *best) && ls_fits(I)) {
                *best = t, changed = 1, best_beta = ls_beta[ib];
                memcpy(keep_order, I->order, (size_t)n * sizeof *keep_order);
                memcpy(keep_dev, I->dev, (size_t)n * sizeof *keep_dev);
                memcpy(keep_start, I->L.start, (size_t)n * sizeof *keep_start);
            }
        }
    }
    /* noise scale: each node's mean duration (a start's collective), at
     * least a hundredth of the mean over the graph */
    double mean = 0;
    for (uint32_t v = 0; v < n; v++) {
        double s = 0;
        if (g->kind[v] == SB_KIND_COMPUTE) {
            uint32_t k = 0;
            for (uint32_t a = 0; a < nd; a++)
                if (isfinite(g->dev_dur_us[(size_t)v * nd + a]))
                    s += g->dev_dur_us[(size_t)v * nd + a], k++;
            s = k ? s / k : 0;
        } else if (g->kind[v] == SB_KIND_START) {
            s = g->dur_us[v];
        }
        scale[v] = s;
        mean += s / n;
    }
    uint64_t stop = I->evals + I->budget * 3 / 4;
    for (uint32_t it = 0, stale = 0; I->evals + I->list_cost <= stop && ls_afford(I, I->list_cost) &&
                                     stale < LS_STALE && *best > lb; it++, stale++) {
        double amp = 0.5 + 1.5 * ls_unit(&seed);
        for (uint32_t v = 0; v < n; v++) {
            double s = scale[v] > mean / 100 ? scale[v] : mean / 100;
            prio[v] = -keep_start[v] + amp * s * (ls_unit(&seed) - 0.5) * 2;
        }
        double beta = it % 2 ? best_beta : ls_beta[ls_rand(&seed) % (sizeof ls_beta / sizeof *ls_beta)];
        I->evals += I->list_cost;
        double q = it % 3 == 2 ? 0.02 + 0.08 * ls_unit(&seed) : 0;
        I->free_done = it % 4 == 3;
        double t = ls_list(I, prio, beta, q, &seed);
        if (ls_better(t, *best) && ls_fits(I)) {
            *best = t, changed = 1, best_beta = beta, stale = 0;
            memcpy(keep_order, I->order, (size_t)n * sizeof *keep_order);
            memcpy(keep_dev, I->dev, (size_t)n * sizeof *keep_dev);
            memcpy(keep_start, I->L.start, (size_t)n * sizeof *keep_start);
        }
    }
    memcpy(I->order, keep_order, (size_t)n * sizeof *keep_order);
    memcpy(I->dev, keep_dev, (size_t)n * sizeof *keep_dev);
    for (uint32_t i = 0; i < n; i++)
        I->pos[I->order[i]] = i;
out:
    free(keep_dev), free(keep_order), free(rank), free(prio), free(keep_start), free(scale);
    return changed;
}

/* Improves out (order, device) in place; never makes it longer. */
static int improve(const struct sb_graph_view *g, struct sb_schedule *out, uint64_t budget,
                   int capacity)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    struct dp_improve I = {.budget = budget * 1000000,
                           .eval_cost = (uint64_t)g->n_nodes + g->n_edges,
                           .list_cost = ((uint64_t)g->n_nodes + g->n_edges) * nd};
    int rc = -1;
    I.capacity = capacity && has_capacity(g->machine);
    /* zeroed: gcc -O2 cannot see that the loop below fills [0, n) */
    I.root = calloc((size_t)n + 1, sizeof *I.root);
    I.order = malloc(((size_t)n + 1) * sizeof *I.order);
    I.pos = malloc(((size_t)n + 1) * sizeof *I.pos);
    I.tmp = malloc(((size_t)n + 1) * sizeof *I.tmp);
    I.dev = malloc(((size_t)n + 1) * sizeof *I.dev);
    I.key = malloc(((size_t)n + 1) * sizeof *I.key);
    I.kt = malloc(((size_t)n + 1) * sizeof *I.kt);
    I.heap = malloc(((size_t)n + 1) * sizeof *I.heap);
    I.indeg = malloc(((size_t)n + 1) * sizeof *I.indeg);
    I.path = malloc(((size_t)n + 1) * sizeof *I.path);
    I.on_path = calloc((size_t)n + 1, 1);
    I.peak = malloc(nd * sizeof *I.peak);
    if (!I.root || !I.order || !I.pos || !I.tmp || !I.dev || !I.key || !I.kt || !I.heap || !I.indeg || !I.path || !I.on_path ||
        !I.peak)
        goto out;
    sb_dp_view_roots(g, I.root);
    if (sb_dp_sim_init(&I.L, g, I.root))
        goto out;
    memcpy(I.order, out->order, (size_t)n * sizeof *I.order);
    memcpy(I.dev, out->device, (size_t)n * sizeof *I.dev);
    for (uint32_t i = 0; i < n; i++)
        I.pos[I.order[i]] = i;
    double lb = ls_bound(g), best = ls_score(&I);
    int changed = ls_lists(&I, &best, lb);
    if (changed < 0)
        goto out;
    ls_score(&I); /* the times of the schedule kept */
    while (best > lb && ls_afford(&I, 2 * I.eval_cost)) {
        ls_path(&I);
        if (!ls_pass(&I, &best, lb))
            break;
        changed = 1;
        /* 3. the order by the new start times, when not worse */
        memcpy(I.tmp, I.order, (size_t)n * sizeof *I.tmp);
        ls_resort(&I);
        double t = ls_score(&I);
        if (t <= best && ls_fits(&I)) {
            best = t;
        } else {
            memcpy(I.order, I.tmp, (size_t)n * sizeof *I.order);
            for (uint32_t i = 0; i < n; i++)
                I.pos[I.order[i]] = i;
            ls_score(&I); /* the path of the kept schedule */
        }
    }
    if (changed)
        emit_plain(out, I.order, I.dev, n);
    rc = 0;
out:
    sb_dp_sim_free(&I.L);
    free(I.root), free(I.order), free(I.pos), free(I.tmp), free(I.dev), free(I.key), free(I.kt), free(I.heap), free(I.indeg);
    free(I.path), free(I.on_path), free(I.peak);
    return rc;
}

/* Stage 3 scores candidates with sb_dp_sim_eval, which knows one stream per device,
 * data edges only and no named resources.  On a graph that uses several
 * streams, order-only (`after`) edges or resources its scores would not be
 * the simulator's, and a "better" schedule could simulate worse: dp then
 * keeps the better of the grouped schedule and HEFT's (docs/dp.md). */
static int scored_exactly(const struct sb_graph_view *g)
{
    return g->n_streams <= 1 && !g->pred_after && !(g->res_use && g->machine->n_res);
}

static int dp_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    struct search S = {.conf = *(const struct dp_conf *)state};
    if (sb_dp_ctx_init(&S.c, g))
        return sb_plugin_fail(out->err, out->n_err, "dp: out of memory");
    if (check_graph(g, &S.conf, S.c.n_tasks, out)) {
        sb_dp_ctx_free(&S.c);
        return -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &S.t0);
    S.key = malloc(((size_t)g->n_nodes + 1) * sizeof *S.key);
    S.grp = malloc(((size_t)S.c.n_tasks + 1) * sizeof *S.grp);
    S.tmp_done = malloc((words(&S.c) + 1) * sizeof *S.tmp_done);
    S.b = calloc((size_t)S.c.n_tasks + 1, sizeof *S.b);
    struct sb_dp_state *init = sb_dp_initial(&S.c, N_ORDERS);
    if (!S.key || !S.grp || !S.tmp_done || !S.b || !init || make_orders(&S.c, S.ord) ||
        bucket_put(&S.b[0], init, 0)) {
        if (!S.b || !S.b[0].n)
            sb_dp_state_free(init);
        search_free(&S);
        return sb_plugin_fail(out->err, out->n_err, "dp: out of memory");
    }
    for (uint32_t v = 0; v < g->n_nodes; v++)
        S.key[v] = splitmix(v);
    const struct sb_dp_state *best = search(&S);
    int rc = 0;
    if (S.oom || !best)
        rc = sb_plugin_fail(out->err, out->n_err,
                            "dp: a node no device can run, or out of memory");
    else if (emit(&S, best, out))
        rc = sb_plugin_fail(out->err, out->n_err, "dp: out of memory");
    double dp_us = best ? best->t : INFINITY;
    search_free(&S);
    if (rc)
        return rc;
    int fits = !S.conf.capacity || check_capacity(g, out) == 0;
    if (S.conf.sync)
        return fits ? 0 : -1;
    if (incumbent(g, out, dp_us, fits, S.conf.capacity) == 0)
        fits = 1; /* HEFT's schedule, within memory when capacity is on */
    if (!fits && split_fallback(g, out)) /* the grouped search's message stands */
        return -1;
    if (S.conf.budget && g->machine->n_devices > 1 && scored_exactly(g) &&
        improve(g, out, S.conf.budget, S.conf.capacity))
        return sb_plugin_fail(out->err, out->n_err, "dp: out of memory");
    return 0;
}

static int dp_init(const double *p, void **state, char *err, size_t n_err)
{
    if (p[P_MIN_GROUP] > p[P_MAX_GROUP])
        return sb_plugin_fail(err, n_err, "dp: min_group %g is larger than max_group %g",
                              p[P_MIN_GROUP], p[P_MAX_GROUP]);
    struct dp_conf *c = malloc(sizeof *c);
    if (!c)
        return sb_plugin_fail(err, n_err, "dp: out of memory");
    c->min_group = (uint32_t)p[P_MIN_GROUP];
    c->max_group = (uint32_t)p[P_MAX_GROUP];
    c->beam = (uint32_t)p[P_BEAM];
    c->max_plans = (uint64_t)p[P_MAX_PLANS];
    c->time_ms = p[P_TIME_MS];
    c->exhaustive = (uint32_t)p[P_EXHAUSTIVE];
    c->capacity = (uint32_t)p[P_CAPACITY];
    c->sync = (uint32_t)p[P_SYNC];
    c->budget = (uint64_t)p[P_BUDGET];
    c->placer = (uint32_t)p[P_PLACER];
    *state = c;
    return 0;
}

static void dp_free(void *state) { free(state); }

static const struct sb_plugin dp = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "dp",
    .summary = "grouper + placer (DP over groups of the frontier, a barrier after each; "
               "sync=1 alone), then from the better of it and HEFT a search without "
               "barriers (list schedules, critical-path moves) scored by the simulator's rules",
    .params = dp_params,
    .n_params = P_COUNT,
    .init = dp_init,
    .run = dp_run,
    .free = dp_free,
    .flags = SB_PLUGIN_PLACER, /* a job of ranks comes whole: docs/dp.md */
};

const struct sb_plugin *sb_plugin_dp(void) { return &dp; }

SB_PLUGIN_EXPORT(sb_plugin_dp)
