/* The makespan lower bound (docs/cost-model.md, "Lower bound").
 *
 * Every schedule the simulator can replay obeys two kinds of constraint: a node
 * waits for its inputs (the critical path), and a resource serves at most its
 * slots at once (the compute stream one node, a communication resource `limit`
 * collectives).  The bound is the largest of:
 *   - the critical path, each collective's duration on its start->done edge;
 *   - per resource, head + work / slots + tail over any set of its jobs, where
 *     head is the earliest any of them can begin (the critical path to it) and
 *     tail the least time that must still pass after any of them ends (the
 *     critical path from it to the end).  The jobs all run inside
 *     [head, makespan - tail], and the resource does `work` in that window at
 *     a rate of at most `slots`.  Sets are taken as "every job whose head is at
 *     least h" and "every job whose tail is at least q", for each h and q.
 * With several devices (a --machine), compute may run on any device at that
 * device's speed: the critical path and compute terms are sb_sim_device_bound's
 * (fastest device per node, total fastest time over the devices), and the
 * head + work / slots + tail terms again with every compute node at its
 * fastest time and each resource's slots summed over the devices (each
 * device has its own; spread_bound).  On one
 * device a compute node takes its time on that device, t(v, 0), as the
 * simulator charges it. */
#define _POSIX_C_SOURCE 200809L
#include "core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct job {
    double head, work, tail;
};

static int by_head_desc(const void *a, const void *b)
{
    double x = ((const struct job *)a)->head, y = ((const struct job *)b)->head;
    return (x < y) - (x > y);
}

static int by_tail_desc(const void *a, const void *b)
{
    double x = ((const struct job *)a)->tail, y = ((const struct job *)b)->tail;
    return (x < y) - (x > y);
}

/* max over h of h + work(head >= h) / slots + min tail(head >= h), and the
 * same with the roles of head and tail swapped.  Sorts j. */
static double resource_bound(struct job *j, uint32_t n, double slots)
{
    double best = 0, work = 0, other = 0;
    if (!n)
        return 0;
    qsort(j, n, sizeof *j, by_head_desc);
    other = j[0].tail;
    for (uint32_t i = 0; i < n; i++) {
        work += j[i].work;
        if (j[i].tail < other)
            other = j[i].tail;
        double b = j[i].head + work / slots + other;
        if (b > best)
            best = b;
    }
    qsort(j, n, sizeof *j, by_tail_desc);
    work = 0;
    other = j[0].head;
    for (uint32_t i = 0; i < n; i++) {
        work += j[i].work;
        if (j[i].head < other)
            other = j[i].head;
        double b = j[i].tail + work / slots + other;
        if (b > best)
            best = b;
    }
    return best;
}

/* fin[v]: earliest v can finish (a start: be issued) with unlimited resources;
 * id order is topological.  Mirrors sim.c's inputs_ready. */
static double forward(const struct sb_graph_view *g, double lat, double *fin)
{
    double cp = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        double t = 0;
        uint32_t e = g->pred_off[v] + (g->kind[v] == SB_KIND_DONE);
        for (; e < g->pred_off[v + 1]; e++) {
            double l = sb_edge_after(g, e) ? 0 : lat; /* after edges: no latency */
            if (fin[g->pred[e]] + l > t)
                t = fin[g->pred[e]] + l;
        }
        if (g->kind[v] == SB_KIND_INPUT)
            t = 0;
        else if (g->kind[v] == SB_KIND_COMPUTE)
            t += g->dur_us[v];
        else if (g->kind[v] == SB_KIND_DONE) {
            uint32_t s = g->partner[v];
            if (fin[s] + g->dur_us[s] > t)
                t = fin[s] + g->dur_us[s];
        }
        fin[v] = t;
        if (t > cp)
            cp = t;
    }
    return cp;
}

/* after[v]: least time between v finishing and the makespan.  The edge from a
 * start (finished = issued) to its done carries the collective's duration;
 * every other edge the latency plus the consumer's duration, and no latency
 * when every edge from v to w is an after edge (order only).
 *
 * Each node pushes its time back over its input edges once after[] of it is
 * final (ids are topological, so every consumer of v is done before v): an
 * after edge offers after[w] + dur(w), any other edge lat more, and the
 * largest of the offers over the edges v->w is the one with latency exactly
 * when some edge v->w carries it (lat >= 0).  The pass is linear in the
 * edges; asking per edge whether every edge of the pair is an after edge
 * scanned w's inputs for each of them, O(in-degree^2) per node (4 nodes with
 * 600,000 repeated after edges: over 30 s per cell). */
