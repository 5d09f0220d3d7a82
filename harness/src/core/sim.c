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
    /* joined collectives (graph.h, `join`), NULL without */
    double *issue_t;  /* [n] starts: when the member issued its start */
    uint8_t *issued;  /* [n] starts: issued, waiting for the other members */
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

static double issue(struct sim_state *S, uint32_t s, uint32_t dev, double t)
{
    uint32_t r = S->c->shared ? 0 : S->g->coll[s];
    struct resource *R = &S->res[(size_t)dev * SB_COLL_COUNT + r];
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
        S->rec->coll_lane[s] = r * SB_MAX_INFLIGHT + best;
    }
    return R->end_us[best];
}

/* A joined collective (docs/machines.md, "Joined collectives") begins on
 * every member when the last member has issued its start, and each
 * member's resource has a free slot; it then runs its collective model's
 * time on each.  Built with SB_SIM_JOIN_ON_ARRIVAL, members meet when their
 * inputs are ready instead: the rule before the rendezvous, kept only so
 * that test_simdiff_arrival can show the differential test tells them
 * apart.  t: v's issue time, t_in: when its inputs were ready. */
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
    S->issued[v] = 1;
    double begin = 0;
    uint32_t m = v;
    do {
        if (!S->issued[m])
            return; /* a member has yet to issue: the last one begins it */
        begin = S->issue_t[m] > begin ? S->issue_t[m] : begin;
        m = g->join[m];
    } while (m != v);
    double at = begin;
    do { /* the members' slots: the latest to free holds all back */
        uint32_t r = S->c->shared ? 0 : g->coll[m];
        struct resource *R = &S->res[(size_t)S->dev[m] * SB_COLL_COUNT + r];
        double free_us = R->end_us[first_free(S, R, at)];
        begin = free_us > begin ? free_us : begin;
        m = g->join[m];
    } while (m != v);
    do {
        S->coll_end[m] = issue(S, m, (uint32_t)S->dev[m], begin);
        if (S->coll_end[m] > S->all_end)
            S->all_end = S->coll_end[m];
        S->issued[m] = 0;
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
    double w = g->dev_dur_us[(size_t)v * S->nd + d];
    for (uint32_t k = 0; k < K; k++)
        any |= need[k] = sb_res_need(g, v, d, k);
    if (!any || !(w > 0)) /* holds nothing, or nothing for any time */
        return t;
    const uint32_t *lim = &g->machine->res_limit[(size_t)d * K];
    t = prof_fit(&S->prof[d], K, lim, need, t, w);
    prof_add(&S->prof[d], K, need, t, t + w);
    return t;
}

/* Replays s in the order sb_replay_order gives (the schedule's own order
 * without joined collectives); step k is position replay[k]. */
