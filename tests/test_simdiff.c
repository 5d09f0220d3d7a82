/* The differential test of the simulator (issue 23).
 *
 * ref_run below is a second simulator, written from docs/machines.md and
 * docs/cost-model.md alone and deliberately plain: arrays indexed by node and
 * device, quadratic loops, no shared code with sim.c, memory.c or bound.c (it
 * reads only the graph view, the machine's tables and the schedule).  It
 * replays random schedules (random graphs with inputs, computes of zero or more
 * microseconds, nops, aliases, collectives, weight and output flags, cost_us.<d>
 * columns, `after` edges; random machines of one to four devices with speeds and links; random
 * topological orders, placements, barriers and --sim resources) and must agree
 * with sb_sim_run on the makespan, exposed communication, transfer bytes and
 * every device's peak.  Then a random search (random schedules improved by
 * local moves: swap neighbours in the order, move a node, toggle a barrier)
 * must never get below sb_sim_lower_bound.
 *
 * Half the graphs also carry streams (0..2) and resources (docs/machines.md,
 * "Resources"): res.sms and res.cores columns, some fields empty (the whole
 * device), on machines whose devices declare sms and cores limits or none;
 * ref_run's rule for them is written from that page's text alone.
 *
 * Buckets (docs/cost-model.md, "Buckets"; issue 40): graphs whose collectives
 * carry bytes and a group instead of comm_us get random buckets of starts of
 * one type; ref_run prices a bucket from that page (the ring model of the
 * summed bytes, the copies at the copy bandwidth, the merged buffers from
 * the leader through the last done) and must agree again; schedules whose
 * buckets the validator refuses must be refused for a bucket reason.
 *
 * Jobs of ranks (docs/machines.md, "Joined collectives"): random jobs whose
 * collectives are joined across the ranks, in random orders; then jobs whose
 * ranks bucket the same two or three collectives (docs/plugins.md,
 * "Buckets"): ref_run begins such a group of buckets as one collective (the
 * closure of "joins" and "shares a bucket", ref_groups), each rank running
 * its bucket's price, and must agree; a quarter of them break the match on
 * one rank and must be refused.  Then jobs whose ranks bucket collectives
 * of their own (not joined) around joined ones: a group of one bucket in
 * ref_groups, and again they must agree.  Every order the validator
 * refuses as a deadlock must deadlock the reference too.
 *
 * SB_SIMDIFF_N=<random schedules> runs more (default 2000). */
#include <stdlib.h>

#include "check.h"
#include "core/core.h"
#include "core/machine.h"
#include "import/import.h"

#define MAX_DEV 4
#define MAX_N 40
#define MAX_STREAMS 3

/* ---- the reference simulator --------------------------------------------- */

struct ref_cfg {
    int shared;              /* one resource per device for every collective */
    uint32_t slots[SB_COLL_COUNT]; /* slots[0] when shared */
    double edge_lat_us;
};

struct ref_out {
    double makespan_us, exposed_us;
    uint64_t transfer_bytes;
    uint32_t barriers;
    uint64_t peak[MAX_DEV];
};

/* The buffer a node's output is: an alias or a done views its first input's. */
static uint32_t ref_root(const struct sb_graph_view *g, uint32_t v)
{
    while ((g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE)
        v = g->pred[g->pred_off[v]];
    return v;
}

/* docs/workload-format.md, `after`: an order-only edge; the consumer starts
 * no sooner than the producer finishes, with no edge latency, no copy and no
 * memory use. */
static int ref_is_after(const struct sb_graph_view *g, uint32_t v, uint32_t k)
{
    return g->pred_after != NULL && g->pred_after[g->pred_off[v] + k] != 0;
}

/* Whether the edge from input number k of v needs a copy: every input on
 * another device but a done's own start (docs/machines.md); never an after
 * edge. */
static int ref_needs_copy(const struct sb_graph_view *g, const int32_t *dev, uint32_t v,
                          uint32_t k)
{
    uint32_t p = g->pred[g->pred_off[v] + k];
    if ((g->kind[v] == SB_KIND_DONE && k == 0) || ref_is_after(g, v, k))
        return 0;
    return dev[p] != dev[v];
}

/* What v holds of resource k on device d while it runs, from the page: a
 * device that does not declare k does not limit it; a res.<name> field left
 * empty means the device's whole limit; only compute nodes hold anything. */
static uint32_t ref_hold(const struct sb_graph_view *g, uint32_t v, uint32_t d, uint32_t k)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t limit = m->res_limit[d * m->n_res + k];
    if (limit == 0 || g->kind[v] != SB_KIND_COMPUTE)
        return 0;
    uint32_t want = g->res_use[v * m->n_res + k];
    return want == SB_RES_ALL ? limit : want;
}

/* Whether v, placed on d over [t, t + w), stays within every limit together
 * with the nodes placed there before it (placed[], begin[], end[]): the held
 * amounts can only rise where an interval begins, so checking the instant t
 * and every begin inside (t, t + w) covers every instant. */
static int ref_fits(const struct sb_graph_view *g, const int32_t *dev, uint32_t v, uint32_t d,
                    double t, double w, const uint8_t *placed, const double *begin,
                    const double *end)
{
    uint32_t n = g->n_nodes;
    for (uint32_t q = 0; q <= n; q++) {
        double at = t; /* q == n: the instant t itself */
        if (q < n) {
            if (!placed[q] || (uint32_t)dev[q] != d || !(begin[q] > t && begin[q] < t + w))
                continue;
            at = begin[q];
        }
        for (uint32_t k = 0; k < g->machine->n_res; k++) {
            uint64_t sum = ref_hold(g, v, d, k);
            for (uint32_t u = 0; u < n; u++)
                if (placed[u] && (uint32_t)dev[u] == d && begin[u] <= at && at < end[u])
                    sum += ref_hold(g, u, d, k);
            if (sum > g->machine->res_limit[d * g->machine->n_res + k])
                return 0;
        }
    }
    return 1;
}

/* ---- buckets, from docs/cost-model.md alone ------------------------------ */

/* The members of v's bucket (v a start), and how many; 0 when v is alone. */
static uint32_t ref_members(const struct sb_graph_view *g, const struct sb_schedule *s,
                            uint32_t v, uint32_t *m)
{
    uint32_t n = 0;
    if (!s->bucket || !s->bucket[v])
        return 0;
    for (uint32_t u = 0; u < g->n_nodes; u++)
        if (s->bucket[u] == s->bucket[v])
            m[n++] = u;
    return n >= 2 ? n : 0;
}

/* The page's defaults: lat_us 2 per step, 40 GB/s network, 1500 GB/s copy. */
static double ref_bucket_us(const struct sb_graph_view *g, const uint32_t *m, uint32_t n)
{
    uint64_t bytes = 0, in = 0, out = 0;
    double given = 0, coll;
    uint32_t p = g->group_size[m[0]] ? g->group_size[m[0]] : 1;
    for (uint32_t i = 0; i < n; i++) {
        if (g->comm_us[m[i]] >= 0)
            given += g->comm_us[m[i]];
        else
            bytes += g->comm_bytes[m[i]];
        /* an all_gather copies its shards in and its output out; the others
         * copy their whole inputs in */
        if (g->coll[m[0]] == SB_COLL_ALL_GATHER)
            in += g->comm_bytes[m[i]] / p, out += g->comm_bytes[m[i]];
        else
            in += g->comm_bytes[m[i]];
    }
    double steps = g->coll[m[0]] == SB_COLL_ALL_REDUCE ? 2.0 * (p - 1) : p - 1.0;
    double share = g->coll[m[0]] == SB_COLL_ALL_REDUCE ? 2.0 * (p - 1) / p : (p - 1.0) / p;
    if (bytes == 0 && given > 0)
        coll = given;
    else
        coll = given + (p <= 1 ? 0 : steps * 2.0 + share * (double)bytes / 40e3);
    return coll + (double)(in + out) / 1500e3;
}

static uint64_t ref_staging(const struct sb_graph_view *g, const uint32_t *m, uint32_t n)
{
    uint64_t b = 0;
    uint32_t p = g->group_size[m[0]] ? g->group_size[m[0]] : 1;
    for (uint32_t i = 0; i < n; i++)
        b += g->comm_bytes[m[i]] +
             (g->coll[m[i]] == SB_COLL_REDUCE_SCATTER ? g->comm_bytes[m[i]] / p : 0);
    return b;
}

