/* Schedules: allocation and the validator every plugin's result goes through
 * before it is measured. */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SB_PLUGIN_ERR_BYTES 512

void sb_schedule_init(struct sb_schedule *s, const struct sb_graph *g,
                      uint32_t n_devices)
{
    sb_schedule_init_view(s, &g->v, n_devices);
}

void sb_schedule_init_view(struct sb_schedule *s, const struct sb_graph_view *g,
                           uint32_t n_devices)
{
    uint32_t n = g->n_nodes;
    s->n_nodes = n;
    s->n_devices = n_devices;
    s->order = sb_xmalloc((size_t)n * sizeof *s->order);
    s->device = sb_xmalloc((size_t)n * sizeof *s->device);
    /* an unfilled order is caught by the validator, not read as garbage */
    memset(s->order, 0xff, (size_t)n * sizeof *s->order);
    for (uint32_t i = 0; i < n; i++)
        s->device[i] = g->device[i] >= 0 ? g->device[i] : 0;
    s->err = sb_xcalloc(SB_PLUGIN_ERR_BYTES, 1);
    s->n_err = SB_PLUGIN_ERR_BYTES;
    s->barrier = sb_xcalloc((size_t)n + 1, 1);
    s->mem_limit_bytes = 0;
    s->bucket = sb_xcalloc((size_t)n + 1, sizeof *s->bucket);
}

void sb_schedule_free(struct sb_schedule *s)
{
    free(s->order);
    free(s->device);
    free(s->err);
    free(s->barrier);
    free(s->bucket);
    memset(s, 0, sizeof *s);
}

static const char *nm(const struct sb_graph_view *g, uint32_t v)
{
    return g->names + g->name_off[v];
}

static int check_positions(const struct sb_graph_view *g, const struct sb_schedule *s,
                           uint32_t *pos, struct sb_err *e)
{
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        uint32_t v = s->order[i];
        if (v == SB_NONE)
            return sb_errf(e, "position %u left unfilled", i);
        if (v >= g->n_nodes)
            return sb_errf(e, "position %u holds %u, not a node id", i, v);
        if (pos[v] != SB_NONE)
            return sb_errf(e, "node %u (%s) scheduled twice, at %u and %u", v,
                           nm(g, v), pos[v], i);
        pos[v] = i;
    }
    return 0;
}

/* Why node v cannot run on device d, whose time for it is not finite: the
 * machine (sb_machine_apply) makes t(v, d) infinite for a compute node whose
 * op d does not support, or that needs more of a resource than d offers; a
 * time that is infinite for another reason (none should be: core/num.h) is
 * named as such, not blamed on the op. */
static void cannot_run(const struct sb_graph_view *g, uint32_t v, uint32_t d, char *buf,
                       size_t n)
{
    const struct sb_machine_view *m = g->machine;
    for (uint32_t k = 0; g->res_use && g->kind[v] == SB_KIND_COMPUTE && k < m->n_res; k++) {
        uint32_t lim = m->res_limit[(size_t)d * m->n_res + k], need = sb_res_need(g, v, d, k);
        if (lim && need > lim) {
            snprintf(buf, n, "which offers %u of resource '%s' where the node needs %u", lim,
                     m->res_name[k], need);
            return;
        }
    }
    if (g->kind[v] == SB_KIND_COMPUTE && isfinite(g->dur_us[v]))
        snprintf(buf, n, "which does not support op %s", g->op_names[g->op[v]]);
    else
        snprintf(buf, n, "where its duration is not finite (%g us)",
                 sb_dur_on(g, v, d));
}

static int check_devices(const struct sb_graph_view *g, const struct sb_schedule *s,
                         struct sb_err *e)
{
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (s->device[v] < 0 || (uint32_t)s->device[v] >= s->n_devices)
            return sb_errf(e, "node %u (%s) on device %d, outside 0..%u", v, nm(g, v),
                           s->device[v], s->n_devices - 1);
        if (g->device[v] >= 0 && s->device[v] != g->device[v])
            return sb_errf(e, "node %u (%s) moved from its pre-assigned device %d to %d",
                           v, nm(g, v), g->device[v], s->device[v]);
        if (s->n_devices == g->machine->n_devices &&
            !isfinite(sb_dur_on(g, v, (uint32_t)s->device[v]))) {
            char why[300];
            cannot_run(g, v, (uint32_t)s->device[v], why, sizeof why);
            return sb_errf(e, "node %u (%s) on device %d (%s), %s", v, nm(g, v), s->device[v],
                           g->machine->dev_name[s->device[v]], why);
        }
    }
    return 0;
}

