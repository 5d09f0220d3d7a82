/* The simulator and the memory model (docs/cost-model.md, "Simulator").
 *
 * A schedule is replayed in one pass over its order.  That is exact because the
 * order is validated to be topological and each device runs its nodes in order:
 * when a node is reached, every producer already has its finish time, and a
 * device's collectives are issued in nondecreasing time, so a resource that
 * hands each new collective its earliest-free slot serves them first come, first
 * served. */
#define _POSIX_C_SOURCE 200809L
#include "core.h"
#include "num.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SB_MAX_INFLIGHT SB_SIM_MAX_INFLIGHT

void sb_sim_defaults(struct sb_sim_config *c)
{
    memset(c, 0, sizeof *c);
    c->shared = 1; /* GPUs: every collective on one NCCL stream */
    for (int t = 0; t < SB_COLL_COUNT; t++)
        c->limit[t] = 1;
    c->n_devices = 1;
}

static int parse_limit(const char *key, const char *val, uint32_t *out, struct sb_err *e)
{
    uint64_t v;
    const char *why;
    if (sb_num_u64(val, 1, SB_MAX_INFLIGHT, &v, &why))
        return sb_errf(e, "sim parameter %s: '%s' is not an integer in 1..%d (%s)", key,
                       val, SB_MAX_INFLIGHT, why);
    *out = (uint32_t)v;
    return 0;
}

/* "inflight=N" (one shared resource) or "<coll>=N,..." (one resource per type,
 * unnamed types keep 1).  The two modes do not mix, and a key comes once: a
 * spec that said both would otherwise run in the mode of its last key. */
int sb_sim_parse(struct sb_sim_config *c, const char *spec, struct sb_err *e)
{
    char *dup = sb_xstrdup(spec), *save = NULL;
    const char *first_mode = NULL; /* the first key, which set the mode */
    uint32_t seen = 0;             /* bit 0: inflight, bit t: type t */
    int rc = 0;
    for (char *kv = strtok_r(dup, ",", &save); kv && !rc;
         kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        enum sb_coll t;
        int shared;
        if (!eq) {
            rc = sb_errf(e, "sim parameter '%s' is not key=value", kv);
            break;
        }
        *eq = 0;
        if (strcmp(kv, "inflight") == 0) {
            shared = 1, t = (enum sb_coll)0;
        } else if (sb_coll_parse(kv, &t) == 0) {
            shared = 0;
        } else {
            rc = sb_errf(e, "unknown sim parameter '%s' (known: inflight, or a "
                            "collective type such as all_gather)", kv);
            break;
        }
        if (seen & (1u << t)) {
            rc = sb_errf(e, "sim parameter %s given twice", kv);
            break;
        }
        if (first_mode && shared != c->shared) {
            rc = sb_errf(e, "sim parameters %s and %s: inflight=N is one limit shared by "
                            "every collective type, <coll>=N one limit per type; give "
                            "one or the other", first_mode, kv);
            break;
        }
        if (!first_mode) {
            /* a new mode: per type, the types not named keep 1 */
            c->shared = shared;
            for (int k = 0; k < SB_COLL_COUNT; k++)
                c->limit[k] = 1;
        }
        first_mode = first_mode ? first_mode : kv;
        seen |= 1u << t;
        rc = parse_limit(kv, eq + 1, &c->limit[t], e);
    }
    free(dup);
    return rc;
}

/* ---- timing ------------------------------------------------------------- */

struct resource {
    uint32_t n_slots;
    double end_us[SB_MAX_INFLIGHT]; /* when each slot's collective finishes */
    int64_t live[SB_MAX_INFLIGHT];  /* --comm astra: the slot's collective in
                                       S->sys, end_us not known yet; -1 none */
};

struct sim_state {
    const struct sb_graph_view *g;
    double lat;
    double *fin;      /* [n] when a node's result is available */
    double *coll_end; /* [n] on starts: when the collective finishes */
    double *stream;   /* [n_devices * n_streams] when each stream is free */
    struct resource *res; /* [n_devices * SB_COLL_COUNT] */
    const struct sb_sim_config *c;
    struct sb_sim_result *rec; /* non-NULL when recording times */
    /* several devices (multi-device section below); nd == 1 never transfers */
    uint32_t nd;
    const int32_t *dev;  /* the schedule's placement */
    const uint32_t *root; /* buffer of each node's output */
    double *copy_ready;  /* [n * nd] when v's output is on device d; < 0 not yet */
    double *link_free;   /* [nd * nd] when link a->b finishes its last transfer */
    double all_end;      /* latest finish so far, collectives included (barriers) */
    double barrier_t;    /* nothing starts before the last barrier's time */
    /* --comm astra on one device: the collectives in ASTRA-sim's queues */
    const struct sb_graph *G;
    const struct sb_comm_queue *qm; /* the queue model, NULL without one */
    void *sys;                      /* its state */
    int64_t *coll_h; /* [n] starts: handle in sys while the end is unknown; -1 */
    struct res_prof *prof; /* [nd] each device's resources in use, NULL when the
                              machine declares none */
    struct sim_buckets *bk; /* the schedule's buckets of two or more, or NULL */
    /* joined collectives (graph.h, `join`), NULL without */
    double *issue_t;  /* [n] starts: when the member issued its start */
    struct sb_replay *rp; /* the replay, whose dones wait for their begin */
    uint32_t *pend, n_pend; /* collectives every member has issued, not begun:
                               a min-heap by (pend_b, pend_key) of one member */
    double *pend_b;         /* [n] the earliest begin known when last looked */
    uint32_t *pend_key;     /* [n] the smallest position of a member's start */
};

static double transfer(struct sim_state *S, uint32_t p, uint32_t b,
                       struct sb_sim_result *r);

/* Earliest time v's inputs are available on device d; a done's own start is
 * left out. */
static double inputs_ready(struct sim_state *S, uint32_t v, uint32_t d,
                           struct sb_sim_result *res)
{
    const struct sb_graph_view *g = S->g;
    double t = 0;
    uint32_t e = g->pred_off[v] + (g->kind[v] == SB_KIND_DONE);
    for (; e < g->pred_off[v + 1]; e++) {
        uint32_t p = g->pred[e];
        if (sb_edge_after(g, e)) { /* orders only: no copy, no latency */
            if (S->fin[p] > t)
                t = S->fin[p];
            continue;
        }
        double r = S->nd > 1 ? transfer(S, p, d, res) : S->fin[p];
        r += S->lat;
        if (r > t)
            t = r;
    }
    return t;
}

/* A slot's end; INFINITY while its collective is still in ASTRA-sim's queues. */
static double slot_end(struct sim_state *S, struct resource *R, uint32_t k)
{
    if (R->live[k] >= 0) {
        double ns = S->qm->end_ns(S->sys, (uint32_t)R->live[k]);
        if (ns < 0)
            return INFINITY;
        R->end_us[k] = ns / 1000;
        R->live[k] = -1;
    }
    return R->end_us[k];
}

/* The slot that frees first.  Without ASTRA-sim every end is known; with it,
 * its queues run until a slot's end is known and no collective in them can
 * end sooner. */
static uint32_t first_free(struct sim_state *S, struct resource *R, double t)
{
    for (;;) {
        uint32_t best = 0;
        for (uint32_t k = 1; k < R->n_slots; k++)
            if (slot_end(S, R, k) < slot_end(S, R, best))
                best = k;
        double e = slot_end(S, R, best);
        if (!S->sys || e <= t || e * 1000 <= S->qm->next_ns(S->sys))
            return best;
        S->qm->step(S->sys);
    }
}

/* The slots start s's collective takes on device dev. */
static struct resource *resource_of(struct sim_state *S, uint32_t s, uint32_t dev)
{
    uint32_t r = S->c->shared ? 0 : S->g->coll[s];
    return &S->res[(size_t)dev * SB_COLL_COUNT + r];
}