/* docs/machines.md, "Joined collectives": a node goes once its inputs have
 * gone, the node before it in the order on its device's stream has, a done
 * once its collective has begun, and a node after a barrier once every
 * position up to the barrier has; among those, the earliest in the order.
 * Returns its position, or n when none can go. */
static uint32_t ref_next(const struct sb_graph_view *g, const struct sb_schedule *s,
                         const uint8_t *went, const uint8_t *begun, const uint32_t *pos)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = s->order[i], d = (uint32_t)s->device[v], ok = !went[i];
        for (uint32_t e = g->pred_off[v]; ok && e < g->pred_off[v + 1]; e++)
            ok = went[pos[g->pred[e]]];
        for (uint32_t j = 0; ok && j < i && g->kind[v] != SB_KIND_INPUT; j++) {
            uint32_t u = s->order[j];
            uint32_t ns = g->machine->dev_streams ? g->machine->dev_streams[d] : 0;
            if ((uint32_t)s->device[u] == d && g->kind[u] != SB_KIND_INPUT &&
                (ns ? g->stream[u] % ns : g->stream[u]) == (ns ? g->stream[v] % ns : g->stream[v]))
                ok = went[j];
        }
        if (ok && g->kind[v] == SB_KIND_DONE)
            ok = begun[g->partner[v]];
        for (uint32_t b = 0; ok && b < i; b++)
            if (s->barrier[b])
                for (uint32_t j = 0; ok && j <= b; j++)
                    ok = went[j];
        (void)nd;
        if (ok)
            return i;
    }
    return n;
}

/* Whether m's start joins v's collective (m == v included): walks v's
 * members as graph.h says the view lists them. */
static int ref_same_coll(const struct sb_graph_view *g, uint32_t v, uint32_t m)
{
    uint32_t u = v;
    do {
        if (u == m)
            return 1;
        u = g->join[u];
    } while (u != v);
    return 0;
}

/* The starts that begin together (docs/machines.md, "Joined collectives"):
 * a joined collective's members, and for a bucket of joined collectives
 * (docs/plugins.md, "Buckets") the members of the matching buckets on every
 * rank, one fused collective: the closure of "joins" and "shares a bucket of
 * two or more".  grp[v] is the smallest start of v's group. */
static void ref_groups(const struct sb_graph_view *g, const struct sb_schedule *s,
                       uint32_t *grp)
{
    static uint32_t mem[MAX_N];
    uint32_t n = g->n_nodes, changed = 1;
    for (uint32_t v = 0; v < n; v++)
        grp[v] = v;
    while (changed) {
        changed = 0;
        for (uint32_t u = 0; u < n; u++)
            for (uint32_t w = 0; g->kind[u] == SB_KIND_START && w < n; w++) {
                if (g->kind[w] != SB_KIND_START || grp[w] == grp[u])
                    continue;
                int with = ref_same_coll(g, u, w) ||
                           (s->bucket[u] && s->bucket[u] == s->bucket[w] &&
                            ref_members(g, s, u, mem) >= 2);
                if (with) {
                    uint32_t lo = grp[u] < grp[w] ? grp[u] : grp[w];
                    grp[u] = grp[w] = lo;
                    changed = 1;
                }
            }
    }
}

/* docs/machines.md, "Joined collectives": of the collectives every member
 * has issued and that have not begun, the one that can begin first (its
 * last member's issue, each member's earliest free slot; ties: the one with
 * a member's start first in the order) begins on every member.  Called when
 * no node can go, so nothing the replay reaches later begins sooner.
 * Returns 0 when none is waiting. */
static int ref_begin_first(const struct sb_graph_view *g, const struct sb_schedule *s,
                           const struct ref_cfg *c, const uint32_t *pos, const uint32_t *grp,
                           const uint8_t *issued, const double *issue_at, uint8_t *begun,
                           double *coll_end,
                           double (*slot_end)[SB_COLL_COUNT][SB_SIM_MAX_INFLIGHT],
                           double *all_end)
{
    uint32_t n = g->n_nodes, best_v = n, best_key = 0;
    double best_t = 0;
    for (uint32_t v = 0; v < n; v++) {
        if (g->kind[v] != SB_KIND_START || !issued[v] || begun[v])
            continue;
        uint32_t r = c->shared ? 0 : g->coll[v];
        uint32_t n_slots = c->shared ? c->slots[0] : c->slots[r], key = n;
        int all = 1;
        double t = 0;
        for (uint32_t m = 0; m < n; m++)
            if (g->kind[m] == SB_KIND_START && grp[m] == grp[v]) {
                all = all && issued[m];
                if (issue_at[m] > t)
                    t = issue_at[m];
                if (pos[m] < key)
                    key = pos[m];
            }
        for (uint32_t m = 0; all && m < n; m++)
            if (g->kind[m] == SB_KIND_START && grp[m] == grp[v]) {
                uint32_t dm = (uint32_t)s->device[m], k0 = 0;
                for (uint32_t k = 1; k < n_slots; k++)
                    if (slot_end[dm][r][k] < slot_end[dm][r][k0])
                        k0 = k;
                if (slot_end[dm][r][k0] > t)
                    t = slot_end[dm][r][k0];
            }
        if (all && (best_v == n || t < best_t || (t == best_t && key < best_key)))
            best_v = v, best_t = t, best_key = key;
    }
    if (best_v == n)
        return 0;
    uint32_t r = c->shared ? 0 : g->coll[best_v];
    uint32_t n_slots = c->shared ? c->slots[0] : c->slots[r];
    /* on each device the group's members there (one, or the rank's bucket)
     * run as one collective for their price: a bucket's, or the member's */
    static uint32_t here[MAX_N];
    for (uint32_t m = 0; m < n; m++)
        if (g->kind[m] == SB_KIND_START && grp[m] == grp[best_v] && !begun[m]) {
            uint32_t dm = (uint32_t)s->device[m], k0 = 0, nh = 0;
            for (uint32_t u = 0; u < n; u++)
                if (g->kind[u] == SB_KIND_START && grp[u] == grp[best_v] &&
                    (uint32_t)s->device[u] == dm)
                    here[nh++] = u;
            for (uint32_t k = 1; k < n_slots; k++)
                if (slot_end[dm][r][k] < slot_end[dm][r][k0])
                    k0 = k;
            double end = best_t + (nh >= 2 ? ref_bucket_us(g, here, nh) : g->dur_us[m]);
            slot_end[dm][r][k0] = end;
            for (uint32_t k = 0; k < nh; k++)
                coll_end[here[k]] = end, begun[here[k]] = 1;
            if (end > *all_end)
                *all_end = end;
        }
    return 1;
}