static int check_deps(const struct sb_graph_view *g, const uint32_t *pos,
                      struct sb_err *e)
{
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        for (uint32_t k = g->pred_off[v]; k < g->pred_off[v + 1]; k++) {
            uint32_t p = g->pred[k];
            if (pos[p] < pos[v])
                continue;
            if (g->kind[v] == SB_KIND_DONE && k == g->pred_off[v])
                return sb_errf(e, "done %u (%s) at %u before its start %u (%s) at %u",
                               v, nm(g, v), pos[v], p, nm(g, p), pos[p]);
            return sb_errf(e, "node %u (%s) at %u before its %s %u (%s) at %u", v,
                           nm(g, v), pos[v], sb_edge_after(g, k) ? "after edge" : "input",
                           p, nm(g, p), pos[p]);
        }
    }
    return 0;
}

/* ---- buckets (docs/plugins.md, "Buckets") --------------------------------
 * The starts of a bucket go out as one collective: they must be alike (type,
 * group size, device), and the merged collective must be schedulable, i.e.
 * every member's done after every member's start.  In a topological order
 * that also rules out a cycle through the merged node; when one exists the
 * message names the dependence rather than the positions. */

struct member {
    uint32_t bucket, pos, v;
};

static int by_bucket_pos(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* 1 when `to` is reachable from `from` along consumer edges (only asked
 * once the order already shows a problem, so a plain search will do). */
static int reaches(const struct sb_graph_view *g, uint32_t from, uint32_t to)
{
    uint32_t *stack = sb_xmalloc((size_t)g->n_nodes * sizeof *stack), n = 0;
    uint8_t *seen = sb_xcalloc(g->n_nodes, 1);
    int found = 0;
    stack[n++] = from;
    seen[from] = 1;
    while (n && !found) {
        uint32_t v = stack[--n];
        for (uint32_t k = g->succ_off[v]; k < g->succ_off[v + 1]; k++) {
            uint32_t w = g->succ[k];
            found |= w == to;
            if (!seen[w])
                seen[w] = 1, stack[n++] = w;
        }
    }
    free(seen);
    free(stack);
    return found;
}

static int check_alike(const struct sb_graph_view *g, const struct sb_schedule *s,
                       const struct member *a, const struct member *b, struct sb_err *e)
{
    if (g->coll[a->v] != g->coll[b->v])
        return sb_errf(e, "bucket %u mixes %s %u (%s) and %s %u (%s): a bucket is one "
                          "collective type", a->bucket, sb_coll_name((enum sb_coll)g->coll[a->v]),
                       a->v, nm(g, a->v), sb_coll_name((enum sb_coll)g->coll[b->v]), b->v,
                       nm(g, b->v));
    if (g->group_size[a->v] != g->group_size[b->v])
        return sb_errf(e, "bucket %u mixes groups of %u (%u %s) and %u (%u %s) ranks",
                       a->bucket, g->group_size[a->v], a->v, nm(g, a->v),
                       g->group_size[b->v], b->v, nm(g, b->v));
    if (s->device[a->v] != s->device[b->v])
        return sb_errf(e, "bucket %u spans devices %d (%u %s) and %d (%u %s)", a->bucket,
                       s->device[a->v], a->v, nm(g, a->v), s->device[b->v], b->v,
                       nm(g, b->v));
    return 0;
}

/* Members m[0..n) of one bucket, by position: the last start must come
 * before the first done. */
static int check_merge(const struct sb_graph_view *g, const struct member *m, uint32_t n,
                       const uint32_t *pos, struct sb_err *e)
{
    uint32_t last = m[n - 1].v, first_done = SB_NONE;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t d = g->partner[m[i].v];
        if (first_done == SB_NONE || pos[d] < pos[first_done])
            first_done = d;
    }
    if (pos[first_done] > pos[last])
        return 0;
    uint32_t own = g->pred[g->pred_off[first_done]]; /* the done's start */
    for (uint32_t i = 0; i < n; i++)
        if (m[i].v != own && reaches(g, first_done, m[i].v))
            return sb_errf(e, "bucket %u would be a cycle: start %u (%s) depends on done %u "
                              "(%s) of %u (%s) in the same bucket", m[i].bucket, m[i].v,
                           nm(g, m[i].v), first_done, nm(g, first_done), own, nm(g, own));
    return sb_errf(e, "bucket %u: done %u (%s) at %u comes before start %u (%s) at %u; the "
                      "members go out as one collective, so every done must follow every "
                      "start", m[0].bucket, first_done, nm(g, first_done), pos[first_done],
                   last, nm(g, last), pos[last]);
}