/* A recorded lane: the resource's place among its device's, then the slot. */
static uint32_t lane_of(const struct sim_state *S, const struct resource *R, uint32_t slot)
{
    return (uint32_t)((size_t)(R - S->res) % SB_COLL_COUNT) * SB_MAX_INFLIGHT + slot;
}

/* When start s's collective could begin on its device, no sooner than at. */
static double slot_free(struct sim_state *S, uint32_t s, double at)
{
    struct resource *R = resource_of(S, s, (uint32_t)S->dev[s]);
    double free_us = R->end_us[first_free(S, R, at)];
    return free_us > at ? free_us : at;
}

static double issue(struct sim_state *S, uint32_t s, uint32_t dev, double t)
{
    struct resource *R = resource_of(S, s, dev);
    uint32_t best = first_free(S, R, t);
    double begin = t > R->end_us[best] ? t : R->end_us[best];
    uint32_t h;
    if (S->sys && S->qm->issue(S->sys, S->G, s, begin * 1000, &h)) {
        R->live[best] = S->coll_h[s] = h;
        R->end_us[best] = INFINITY;
    } else {
        R->end_us[best] = begin + S->g->dur_us[s];
    }
    if (S->rec) {
        S->rec->coll_begin_us[s] = begin;
        S->rec->coll_end_us[s] = R->end_us[best];
        S->rec->coll_lane[s] = lane_of(S, R, best);
    }
    return R->end_us[best];
}

/* A joined collective (docs/machines.md, "Joined collectives") begins on
 * every member when the last member has issued its start, and each
 * member's resource has a free slot; it then runs its collective model's
 * time on each.  Built with SB_SIM_JOIN_ON_ARRIVAL, members meet when their
 * inputs are ready instead: the rule before the rendezvous, kept only so
 * that test_simdiff_arrival can show the differential test tells them
 * apart. */

/* A matched group of joined buckets waits in S->pend as its first bucket's
 * leader (buckets section below). */
static uint32_t joined_bucket(const struct sim_state *S, uint32_t v);
static double group_begin(struct sim_state *S, uint32_t b);
static void group_go(struct sim_state *S, uint32_t b, double begin);

/* When v's collective could begin now: its last member's issue, and each
 * member's earliest free slot after it. */
static double joined_begin(struct sim_state *S, uint32_t v)
{
    const struct sb_graph_view *g = S->g;
    if (joined_bucket(S, v) != SB_NONE)
        return group_begin(S, joined_bucket(S, v));
    double begin = 0;
    uint32_t m = v;
    do {
        begin = S->issue_t[m] > begin ? S->issue_t[m] : begin;
        m = g->join[m];
    } while (m != v);
    double at = begin;
    do { /* the members' slots: the latest to free holds all back */
        double free_us = slot_free(S, m, at);
        begin = free_us > begin ? free_us : begin;
        m = g->join[m];
    } while (m != v);
    return begin;
}

static int pend_before(const struct sim_state *S, uint32_t a, uint32_t b)
{
    if (S->pend_b[a] != S->pend_b[b])
        return S->pend_b[a] < S->pend_b[b];
    return S->pend_key[a] < S->pend_key[b];
}

static void pend_push(struct sim_state *S, uint32_t v)
{
    uint32_t i = S->n_pend++;
    for (; i && pend_before(S, v, S->pend[(i - 1) / 2]); i = (i - 1) / 2)
        S->pend[i] = S->pend[(i - 1) / 2];
    S->pend[i] = v;
}

static uint32_t pend_pop(struct sim_state *S)
{
    uint32_t top = S->pend[0], x = S->pend[--S->n_pend], i = 0;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= S->n_pend)
            break;
        if (c + 1 < S->n_pend && pend_before(S, S->pend[c + 1], S->pend[c]))
            c++;
        if (!pend_before(S, S->pend[c], x))
            break;
        S->pend[i] = S->pend[c];
        i = c;
    }
    if (S->n_pend)
        S->pend[i] = x;
    return top;
}

/* v's member issues its start (t: its issue time, t_in: when its inputs
 * were ready).  Once every member has, the collective waits in S->pend to
 * begin: it is not begun yet, because a collective whose last member the
 * replay reaches later may begin sooner on a member's device (a device takes
 * its slots in the order collectives begin, not the order the replay
 * completes them). */
static void issue_joined(struct sim_state *S, uint32_t v, double t, double t_in)
{
    const struct sb_graph_view *g = S->g;
#ifdef SB_SIM_JOIN_ON_ARRIVAL
    (void)t;
    S->issue_t[v] = t_in;
#else
    (void)t_in;
    S->issue_t[v] = t;
#endif
    /* sb_replay counts the members still to go, v among them until its step
     * ends: a count, not a walk of the ring for each member (1,024 ranks
     * would walk 1,024 members for each of 1,024 starts) */
    if (g->join[v] != v && S->rp->left[S->rp->lead[v]] > 1)
        return; /* a member has yet to issue: the last one completes it */
    uint32_t m = v, key = UINT32_MAX;
    do {
        key = S->rp->pos[m] < key ? S->rp->pos[m] : key;
        m = g->join[m];
    } while (m != v);
    S->pend_b[v] = joined_begin(S, v);
    S->pend_key[v] = key;
    pend_push(S, v);
}

/* Begins the waiting collective that can begin first (ties: the one whose
 * first start comes first in the schedule) and lets its dones go.  Called
 * only when no node can replay: then every collective not yet complete
 * waits, through its missing member, on the end of one that is, so none
 * can begin sooner on these devices.  A begin only grows as slots are taken,
 * so a popped entry is re-checked and pushed back while it has grown. */
static void begin_next(struct sim_state *S)
{
    const struct sb_graph_view *g = S->g;
    uint32_t v;
    for (;;) {
        v = pend_pop(S);
        double b = joined_begin(S, v);
        if (b <= S->pend_b[v])
            break;
        S->pend_b[v] = b;
        pend_push(S, v);
    }
    double begin = S->pend_b[v];
    if (joined_bucket(S, v) != SB_NONE) {
        group_go(S, joined_bucket(S, v), begin);
        return;
    }
    uint32_t m = v;
    do {
        S->coll_end[m] = issue(S, m, (uint32_t)S->dev[m], begin);
        if (S->coll_end[m] > S->all_end)
            S->all_end = S->coll_end[m];
        sb_replay_release(S->rp, g->partner[m]);
        m = g->join[m];
    } while (m != v);
}

/* When start s's collective ends; one still in ASTRA-sim's queues runs to
 * its end (nothing issued later can start before the done waiting on it). */
static double coll_end(struct sim_state *S, uint32_t s)
{
    if (S->coll_h && S->coll_h[s] >= 0) {
        S->coll_end[s] = S->qm->wait_ns(S->sys, (uint32_t)S->coll_h[s]) / 1000;
        S->coll_h[s] = -1;
        if (S->rec)
            S->rec->coll_end_us[s] = S->coll_end[s];
    }
    return S->coll_end[s];
}

/* ---- resources on a device (docs/machines.md, "Resources") ----------------
 *
 * A device's use of its resources over time is a step function: breakpoints
 * t[0] = 0 < t[1] < ..., use[j * K + k] of resource k on [t[j], t[j+1]) (the
 * last step runs to infinity with nothing in use).  Nodes are added in the
 * schedule's order, each at the earliest time from its other constraints at
 * which every resource it needs is free for its whole duration, given the
 * nodes added before it: a node never delays one before it in the order,
 * and a later node may start earlier where it fits beside them (as a later
 * node on another stream already starts before an earlier one that waits
 * for its inputs). */
struct res_prof {
    uint32_t n, cap;
    double *t;
    uint32_t *use;
};

static uint32_t prof_step(const struct res_prof *P, double x) /* last j: t[j] <= x */
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

/* Earliest t >= t0 with use + need <= lim on [t, t + w) for every resource. */
static double prof_fit(const struct res_prof *P, uint32_t K, const uint32_t *lim,
                       const uint32_t *need, double t0, double w)
{
    double t = t0;
    for (uint32_t j = prof_step(P, t0); j < P->n && (P->t[j] < t + w || P->t[j] <= t); j++)
        for (uint32_t k = 0; k < K; k++)
            if (P->use[(size_t)j * K + k] + need[k] > lim[k]) {
                SB_ASSERT(j + 1 < P->n); /* the last step holds nothing */
                t = P->t[j + 1];
                break;
            }
    return t;
}