static void ref_run(const struct sb_graph_view *g, const struct sb_schedule *s,
                    const struct ref_cfg *c, struct ref_out *o)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    static double fin[MAX_N], coll_end[MAX_N], copy_end[MAX_N][MAX_DEV];
    static double link_free[MAX_DEV][MAX_DEV], stream_free[MAX_DEV][MAX_STREAMS];
    static double hold_begin[MAX_N], hold_end[MAX_N];
    static uint8_t holds[MAX_N];
    static double slot_end[MAX_DEV][SB_COLL_COUNT][SB_SIM_MAX_INFLIGHT];
    static uint32_t pos[MAX_N], mem[MAX_N];
    static double ready[MAX_N];
    static uint8_t went[MAX_N], begun[MAX_N], issued[MAX_N], fired[MAX_N];
    static double issue_at[MAX_N];
    static uint32_t grp[MAX_N];
    double barrier_t = 0, all_end = 0;
    memset(went, 0, sizeof went);
    memset(begun, 0, sizeof begun);
    memset(issued, 0, sizeof issued);
    memset(fired, 0, sizeof fired);

    memset(o, 0, sizeof *o);
    memset(slot_end, 0, sizeof slot_end);
    memset(link_free, 0, sizeof link_free);
    memset(stream_free, 0, sizeof stream_free);
    memset(holds, 0, sizeof holds);
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t d = 0; d < nd; d++)
            copy_end[v][d] = -1;
    for (uint32_t i = 0; i < n; i++)
        pos[s->order[i]] = i;
    if (g->join)
        ref_groups(g, s, grp);

    /* time: each device runs its nodes in schedule order */
    for (uint32_t step = 0; step < n; step++) {
        uint32_t i = ref_next(g, s, went, begun, pos);
        while (i == n && ref_begin_first(g, s, c, pos, grp, issued, issue_at, begun, coll_end,
                                         slot_end, &all_end))
            i = ref_next(g, s, went, begun, pos);
        if (i == n) { /* the devices wait on each other: the validator refuses it */
            o->makespan_us = -1;
            return;
        }
        uint32_t v = s->order[i], d = (uint32_t)s->device[v];
        double t = 0;
        for (uint32_t k = 0; k < g->pred_off[v + 1] - g->pred_off[v]; k++) {
            uint32_t p = g->pred[g->pred_off[v] + k];
            double avail;
            if (g->kind[v] == SB_KIND_DONE && k == 0)
                continue; /* the done waits for the collective below */
            if (ref_is_after(g, v, k)) {
                if (fin[p] > t)
                    t = fin[p];
                continue;
            }
            if (!ref_needs_copy(g, s->device, v, k)) {
                avail = fin[p];
            } else if (copy_end[p][d] >= 0) {
                avail = copy_end[p][d]; /* made once per (producer, device) */
            } else {
                uint32_t a = (uint32_t)s->device[p];
                uint64_t bytes = g->out_bytes[ref_root(g, p)];
                double begin = fin[p];
                if (link_free[a][d] > begin)
                    begin = link_free[a][d];
                double gbps = g->machine->link_gbps[a * nd + d];
                copy_end[p][d] = begin + g->machine->link_lat_us[a * nd + d] +
                                 (double)bytes / (gbps * 1000.0);
                link_free[a][d] = copy_end[p][d];
                o->transfer_bytes += bytes;
                avail = copy_end[p][d];
            }
            if (avail + c->edge_lat_us > t)
                t = avail + c->edge_lat_us;
        }
        if (g->kind[v] == SB_KIND_INPUT) {
            fin[v] = 0;
        } else {
            /* a device with N streams runs stream s on s mod N */
            uint32_t ns = g->machine->dev_streams ? g->machine->dev_streams[d] : 0;
            double *lane = &stream_free[d][ns ? g->stream[v] % ns : g->stream[v]];
            if (*lane > t)
                t = *lane;
            if (barrier_t > t)
                t = barrier_t;
            if (g->kind[v] == SB_KIND_COMPUTE) {
                double w = g->dev_dur_us[v * nd + d];
                int any = 0;
                for (uint32_t k = 0; k < g->machine->n_res && g->res_use; k++)
                    any |= ref_hold(g, v, d, k) > 0;
                if (any && w > 0) {
                    /* the earliest fit is t itself or the end of an interval
                     * placed before: try them in rising order */
                    double best = t;
                    if (!ref_fits(g, s->device, v, d, t, w, holds, hold_begin, hold_end)) {
                        best = INFINITY;
                        for (uint32_t u = 0; u < n; u++)
                            if (holds[u] && (uint32_t)s->device[u] == d && hold_end[u] > t &&
                                hold_end[u] < best &&
                                ref_fits(g, s->device, v, d, hold_end[u], w, holds,
                                         hold_begin, hold_end))
                                best = hold_end[u];
                    }
                    t = best;
                    holds[v] = 1;
                    hold_begin[v] = t;
                    hold_end[v] = t + w;
                }
                t = t + w;
            } else if (g->kind[v] == SB_KIND_START && g->join) {
                /* in a job a collective (joined or alone) is issued here
                 * and begins in ref_begin_first */
                issued[v] = 1;
                issue_at[v] = t;
            } else if (g->kind[v] == SB_KIND_START) {
                begun[v] = 1;
                uint32_t r = c->shared ? 0 : g->coll[v];
                uint32_t n_slots = c->shared ? c->slots[0] : c->slots[r];
                uint32_t best = 0, nm = ref_members(g, s, v, mem), last = v;
                for (uint32_t k = 0; k < nm; k++)
                    if (pos[mem[k]] > pos[last])
                        last = mem[k];
                ready[v] = t;
                if (last == v) { /* alone, or the bucket's last start: it goes out */
                    for (uint32_t k = 0; k < nm; k++)
                        if (ready[mem[k]] > t)
                            t = ready[mem[k]];
                    for (uint32_t k = 1; k < n_slots; k++)
                        if (slot_end[d][r][k] < slot_end[d][r][best])
                            best = k;
                    double begin = t > slot_end[d][r][best] ? t : slot_end[d][r][best];
                    coll_end[v] = begin + (nm ? ref_bucket_us(g, mem, nm) : g->dur_us[v]);
                    for (uint32_t k = 0; k < nm; k++)
                        coll_end[mem[k]] = coll_end[v];
                    slot_end[d][r][best] = coll_end[v];
                    if (coll_end[v] > all_end)
                        all_end = coll_end[v];
                    t = ready[v]; /* the start itself waits for nothing more */
                }
            } else if (g->kind[v] == SB_KIND_DONE) {
                double e = coll_end[g->partner[v]];
                if (e > t) {
                    o->exposed_us += e - t;
                    t = e;
                }
            }
            fin[v] = t;
            *lane = t;
            if (t > o->makespan_us)
                o->makespan_us = t;
            if (t > all_end)
                all_end = t;
        }
        went[i] = 1;
        for (uint32_t b = 0; b < n; b++) { /* a barrier once all up to it went */
            if (!s->barrier[b] || fired[b])
                continue;
            uint32_t all = 1;
            for (uint32_t j = 0; all && j <= b; j++)
                all = went[j];
            if (all) {
                fired[b] = 1;
                while (g->join && ref_begin_first(g, s, c, pos, grp, issued, issue_at, begun,
                                                  coll_end, slot_end, &all_end))
                    ; /* what was issued before the barrier begins before it */
                barrier_t = all_end;
                o->barriers++;
            }
        }
    }

    /* memory: per (buffer, device), the positions of its uses there */
    static uint32_t lo[MAX_N][MAX_DEV], hi[MAX_N][MAX_DEV];
    static int used[MAX_N][MAX_DEV], pinned[MAX_N][MAX_DEV];
    memset(used, 0, sizeof used);
    memset(pinned, 0, sizeof pinned);
#define USE(R, D, I)                                                           \
    do {                                                                       \
        uint32_t R_ = (R), D_ = (D), I_ = (I);                                 \
        if (!used[R_][D_] || I_ < lo[R_][D_])                                  \
            lo[R_][D_] = I_;                                                   \
        if (!used[R_][D_] || I_ > hi[R_][D_])                                  \
            hi[R_][D_] = I_;                                                   \
        used[R_][D_] = 1;                                                      \
    } while (0)
    for (uint32_t v = 0; v < n; v++) {
        uint32_t d = (uint32_t)s->device[v];
        USE(ref_root(g, v), d, pos[v]);
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            if (ref_is_after(g, v, e - g->pred_off[v]))
                continue; /* reads nothing */
            USE(ref_root(g, g->pred[e]), d, pos[v]);
            if (g->kind[v] == SB_KIND_START) /* read until the done */
                USE(ref_root(g, g->pred[e]), d, pos[g->partner[v]]);
        }
        if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT))
            pinned[ref_root(g, v)][d] = 1;
    }
    /* a copy's source stays until the first consumer on the other device */
    for (uint32_t p = 0; p < n; p++)
        for (uint32_t b = 0; b < nd; b++) {
            uint32_t first = UINT32_MAX;
            for (uint32_t v = 0; v < n; v++)
                for (uint32_t k = 0; k < g->pred_off[v + 1] - g->pred_off[v]; k++)
                    if (g->pred[g->pred_off[v] + k] == p && (uint32_t)s->device[v] == b &&
                        ref_needs_copy(g, s->device, v, k) && pos[v] < first)
                        first = pos[v];
            if (first != UINT32_MAX)
                USE(ref_root(g, p), (uint32_t)s->device[p], first);
        }