/* Members in bucket `id` (m sorted by bucket, n of them); 0 when none. */
static uint32_t bucket_size(const struct member *m, uint32_t n, uint32_t id)
{
    uint32_t lo = 0, hi = n; /* first index with bucket >= id */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m[mid].bucket < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t k = lo;
    while (k < n && m[k].bucket == id)
        k++;
    return k - lo;
}

/* A bucket of joined collectives (a job of ranks) is one fused collective
 * that every rank launches: NCCL completes it only when each rank launches
 * the matching fusion, so the members' partners must be bucketed alike.  It
 * is enough to look one step along each member's ring: if every member's
 * next member (join) lies in one bucket N of the same size, join maps this
 * bucket onto N one to one, N onto the next, and so around; since a ring
 * has one member per device (the builder's rule), the buckets so reached
 * are one per rank, each holding exactly the partners of this bucket's
 * members.  O(members) per bucket, not O(ranks) per member.  m[i..j) is one
 * bucket; a bucket of one is its collective alone, so it matches nothing
 * (a partner bucketed with others is refused from that side). */
static int check_matched(const struct sb_graph_view *g, const struct sb_schedule *s,
                         const struct member *m, uint32_t n, uint32_t i, uint32_t j,
                         struct sb_err *e)
{
    if (!g->join || j - i < 2)
        return 0;
    uint32_t id = m[i].bucket, joined = SB_NONE, alone = SB_NONE;
    for (uint32_t k = i; k < j; k++)
        *(g->join[m[k].v] != m[k].v ? &joined : &alone) = m[k].v;
    if (joined == SB_NONE)
        return 0; /* no joined member: a bucket of one rank, as without a job */
    if (alone != SB_NONE)
        return sb_errf(e, "bucket %u mixes %u (%s), joined across ranks, and %u (%s), "
                          "which is not: a fused collective is launched by all its ranks "
                          "or by one", id, joined, nm(g, joined), alone, nm(g, alone));
    uint32_t next = 0, first = SB_NONE;
    for (uint32_t k = i; k < j; k++) {
        uint32_t v = m[k].v, w = g->join[v], b = s->bucket[w];
        if (!b || bucket_size(m, n, b) < 2)
            return sb_errf(e, "node %u (%s) is in bucket %u but the member %u (%s) of its "
                              "collective on device %d is not bucketed: every rank must "
                              "launch the same fused collective (NCCL would wait or "
                              "mismatch)", v, nm(g, v), id, w, nm(g, w), s->device[w]);
        if (first == SB_NONE)
            next = b, first = v;
        if (b != next)
            return sb_errf(e, "bucket %u holds %u (%s) and %u (%s), whose members on device "
                              "%d are in buckets %u (%u %s) and %u (%u %s): every rank must "
                              "launch the same fused collective", id, first, nm(g, first), v,
                           nm(g, v), s->device[w], next, g->join[first],
                           nm(g, g->join[first]), b, w, nm(g, w));
    }
    uint32_t n_here = j - i, n_there = bucket_size(m, n, next);
    if (n_there != n_here)
        return sb_errf(e, "bucket %u holds %u collectives joined across ranks (%u %s, ...) "
                          "but bucket %u on device %d, holding their members there, holds "
                          "%u: every rank must launch the same fused collective", id, n_here,
                       first, nm(g, first), next, s->device[g->join[first]], n_there);
    return 0;
}