/* A breakpoint at x (x >= 0); returns its index. */
static uint32_t prof_split(struct res_prof *P, uint32_t K, double x)
{
    uint32_t j = prof_step(P, x);
    if (P->t[j] == x)
        return j;
    if (P->n == P->cap) {
        P->cap *= 2;
        P->t = sb_xrealloc(P->t, P->cap * sizeof *P->t);
        P->use = sb_xrealloc(P->use, (size_t)P->cap * K * sizeof *P->use);
    }
    memmove(&P->t[j + 2], &P->t[j + 1], (P->n - j - 1) * sizeof *P->t);
    memmove(&P->use[(size_t)(j + 2) * K], &P->use[(size_t)(j + 1) * K],
            (size_t)(P->n - j - 1) * K * sizeof *P->use);
    P->t[j + 1] = x;
    memcpy(&P->use[(size_t)(j + 1) * K], &P->use[(size_t)j * K], K * sizeof *P->use);
    P->n++;
    return j + 1;
}

static void prof_add(struct res_prof *P, uint32_t K, const uint32_t *need, double b, double e)
{
    uint32_t i = prof_split(P, K, b), j = prof_split(P, K, e);
    for (; i < j; i++)
        for (uint32_t k = 0; k < K; k++)
            P->use[(size_t)i * K + k] += need[k];
}

/* v's start on device d no earlier than t, where its resources are free for
 * its duration; the profile then holds it. */
static double res_start(struct sim_state *S, uint32_t v, uint32_t d, double t)
{
    const struct sb_graph_view *g = S->g;
    uint32_t K = g->machine->n_res, need[SB_MAX_RES], any = 0;
    double w = sb_dur_on(g, v, d);
    for (uint32_t k = 0; k < K; k++)
        any |= need[k] = sb_res_need(g, v, d, k);
    if (!any || !(w > 0)) /* holds nothing, or nothing for any time */
        return t;
    const uint32_t *lim = &g->machine->res_limit[(size_t)d * K];
    t = prof_fit(&S->prof[d], K, lim, need, t, w);
    prof_add(&S->prof[d], K, need, t, t + w);
    return t;
}

/* ---- buckets (docs/cost-model.md, "Buckets") --------------------------------
 *
 * A bucket's starts go out as one collective: the last member in the order
 * (the leader) issues it once every member's inputs are ready, for the
 * copy-in, the collective of the summed bytes and the copy-out, on the
 * collective resource; every member's done waits for its end.  Its merged
 * buffers are live from the leader's position through the last member's
 * done.  A bucket of one member is its collective alone. */
struct sim_buckets {
    uint32_t n;        /* buckets of two or more */
    uint32_t *off;     /* [n + 1] into mem */
    uint32_t *mem;     /* members, each bucket's in order of position */
    uint32_t *leader;  /* [n_nodes] on a member: its bucket's leader; else SB_NONE */
    uint32_t *index;   /* [n_nodes] on a leader: its bucket */
    double *dur_us;    /* [n] copy-in + collective + copy-out */
    double *ready;     /* [n_nodes] when each member's inputs were ready */
    uint64_t *staging; /* [n] merged bytes */
    /* a job's buckets as groups (buckets of joined collectives validated
     * matched: one bucket per rank, each holding the partners of the
     * others' members; a bucket of collectives not joined alone); NULL
     * outside a job */
    uint32_t *next;    /* [n] the bucket of its members' next members (join):
                          itself on a bucket that is not joined */
    uint32_t *seen;    /* [n] members reached so far */
    double *issue_us;  /* [n] when the bucket went out on its rank */
    uint32_t *left;    /* [n] on a group's first bucket: its buckets not out */
    uint32_t *group;   /* [n] the group's first bucket (its smallest index) */
};

struct bucket_key {
    uint32_t bucket, pos, v;
};

static int by_key(const void *a, const void *b)
{
    const struct bucket_key *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* local: the run's cost parameters, default_ranks the graph's (buckets_open) */
static double bucket_price(const struct sb_graph *G, const struct sb_sim_config *c,
                           const struct sb_cost_params *local, const uint32_t *m, uint32_t n)
{
    double coll = c->bucket_us ? c->bucket_us(c->bucket_ctx, &G->v, local->default_ranks, m, n)
                               : sb_cost_bucket_us(local, &G->v, m, n);
    return coll + sb_cost_bucket_copy_us(local, &G->v, m, n);
}

/* A job: each bucket of joined collectives is linked to the bucket holding
 * its members' next members, the links closing into one cycle per matched
 * group (the validator's check_matched), and each group counts its buckets
 * still to go out.  A bucket of collectives that are not joined (one rank's
 * own) is a group of one, linked to itself: it too goes out once the replay
 * has reached every member, whichever stream reaches which first, and its
 * dones wait for its begin like any collective's in a job.  O(buckets +
 * members). */
static void buckets_join(struct sim_buckets *B, const struct sb_graph_view *g)
{
    B->next = sb_xmalloc((size_t)B->n * sizeof *B->next);
    B->group = sb_xmalloc((size_t)B->n * sizeof *B->group);
    for (uint32_t b = 0; b < B->n; b++) {
        uint32_t lead = B->mem[B->off[b + 1] - 1]; /* join[lead] == lead: b itself */
        B->next[b] = B->index[B->leader[g->join[lead]]];
        B->group[b] = SB_NONE;
    }
    B->seen = sb_xcalloc(B->n, sizeof *B->seen);
    B->issue_us = sb_xcalloc(B->n, sizeof *B->issue_us);
    B->left = sb_xcalloc(B->n, sizeof *B->left);
    for (uint32_t b = 0; b < B->n; b++) {
        if (B->group[b] != SB_NONE)
            continue;
        uint32_t c = b; /* b is the group's smallest index: first reached */
        do {
            B->group[c] = b, B->left[b]++;
            c = B->next[c];
        } while (c != b);
    }
}

static struct sim_buckets *buckets_open(const struct sb_graph *G, const struct sb_schedule *s,
                                        const struct sb_sim_config *c)
{
    uint32_t N = G->v.n_nodes, n = 0;
    for (uint32_t v = 0; s->bucket && v < N; v++)
        n += s->bucket[v] != 0;
    if (n < 2)
        return NULL;
    struct bucket_key *k = sb_xmalloc((size_t)n * sizeof *k);
    uint32_t *pos = sb_xmalloc((size_t)N * sizeof *pos);
    for (uint32_t i = 0; i < s->n_nodes; i++)
        pos[s->order[i]] = i;
    n = 0;
    for (uint32_t v = 0; v < N; v++)
        if (s->bucket[v])
            k[n++] = (struct bucket_key){s->bucket[v], pos[v], v};
    qsort(k, n, sizeof *k, by_key);
    struct sim_buckets *B = sb_xcalloc(1, sizeof *B);
    B->off = sb_xmalloc(((size_t)n + 1) * sizeof *B->off);
    B->mem = sb_xmalloc((size_t)n * sizeof *B->mem);
    B->leader = sb_xmalloc((size_t)N * sizeof *B->leader);
    B->index = sb_xmalloc((size_t)N * sizeof *B->index);
    B->dur_us = sb_xmalloc((size_t)n * sizeof *B->dur_us);
    B->staging = sb_xmalloc((size_t)n * sizeof *B->staging);
    B->ready = sb_xcalloc(N, sizeof *B->ready);
    memset(B->leader, 0xff, (size_t)N * sizeof *B->leader);
    struct sb_cost_params local;
    if (c->cost)
        local = *c->cost;
    else
        sb_cost_defaults(&local);
    uint32_t ranks = local.default_ranks = sb_cost_ranks(&local, G), used = 0;
    for (uint32_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && k[j].bucket == k[i].bucket; j++)
            ;
        if (j - i < 2)
            continue; /* alone */
        B->off[B->n] = used;
        for (uint32_t q = i; q < j; q++) {
            B->mem[used++] = k[q].v;
            B->leader[k[q].v] = k[j - 1].v;
        }
        B->index[k[j - 1].v] = B->n;
        const uint32_t *m = &B->mem[B->off[B->n]];
        B->dur_us[B->n] = bucket_price(G, c, &local, m, j - i);
        B->staging[B->n] = sb_bucket_staging_bytes(&G->v, ranks, m, j - i);
        B->n++;
    }
    B->off[B->n] = used;
    free(pos);
    free(k);
    if (B->n && G->v.join)
        buckets_join(B, &G->v);
    if (!B->n) {
        free(B->off), free(B->mem), free(B->leader), free(B->index);
        free(B->dur_us), free(B->ready), free(B->staging), free(B);
        return NULL;
    }
    return B;
}