#undef USE
    for (uint32_t d = 0; d < nd; d++)
        for (uint32_t i = 0; i < n; i++) {
            uint64_t live = 0;
            for (uint32_t r = 0; r < n; r++) {
                if (!used[r][d] || ref_root(g, r) != r)
                    continue;
                uint32_t from = lo[r][d];
                if ((uint32_t)s->device[r] == d)
                    from = g->kind[r] == SB_KIND_INPUT ? 0 : pos[r];
                uint32_t to = pinned[r][d] ? n : hi[r][d];
                if (from <= i && i <= to)
                    live += g->out_bytes[r];
            }
            /* a bucket's merged buffers, from its last start through its
             * last done, on its device */
            for (uint32_t v = 0; v < n; v++) {
                uint32_t nm = g->kind[v] == SB_KIND_START ? ref_members(g, s, v, mem) : 0;
                uint32_t last = v, end = 0;
                for (uint32_t k = 0; k < nm; k++) {
                    if (pos[mem[k]] > pos[last])
                        last = mem[k];
                    if (pos[g->partner[mem[k]]] > end)
                        end = pos[g->partner[mem[k]]];
                }
                if (nm && last == v && (uint32_t)s->device[v] == d && pos[v] <= i && i <= end)
                    live += ref_staging(g, mem, nm);
            }
            if (live > o->peak[d])
                o->peak[d] = live;
        }
}

/* ---- random graphs, machines and schedules -------------------------------- */

static uint64_t rng_state = 0x5eed23;

static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static const char *const coll_names[] = {"all_gather", "reduce_scatter", "all_reduce"};

/* A random workload in format v1 (at most MAX_N nodes). */
static void random_csv(char *buf, size_t cap, int with_col, uint32_t col_dev)
{
    size_t len = 0;
    uint32_t n_in = 1 + rnd(3), n_body = 3 + rnd(18), id = 0;
    uint8_t is_start[MAX_N] = {0};
    uint32_t open[MAX_N], n_open = 0;
    len += (size_t)snprintf(buf + len, cap - len,
                            "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us,flags");
    if (with_col) /* the last device's time, given on some rows */
        len += (size_t)snprintf(buf + len, cap - len, ",cost_us.d%u", col_dev);
    len += (size_t)snprintf(buf + len, cap - len, "\n");
#define ROW(...) (len += (size_t)snprintf(buf + len, cap - len, __VA_ARGS__))
    for (uint32_t i = 0; i < n_in; i++, id++) {
        ROW("%u,n%u,input,,,,%u,,,%s%s\n", id, id, 1000 * rnd(5),
            rnd(3) == 0 ? "weight" : "", with_col ? "," : "");
        is_start[id] = 0;
    }
    for (uint32_t b = 0; b < n_body || n_open; b++) {
        char ins[64] = "";
        size_t il = 0;
        /* close a pending collective now and then, and all at the end */
        if (n_open && (b >= n_body || rnd(3) == 0)) {
            uint32_t k = rnd(n_open), st = open[k];
            open[k] = open[--n_open];
            il += (size_t)snprintf(ins + il, sizeof ins - il, "%u", st);
            if (rnd(3) == 0) { /* another input besides its start */
                uint32_t p = rnd(id);
                if (!is_start[p])
                    il += (size_t)snprintf(ins + il, sizeof ins - il, " %u", p);
            }
            ROW("%u,n%u,done,%s,,,,,,%s%s\n", id, id, ins, rnd(3) == 0 ? "output" : "",
                with_col ? "," : "");
            is_start[id++] = 0;
            continue;
        }
        if (b >= n_body)
            continue;
        uint32_t want = rnd(3), got = 0, first = UINT32_MAX;
        for (uint32_t k = 0; k < want; k++) {
            uint32_t p = rnd(id);
            if (is_start[p] || p == first) /* no start but to its done, no repeats */
                continue;
            first = p;
            il += (size_t)snprintf(ins + il, sizeof ins - il, "%s%u", got ? " " : "", p);
            got++;
        }
        uint32_t kind = rnd(10);
        if (kind < 2 && n_open < 3) { /* start */
            ROW("%u,n%u,start,%s,,,%u,%s,%u,%s\n", id, id, ins, 1000 * rnd(4),
                coll_names[rnd(3)], 1 + rnd(15), with_col ? "," : "");
            is_start[id] = 1;
            open[n_open++] = id++;
        } else if (kind < 3 && got) { /* alias: views its first input's buffer */
            ROW("%u,n%u,%s,%s,mm,%u,,,,alias%s%s\n", id, id, rnd(2) ? "nop" : "compute", ins,
                rnd(4), rnd(3) == 0 ? "|output" : "", with_col ? "," : "");
            is_start[id++] = 0;
        } else if (kind < 4) { /* nop */
            ROW("%u,n%u,nop,%s,,,%u,,,%s\n", id, id, ins, 1000 * rnd(3),
                with_col ? "," : "");
            is_start[id++] = 0;
        } else { /* compute, zero-length now and then */
            char col[24] = "";
            if (with_col && rnd(2))
                snprintf(col, sizeof col, ",%u", rnd(12));
            else if (with_col)
                snprintf(col, sizeof col, ",");
            ROW("%u,n%u,compute,%s,mm,%u,%u,,,%s%s\n", id, id, ins, rnd(5) ? 1 + rnd(20) : 0,
                1000 * rnd(6), rnd(5) == 0 ? "output" : "", col);
            is_start[id++] = 0;
        }
    }
#undef ROW
}

/* Streams and resources on every row of a random workload: stream 0..2,
 * res.sms 0..2 and res.cores 0..4 (within any limit random_machine gives)
 * or empty (the whole device). */
static void add_res_columns(char *buf, size_t cap)
{
    static char out[16384];
    size_t len = 0;
    int header = 1;
    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        size_t l = nl ? (size_t)(nl - line) : strlen(line);
        char sms[8] = "", cores[8] = "";
        if (rnd(4))
            snprintf(sms, sizeof sms, "%u", rnd(3));
        if (rnd(4))
            snprintf(cores, sizeof cores, "%u", rnd(5));
        if (header)
            len += (size_t)snprintf(out + len, sizeof out - len, "%.*s,stream,res.sms,res.cores\n",
                                    (int)l, line);
        else
            len += (size_t)snprintf(out + len, sizeof out - len, "%.*s,%u,%s,%s\n", (int)l, line,
                                    rnd(MAX_STREAMS), sms, cores);
        header = 0;
        line += l + (nl != NULL);
    }
    snprintf(buf, cap, "%s", out);
}

/* A second generator for the `after` column, so the graphs above stay what
 * they were before it existed. */
static uint64_t rng2_state = 0xaf7e5;

static uint32_t rnd2(uint32_t n)
{
    rng2_state ^= rng2_state << 13;
    rng2_state ^= rng2_state >> 7;
    rng2_state ^= rng2_state << 17;
    return (uint32_t)(rng2_state % n);
}

/* Appends an `after` column to random_csv's text: now and then a row (not
 * an input) waits for one or two earlier rows. */
static void add_after(char *buf, size_t cap)
{
    static char out[16384];
    size_t o = 0;
    uint32_t row = 0;
    for (char *line = buf; *line;) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        o += (size_t)snprintf(out + o, sizeof out - o, "%.*s", (int)len, line);
        if (line == buf) {
            o += (size_t)snprintf(out + o, sizeof out - o, ",after\n");
        } else {
            const char *kind = strchr(strchr(line, ',') + 1, ',') + 1;
            o += (size_t)snprintf(out + o, sizeof out - o, ",");
            if (row && strncmp(kind, "input,", 6) && rnd2(3) == 0) {
                uint32_t a = rnd2(row), b = rnd2(row);
                o += (size_t)snprintf(out + o, sizeof out - o, a == b ? "%u" : "%u %u", a, b);
            }
            o += (size_t)snprintf(out + o, sizeof out - o, "\n");
            row++;
        }
        line += len + (nl != NULL);
    }
    SB_ASSERT(o < cap);
    memcpy(buf, out, o + 1);
}

/* The same workload with its collectives priced from bytes: each start's
 * comm_us emptied, and comm_bytes (1..64 KiB in 1 KiB steps, or 0 now and
 * then) and group (8) columns appended. */