static void run_order(struct sim_state *S, const struct sb_schedule *s,
                      struct sb_sim_result *r)
{
    const struct sb_graph_view *g = S->g;
    uint32_t *replay = NULL, stuck = 0;
    if (g->join) {
        replay = sb_xmalloc((size_t)s->n_nodes * sizeof *replay + 1);
        uint32_t placed = sb_replay_order(g, s, replay, &stuck);
        SB_ASSERT(placed == s->n_nodes); /* the validator refuses a deadlock */
    }
    for (uint32_t k = 0; k < s->n_nodes; k++) {
        uint32_t i = replay ? replay[k] : k;
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
        switch ((enum sb_kind)g->kind[v]) {
        case SB_KIND_INPUT: /* exists before the program starts; a barrier at
                               its position still waits for what precedes it */
            S->fin[v] = 0;
            if (S->rec)
                S->rec->begin_us[v] = S->rec->end_us[v] = 0;
            goto barrier;
        case SB_KIND_COMPUTE:
            t += g->dev_dur_us[(size_t)v * S->nd + d];
            break;
        case SB_KIND_START:
            if (g->join && g->join[v] != v) {
                issue_joined(S, v, t, t_in);
                break;
            }
            S->coll_end[v] = issue(S, v, d, t);
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
    barrier: /* after step k, positions 0..k have all run (sb_replay_order) */
        if (s->barrier && s->barrier[k]) {
            S->barrier_t = S->all_end;
            r->barriers++;
        }
    }
    free(replay);
}

/* Compute time is each node's time on the device it was placed on. */
static void sum_durations(const struct sb_graph_view *g, const struct sb_schedule *s,
                          struct sb_sim_result *r)
{
    uint32_t nd = g->machine->n_devices;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        uint32_t d = (uint32_t)s->device[v];
        if (g->kind[v] == SB_KIND_COMPUTE) {
            r->compute_us += g->dev_dur_us[(size_t)v * nd + d];
            r->dev_compute_us[d] += g->dev_dur_us[(size_t)v * nd + d];
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

struct dev_mem {
    uint32_t nd, n;
    uint32_t *first, *last; /* [n * nd] positions of a buffer's uses on a device */
    uint8_t *used;          /* [n * nd] */
};

/* The account a use of buffer r on device d is charged to: its home device when
 * d reads it in place, else d's copy. */
static uint32_t account(const struct sb_graph_view *g, const int32_t *dev, uint32_t r,
                        uint32_t d)
{
    uint32_t home = (uint32_t)dev[r];
    return reads_in_place(g, d, home) ? home : d;
}

static void mem_use(struct dev_mem *M, const struct sb_graph_view *g, const int32_t *dev,
                    uint32_t r, uint32_t d, uint32_t pos)
{
    size_t k = (size_t)r * M->nd + account(g, dev, r, d);
    if (!M->used[k] || pos < M->first[k])
        M->first[k] = pos;
    if (!M->used[k] || pos > M->last[k])
        M->last[k] = pos;
    M->used[k] = 1;
}

/* pass 1: every node uses the buffer it owns or views, and its inputs' at its
 * position; a start its inputs' through its done's position.
 * pass 2: a copy of p's output to device b is made for the first consumer on
 * b (transfer()); its source stays on p's device until that position. */
static void mark_uses(struct dev_mem *M, const struct sb_graph_view *g, const int32_t *dev,
                      const uint32_t *root, const uint32_t *pos)
{
    uint32_t nd = M->nd;
    uint32_t *trigger = sb_xmalloc((size_t)M->n * nd * sizeof *trigger);
    for (size_t k = 0; k < (size_t)M->n * nd; k++)
        trigger[k] = UINT32_MAX;
    for (uint32_t v = 0; v < M->n; v++) {
        uint32_t d = (uint32_t)dev[v];
        mem_use(M, g, dev, root[v], d, pos[v]);
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t p = g->pred[e];
            if (sb_edge_after(g, e)) /* an after edge reads nothing */
                continue;
            mem_use(M, g, dev, root[p], d, pos[v]);
            int own_start = g->kind[v] == SB_KIND_DONE && e == g->pred_off[v];
            size_t k = (size_t)p * nd + d;
            if (!own_start && !reads_in_place(g, d, (uint32_t)dev[p]) && pos[v] < trigger[k])
                trigger[k] = pos[v];
        }
        if (g->kind[v] == SB_KIND_START) /* a collective reads its inputs until its done */
            for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
                if (!sb_edge_after(g, e))
                    mem_use(M, g, dev, root[g->pred[e]], d, pos[g->partner[v]]);
    }
    for (uint32_t p = 0; p < M->n; p++)
        for (uint32_t d = 0; d < nd; d++)
            if (trigger[(size_t)p * nd + d] != UINT32_MAX)
                mem_use(M, g, dev, root[p], (uint32_t)dev[p], trigger[(size_t)p * nd + d]);
    free(trigger);
}

/* Per-device memory in position order; r->mem_bytes gets the profile of the
 * device with the largest peak. */
static void mem_devices(const struct sb_graph_view *g, const struct sb_schedule *s,
                        const uint32_t *root, struct sb_sim_result *r)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    struct dev_mem M = {.nd = nd, .n = n};
    uint32_t *pos = sb_xmalloc((size_t)n * sizeof *pos);
    M.first = sb_xmalloc((size_t)n * nd * sizeof *M.first);
    M.last = sb_xmalloc((size_t)n * nd * sizeof *M.last);
    M.used = sb_xcalloc((size_t)n * nd, 1);
    int64_t *delta = sb_xcalloc((size_t)(n + 1) * nd, sizeof *delta);
    for (uint32_t i = 0; i < n; i++)
        pos[s->order[i]] = i;
    mark_uses(&M, g, s->device, root, pos);
    /* a weight or output, or a view flagged so, pins the buffer on the
     * account its node uses (docs/machines.md) */
    uint8_t *pinned = sb_xcalloc((size_t)n * nd, 1);
    for (uint32_t v = 0; v < n; v++)
        if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT))
            pinned[(size_t)root[v] * nd + account(g, s->device, root[v],
                                                  (uint32_t)s->device[v])] = 1;
    for (uint32_t v = 0; v < n; v++) {
        if (root[v] != v || !g->out_bytes[v])
            continue;
        for (uint32_t d = 0; d < nd; d++) {
            size_t k = (size_t)v * nd + d;
            int home = d == (uint32_t)s->device[v];
            if (!M.used[k])
                continue;
            uint32_t a = home ? (g->kind[v] == SB_KIND_INPUT ? 0 : pos[v]) : M.first[k];
            delta[(size_t)a * nd + d] += (int64_t)g->out_bytes[v];
            if (!pinned[k])
                delta[(size_t)(M.last[k] + 1) * nd + d] -= (int64_t)g->out_bytes[v];
        }
    }
    free(pinned);
    int64_t *cur = sb_xcalloc(nd, sizeof *cur);
    uint32_t *peak_pos = sb_xcalloc(nd, sizeof *peak_pos);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t d = 0; d < nd; d++) {
            cur[d] += delta[(size_t)i * nd + d];
            SB_ASSERT(cur[d] >= 0);
            if ((uint64_t)cur[d] > r->dev_peak_bytes[d]) {
                r->dev_peak_bytes[d] = (uint64_t)cur[d];
                peak_pos[d] = i;
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
        cur[top] += delta[(size_t)i * nd + top];
        r->mem_bytes[i] = (uint64_t)cur[top];
    }
    if (r->dev_mem_bytes) { /* recording: every device's profile */
        memset(cur, 0, nd * sizeof *cur);
        for (size_t k = 0; k < (size_t)n * nd; k++) {
            cur[k % nd] += delta[k];
            r->dev_mem_bytes[k] = (uint64_t)cur[k % nd];
        }
    }
    free(cur);
    free(peak_pos);
    free(delta);
    free(M.used);
    free(M.last);
    free(M.first);
    free(pos);
}