static int check_buckets(const struct sb_graph_view *g, const struct sb_schedule *s,
                         const uint32_t *pos, struct sb_err *e)
{
    uint32_t n = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (!s->bucket[v])
            continue;
        if (g->kind[v] != SB_KIND_START)
            return sb_errf(e, "node %u (%s) is in bucket %u but is not a collective start",
                           v, nm(g, v), s->bucket[v]);
        n++;
    }
    struct member *m = sb_xmalloc((size_t)(n + 1) * sizeof *m);
    n = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (s->bucket[v])
            m[n++] = (struct member){s->bucket[v], pos[v], v};
    qsort(m, n, sizeof *m, by_bucket_pos);
    int rc = 0;
    for (uint32_t i = 0, j; !rc && i < n; i = j) {
        for (j = i + 1; j < n && m[j].bucket == m[i].bucket && !rc; j++)
            rc = check_alike(g, s, &m[i], &m[j], e);
        if (!rc)
            rc = check_merge(g, &m[i], j - i, pos, e);
    }
    for (uint32_t i = 0, j; !rc && i < n; i = j) {
        for (j = i + 1; j < n && m[j].bucket == m[i].bucket; j++)
            ;
        rc = check_matched(g, s, m, n, i, j, e);
    }
    free(m);
    return rc;
}

int sb_schedule_buckets(const struct sb_schedule *s)
{
    for (uint32_t v = 0; s->bucket && v < s->n_nodes; v++)
        if (s->bucket[v])
            return 1;
    return 0;
}

/* ---- the replay order of joined collectives ------------------------------ */

/* A min-heap of positions. */
struct pos_heap {
    uint32_t n, *a;
};

static void heap_push(struct pos_heap *h, uint32_t x)
{
    uint32_t i = h->n++;
    for (; i && h->a[(i - 1) / 2] > x; i = (i - 1) / 2)
        h->a[i] = h->a[(i - 1) / 2];
    h->a[i] = x;
}

static uint32_t heap_pop(struct pos_heap *h)
{
    uint32_t top = h->a[0], x = h->a[--h->n], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= h->n)
            break;
        if (c + 1 < h->n && h->a[c + 1] < h->a[c])
            c++;
        if (h->a[c] >= x)
            break;
        h->a[i] = h->a[c];
        i = c;
    }
    if (h->n)
        h->a[i] = x;
    return top;
}

/* The order in which a joined start's done waits for the other starts:
 * join itself, except that the starts of a bucket of two or more form one
 * cycle with its group's (a matched group of joined buckets, check_matched;
 * a bucket of collectives not joined is a group of one), since the fused
 * collective goes out only once every member on every rank has started: a
 * done of a member whose bucket is still waiting for a start holds its
 * stream, which can close a cycle through another rank.  NULL when no
 * bucket has two or more members (then the rings are join's). */
static uint32_t *bucket_rings(const struct sb_graph_view *g, const struct sb_schedule *s)
{
    uint32_t n = g->n_nodes, k = 0;
    for (uint32_t v = 0; s->bucket && v < n; v++)
        k += s->bucket[v] != 0;
    if (!k)
        return NULL;
    struct member *m = sb_xmalloc((size_t)k * sizeof *m);
    k = 0;
    for (uint32_t v = 0; v < n; v++)
        if (s->bucket[v])
            m[k++] = (struct member){s->bucket[v], 0, v};
    qsort(m, k, sizeof *m, by_bucket_pos);
    uint32_t *ring = sb_xmalloc((size_t)n * sizeof *ring + 1);
    uint8_t *done = sb_xcalloc((size_t)n + 1, 1);
    uint32_t *list = sb_xmalloc((size_t)n * sizeof *list + 1), any = 0;
    memcpy(ring, g->join, (size_t)n * sizeof *ring);
    for (uint32_t i = 0, j; i < k; i = j) {
        for (j = i + 1; j < k && m[j].bucket == m[i].bucket; j++)
            ;
        if (j - i < 2 || done[m[i].v])
            continue; /* alone (its ring is join's), or its group already linked */
        uint32_t len = 0; /* every member of the group: the rings of this bucket's */
        for (uint32_t q = i; q < j; q++) {
            uint32_t w = m[q].v;
            do {
                list[len++] = w, done[w] = 1;
                w = g->join[w];
            } while (w != m[q].v);
        }
        for (uint32_t q = 0; q < len; q++)
            ring[list[q]] = list[(q + 1) % len];
        any = 1;
    }
    free(list), free(done), free(m);
    if (!any)
        free(ring), ring = NULL;
    return ring;
}