static void buckets_close(struct sim_buckets *B)
{
    if (!B)
        return;
    free(B->next), free(B->seen), free(B->issue_us), free(B->left), free(B->group);
    free(B->off), free(B->mem), free(B->leader), free(B->index);
    free(B->dur_us), free(B->ready), free(B->staging), free(B);
}

static double bucket_go(struct sim_state *S, uint32_t b, uint32_t dev, double t);

/* Member v's start reached at t: the leader issues the bucket's collective;
 * the others wait for it (their end is set when it is issued). */
static double bucket_start(struct sim_state *S, uint32_t v, uint32_t dev, double t)
{
    struct sim_buckets *B = S->bk;
    B->ready[v] = t;
    if (B->leader[v] != v)
        return NAN;
    uint32_t b = B->index[v];
    for (uint32_t i = B->off[b]; i < B->off[b + 1]; i++)
        if (B->ready[B->mem[i]] > t)
            t = B->ready[B->mem[i]];
    return bucket_go(S, b, dev, t);
}

/* Bucket b's collective on its device's resource, begun no earlier than t:
 * it takes the slot that frees first, for the bucket's price. */
static double bucket_go(struct sim_state *S, uint32_t b, uint32_t dev, double t)
{
    struct sim_buckets *B = S->bk;
    struct resource *R = resource_of(S, B->mem[B->off[b]], dev);
    uint32_t slot = first_free(S, R, t);
    double begin = t > R->end_us[slot] ? t : R->end_us[slot];
    R->end_us[slot] = begin + B->dur_us[b];
    for (uint32_t i = B->off[b]; i < B->off[b + 1]; i++) {
        uint32_t m = B->mem[i];
        S->coll_end[m] = R->end_us[slot];
        if (S->rec) {
            S->rec->coll_begin_us[m] = begin;
            S->rec->coll_end_us[m] = R->end_us[slot];
            S->rec->coll_lane[m] = lane_of(S, R, slot);
        }
    }
    return R->end_us[slot];
}

static uint32_t bucket_lead(const struct sim_buckets *B, uint32_t b)
{
    return B->mem[B->off[b + 1] - 1];
}

/* ---- joined buckets (docs/machines.md, "Joined collectives") ---------------
 * A matched group of buckets (one per rank, each holding the partners of
 * the others' members; the validator's check_matched) is one fused NCCL
 * collective: it goes out on a rank as a bucket does alone (once every
 * member there has been reached, at the latest member's time), begins on
 * every rank once it has gone out on all of them and each rank's resource
 * has a free slot, runs the rank's bucket price there, and lets every
 * member's done go at its end.  Like a joined collective, it waits in
 * S->pend for begin_next, which begins collectives in time order. */

/* In a job, a bucket's leader stands for its group (a bucket of
 * collectives not joined is a group of one, buckets_join). */
static uint32_t joined_bucket(const struct sim_state *S, uint32_t v)
{
    const struct sim_buckets *B = S->bk;
    if (!B || !B->next || B->leader[v] != v)
        return SB_NONE;
    return B->index[v];
}

/* When the group of bucket b0 could begin now (joined_begin's rule). */
static double group_begin(struct sim_state *S, uint32_t b0)
{
    struct sim_buckets *B = S->bk;
    double begin = 0;
    uint32_t b = b0;
    do {
        begin = B->issue_us[b] > begin ? B->issue_us[b] : begin;
        b = B->next[b];
    } while (b != b0);
    double at = begin;
    do { /* each rank's slot: the latest to free holds all back */
        double free_us = slot_free(S, bucket_lead(B, b), at);
        begin = free_us > begin ? free_us : begin;
        b = B->next[b];
    } while (b != b0);
    return begin;
}

/* The group of bucket b0 begins at `begin` on every rank. */
static void group_go(struct sim_state *S, uint32_t b0, double begin)
{
    struct sim_buckets *B = S->bk;
    uint32_t b = b0;
    do {
        double end = bucket_go(S, b, (uint32_t)S->dev[bucket_lead(B, b)], begin);
        if (end > S->all_end)
            S->all_end = end;
        for (uint32_t i = B->off[b]; i < B->off[b + 1]; i++)
            sb_replay_release(S->rp, S->g->partner[B->mem[i]]);
        b = B->next[b];
    } while (b != b0);
}

/* Member v of a joined bucket reached at t.  Once every member of its
 * bucket has been, the bucket has gone out on this rank; once every bucket
 * of its group has, the group waits to begin. */
static void bucket_reach(struct sim_state *S, uint32_t v, double t)
{
    struct sim_buckets *B = S->bk;
    uint32_t b = B->index[B->leader[v]];
    B->ready[v] = t;
    if (++B->seen[b] < B->off[b + 1] - B->off[b])
        return;
    double out = 0;
    for (uint32_t i = B->off[b]; i < B->off[b + 1]; i++)
        out = B->ready[B->mem[i]] > out ? B->ready[B->mem[i]] : out;
    B->issue_us[b] = out;
    uint32_t f = B->group[b], key = UINT32_MAX, c = f;
    if (--B->left[f])
        return;
    do { /* ties: the group whose first member comes first in the schedule */
        uint32_t p = S->rp->pos[B->mem[B->off[c]]];
        key = p < key ? p : key;
        c = B->next[c];
    } while (c != f);
    uint32_t lead = bucket_lead(B, f);
    S->pend_b[lead] = group_begin(S, f);
    S->pend_key[lead] = key;
    pend_push(S, lead);
}

/* comm_us counts a bucket once, at its own price; so does its device's
 * dev_comm_us (a job's comm_us column is the most over its ranks). */
static void bucket_comm(const struct sim_buckets *B, const struct sb_graph_view *g,
                        const struct sb_schedule *s, struct sb_sim_result *r)
{
    for (uint32_t b = 0; B && b < B->n; b++) {
        double *dev = &r->dev_comm_us[s->device[B->mem[B->off[b]]]];
        r->comm_us += B->dur_us[b];
        *dev += B->dur_us[b];
        for (uint32_t i = B->off[b]; i < B->off[b + 1]; i++) {
            r->comm_us -= g->dur_us[B->mem[i]];
            *dev -= g->dur_us[B->mem[i]];
        }
    }
}

/* The bound over schedules with these buckets: the leader carries the
 * bucket's time and the other members none (a relaxation, so still a
 * bound). */
static double bucket_bound(const struct sim_buckets *B, const struct sb_graph *G,
                           const struct sb_sim_config *c)
{
    struct sb_graph_view v = G->v;
    double *dur = sb_xmalloc((size_t)v.n_nodes * sizeof *dur);
    memcpy(dur, v.dur_us, (size_t)v.n_nodes * sizeof *dur);
    for (uint32_t b = 0; b < B->n; b++)
        for (uint32_t i = B->off[b]; i < B->off[b + 1]; i++)
            dur[B->mem[i]] = i + 1 == B->off[b + 1] ? B->dur_us[b] : 0;
    v.dur_us = dur;
    double lb = sb_sim_lower_bound(&v, c);
    free(dur);
    return lb;
}