static void with_bytes(char *buf, size_t cap)
{
    static char out[20000];
    size_t len = 0;
    int header = 1;
    for (char *line = buf, *nl; *line; line = nl + 1) {
        nl = strchr(line, '\n');
        size_t n = (size_t)(nl - line);
        if (header) {
            len += (size_t)snprintf(out + len, sizeof out - len, "%.*s,comm_bytes,group\n",
                                    (int)n, line);
            header = 0;
            continue;
        }
        /* fields: id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_us,... */
        const char *f = line;
        for (int k = 0; k < 8; k++)
            f = strchr(f, ',') + 1;
        const char *after = strchr(f, ',');
        if (!strncmp(strchr(strchr(line, ',') + 1, ',') + 1, "start,", 6))
            len += (size_t)snprintf(out + len, sizeof out - len, "%.*s%.*s,%u,8\n",
                                    (int)(f - line), line, (int)(nl - after), after,
                                    rnd2(8) ? 1024 * (1 + rnd2(64)) : 0);
        else
            len += (size_t)snprintf(out + len, sizeof out - len, "%.*s,,\n", (int)n, line);
    }
    SB_ASSERT(len < cap);
    memcpy(buf, out, len + 1);
}

/* Random buckets over the starts of s: two starts in three join bucket 1
 * (or now and then 2) of their type, on the device of the bucket's first member. */
static void random_buckets(const struct sb_graph_view *g, struct sb_schedule *s)
{
    int32_t dev[SB_COLL_COUNT][4];
    memset(dev, 0xff, sizeof dev);
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (g->kind[v] != SB_KIND_START || rnd2(3) == 0)
            continue;
        uint32_t k = 1 + (rnd2(4) == 0), t = g->coll[v];
        s->bucket[v] = t * 4 + k;
        if (dev[t][k] < 0)
            dev[t][k] = s->device[v];
        s->device[v] = dev[t][k];
    }
}

static const char *tmp_path(void)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/simdiff_machine.yaml", SB_TEST_TMP);
    return path;
}

/* A random machine of nd devices named d0.. (written, then loaded). */
static struct sb_machine *random_machine(uint32_t nd, int with_res)
{
    static const char *const speed[] = {"0.5", "1", "2", "4"};
    static const char *const gbps[] = {"1", "2", "5"};
    char buf[2048];
    size_t len = 0;
    len += (size_t)snprintf(buf + len, sizeof buf - len, "devices:\n");
    for (uint32_t d = 0; d < nd; d++) {
        char res[80] = "";
        uint32_t pick = rnd(3);
        /* device 0 declares both (the columns must name a resource of the
         * machine); the others both, sms alone, or none */
        if (with_res && (d == 0 || pick == 0))
            snprintf(res, sizeof res, ", resources: {sms: %u, cores: %u}", 2 + rnd(3), 4 + rnd(5));
        else if (with_res && pick == 1)
            snprintf(res, sizeof res, ", resources: {sms: %u}", 2 + rnd(3));
        char streams[24] = ""; /* from the second generator: the graphs stay as they were */
        if (with_res && rnd2(2) == 0)
            snprintf(streams, sizeof streams, ", streams: %u", 1 + rnd2(2));
        len += (size_t)snprintf(buf + len, sizeof buf - len, "  - {name: d%u, speed: %s%s%s}\n",
                                d, speed[rnd(4)], res, streams);
    }
    if (nd > 1) {
        len += (size_t)snprintf(buf + len, sizeof buf - len,
                                "links:\n  default: {gbps: %s, latency_us: %u}\n"
                                "  pairs:\n", gbps[rnd(3)], rnd(4));
        len += (size_t)snprintf(buf + len, sizeof buf - len,
                                "    - {from: d1, to: d0, gbps: %s, latency_us: %u}\n",
                                gbps[rnd(3)], rnd(3));
    }
    FILE *f = fopen(tmp_path(), "w");
    if (!f)
        return NULL;
    fputs(buf, f);
    fclose(f);
    struct sb_err e;
    struct sb_machine *m = sb_machine_load(tmp_path(), &e);
    if (!m)
        fprintf(stderr, "%s\n%s", e.msg, buf);
    return m;
}

/* A random valid order (Kahn with random picks), placement and barriers. */
static void random_schedule(const struct sb_graph_view *g, struct sb_schedule *s)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    uint32_t indeg[MAX_N], ready[MAX_N], n_ready = 0;
    for (uint32_t v = 0; v < n; v++) {
        indeg[v] = g->pred_off[v + 1] - g->pred_off[v];
        if (!indeg[v])
            ready[n_ready++] = v;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = rnd(n_ready), v = ready[k];
        ready[k] = ready[--n_ready];
        s->order[i] = v;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--indeg[g->succ[e]] == 0)
                ready[n_ready++] = g->succ[e];
        s->barrier[i] = rnd(7) == 0;
    }
    for (uint32_t v = 0; v < n; v++) {
        s->device[v] = (int32_t)rnd(nd);
        /* a done mostly runs where its start does (start before done: ids) */
        if (g->kind[v] == SB_KIND_DONE && rnd(8))
            s->device[v] = s->device[g->partner[v]];
    }
}

static void random_cfg(struct sb_sim_config *c, struct ref_cfg *rc)
{
    sb_sim_defaults(c);
    memset(rc, 0, sizeof *rc);
    switch (rnd(3)) {
    case 0:
        break;
    case 1:
        c->limit[0] = 1 + rnd(3);
        break;
    default:
        c->shared = 0;
        for (int t = 0; t < SB_COLL_COUNT; t++)
            c->limit[t] = 1 + rnd(2);
    }
    c->edge_lat_us = rnd(4) == 0 ? 1 : 0;
    rc->shared = c->shared;
    for (int t = 0; t < SB_COLL_COUNT; t++)
        rc->slots[t] = c->limit[t];
    rc->edge_lat_us = c->edge_lat_us;
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (1 + fabs(b));
}

static uint32_t n_compared, n_disagree;

/* Replays s with both simulators; 1 when they agree. */
static int compare(const struct sb_graph *G, const struct sb_schedule *s,
                   const struct sb_sim_config *c, const struct ref_cfg *rc, const char *csv,
                   double *makespan, double *lb)
{
    const struct sb_graph_view *g = &G->v;
    struct sb_sim_result r;
    struct ref_out o;
    sb_sim_run(G, s, c, &r);
    ref_run(g, s, rc, &o);
    int ok = near(r.makespan_us, o.makespan_us) && near(r.exposed_comm_us, o.exposed_us) &&
             r.transfer_bytes == o.transfer_bytes && r.barriers == o.barriers;
    uint64_t top = 0;
    for (uint32_t d = 0; d < g->machine->n_devices; d++) {
        ok = ok && r.dev_peak_bytes[d] == o.peak[d];
        if (o.peak[d] > top)
            top = o.peak[d];
    }
    ok = ok && r.peak_mem_bytes == top;
    n_compared++;
    if (!ok && n_disagree++ < 3) {
        fprintf(stderr, "disagreement on %u devices:\n%s", g->machine->n_devices, csv);
        fprintf(stderr, "order/device/barrier:");
        for (uint32_t i = 0; i < g->n_nodes; i++)
            fprintf(stderr, " %u@%d%s", s->order[i], s->device[s->order[i]],
                    s->barrier[i] ? "|" : "");
        fprintf(stderr, "\nsim: barriers %u makespan %.9g exposed %.9g bytes %llu peaks",
                r.barriers, r.makespan_us, r.exposed_comm_us, (unsigned long long)r.transfer_bytes);
        for (uint32_t d = 0; d < g->machine->n_devices; d++)
            fprintf(stderr, " %llu", (unsigned long long)r.dev_peak_bytes[d]);
        fprintf(stderr, "\nref: barriers %u makespan %.9g exposed %.9g bytes %llu peaks",
                o.barriers, o.makespan_us, o.exposed_us, (unsigned long long)o.transfer_bytes);
        for (uint32_t d = 0; d < g->machine->n_devices; d++)
            fprintf(stderr, " %llu", (unsigned long long)o.peak[d]);
        fprintf(stderr, "\n");
    }
    if (makespan)
        *makespan = r.makespan_us;
    if (lb)
        *lb = r.makespan_lb_us;
    sb_sim_result_free(&r);
    return ok;
}

/* Whether swapping positions i and i+1 keeps the order topological. */
static int swappable(const struct sb_graph_view *g, const struct sb_schedule *s, uint32_t i)
{
    uint32_t a = s->order[i], b = s->order[i + 1];
    for (uint32_t e = g->pred_off[b]; e < g->pred_off[b + 1]; e++)
        if (g->pred[e] == a)
            return 0;
    return 1;
}