/* need[v]: what v waits for before it can go (inputs, the node before it on
 * its stream, and for a done of a joined or bucketed collective one more:
 * that every start on its ring has gone); next[v]: the node after it on its
 * stream.  lead[v]: for such a start, the member that counts its ring's
 * starts still to go in left[lead] (one count per collective, not one per member and
 * done: 1,024 ranks would walk 1,024 members for each of 1,024 dones). */
static void replay_needs(const struct sb_graph_view *g, const struct sb_schedule *s,
                         struct sb_replay *R)
{
    uint32_t n = g->n_nodes;
    size_t n_lanes = (size_t)s->n_devices * g->n_streams;
    uint32_t *tail = sb_xmalloc(n_lanes * sizeof *tail + 1);
    memset(tail, 0xff, n_lanes * sizeof *tail);
    memset(R->lead, 0xff, (size_t)n * sizeof *R->lead);
    for (uint32_t v = 0; v < n; v++) {
        R->need[v] = g->pred_off[v + 1] - g->pred_off[v];
        R->next[v] = SB_NONE;
        if (g->kind[v] != SB_KIND_START || R->ring[v] == v || R->lead[v] != SB_NONE)
            continue;
        R->left[v] = 0;
        for (uint32_t m = v; R->lead[m] == SB_NONE; m = R->ring[m])
            R->lead[m] = v, R->left[v]++;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = s->order[i], d = (uint32_t)s->device[v];
        if (g->kind[v] == SB_KIND_INPUT) /* exists before the program: no stream */
            continue;
        size_t L = (size_t)d * g->n_streams + sb_lane(g, v, d);
        if (tail[L] != SB_NONE)
            R->next[tail[L]] = v, R->need[v]++;
        tail[L] = v;
        if (g->kind[v] == SB_KIND_DONE && R->ring[g->partner[v]] != g->partner[v])
            R->need[v]++;
    }
    free(tail);
}

static void replay_went(const struct sb_graph_view *g, uint32_t v, struct sb_replay *R,
                        struct pos_heap *h)
{
#define RELEASE(w) do { if (--R->need[(w)] == 0) heap_push(h, R->pos[(w)]); } while (0)
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
        RELEASE(g->succ[e]);
    if (R->next[v] != SB_NONE)
        RELEASE(R->next[v]);
    if (g->kind[v] == SB_KIND_START && R->ring[v] != v && --R->left[R->lead[v]] == 0)
        for (uint32_t m = R->ring[v]; ; m = R->ring[m]) { /* the last member started */
            RELEASE(g->partner[m]);
            if (m == v)
                break;
        }
#undef RELEASE
}

void sb_replay_init(struct sb_replay *R, const struct sb_graph_view *g,
                    const struct sb_schedule *s, int hold_dones)
{
    uint32_t n = g->n_nodes;
    R->g = g, R->s = s, R->placed = 0;
    R->need = sb_xmalloc((size_t)n * sizeof *R->need + 1);
    R->next = sb_xmalloc((size_t)n * sizeof *R->next + 1);
    R->pos = sb_xmalloc((size_t)n * sizeof *R->pos + 1);
    R->heap = sb_xmalloc((size_t)n * sizeof *R->heap + 1);
    R->lead = sb_xmalloc((size_t)n * sizeof *R->lead + 1);
    R->left = sb_xmalloc((size_t)n * sizeof *R->left + 1);
    R->n_heap = 0;
    R->own_ring = g->join ? bucket_rings(g, s) : NULL;
    R->ring = R->own_ring ? R->own_ring : g->join;
    for (uint32_t i = 0; i < n; i++)
        R->pos[s->order[i]] = i;
    replay_needs(g, s, R);
    for (uint32_t v = 0; hold_dones && v < n; v++)
        R->need[v] += g->kind[v] == SB_KIND_DONE;
    struct pos_heap h = {0, R->heap};
    for (uint32_t i = 0; i < n; i++)
        if (!R->need[s->order[i]])
            heap_push(&h, i);
    R->n_heap = h.n;
    /* a barrier at position b: positions past b wait until b + 1 have gone */
    R->fence = 0;
    while (R->fence < n && !(s->barrier && s->barrier[R->fence]))
        R->fence++;
}