static void backward(const struct sb_graph_view *g, double lat, double *after)
{
    memset(after, 0, (size_t)g->n_nodes * sizeof *after);
    for (uint32_t w = g->n_nodes; w-- > 0;) {
        double dur = g->kind[w] == SB_KIND_COMPUTE ? g->dur_us[w] : 0;
        for (uint32_t e = g->pred_off[w]; e < g->pred_off[w + 1]; e++) {
            uint32_t v = g->pred[e];
            double d;
            if (g->kind[w] == SB_KIND_DONE && g->partner[w] == v)
                d = g->dur_us[v] + after[w];
            else /* summed in the order the bound always summed it */
                d = (sb_edge_after(g, e) ? 0 : lat) + dur + after[w];
            if (d > after[v])
                after[v] = d;
        }
    }
}

/* Collectives of one resource (type t, or all when shared), on each of `nd`
 * devices. */
static double comm_bound(const struct sb_graph_view *g, const struct sb_sim_config *c,
                         const double *fin, const double *after, struct job *j, int t,
                         uint32_t nd)
{
    uint32_t n = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (g->kind[v] != SB_KIND_START || (!c->shared && g->coll[v] != t))
            continue;
        j[n++] = (struct job){fin[v], g->dur_us[v], after[g->partner[v]]};
    }
    return resource_bound(j, n, (double)nd * (c->shared ? c->limit[0] : c->limit[t]));
}

static double max2(double a, double b)
{
    return a > b ? a : b;
}

/* Each stream runs one compute node at a time on each of `nd` devices
 * (streams run at once). */
static double compute_bound(const struct sb_graph_view *g, const double *fin,
                            const double *after, struct job *j, uint32_t nd)
{
    double best = 0;
    for (uint32_t s = 0; s < g->n_streams; s++) {
        uint32_t n = 0;
        for (uint32_t v = 0; v < g->n_nodes; v++)
            if (g->kind[v] == SB_KIND_COMPUTE && g->stream[v] == s)
                j[n++] = (struct job){fin[v] - g->dur_us[v], g->dur_us[v], after[v]};
        best = max2(best, resource_bound(j, n, nd));
    }
    return best;
}

static double fastest(const struct sb_graph_view *g, uint32_t v)
{
    uint32_t nd = g->dev_dur_cols == 1 ? 1 : g->machine->n_devices; /* 1: all alike */
    double t = sb_dur_on(g, v, 0);
    for (uint32_t d = 1; d < nd; d++)
        if (sb_dur_on(g, v, d) < t)
            t = sb_dur_on(g, v, d);
    return t;
}

double sb_sim_device_bound(const struct sb_graph_view *g, double edge_lat_us)
{
    double *fin = sb_xcalloc((size_t)g->n_nodes + 1, sizeof *fin);
    double *total = sb_xcalloc((size_t)g->n_streams + 1, sizeof *total), cp = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        double t = 0;
        uint32_t e = g->pred_off[v] + (g->kind[v] == SB_KIND_DONE);
        for (; e < g->pred_off[v + 1]; e++) {
            double l = sb_edge_after(g, e) ? 0 : edge_lat_us; /* after edges: no latency */
            if (fin[g->pred[e]] + l > t)
                t = fin[g->pred[e]] + l;
        }
        if (g->kind[v] == SB_KIND_INPUT)
            t = 0;
        else if (g->kind[v] == SB_KIND_COMPUTE) {
            t += fastest(g, v);
            total[g->stream[v]] += fastest(g, v);
        } else if (g->kind[v] == SB_KIND_DONE && fin[g->partner[v]] + g->dur_us[g->partner[v]] > t)
            t = fin[g->partner[v]] + g->dur_us[g->partner[v]];
        fin[v] = t;
        if (t > cp)
            cp = t;
    }
    free(fin);
    /* a stream's nodes run one at a time on whichever devices they go to */
    double spread = 0;
    for (uint32_t s = 0; s < g->n_streams; s++)
        if (total[s] / g->machine->n_devices > spread)
            spread = total[s] / g->machine->n_devices;
    free(total);
    return cp > spread ? cp : spread;
}

/* Several devices: the one-device head + work / slots + tail terms with each
 * compute node at its fastest device's time, and slots over every device (a
 * stream's nodes one at a time per device, a collective resource `limit` per
 * device).  Where work becomes ready late (the reduce-scatters at the end of a
 * backward pass) or must end early (the all-gathers the first layers wait
 * for), this is above the work alone over the slots. */
static double spread_bound(const struct sb_graph_view *g, const struct sb_sim_config *c,
                           uint32_t nd)
{
    struct sb_graph_view f = *g;
    double *dur = sb_xmalloc(((size_t)g->n_nodes + 1) * sizeof *dur);
    double *fin = sb_xcalloc((size_t)g->n_nodes + 1, sizeof *fin);
    double *after = sb_xcalloc((size_t)g->n_nodes + 1, sizeof *after);
    struct job *j = sb_xmalloc(((size_t)g->n_nodes + 1) * sizeof *j);
    for (uint32_t v = 0; v < g->n_nodes; v++)
        dur[v] = g->kind[v] == SB_KIND_COMPUTE ? fastest(g, v) : g->dur_us[v];
    f.dur_us = dur;
    double best = forward(&f, c->edge_lat_us, fin);
    backward(&f, c->edge_lat_us, after);
    best = max2(best, compute_bound(&f, fin, after, j, nd));
    for (int t = 0; t < (c->shared ? 1 : SB_COLL_COUNT); t++)
        best = max2(best, comm_bound(&f, c, fin, after, j, t, nd));
    free(dur), free(fin), free(after), free(j);
    return best;
}