static void run_devices(struct sim_state *S, const struct sb_schedule *s,
                        struct sb_sim_result *r)
{
    size_t n = S->g->n_nodes, nd = S->nd;
    uint32_t *root = sb_xmalloc((n + 1) * sizeof *root);
    sb_mem_buffer_roots(S->g, root);
    S->root = root;
    S->copy_ready = sb_xmalloc(n * nd * sizeof *S->copy_ready);
    for (size_t k = 0; k < n * nd; k++)
        S->copy_ready[k] = -1;
    S->link_free = sb_xcalloc(nd * nd, sizeof *S->link_free);
    run_order(S, s, r);
    mem_devices(S->g, s, root, r);
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
        S.issued = sb_xcalloc((size_t)g->n_nodes + 1, 1);
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
    if (nd == 1) {
        run_order(&S, s, r);
        r->makespan_lb_us = S.sys && c->limit[0] > 1 ? shared_queue_bound(G, c)
                                                     : sb_sim_lower_bound(g, c);
        r->peak_mem_bytes = sb_mem_profile(g, s->order, s->n_nodes, r->mem_bytes,
                                           &r->peak_pos);
        r->dev_peak_bytes[0] = r->peak_mem_bytes;
    } else {
        if (c->record)
            r->dev_mem_bytes = sb_xmalloc((size_t)r->n_pos * nd * sizeof *r->dev_mem_bytes);
        run_devices(&S, s, r);
        r->makespan_lb_us = sb_sim_lower_bound(g, c);
    }
    if (c->record && nd == 1) { /* one device: its profile is mem_bytes */
        r->dev_mem_bytes = sb_xmalloc((size_t)r->n_pos * sizeof *r->dev_mem_bytes);
        memcpy(r->dev_mem_bytes, r->mem_bytes, (size_t)r->n_pos * sizeof *r->mem_bytes);
    }
    sum_durations(g, s, r);
    count_devices(g, s, r);
    if (S.sys)
        S.qm->close(S.sys);
    free(S.coll_h);
    free(S.fin);
    free(S.coll_end);
    free(S.issue_t);
    free(S.issued);
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
