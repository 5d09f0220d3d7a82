/* ready: the order in which ASTRA-sim's workload layer issues a graph
 * (astra-sim/workload/Workload.cc, issue_dep_free_nodes, with Chakra's
 * ETFeeder): a node is issued as soon as every node it depends on is done;
 * among the ready nodes the lowest id goes first; each rank runs at most one
 * compute node and one collective at a time.  A collective (start and done)
 * is one node there: it is done when its collective ends.
 *
 * pass 1 replays that rule in time on each device (a device is a rank), with
 *        the run's durations (docs/cost-model.md);
 * pass 2 turns the replay into an order the simulator runs with the same
 *        times: computes in issue order; a start just before the compute
 *        running when it was issued (so the stream is free by then and the
 *        collective queues behind the one running, as the rank's queue
 *        does); a done just before the first compute that begins after its
 *        collective ended (so it never waits where ASTRA-sim would not);
 *        nops where they became ready.  Ties keep the replay's times, then
 *        ids, and a final pass keeps the order topological.
 * docs/ready.md states the rule and where the two models part. */
#include "schedbench/plugin.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a binary min-heap of (key, node) ------------------------------------ */

struct item {
    double k[3]; /* compared in order */
    uint32_t v;  /* last tie-break: the node id */
};

struct heap {
    struct item *a;
    uint32_t n;
};

static int less(const struct item *x, const struct item *y)
{
    for (int i = 0; i < 3; i++)
        if (x->k[i] != y->k[i])
            return x->k[i] < y->k[i];
    return x->v < y->v;
}

static void heap_push(struct heap *h, struct item it)
{
    uint32_t c = h->n++;
    for (; c && less(&it, &h->a[(c - 1) / 2]); c = (c - 1) / 2)
        h->a[c] = h->a[(c - 1) / 2];
    h->a[c] = it;
}

static struct item heap_pop(struct heap *h)
{
    struct item top = h->a[0], last = h->a[--h->n];
    uint32_t c = 0;
    for (;;) {
        uint32_t l = 2 * c + 1, m = c;
        if (l < h->n && less(&h->a[l], &last))
            m = l;
        if (l + 1 < h->n && less(&h->a[l + 1], m == c ? &last : &h->a[m]))
            m = l + 1;
        if (m == c)
            break;
        h->a[c] = h->a[m];
        c = m;
    }
    if (h->n)
        h->a[c] = last;
    return top;
}

static struct item item(double a, double b, double c, uint32_t v)
{
    return (struct item){{a, b, c}, v};
}

/* ---- pass 1: the replay ---------------------------------------------------- */

struct replay {
    const struct sb_graph_view *g;
    const int32_t *dev;
    uint32_t nd;
    double *ready_t; /* [n] when every input was done */
    double *begin;   /* [n] computes: begin; starts: issue */
    double *end;     /* [n] when the node is done (a start: its collective's end) */
    uint32_t *left;  /* [n] inputs not done yet */
    struct heap events;            /* (time, node): a node is done */
    struct heap *comp, *comm;      /* [nd] ready computes / collectives by id */
    uint8_t *comp_busy, *comm_busy; /* [nd] */
};

static double dur(const struct replay *R, uint32_t v)
{
    const struct sb_graph_view *g = R->g;
    if (g->kind[v] == SB_KIND_START)
        return g->dur_us[v];
    return g->dev_dur_us[(size_t)v * R->nd + (uint32_t)R->dev[v]];
}

static void becomes_ready(struct replay *R, uint32_t v, double t)
{
    uint32_t d = (uint32_t)R->dev[v];
    R->ready_t[v] = t;
    switch (R->g->kind[v]) {
    case SB_KIND_COMPUTE:
        heap_push(&R->comp[d], item(v, 0, 0, v));
        break;
    case SB_KIND_START:
        heap_push(&R->comm[d], item(v, 0, 0, v));
        break;
    default: /* inputs, nops, dones: done as soon as ready */
        R->begin[v] = t;
        heap_push(&R->events, item(t, 0, 0, v));
    }
}

static void finish(struct replay *R, uint32_t v, double t)
{
    const struct sb_graph_view *g = R->g;
    uint32_t d = (uint32_t)R->dev[v];
    R->end[v] = t;
    if (g->kind[v] == SB_KIND_COMPUTE)
        R->comp_busy[d] = 0;
    else if (g->kind[v] == SB_KIND_START)
        R->comm_busy[d] = 0;
    for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++) {
        uint32_t w = g->succ[e];
        if (--R->left[w] == 0)
            becomes_ready(R, w, t);
    }
}

/* Each free resource takes its lowest ready id (issue_dep_free_nodes). */
static void issue(struct replay *R, double t)
{
    for (uint32_t d = 0; d < R->nd; d++) {
        if (!R->comp_busy[d] && R->comp[d].n) {
            uint32_t v = heap_pop(&R->comp[d]).v;
            R->comp_busy[d] = 1;
            R->begin[v] = t;
            heap_push(&R->events, item(t + dur(R, v), 0, 0, v));
        }
        if (!R->comm_busy[d] && R->comm[d].n) {
            uint32_t v = heap_pop(&R->comm[d]).v;
            R->comm_busy[d] = 1;
            R->begin[v] = t;
            heap_push(&R->events, item(t + dur(R, v), 0, 0, v));
        }
    }
}

static void run_replay(struct replay *R)
{
    const struct sb_graph_view *g = R->g;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        R->left[v] = g->pred_off[v + 1] - g->pred_off[v];
        if (!R->left[v])
            becomes_ready(R, v, 0);
    }
    issue(R, 0);
    while (R->events.n) {
        double t = R->events.a[0].k[0];
        while (R->events.n && R->events.a[0].k[0] <= t) {
            struct item it = heap_pop(&R->events);
            finish(R, it.v, it.k[0]);
        }
        issue(R, t);
    }
}