/* Hill climbing from s: every schedule it tries must sit at or above the
 * bound; returns the number tried. */
static uint32_t search(const struct sb_graph *G, struct sb_schedule *s,
                       const struct sb_sim_config *c, const struct ref_cfg *rc,
                       const char *csv, uint32_t steps, uint32_t *below)
{
    const struct sb_graph_view *g = &G->v;
    uint32_t n = g->n_nodes, nd = g->machine->n_devices, tried = 0;
    double best, lb, cur;
    compare(G, s, c, rc, csv, &best, &lb);
    for (uint32_t k = 0; k < steps; k++) {
        uint32_t move = rnd(3), i = rnd(n), v = s->order[i];
        int32_t old_dev = s->device[v];
        if (move == 0) {
            if (i + 1 >= n || !swappable(g, s, i))
                continue;
            s->order[i] = s->order[i + 1];
            s->order[i + 1] = v;
        } else if (move == 1) {
            s->device[v] = (int32_t)rnd(nd);
        } else {
            s->barrier[i] ^= 1;
        }
        compare(G, s, c, rc, csv, &cur, &lb);
        tried++;
        if (cur < lb - 1e-9 * (1 + lb)) {
            if ((*below)++ < 3)
                fprintf(stderr, "makespan %.9g below the bound %.9g:\n%s", cur, lb, csv);
        }
        if (cur <= best) {
            best = cur;
            continue;
        }
        /* undo */
        if (move == 0) {
            s->order[i + 1] = s->order[i];
            s->order[i] = v;
        } else if (move == 1) {
            s->device[v] = old_dev;
        } else {
            s->barrier[i] ^= 1;
        }
    }
    return tried;
}

/* Every built-in policy on the same random graph, default simulator config:
 * a policy either returns a schedule the harness accepts, which both
 * simulators then replay alike and which is not below the bound, or fails
 * with a message (heft and dp may find nothing within device memory; ggml
 * refuses what its model lacks).  `original` (the file order) never fails.
 * Tallies per policy go to n_policy_ok / n_policy_fail. */
static uint32_t n_policy_ok, n_policy_fail, n_policy_below;

static void policies(const struct sb_graph *G, const char *csv)
{
    struct sb_sim_config c;
    struct ref_cfg rc;
    sb_sim_defaults(&c);
    memset(&rc, 0, sizeof rc);
    rc.shared = c.shared;
    for (int t = 0; t < SB_COLL_COUNT; t++)
        rc.slots[t] = c.limit[t];
    for (uint32_t p = 0; p < sb_registry_count(); p++) {
        const char *name = sb_registry_at(p)->name;
        struct sb_err e;
        struct sb_sched sched;
        struct sb_schedule s;
        CHECK(sb_sched_parse(&sched, name, &e) == 0);
        sb_schedule_init(&s, G, G->v.machine->n_devices);
        e.msg[0] = 0;
        if (sb_sched_run(&sched, G, &s, &e)) {
            CHECK(e.msg[0] != 0);
            CHECK(strcmp(name, "original") != 0);
            n_policy_fail++;
        } else if (sb_schedule_validate(&G->v, &s, &e)) {
            fprintf(stderr, "%s returned an invalid schedule: %s\n%s", name, e.msg, csv);
            CHECK(0);
        } else {
            double makespan, lb;
            CHECK(compare(G, &s, &c, &rc, csv, &makespan, &lb));
            if (makespan < lb - 1e-6 * (1 + lb)) {
                fprintf(stderr, "%s: makespan %.9g below the bound %.9g\n%s", name, makespan,
                        lb, csv);
                n_policy_below++;
            }
            n_policy_ok++;
        }
        sb_schedule_free(&s);
        sb_sched_free(&sched);
    }
}

/* A graph's twin priced from bytes, under random bucketed schedules: both
 * simulators agree on every one the validator accepts, and the makespan is
 * not below the bound; a refusal names the bucket rule it breaks. */
static uint32_t n_bucketed, n_bucket_refused, n_bucket_below;

static void buckets(const char *csv, const struct sb_machine *m, uint32_t nd)
{
    static char twin[20000];
    struct sb_err e;
    snprintf(twin, sizeof twin, "%s", csv);
    with_bytes(twin, sizeof twin);
    struct sb_graph *G = sb_csv_load_mem("bytes.csv", twin, strlen(twin), &e);
    struct sb_cost_params cp;
    sb_cost_defaults(&cp);
    if (G)
        sb_cost_apply(&cp, G);
    if (!G || sb_machine_apply(m, G, &e)) {
        fprintf(stderr, "%s\n%s", e.msg, twin);
        CHECK(0);
        sb_graph_free(G);
        return;
    }
    for (uint32_t k = 0; k < 16; k++) {
        struct sb_schedule s;
        struct sb_sim_config c;
        struct ref_cfg rc;
        double makespan, lb;
        sb_schedule_init(&s, G, nd);
        random_schedule(&G->v, &s);
        random_buckets(&G->v, &s);
        random_cfg(&c, &rc);
        if (sb_schedule_validate(&G->v, &s, &e)) {
            CHECK_CONTAINS(e.msg, "bucket");
            n_bucket_refused++;
        } else {
            uint32_t mem[MAX_N], real = 0;
            for (uint32_t v = 0; v < G->v.n_nodes; v++)
                real |= G->v.kind[v] == SB_KIND_START && ref_members(&G->v, &s, v, mem) > 0;
            n_bucketed += real;
            compare(G, &s, &c, &rc, twin, &makespan, &lb);
            if (makespan < lb - 1e-9 * (1 + lb) && n_bucket_below++ < 3)
                fprintf(stderr, "bucketed: makespan %.9g below the bound %.9g\n%s", makespan,
                        lb, twin);
        }
        sb_schedule_free(&s);
    }
    sb_graph_free(G);
}

/* ---- jobs of ranks: joined collectives ------------------------------------ */

static uint64_t rng3_state = 0x70b36;

static uint32_t rnd3(uint32_t n)
{
    rng3_state ^= rng3_state << 13;
    rng3_state ^= rng3_state >> 7;
    rng3_state ^= rng3_state << 17;
    return (uint32_t)(rng3_state % n);
}

/* A job of nd ranks (device column), each an input and a chain of computes
 * and collectives on streams 0..1; every rank has the same n_coll
 * collectives in the same order, the k-th joined across the ranks (`join`:
 * rank 0's k-th start), with computes of random length between them, so
 * ranks issue their starts at different times.  Some computes read the
 * collective's done, some run beside it.  mode JOB_PLAIN: no buckets;
 * JOB_JOINED: two or three collectives of one type for job_buckets to
 * bucket on every rank; JOB_LONE (two or three ranks): four collectives,
 * the first and third each rank's own (not joined), for job_buckets to
 * bucket on their rank, and at most one compute between them (MAX_N).
 * There the third start always reads the second's done (and nothing
 * reads the first's: that would be a cycle through the bucket) and the
 * fourth reads nothing, so that the ranks can start the two joined collectives
 * in different orders around a bucket: the deadlock of test_bucket's
 * test_lone_deadlock, which the validator must see. */
enum job_mode { JOB_PLAIN, JOB_JOINED, JOB_LONE };

/* A lone job's streams: the bucket's first done and the fourth start on
 * stream 1, the second collective, the third start and the fourth done on
 * stream 0 (what test_lone_deadlock's cycle needs); the rest random. */
static uint32_t job_stream(enum job_mode mode, uint32_t k, int done, uint32_t random)
{
    static const int8_t lone[4][2] = {{-1, 1}, {0, 0}, {0, -1}, {1, 0}};
    if (mode != JOB_LONE || lone[k][done] < 0)
        return random;
    return (uint32_t)lone[k][done];
}