/* The position of bucket b's last member's done. */
static uint32_t bucket_last(const struct sim_buckets *B, const struct sb_graph_view *g,
                            const uint32_t *pos, uint32_t b)
{
    uint32_t last = 0;
    for (uint32_t i = B->off[b]; i < B->off[b + 1]; i++)
        if (pos[g->partner[B->mem[i]]] > last)
            last = pos[g->partner[B->mem[i]]];
    return last;
}

/* The merged buffers: +staging from the leader's position through the last
 * member's done, on one device.  delta is [n + 1]. */
static void bucket_mem_deltas(const struct sim_buckets *B, const struct sb_graph_view *g,
                              const uint32_t *pos, int64_t *delta)
{
    for (uint32_t b = 0; B && b < B->n; b++) {
        delta[pos[bucket_lead(B, b)]] += (int64_t)B->staging[b];
        delta[bucket_last(B, g, pos, b) + 1] -= (int64_t)B->staging[b];
    }
}

/* One device: the buckets' buffers on top of sb_mem_profile's profile. */
static void bucket_memory(const struct sim_buckets *B, const struct sb_graph_view *g,
                          const struct sb_schedule *s, struct sb_sim_result *r)
{
    uint32_t n = s->n_nodes;
    uint32_t *pos = sb_xmalloc((size_t)n * sizeof *pos);
    int64_t *delta = sb_xcalloc((size_t)n + 1, sizeof *delta), cur = 0;
    for (uint32_t i = 0; i < n; i++)
        pos[s->order[i]] = i;
    bucket_mem_deltas(B, g, pos, delta);
    r->peak_mem_bytes = 0;
    r->peak_pos = 0;
    for (uint32_t i = 0; i < n; i++) {
        cur += delta[i];
        r->mem_bytes[i] += (uint64_t)cur;
        if (r->mem_bytes[i] > r->peak_mem_bytes) {
            r->peak_mem_bytes = r->mem_bytes[i];
            r->peak_pos = i;
        }
    }
    r->dev_peak_bytes[0] = r->peak_mem_bytes;
    free(delta);
    free(pos);
}

/* Step k's position: k itself without joined collectives; with them, the
 * next position sb_replay can let go, a waiting collective begun (and its
 * dones let go) whenever none can.  0 when nothing is left. */
static int next_step(struct sim_state *S, uint32_t k, uint32_t *i)
{
    if (!S->rp) {
        *i = k;
        return k < S->g->n_nodes;
    }
    while (!sb_replay_next(S->rp, i)) {
        if (!S->n_pend)
            return 0;
        begin_next(S);
    }
    return 1;
}

/* Replays s in the order sb_replay gives (the schedule's own order without
 * joined collectives): each node once its inputs, the node before it on its
 * stream and, for a done, its collective's begin have been replayed. */
static void run_order(struct sim_state *S, const struct sb_schedule *s,
                      struct sb_sim_result *r)
{
    const struct sb_graph_view *g = S->g;
    struct sb_replay rp;
    uint32_t i, k = 0;
    if (g->join) {
        sb_replay_init(&rp, g, s, 1);
        S->rp = &rp;
        S->pend = sb_xmalloc((size_t)g->n_nodes * sizeof *S->pend + 1);
        S->pend_b = sb_xcalloc((size_t)g->n_nodes + 1, sizeof *S->pend_b);
        S->pend_key = sb_xcalloc((size_t)g->n_nodes + 1, sizeof *S->pend_key);
    }
    for (; next_step(S, k, &i); k++) {
        uint32_t v = s->order[i], d = (uint32_t)s->device[v];
        double t = inputs_ready(S, v, d, r), t_in = t;
        double *lane = &S->stream[(size_t)d * g->n_streams + sb_lane(g, v, d)];
        if (t < *lane)
            t = *lane;
        if (t < S->barrier_t)
            t = S->barrier_t;
        if (S->prof && g->kind[v] == SB_KIND_COMPUTE)
            t = res_start(S, v, d, t);
        if (S->rec)
            S->rec->begin_us[v] = t;
        int bucketed = S->bk && S->bk->leader[v] != SB_NONE;
        switch ((enum sb_kind)g->kind[v]) {
        case SB_KIND_INPUT: /* exists before the program starts; a barrier at
                               its position still waits for what precedes it */
            S->fin[v] = 0;
            if (S->rec)
                S->rec->begin_us[v] = S->rec->end_us[v] = 0;
            goto barrier;
        case SB_KIND_COMPUTE:
            t += sb_dur_on(g, v, d);
            break;
        case SB_KIND_START:
            /* in a job every unbucketed collective, joined or alone, takes
             * its slots in the order collectives begin; so does every
             * bucket, as its group (buckets_join) */
            if (g->join && !bucketed) {
                issue_joined(S, v, t, t_in);
                break;
            }
            if (g->join) {
                bucket_reach(S, v, t);
                break;
            }
            S->coll_end[v] = bucketed ? bucket_start(S, v, d, t) : issue(S, v, d, t);
            if (S->coll_end[v] > S->all_end && !isinf(S->coll_end[v]))
                S->all_end = S->coll_end[v];
            break;
        case SB_KIND_DONE: {
            double done = coll_end(S, g->partner[v]);
            if (done > t) {
                r->exposed_comm_us += done - t;
                r->dev_exposed_us[d] += done - t;
                t = done;
            }
            break;
        }
        default: /* nop: free, but keeps its place on the stream */
            break;
        }
        S->fin[v] = t;
        *lane = t;
        if (S->rec)
            S->rec->end_us[v] = t;
        if (t > r->makespan_us)
            r->makespan_us = t;
        if (t > S->all_end)
            S->all_end = t;
    barrier: /* after step k, positions 0..k have all run (sb_replay) */
        if (S->rp)
            sb_replay_went(S->rp, i);
        if (s->barrier && s->barrier[k]) {
            while (S->n_pend) /* what began before the barrier counts */
                begin_next(S);
            S->barrier_t = S->all_end;
            r->barriers++;
        }
    }
    if (S->rp) {
        SB_ASSERT(k == s->n_nodes); /* the validator refuses a deadlock */
        sb_replay_free(&rp);
        free(S->pend), free(S->pend_b), free(S->pend_key);
        S->rp = NULL;
    }
}

/* Compute time is each node's time on the device it was placed on. */
static void sum_durations(const struct sb_graph_view *g, const struct sb_schedule *s,
                          struct sb_sim_result *r)
{
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        uint32_t d = (uint32_t)s->device[v];
        if (g->kind[v] == SB_KIND_COMPUTE) {
            r->compute_us += sb_dur_on(g, v, d);
            r->dev_compute_us[d] += sb_dur_on(g, v, d);
        } else if (g->kind[v] == SB_KIND_START) {
            r->comm_us += g->dur_us[v];
            r->dev_comm_us[d] += g->dur_us[v];
        }
    }
}

/* ---- several devices ------------------------------------------------------
 *
 * Rules (docs/machines.md): each device has one compute stream and one memory
 * account.  A consumer on device b of a producer on device a (b unable to read
 * a's memory in place) needs a copy of the producer's buffer on b; the copy is
 * made once per (buffer, device), when the first such consumer is reached, and
 * takes latency + bytes / bandwidth on link a->b.  A link direction carries one
 * transfer at a time, in the order the simulator reaches the consumers (FIFO).
 * Memory is accounted per device in schedule positions, as on one device: a
 * buffer lives on its producer's device from the producer through its last use
 * there (read in place counts, and so does the consumer that triggers a copy
 * to another device: the source stays until its copy is made), a copy lives
 * on b from its first use on b through its last.  A weight or output flag,
 * on the buffer's producer or on a view of it, pins it on its node's device. */

static int reads_in_place(const struct sb_graph_view *g, uint32_t b, uint32_t a)
{
    return a == b || g->machine->can_read[(size_t)b * g->machine->n_devices + a];
}