/* ---- pass 2: the order ---------------------------------------------------- */

/* Per device, its computes in issue order: begin and end times. */
struct lane {
    uint32_t n;
    double *begin, *end;
};

/* Index of the first compute of lane L whose end is after t (or whose begin
 * is at or after t, with by_begin); L->n when none. */
static uint32_t first_after(const struct lane *L, double t, int by_begin)
{
    uint32_t lo = 0, hi = L->n;
    const double *x = by_begin ? L->begin : L->end;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (by_begin ? x[mid] >= t : x[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static double slot(const struct lane *L, double t, int by_begin)
{
    uint32_t i = first_after(L, t, by_begin);
    return i < L->n ? L->begin[i] : INFINITY;
}

/* The key of each node: (slot time, 0 before the slot's compute / 1 the
 * compute, the node's own time). */
static void keys(const struct replay *R, struct item *key)
{
    const struct sb_graph_view *g = R->g;
    uint32_t n = g->n_nodes, nd = R->nd;
    struct lane *lane = calloc(nd, sizeof *lane);
    uint32_t *count = calloc(nd, sizeof *count);
    for (uint32_t v = 0; v < n; v++)
        if (g->kind[v] == SB_KIND_COMPUTE)
            count[R->dev[v]]++;
    for (uint32_t d = 0; d < nd; d++) {
        lane[d].begin = malloc((count[d] + 1) * sizeof(double));
        lane[d].end = malloc((count[d] + 1) * sizeof(double));
    }
    /* a device runs one compute at a time, so issue order is begin order:
     * collect them by begin, ties by id */
    struct heap h = {malloc((n + 1) * sizeof(struct item)), 0};
    for (uint32_t v = 0; v < n; v++)
        if (g->kind[v] == SB_KIND_COMPUTE)
            heap_push(&h, item(R->begin[v], 0, 0, v));
    while (h.n) {
        uint32_t v = heap_pop(&h).v;
        struct lane *L = &lane[R->dev[v]];
        L->begin[L->n] = R->begin[v];
        L->end[L->n++] = R->end[v];
    }
    free(h.a);
    for (uint32_t v = 0; v < n; v++) {
        const struct lane *L = &lane[R->dev[v]];
        switch (g->kind[v]) {
        case SB_KIND_INPUT:
            key[v] = item(-INFINITY, 0, 0, v);
            break;
        case SB_KIND_COMPUTE:
            key[v] = item(R->begin[v], 1, 0, v);
            break;
        case SB_KIND_START: /* before the compute running at its issue */
            key[v] = item(slot(L, R->begin[v], 0), 0, R->begin[v], v);
            break;
        default: /* dones after their collective's end, nops when ready */
            key[v] = item(slot(L, R->end[v], 1), 0, R->end[v], v);
        }
    }
    for (uint32_t d = 0; d < nd; d++)
        free(lane[d].begin), free(lane[d].end);
    free(lane);
    free(count);
}

/* Kahn's algorithm taking the smallest key among the nodes whose inputs are
 * placed: the keys' order wherever it is topological. */
static void place(const struct sb_graph_view *g, const struct item *key, uint32_t *order)
{
    uint32_t n = g->n_nodes, k = 0;
    uint32_t *left = malloc((n + 1) * sizeof *left);
    struct heap h = {malloc((n + 1) * sizeof(struct item)), 0};
    for (uint32_t v = 0; v < n; v++) {
        left[v] = g->pred_off[v + 1] - g->pred_off[v];
        if (!left[v])
            heap_push(&h, key[v]);
    }
    while (h.n) {
        uint32_t v = heap_pop(&h).v;
        order[k++] = v;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--left[g->succ[e]] == 0)
                heap_push(&h, key[g->succ[e]]);
    }
    free(left);
    free(h.a);
}

static int ready_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    (void)state;
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    struct replay R = {.g = g, .dev = out->device, .nd = nd};
    R.ready_t = calloc(n + 1, sizeof *R.ready_t);
    R.begin = calloc(n + 1, sizeof *R.begin);
    R.end = calloc(n + 1, sizeof *R.end);
    R.left = calloc(n + 1, sizeof *R.left);
    R.events.a = malloc((n + 1) * sizeof(struct item));
    R.comp = calloc(nd, sizeof *R.comp);
    R.comm = calloc(nd, sizeof *R.comm);
    R.comp_busy = calloc(nd, 1);
    R.comm_busy = calloc(nd, 1);
    for (uint32_t d = 0; d < nd; d++) {
        R.comp[d].a = malloc((n + 1) * sizeof(struct item));
        R.comm[d].a = malloc((n + 1) * sizeof(struct item));
    }
    run_replay(&R);
    struct item *key = malloc((n + 1) * sizeof *key);
    keys(&R, key);
    place(g, key, out->order);
    free(key);
    for (uint32_t d = 0; d < nd; d++)
        free(R.comp[d].a), free(R.comm[d].a);
    free(R.comp), free(R.comm), free(R.comp_busy), free(R.comm_busy);
    free(R.ready_t), free(R.begin), free(R.end), free(R.left), free(R.events.a);
    return 0;
}

static const struct sb_plugin ready = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "ready",
    .summary = "ASTRA-sim's workload layer: each node as soon as its inputs are done, lowest "
               "id first, one compute and one collective at a time per device",
    .run = ready_run,
};

const struct sb_plugin *sb_plugin_ready(void) { return &ready; }

SB_PLUGIN_EXPORT(sb_plugin_ready)