static void random_job(char *buf, size_t cap, uint32_t nd, enum job_mode mode)
{
    int bucketed = mode != JOB_PLAIN, lone = mode == JOB_LONE;
    size_t len = 0;
    uint32_t n_coll = 1 + rnd3(2), id = 0, first[4] = {0};
    static const char *const types[] = {"all_reduce", "all_gather"};
    uint32_t type[4];
    const char *more = bucketed ? "," : ""; /* the group column, empty but on starts */
    if (bucketed) /* two or three collectives (MAX_N: two on four ranks) of
                     one type, to be bucketed; a group column for the copies */
        n_coll = lone ? 4 : nd == 4 ? 2 : 2 + rnd3(2);
    for (uint32_t k = 0; k < n_coll; k++)
        type[k] = bucketed && k ? type[0] : rnd3(2);
    len += (size_t)snprintf(buf + len, cap - len, "# devices=%u\n"
                            "id,name,kind,inputs,cost_us,out_bytes,coll,comm_us,device,stream,join%s\n",
                            nd, bucketed ? ",group" : "");
    for (uint32_t r = 0; r < nd; r++) {
        uint32_t prev = id;
        len += (size_t)snprintf(buf + len, cap - len, "%u,r%u_in,input,,,%u,,,%u,0,%s\n", id, r,
                                1000 * (1 + rnd3(3)), r, more);
        id++;
        for (uint32_t k = 0; k < n_coll; k++) {
            for (uint32_t c = rnd3(lone ? 2 : 3); c > 0; c--, id++) {
                len += (size_t)snprintf(buf + len, cap - len, "%u,r%u_c%u,compute,%u,%u,%u,,,%u,%u,%s\n",
                                        id, r, id, prev, rnd3(30), 1000 * rnd3(3), r, rnd3(2),
                                        more);
                prev = id;
            }
            char join[16] = "";
            if (r && !(lone && (k == 0 || k == 2)))
                snprintf(join, sizeof join, "%u", first[k]);
            else
                first[k] = id;
            /* the start reads the chain's last node or nothing; the chain
             * goes on from its done or beside it */
            char in[16] = "";
            int reads = rnd3(2);
            if (lone && k >= 2)
                reads = k == 2;
            if (reads)
                snprintf(in, sizeof in, "%u", prev);
            char grp[16] = "";
            if (bucketed)
                snprintf(grp, sizeof grp, ",%u", nd);
            len += (size_t)snprintf(buf + len, cap - len, "%u,r%u_s%u,start,%s,,%u,%s,%u,%u,%u,%s%s\n",
                                    id, r, k, in, 1000 * rnd3(3), types[type[k]], 1 + rnd3(20), r,
                                    job_stream(mode, k, 0, rnd3(2)), join, grp);
            uint32_t st = id++;
            len += (size_t)snprintf(buf + len, cap - len, "%u,r%u_d%u,done,%u,,,,,%u,%u,%s\n", id,
                                    r, k, st, r, job_stream(mode, k, 1, rnd3(2)), more);
            int from_done = rnd3(2);
            if (lone && k < 2) /* the bucket's first done feeds no start */
                from_done = k == 1;
            prev = from_done ? id : prev;
            id++;
        }
    }
    SB_ASSERT(len < cap && id <= MAX_N);
}

static uint32_t n_job, n_job_dead, n_job_disagree;
static uint32_t n_jb, n_jb_refused, n_jb_mismatch, n_jb_disagree;
static uint32_t n_lone, n_lone_refused, n_lone_dead, n_lone_only;

/* Buckets over a random job's collectives: the same two or three of them
 * (by their index on a rank) in one bucket on every rank, so they match;
 * one schedule in four then breaks the match on one rank (a member left
 * out, or the whole bucket), which the validator must refuse.  Returns 1
 * when the buckets match.  A lone job (random_job): each rank buckets its
 * own two collectives (the first and third), which match nothing, so a
 * rank's bucket of one or none is no mismatch. */
static int job_buckets(const struct sb_graph_view *g, struct sb_schedule *s, uint32_t nd,
                       int lone)
{
    uint32_t k_of[MAX_N], count[MAX_DEV] = {0}, n_coll = 0, pick = lone ? 5 : 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->kind[v] == SB_KIND_START) {
            k_of[v] = count[g->device[v]]++;
            n_coll = count[g->device[v]] > n_coll ? count[g->device[v]] : n_coll;
        }
    while (__builtin_popcount(pick) < 2) /* which collectives: two or more */
        pick = rnd3(1u << n_coll);
    uint32_t broken = rnd3(4) == 0 ? rnd3(nd) : MAX_DEV, drop = rnd3(n_coll + 1);
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (g->kind[v] != SB_KIND_START || !(pick >> k_of[v] & 1))
            continue;
        uint32_t r = (uint32_t)g->device[v];
        if (r == broken && (drop == n_coll || drop == k_of[v]))
            continue;
        s->bucket[v] = 1 + r;
    }
    return lone || broken == MAX_DEV || !(drop == n_coll || pick >> drop & 1);
}

/* A random topological order in which every bucketed done also follows
 * every start of its bucket (so that most bucketed schedules are valid);
 * random_schedule's when none exists (a member's start reads another's
 * done: the validator refuses it as a cycle). */
static void bucketed_order(const struct sb_graph_view *g, struct sb_schedule *s)
{
    uint32_t n = g->n_nodes, indeg[MAX_N], ready[MAX_N], n_ready = 0, left[MAX_DEV + 1] = {0};
    for (uint32_t v = 0; v < n; v++)
        left[s->bucket[v]] += s->bucket[v] != 0;
    for (uint32_t v = 0; v < n; v++) {
        indeg[v] = g->pred_off[v + 1] - g->pred_off[v];
        indeg[v] += g->kind[v] == SB_KIND_DONE && s->bucket[g->partner[v]];
        if (!indeg[v])
            ready[n_ready++] = v;
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!n_ready) {
            int32_t dev[MAX_N];
            memcpy(dev, s->device, n * sizeof *dev);
            random_schedule(g, s);
            memcpy(s->device, dev, n * sizeof *dev);
            return;
        }
        uint32_t k = rnd3(n_ready), v = ready[k];
        ready[k] = ready[--n_ready];
        s->order[i] = v;
        s->barrier[i] = rnd3(7) == 0;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--indeg[g->succ[e]] == 0)
                ready[n_ready++] = g->succ[e];
        if (s->bucket[v] && --left[s->bucket[v]] == 0)
            for (uint32_t w = 0; w < n; w++)
                if (g->kind[w] == SB_KIND_DONE && s->bucket[g->partner[w]] == s->bucket[v] &&
                    --indeg[w] == 0)
                    ready[n_ready++] = w;
    }
}

/* A schedule the validator refuses as a deadlock: the reference's devices
 * must wait on each other too (the validator is not stricter than the
 * rule). */
static void ref_stuck(const struct sb_graph_view *g, const struct sb_schedule *s,
                      const struct ref_cfg *rc, const char *csv)
{
    struct ref_out o;
    ref_run(g, s, rc, &o);
    CHECK(o.makespan_us < 0);
    if (o.makespan_us >= 0 && n_disagree++ < 3)
        fprintf(stderr, "refused as a deadlock, but the reference runs it:\n%s", csv);
}

/* One random order of job G (jobs' mode), checked and counted. */
static void job_schedule(const struct sb_graph *G, const char *csv, uint32_t nd,
                         enum job_mode mode)
{
    int bucketed = mode != JOB_PLAIN, lone = mode == JOB_LONE;
    struct sb_err e;
    struct sb_schedule s;
    struct sb_sim_config c;
    struct ref_cfg rc;
    sb_schedule_init(&s, G, nd);
    random_schedule(&G->v, &s);
    for (uint32_t v = 0; v < G->v.n_nodes; v++) /* every node on its rank */
        s.device[v] = G->v.device[v];
    random_cfg(&c, &rc);
    int matched = bucketed ? job_buckets(&G->v, &s, nd, lone) : 1;
    if (bucketed)
        bucketed_order(&G->v, &s);
    if (bucketed) {
        uint32_t was = n_disagree;
        if (!sb_schedule_validate(&G->v, &s, &e)) {
            CHECK(matched);
            uint32_t ok = compare(G, &s, &c, &rc, csv, NULL, NULL);
            *(lone ? &n_lone : &n_jb) += ok;
        } else if (!matched && strstr(e.msg, "is not bucketed: every rank must launch")) {
            n_jb_mismatch++;
        } else {
            if (!strstr(e.msg, "joined collectives in a cycle"))
                CHECK_CONTAINS(e.msg, "bucket");
            else
                ref_stuck(&G->v, &s, &rc, csv);
            if (lone && strstr(e.msg, "joined collectives in a cycle")) {
                n_lone_dead++;
                uint32_t *kept = sb_xmalloc(G->v.n_nodes * sizeof *kept);
                memcpy(kept, s.bucket, G->v.n_nodes * sizeof *kept);
                memset(s.bucket, 0, G->v.n_nodes * sizeof *s.bucket);
                n_lone_only += sb_schedule_validate(&G->v, &s, &e) == 0;
                memcpy(s.bucket, kept, G->v.n_nodes * sizeof *kept);
                free(kept);
            }
            *(lone ? &n_lone_refused : &n_jb_refused) += 1;
        }
        n_jb_disagree += n_disagree - was;
    } else if (sb_schedule_validate(&G->v, &s, &e)) {
        CHECK_CONTAINS(e.msg, "joined collectives in a cycle");
        ref_stuck(&G->v, &s, &rc, csv);
        n_job_dead++;
    } else {
        compare(G, &s, &c, &rc, csv, NULL, NULL);
        n_job++;
    }
    sb_schedule_free(&s);
}