/* Recording only: appends a copy (the array doubles as it fills). */
static void record_copy(struct sb_sim_result *r, uint32_t p, uint32_t a, uint32_t b,
                        double begin, double end, uint64_t bytes)
{
    if ((r->n_copies & (r->n_copies - 1)) == 0) /* 0, 1, 2, 4, ...: full */
        r->copies = sb_xrealloc(r->copies, (r->n_copies ? 2 * (size_t)r->n_copies : 1) *
                                               sizeof *r->copies);
    r->copies[r->n_copies++] = (struct sb_sim_copy){p, a, b, begin, end, bytes};
}

static double transfer(struct sim_state *S, uint32_t p, uint32_t b, struct sb_sim_result *r)
{
    const struct sb_graph_view *g = S->g;
    uint32_t a = (uint32_t)S->dev[p], nd = S->nd;
    if (reads_in_place(g, b, a))
        return S->fin[p];
    SB_ASSERT(S->copy_ready); /* run_devices saw this edge cross */
    double *ready = &S->copy_ready[(size_t)p * nd + b];
    if (*ready >= 0)
        return *ready;
    size_t L = (size_t)a * nd + b;
    uint64_t bytes = g->out_bytes[S->root[p]];
    /* copies run ahead of barriers (docs/machines.md): a barrier orders the
     * streams and collectives, while a copy starts once its producer has
     * finished and its link is free (dp's placer plans the same way) */
    double begin = S->fin[p] > S->link_free[L] ? S->fin[p] : S->link_free[L];
    /* GB/s = 10^3 bytes per microsecond */
    double end = begin + g->machine->link_lat_us[L] + (double)bytes / (g->machine->link_gbps[L] * 1e3);
    S->link_free[L] = end;
    *ready = end;
    if (S->rec)
        record_copy(S->rec, p, a, b, begin, end, bytes);
    r->transfer_bytes += bytes;
    r->n_transfers++;
    return end;
}

/* Memory accounts: buffer r charged to device a.  A job of ranks has
 * hundreds of devices and most buffers live on their home device only, so
 * the home account of every buffer is an array over the buffers and the
 * others (copies, views on another device) a list of their uses, sorted and
 * reduced once: memory stays linear in the nodes whatever the devices
 * (issue 37; an [n * n_devices] table took 7 GB at 256 ranks). */
struct acct_use {
    uint32_t r, a, pos;
    uint8_t pin; /* a pin, not a use */
};

struct dev_mem {
    uint32_t nd, n;
    const int32_t *dev;     /* the schedule's placement */
    const uint32_t *root;
    uint32_t *first, *last; /* [n] positions of a buffer's uses on its home device */
    uint8_t *used, *pinned; /* [n] */
    struct acct_use *far;   /* uses and pins of other accounts, appended */
    size_t n_far, cap_far;
};

/* The account a use of buffer r on device d is charged to: its home device when
 * d reads it in place, else d's copy. */
static uint32_t account(const struct sb_graph_view *g, const int32_t *dev, uint32_t r,
                        uint32_t d)
{
    uint32_t home = (uint32_t)dev[r];
    return reads_in_place(g, d, home) ? home : d;
}

static void far_push(struct dev_mem *M, uint32_t r, uint32_t a, uint32_t pos, uint8_t pin)
{
    if (M->n_far == M->cap_far) {
        M->cap_far = M->cap_far ? 2 * M->cap_far : 64;
        M->far = sb_xrealloc(M->far, M->cap_far * sizeof *M->far);
    }
    M->far[M->n_far++] = (struct acct_use){r, a, pos, pin};
}

static void mem_use(struct dev_mem *M, const struct sb_graph_view *g, uint32_t r, uint32_t d,
                    uint32_t pos)
{
    uint32_t a = account(g, M->dev, r, d);
    if (a != (uint32_t)M->dev[r]) {
        far_push(M, r, a, pos, 0);
        return;
    }
    if (!M->used[r] || pos < M->first[r])
        M->first[r] = pos;
    if (!M->used[r] || pos > M->last[r])
        M->last[r] = pos;
    M->used[r] = 1;
}

static int cmp_acct(const void *x, const void *y)
{
    const struct acct_use *a = x, *b = y;
    if (a->r != b->r)
        return a->r < b->r ? -1 : 1;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    return (a->pos > b->pos) - (a->pos < b->pos);
}

/* pass 1: every node uses the buffer it owns or views, and its inputs' at its
 * position; a start its inputs' through its done's position.
 * pass 2: a copy of p's output to device b is made for the first consumer on
 * b (transfer()); its source stays on p's device until that position (the
 * triggers, (p, b, position) of every consumer that does not read p in
 * place, reduced to the first per (p, b)). */
static void mark_uses(struct dev_mem *M, const struct sb_graph_view *g, const uint32_t *pos)
{
    const int32_t *dev = M->dev;
    const uint32_t *root = M->root;
    struct dev_mem T = {0}; /* the triggers, in T.far as (p, b, position) */
    for (uint32_t v = 0; v < M->n; v++) {
        uint32_t d = (uint32_t)dev[v];
        mem_use(M, g, root[v], d, pos[v]);
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t p = g->pred[e];
            if (sb_edge_after(g, e)) /* an after edge reads nothing */
                continue;
            mem_use(M, g, root[p], d, pos[v]);
            int own_start = g->kind[v] == SB_KIND_DONE && e == g->pred_off[v];
            if (!own_start && !reads_in_place(g, d, (uint32_t)dev[p]))
                far_push(&T, p, d, pos[v], 0);
        }
        if (g->kind[v] == SB_KIND_START) /* a collective reads its inputs until its done */
            for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
                if (!sb_edge_after(g, e))
                    mem_use(M, g, root[g->pred[e]], d, pos[g->partner[v]]);
    }
    if (T.n_far)
        qsort(T.far, T.n_far, sizeof *T.far, cmp_acct);
    for (size_t k = 0; k < T.n_far; k++) /* the first of each (p, b) */
        if (!k || T.far[k].r != T.far[k - 1].r || T.far[k].a != T.far[k - 1].a)
            mem_use(M, g, root[T.far[k].r], (uint32_t)dev[T.far[k].r], T.far[k].pos);
    free(T.far);
}

/* One change of a device's memory at a position. */
struct mem_event {
    uint32_t pos, d;
    int64_t bytes;
};

static void event_push(struct mem_event **ev, size_t *n, size_t *cap, uint32_t pos, uint32_t d,
                       int64_t bytes)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 256;
        *ev = sb_xrealloc(*ev, *cap * sizeof **ev);
    }
    (*ev)[(*n)++] = (struct mem_event){pos, d, bytes};
}

/* The buckets' merged buffers as memory events on the leader's device
 * (bucket_mem_deltas' rule, for several devices). */
static void bucket_mem_events(const struct sim_buckets *B, const struct sb_graph_view *g,
                              const struct sb_schedule *s, const uint32_t *pos,
                              struct mem_event **ev, size_t *n_ev, size_t *cap_ev)
{
    for (uint32_t b = 0; B && b < B->n; b++) {
        uint32_t lead = bucket_lead(B, b), d = (uint32_t)s->device[lead];
        event_push(ev, n_ev, cap_ev, pos[lead], d, (int64_t)B->staging[b]);
        event_push(ev, n_ev, cap_ev, bucket_last(B, g, pos, b) + 1, d, -(int64_t)B->staging[b]);
    }
}

/* Per-device memory in position order; r->mem_bytes gets the profile of the
 * device with the largest peak.  The changes of each account (an allocation,
 * and a free after its last use unless pinned) are sorted by position
 * (counting sort) and summed per position and device before the peaks are
 * read, as a table of [positions * devices] would sum them. */