int sb_replay_next(struct sb_replay *R, uint32_t *i)
{
    struct pos_heap h = {R->n_heap, R->heap};
    uint32_t n = R->g->n_nodes;
    const struct sb_schedule *s = R->s;
    while (h.n && h.a[0] > R->fence) {
        if (R->placed <= R->fence)
            return 0; /* what is left before the barrier cannot go yet */
        for (R->fence++; R->fence < n && !(s->barrier && s->barrier[R->fence]); R->fence++)
            ;
    }
    if (!h.n)
        return 0;
    *i = heap_pop(&h);
    R->n_heap = h.n;
    R->placed++;
    return 1;
}

void sb_replay_went(struct sb_replay *R, uint32_t i)
{
    struct pos_heap h = {R->n_heap, R->heap};
    replay_went(R->g, R->s->order[i], R, &h);
    R->n_heap = h.n;
}

void sb_replay_release(struct sb_replay *R, uint32_t v)
{
    struct pos_heap h = {R->n_heap, R->heap};
    if (--R->need[v] == 0)
        heap_push(&h, R->pos[v]);
    R->n_heap = h.n;
}

void sb_replay_free(struct sb_replay *R)
{
    free(R->need), free(R->next), free(R->pos), free(R->heap), free(R->lead), free(R->left);
    free(R->own_ring);
}

uint32_t sb_replay_order(const struct sb_graph_view *g, const struct sb_schedule *s,
                         uint32_t *out, uint32_t *stuck)
{
    uint32_t n = g->n_nodes, i;
    if (!g->join) {
        for (i = 0; i < n; i++)
            out[i] = i;
        return n;
    }
    struct sb_replay R;
    sb_replay_init(&R, g, s, 0);
    while (sb_replay_next(&R, &i)) {
        out[R.placed - 1] = i;
        sb_replay_went(&R, i);
    }
    uint32_t placed = R.placed;
    sb_replay_free(&R);
    if (placed < n) {
        uint8_t *went = sb_xcalloc((size_t)n + 1, 1);
        for (uint32_t k = 0; k < placed; k++)
            went[out[k]] = 1;
        *stuck = 0;
        while (went[*stuck])
            (*stuck)++;
        free(went);
    }
    return placed;
}

/* A schedule whose devices would wait on each other forever at a joined
 * collective (each holding its stream at a done whose collective another
 * device has not started) cannot run. */
static int check_joins(const struct sb_graph_view *g, const struct sb_schedule *s,
                       struct sb_err *e)
{
    uint32_t *out = sb_xmalloc((size_t)g->n_nodes * sizeof *out + 1), stuck = 0;
    uint32_t placed = sb_replay_order(g, s, out, &stuck);
    free(out);
    if (placed == g->n_nodes)
        return 0;
    uint32_t v = s->order[stuck];
    return sb_errf(e, "node %u (%s) at %u never runs: the devices wait for each other's "
                      "joined collectives in a cycle (a done holds its stream until every "
                      "member of its collective, and of its bucket, has started; %u of %u "
                      "nodes can run)",
                   v, nm(g, v), stuck, placed, g->n_nodes);
}

int sb_schedule_validate(const struct sb_graph_view *g, const struct sb_schedule *s,
                         struct sb_err *e)
{
    if (s->n_nodes != g->n_nodes)
        return sb_errf(e, "schedule has %u nodes, graph has %u", s->n_nodes, g->n_nodes);
    uint32_t *pos = sb_xmalloc((size_t)g->n_nodes * sizeof *pos + 1);
    memset(pos, 0xff, (size_t)g->n_nodes * sizeof *pos);
    int rc = check_positions(g, s, pos, e);
    for (uint32_t v = 0; !rc && v < g->n_nodes; v++)
        if (pos[v] == SB_NONE)
            rc = sb_errf(e, "node %u (%s) never scheduled", v, nm(g, v));
    if (!rc)
        rc = check_devices(g, s, e);
    if (!rc)
        rc = check_deps(g, pos, e);
    if (!rc && s->bucket)
        rc = check_buckets(g, s, pos, e);
    if (!rc && g->join)
        rc = check_joins(g, s, e);
    free(pos);
    return rc;
}