/* Random jobs of ranks, their random orders replayed by both simulators;
 * the orders whose devices deadlock are refused by the validator and
 * counted.  Bucketed: each schedule with job_buckets' buckets; the orders
 * that break a bucket rule (a done before a member's start) or deadlock
 * are refused and counted, and so must every mismatched bucket be.  Lone:
 * the deadlocks counted apart are those only the buckets make (the same
 * order without them runs). */
static void jobs(uint32_t want, enum job_mode mode)
{
    static char csv[16384];
    uint32_t before = n_disagree;
    int bucketed = mode != JOB_PLAIN, lone = mode == JOB_LONE;
    for (uint32_t k = 0; k < want; k++) {
        uint32_t nd = 2 + rnd3(lone ? 2 : 3);
        struct sb_machine *m = random_machine(nd, 0);
        CHECK(m != NULL);
        if (!m)
            return;
        random_job(csv, sizeof csv, nd, mode);
        struct sb_err e;
        struct sb_graph *G = sb_csv_load_mem("job.csv", csv, strlen(csv), &e);
        struct sb_cost_params cp;
        if (G) {
            sb_cost_defaults(&cp);
            sb_cost_apply(&cp, G);
        }
        if (!G || sb_machine_apply(m, G, &e)) {
            fprintf(stderr, "%s\n%s", e.msg, csv);
            CHECK(0);
            sb_graph_free(G);
            sb_machine_free(m);
            return;
        }
        /* a lone job, eight orders: a deadlock only its bucket makes is rare */
        for (uint32_t o = 0; o < (lone ? 8u : 1u); o++)
            job_schedule(G, csv, nd, mode);
        sb_graph_free(G);
        sb_machine_free(m);
    }
    if (!bucketed)
        n_job_disagree = n_disagree - before;
}

#ifdef SB_SIMDIFF_ARRIVAL
/* test_simdiff_arrival: sim.c built with SB_SIM_JOIN_ON_ARRIVAL, which
 * meets a joined collective's members when their inputs are ready instead
 * of when their starts are issued; the reference above must catch it. */
int main(void)
{
    sb_registry_add_builtins();
    jobs(300, JOB_PLAIN);
    remove(tmp_path());
    printf("jobs of ranks, sim.c meeting members on arrival: %u schedules replayed, %u "
           "disagreements (%u refused as deadlocks)\n", n_job, n_job_disagree, n_job_dead);
    CHECK(n_job > 100);
    CHECK(n_job_disagree > 0);
    return check_report();
}
#else
int main(void)
{
    uint32_t want = 2000, searched = 0, below = 0, graphs = 0, n_random = 0, n_after = 0;
    const char *env = getenv("SB_SIMDIFF_N");
    sb_registry_add_builtins();
    if (env && atoi(env) > 0)
        want = (uint32_t)atoi(env);
    static char csv[16384];
    while (n_random < want) {
        uint32_t nd = 1 + rnd(MAX_DEV);
        int with_col = rnd(3) == 0; /* a cost_us.<device> column */
        int with_res = rnd(2); /* streams and resources */
        struct sb_machine *m = random_machine(nd, with_res);
        CHECK(m != NULL);
        if (!m)
            break;
        random_csv(csv, sizeof csv, with_col, nd - 1);
        if (with_res)
            add_res_columns(csv, sizeof csv);
        if (graphs % 2) /* half the graphs with order-only edges */
            add_after(csv, sizeof csv);
        struct sb_err e;
        struct sb_graph *G = sb_csv_load_mem("random.csv", csv, strlen(csv), &e);
        struct sb_cost_params cp;
        if (G) {
            sb_cost_defaults(&cp);
            sb_cost_apply(&cp, G);
        }
        if (!G || sb_machine_apply(m, G, &e)) {
            fprintf(stderr, "%s\n%s", e.msg, csv);
            CHECK(0);
            sb_graph_free(G);
            sb_machine_free(m);
            break;
        }
        graphs++;
        n_after += G->pred_after != NULL;
        if (graphs % 3 == 0) { /* every third graph: its bytes twin, bucketed */
            buckets(csv, m, nd);
            sb_graph_free(G);
            sb_machine_free(m);
            continue;
        }
        policies(G, csv);
        for (uint32_t k = 0; k < 8; k++) {
            struct sb_schedule s;
            struct sb_sim_config c;
            struct ref_cfg rc;
            sb_schedule_init(&s, G, nd);
            random_schedule(&G->v, &s);
            random_cfg(&c, &rc);
            CHECK(sb_schedule_validate(&G->v, &s, &e) == 0);
            compare(G, &s, &c, &rc, csv, NULL, NULL);
            n_random++;
            if (k == 0 && graphs % 2 == 0)
                searched += search(G, &s, &c, &rc, csv, 100, &below);
            sb_schedule_free(&s);
        }
        sb_graph_free(G);
        sb_machine_free(m);
    }
    remove(tmp_path());
    printf("%u graphs (%u with after edges), %u random schedules and %u of the search "
           "replayed by both simulators: %u disagreements, %u below the bound\n",
           graphs, n_after, n_random, searched, n_disagree, below);
    printf("built-in policies on the same graphs: %u schedules replayed alike, %u below the "
           "bound; %u runs failed with a message\n", n_policy_ok, n_policy_below,
           n_policy_fail);
    printf("schedules with buckets of two or more: %u replayed by both simulators, %u below the bound; %u "
           "refused by the validator for a bucket rule\n", n_bucketed, n_bucket_below,
           n_bucket_refused);
    CHECK(n_bucketed > want / 40);
    CHECK(n_bucket_refused > 0);
    CHECK_EQ_U(n_bucket_below, 0);
    CHECK(n_policy_below == 0);
    CHECK(n_policy_ok > n_policy_fail);
    CHECK(n_after > graphs / 4);
    CHECK(n_random >= want);
    CHECK_EQ_U(n_disagree, 0);
    CHECK_EQ_U(below, 0);
    jobs(want / 4, JOB_PLAIN);
    printf("jobs of ranks: %u random schedules replayed by both simulators, %u "
           "disagreements; %u refused as deadlocks\n", n_job, n_job_disagree, n_job_dead);
    CHECK(n_job > want / 16 && n_job_dead > 0);
    CHECK_EQ_U(n_job_disagree, 0);
    jobs(want / 2, JOB_JOINED);
    printf("jobs with buckets of joined collectives: %u random schedules replayed alike by "
           "both simulators, %u disagreements; %u refused (a bucket rule or a deadlock), %u "
           "mismatched across ranks and refused\n", n_jb, n_jb_disagree, n_jb_refused,
           n_jb_mismatch);
    CHECK(n_jb > want / 40 && n_jb_mismatch > 0);
    CHECK_EQ_U(n_jb_disagree, 0);
    uint32_t was = n_disagree;
    jobs(want / 4, JOB_LONE);
    printf("jobs whose ranks bucket collectives of their own (not joined): %u random schedules "
           "replayed alike by both simulators, %u disagreements; %u refused (%u as deadlocks, "
           "%u of them deadlocks only the buckets make)\n", n_lone, n_disagree - was,
           n_lone_refused, n_lone_dead, n_lone_only);
    CHECK(n_lone > want / 40 && n_lone_only > 0);
    CHECK_EQ_U(n_disagree - was, 0);
    return check_report();
}
#endif