static void mem_devices(const struct sb_graph_view *g, const struct sb_schedule *s,
                        const uint32_t *root, const struct sim_buckets *bk,
                        struct sb_sim_result *r)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    struct dev_mem M = {.nd = nd, .n = n, .dev = s->device, .root = root};
    uint32_t *pos = sb_xmalloc(((size_t)n + 1) * sizeof *pos);
    M.first = sb_xmalloc(((size_t)n + 1) * sizeof *M.first);
    M.last = sb_xmalloc(((size_t)n + 1) * sizeof *M.last);
    M.used = sb_xcalloc((size_t)n + 1, 1);
    M.pinned = sb_xcalloc((size_t)n + 1, 1);
    for (uint32_t i = 0; i < n; i++)
        pos[s->order[i]] = i;
    mark_uses(&M, g, pos);
    /* a weight or output, or a view flagged so, pins the buffer on the
     * account its node uses (docs/machines.md) */
    for (uint32_t v = 0; v < n; v++)
        if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT)) {
            uint32_t a = account(g, s->device, root[v], (uint32_t)s->device[v]);
            if (a == (uint32_t)s->device[root[v]])
                M.pinned[root[v]] = 1;
            else
                far_push(&M, root[v], a, 0, 1);
        }
    if (M.n_far)
        qsort(M.far, M.n_far, sizeof *M.far, cmp_acct);
    struct mem_event *ev = NULL;
    size_t n_ev = 0, cap_ev = 0;
    for (uint32_t v = 0; v < n; v++) { /* home accounts */
        if (root[v] != v || !g->out_bytes[v] || !M.used[v])
            continue;
        int64_t b = (int64_t)g->out_bytes[v];
        uint32_t d = (uint32_t)s->device[v];
        event_push(&ev, &n_ev, &cap_ev, g->kind[v] == SB_KIND_INPUT ? 0 : pos[v], d, b);
        if (!M.pinned[v])
            event_push(&ev, &n_ev, &cap_ev, M.last[v] + 1, d, -b);
    }
    for (size_t k = 0, j; k < M.n_far; k = j) { /* the other accounts, one run each */
        uint32_t rr = M.far[k].r, a = M.far[k].a, first = UINT32_MAX, last = 0;
        int used = 0, pin = 0;
        for (j = k; j < M.n_far && M.far[j].r == rr && M.far[j].a == a; j++) {
            pin |= M.far[j].pin;
            if (!M.far[j].pin) {
                used = 1;
                first = M.far[j].pos < first ? M.far[j].pos : first;
                last = M.far[j].pos > last ? M.far[j].pos : last;
            }
        }
        if (root[rr] != rr || !g->out_bytes[rr] || !used)
            continue;
        int64_t b = (int64_t)g->out_bytes[rr];
        event_push(&ev, &n_ev, &cap_ev, first, a, b);
        if (!pin)
            event_push(&ev, &n_ev, &cap_ev, last + 1, a, -b);
    }
    bucket_mem_events(bk, g, s, pos, &ev, &n_ev, &cap_ev);
    /* by position: a counting sort (frees past the end fall off) */
    uint32_t *at = sb_xcalloc((size_t)n + 2, sizeof *at);
    for (size_t k = 0; k < n_ev; k++)
        if (ev[k].pos < n)
            at[ev[k].pos + 1]++;
    for (uint32_t i = 0; i < n; i++)
        at[i + 1] += at[i];
    struct mem_event *by_pos = sb_xmalloc((at[n] + 1) * sizeof *by_pos);
    uint32_t *fill = sb_xmalloc(((size_t)n + 1) * sizeof *fill);
    memcpy(fill, at, (size_t)n * sizeof *fill);
    for (size_t k = 0; k < n_ev; k++)
        if (ev[k].pos < n)
            by_pos[fill[ev[k].pos]++] = ev[k];
    free(fill), free(ev);
    int64_t *cur = sb_xcalloc(nd, sizeof *cur);
    uint32_t *peak_pos = sb_xcalloc(nd, sizeof *peak_pos);
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = at[i]; k < at[i + 1]; k++)
            cur[by_pos[k].d] += by_pos[k].bytes;
        for (uint32_t k = at[i]; k < at[i + 1]; k++) { /* the position's net change */
            uint32_t d = by_pos[k].d;
            SB_ASSERT(cur[d] >= 0);
            if ((uint64_t)cur[d] > r->dev_peak_bytes[d]) {
                r->dev_peak_bytes[d] = (uint64_t)cur[d];
                peak_pos[d] = i;
            }
        }
    }
    uint32_t top = 0;
    for (uint32_t d = 1; d < nd; d++)
        if (r->dev_peak_bytes[d] > r->dev_peak_bytes[top])
            top = d;
    r->peak_mem_bytes = r->dev_peak_bytes[top];
    r->peak_pos = peak_pos[top];
    memset(cur, 0, nd * sizeof *cur);
    for (uint32_t i = 0; i < n; i++) {
        for (uint32_t k = at[i]; k < at[i + 1]; k++)
            if (by_pos[k].d == top)
                cur[top] += by_pos[k].bytes;
        r->mem_bytes[i] = (uint64_t)cur[top];
    }
    if (r->dev_mem_bytes) { /* recording: every device's profile */
        memset(cur, 0, nd * sizeof *cur);
        for (uint32_t i = 0; i < n; i++) {
            for (uint32_t k = at[i]; k < at[i + 1]; k++)
                cur[by_pos[k].d] += by_pos[k].bytes;
            for (uint32_t d = 0; d < nd; d++)
                r->dev_mem_bytes[(size_t)i * nd + d] = (uint64_t)cur[d];
        }
    }
    free(cur);
    free(peak_pos);
    free(at), free(by_pos);
    free(M.used), free(M.pinned), free(M.last), free(M.first), free(M.far);
    free(pos);
}

static void run_devices(struct sim_state *S, const struct sb_schedule *s,
                        struct sb_sim_result *r)
{
    size_t n = S->g->n_nodes, nd = S->nd;
    uint32_t *root = sb_xmalloc((n + 1) * sizeof *root);
    sb_mem_buffer_roots(S->g, root);
    S->root = root;
    /* [n * nd] only when a value can cross devices: a job of ranks, whose
     * ranks share only after edges, would take gigabytes for nothing */
    int crosses = 0;
    for (uint32_t v = 0; v < n && !crosses; v++)
        for (uint32_t e = S->g->pred_off[v]; e < S->g->pred_off[v + 1] && !crosses; e++)
            crosses = !sb_edge_after(S->g, e) &&
                      !reads_in_place(S->g, (uint32_t)s->device[v],
                                      (uint32_t)s->device[S->g->pred[e]]);
    S->copy_ready = crosses ? sb_xmalloc(n * nd * sizeof *S->copy_ready) : NULL;
    for (size_t k = 0; crosses && k < n * nd; k++)
        S->copy_ready[k] = -1;
    S->link_free = sb_xcalloc(nd * nd, sizeof *S->link_free);
    run_order(S, s, r);
    mem_devices(S->g, s, root, S->bk, r);
    free(S->copy_ready);
    free(S->link_free);
    free(root);
}

/* Devices used, and devices whose peak exceeds their capacity. */
static void count_devices(const struct sb_graph_view *g, const struct sb_schedule *s,
                          struct sb_sim_result *r)
{
    uint32_t nd = g->machine->n_devices;
    uint8_t *used = sb_xcalloc(nd, 1);
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->kind[v] != SB_KIND_INPUT)
            used[s->device[v]] = 1;
    for (uint32_t d = 0; d < nd; d++) {
        r->devices_used += used[d];
        r->over_capacity += r->dev_peak_bytes[d] > g->machine->mem_cap_bytes[d];
    }
    if (!r->devices_used) /* a graph of inputs only still runs somewhere */
        r->devices_used = 1;
    free(used);
}

/* The lower bound when several collectives share ASTRA-sim's queues: a
 * collective may then end sooner than alone, so each is bounded by what no
 * sharing can beat (the queue model's floor_ns) instead of its time alone.  With
 * one admitted at a time each takes exactly its time alone. */