/* Resources (docs/machines.md, "Resources"): device a can hold at most
 * M_k(a) of resource k at any instant, so the nodes placed on a finish no
 * sooner than sum r_k(v) t(v, a) / M_k(a).  One device: per resource, that
 * work with head and tail (resource_bound with M_k slots of r_k-wide jobs).
 * Several: per resource, each node at its cheapest device's share,
 * sum_v min_a r_k(v, a) t(v, a) / M_k(a), over the devices that declare k (a
 * device that does not declare k costs 0 there; a device that cannot run v
 * and, for a pre-assigned node, every other device are left out). */
static double res_bound(const struct sb_graph_view *g, const double *fin, const double *after,
                        struct job *j)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t nd = m->n_devices, K = m->n_res;
    double best = 0;
    if (!K || !g->res_use)
        return 0;
    for (uint32_t k = 0; k < K; k++) {
        if (nd == 1) {
            uint32_t n = 0, lim = m->res_limit[k];
            for (uint32_t v = 0; v < g->n_nodes && lim; v++) {
                uint32_t r = sb_res_need(g, v, 0, k);
                if (r && g->dur_us[v] > 0)
                    j[n++] = (struct job){fin[v] - g->dur_us[v], r * g->dur_us[v], after[v]};
            }
            best = max2(best, resource_bound(j, n, lim));
            continue;
        }
        /* devices declaring k each finish no sooner than their share;
         * a node goes where its share is least (0 on a device without k,
         * nowhere it cannot run, only its pre-assigned device if it has one) */
        double area = 0;
        uint32_t n_k = 0;
        for (uint32_t a = 0; a < nd; a++)
            n_k += m->res_limit[(size_t)a * K + k] != 0;
        for (uint32_t v = 0; v < g->n_nodes && n_k; v++) {
            double least = INFINITY;
            for (uint32_t a = 0; a < nd && g->kind[v] == SB_KIND_COMPUTE; a++) {
                double t = sb_dur_on(g, v, a);
                uint32_t lim = m->res_limit[(size_t)a * K + k];
                if (isinf(t) || (g->device[v] >= 0 && (uint32_t)g->device[v] != a))
                    continue;
                double x = lim ? sb_res_need(g, v, a, k) * t / lim : 0;
                if (x < least)
                    least = x;
            }
            if (isfinite(least))
                area += least;
        }
        if (n_k)
            best = max2(best, area / n_k);
    }
    return best;
}

double sb_sim_lower_bound(const struct sb_graph_view *g, const struct sb_sim_config *c)
{
    double lat = c->edge_lat_us, best;
    uint32_t nd = g->machine ? g->machine->n_devices : 1;
    if (nd > 1) {
        best = sb_sim_device_bound(g, lat);
        best = max2(best, res_bound(g, NULL, NULL, NULL));
        /* spread_bound's set of all jobs gives each collective resource's
         * total work over devices x slots */
        return max2(best, spread_bound(g, c, nd));
    }
    /* one device: a compute node takes t(v, 0) (dev_dur_us, the device's
     * speed or a cost_us.<device> column), as in the simulator; dur_us is the
     * file's cost.  Collectives keep dur_us. */
    struct sb_graph_view one;
    double *dur = NULL;
    if (g->dev_dur_us && g->dev_dur_us != g->dur_us) {
        one = *g;
        dur = sb_xmalloc((size_t)g->n_nodes * sizeof *dur);
        for (uint32_t v = 0; v < g->n_nodes; v++)
            dur[v] = g->kind[v] == SB_KIND_COMPUTE ? g->dev_dur_us[v] : g->dur_us[v];
        one.dur_us = dur;
        g = &one;
    }
    double *fin = sb_xcalloc(g->n_nodes, sizeof *fin);
    double *after = sb_xcalloc(g->n_nodes, sizeof *after);
    struct job *j = sb_xmalloc(((size_t)g->n_nodes + 1) * sizeof *j);
    best = forward(g, lat, fin);
    backward(g, lat, after);
    best = max2(best, compute_bound(g, fin, after, j, 1));
    best = max2(best, res_bound(g, fin, after, j));
    for (int t = 0; t < (c->shared ? 1 : SB_COLL_COUNT); t++)
        best = max2(best, comm_bound(g, c, fin, after, j, t, 1));
    free(fin);
    free(after);
    free(j);
    free(dur);
    return best;
}