static double shared_queue_bound(const struct sb_graph *G, const struct sb_sim_config *c)
{
    struct sb_graph_view v = G->v;
    double *dur = sb_xmalloc((size_t)v.n_nodes * sizeof *dur);
    memcpy(dur, v.dur_us, (size_t)v.n_nodes * sizeof *dur);
    for (uint32_t i = 0; i < v.n_nodes; i++) {
        double ns;
        if (c->queue->floor_ns(c->queue->model, G, i, &ns))
            dur[i] = ns / 1000;
    }
    v.dur_us = dur;
    double lb = sb_sim_lower_bound(&v, c);
    free(dur);
    return lb;
}

/* ASTRA-sim's exposed communication, as its Workload::report prints it for
 * each rank: the rank's end less tics_gpu_ops, the time of its GPU compute
 * (host ops count in tics_cpu_ops instead); here the largest over the
 * devices.  A device ends with its last node, a collective's end included. */
static double astra_exposed(const struct sim_state *S, const struct sb_schedule *s)
{
    const struct sb_graph_view *g = S->g;
    uint32_t nd = S->nd;
    uint8_t *host = sb_xcalloc((size_t)g->n_ops + 1, 1);
    for (uint32_t k = 0; k < g->n_ops; k++)
        host[k] = !strcmp(g->op_names[k], "host") || !strcmp(g->op_names[k], "comm_host");
    double *end = sb_xcalloc(nd, sizeof *end), *busy = sb_xcalloc(nd, sizeof *busy);
    uint8_t *used = sb_xcalloc(nd, 1);
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        uint32_t d = s->device[v] >= 0 ? (uint32_t)s->device[v] : 0;
        double t = g->kind[v] == SB_KIND_START && S->coll_end[v] > S->fin[v] ? S->coll_end[v]
                                                                           : S->fin[v];
        if (g->kind[v] == SB_KIND_INPUT)
            continue;
        used[d] = 1;
        end[d] = t > end[d] ? t : end[d];
        if (g->kind[v] == SB_KIND_COMPUTE && !host[g->op[v]])
            busy[d] += sb_dur_on(g, v, d);
    }
    double worst = 0;
    for (uint32_t d = 0; d < nd; d++)
        if (used[d] && end[d] - busy[d] > worst)
            worst = end[d] - busy[d];
    free(host), free(end), free(busy), free(used);
    return worst;
}

void sb_sim_run(const struct sb_graph *G, const struct sb_schedule *s,
                const struct sb_sim_config *c, struct sb_sim_result *r)
{
    const struct sb_graph_view *g = &G->v;
    uint32_t nd = g->machine->n_devices;
    struct sim_state S = {.g = g, .lat = c->edge_lat_us, .c = c, .nd = nd,
                          .dev = s->device};
    memset(r, 0, sizeof *r);
    S.fin = sb_xcalloc(g->n_nodes, sizeof *S.fin);
    S.coll_end = sb_xcalloc(g->n_nodes, sizeof *S.coll_end);
    S.stream = sb_xcalloc((size_t)nd * g->n_streams, sizeof *S.stream);
    S.res = sb_xcalloc((size_t)nd * SB_COLL_COUNT, sizeof *S.res);
    if (g->join) {
        S.issue_t = sb_xcalloc(g->n_nodes, sizeof *S.issue_t);
    }
    if (c->record) {
        size_t n = g->n_nodes;
        r->begin_us = sb_xcalloc(n, sizeof *r->begin_us);
        r->end_us = sb_xcalloc(n, sizeof *r->end_us);
        r->coll_begin_us = sb_xcalloc(n, sizeof *r->coll_begin_us);
        r->coll_end_us = sb_xcalloc(n, sizeof *r->coll_end_us);
        r->coll_lane = sb_xcalloc(n, sizeof *r->coll_lane);
        S.rec = r;
    }
    for (uint32_t d = 0; d < nd; d++)
        for (uint32_t t = 0; t < SB_COLL_COUNT; t++) {
            struct resource *R = &S.res[(size_t)d * SB_COLL_COUNT + t];
            R->n_slots = c->shared ? c->limit[0] : c->limit[t];
            for (uint32_t k = 0; k < SB_MAX_INFLIGHT; k++)
                R->live[k] = -1;
        }
    /* ASTRA-sim's queues need collectives issued in time order: one device,
     * one shared resource (several devices keep each collective's dur_us) */
    if (c->queue && nd == 1) {
        SB_ASSERT(c->shared);
        S.G = G;
        S.qm = c->queue;
        S.sys = c->queue->open(c->queue->model);
        S.coll_h = sb_xmalloc((size_t)g->n_nodes * sizeof *S.coll_h);
        for (uint32_t v = 0; v < g->n_nodes; v++)
            S.coll_h[v] = -1;
    }
    if (g->machine->n_res && g->res_use) {
        uint32_t K = g->machine->n_res;
        S.prof = sb_xcalloc(nd, sizeof *S.prof);
        for (uint32_t d = 0; d < nd; d++) {
            S.prof[d].n = 1, S.prof[d].cap = 16;
            S.prof[d].t = sb_xcalloc(16, sizeof *S.prof[d].t);
            S.prof[d].use = sb_xcalloc((size_t)16 * K, sizeof *S.prof[d].use);
        }
    }
    r->n_dev = nd;
    r->dev_peak_bytes = sb_xcalloc(nd, sizeof *r->dev_peak_bytes);
    r->dev_exposed_us = sb_xcalloc(nd, sizeof *r->dev_exposed_us);
    r->dev_compute_us = sb_xcalloc(nd, sizeof *r->dev_compute_us);
    r->dev_comm_us = sb_xcalloc(nd, sizeof *r->dev_comm_us);
    r->n_pos = s->n_nodes;
    r->mem_bytes = sb_xmalloc((size_t)r->n_pos * sizeof *r->mem_bytes);
    S.bk = buckets_open(G, s, c);
    if (nd == 1) {
        run_order(&S, s, r);
        r->makespan_lb_us = S.bk                         ? bucket_bound(S.bk, G, c)
                            : S.sys && c->limit[0] > 1 ? shared_queue_bound(G, c)
                                                       : sb_sim_lower_bound(g, c);
        r->peak_mem_bytes = sb_mem_profile(g, s->order, s->n_nodes, r->mem_bytes,
                                           &r->peak_pos);
        r->dev_peak_bytes[0] = r->peak_mem_bytes;
        if (S.bk)
            bucket_memory(S.bk, g, s, r);
    } else {
        if (c->record)
            r->dev_mem_bytes = sb_xmalloc((size_t)r->n_pos * nd * sizeof *r->dev_mem_bytes);
        run_devices(&S, s, r);
        r->makespan_lb_us = S.bk ? bucket_bound(S.bk, G, c) : sb_sim_lower_bound(g, c);
    }
    if (c->record && nd == 1) { /* one device: its profile is mem_bytes */
        r->dev_mem_bytes = sb_xmalloc((size_t)r->n_pos * sizeof *r->dev_mem_bytes);
        memcpy(r->dev_mem_bytes, r->mem_bytes, (size_t)r->n_pos * sizeof *r->mem_bytes);
    }
    sum_durations(g, s, r);
    bucket_comm(S.bk, g, s, r);
    r->buckets = S.bk ? S.bk->n : 0;
    count_devices(g, s, r);
    buckets_close(S.bk);
    r->astra_exposed_us = astra_exposed(&S, s);
    if (S.sys)
        S.qm->close(S.sys);
    free(S.coll_h);
    free(S.fin);
    free(S.coll_end);
    free(S.issue_t);
    free(S.stream);
    free(S.res);
    for (uint32_t d = 0; S.prof && d < nd; d++)
        free(S.prof[d].t), free(S.prof[d].use);
    free(S.prof);
}

void sb_sim_result_free(struct sb_sim_result *r)
{
    free(r->mem_bytes);
    free(r->begin_us);
    free(r->end_us);
    free(r->coll_begin_us);
    free(r->coll_end_us);
    free(r->coll_lane);
    free(r->dev_peak_bytes);
    free(r->dev_exposed_us);
    free(r->dev_compute_us);
    free(r->dev_comm_us);
    free(r->dev_mem_bytes);
    free(r->copies);
    memset(r, 0, sizeof *r);
}
