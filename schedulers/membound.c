/* membound: overlap under a memory cap, with no fallback (issue 5, "Beyond").
 *
 * The investigation of Inductor's overlap scheduler found three causes of its
 * memory growth: exposed waits are deferred although the nodes after them are
 * the last users of large buffers; scores are computed when a node is queued and
 * go stale; all_gathers (which allocate) and reduce_scatters (which let their
 * large input die) are treated alike.  membound is built so that none of the
 * three can happen, instead of repairing them afterwards:
 *
 *   - it walks the original order, which is the memory the user already
 *     accepted, and moves only collectives: a start may be hoisted earlier, a
 *     done may be deferred until its collective has finished.  Compute order is
 *     kept, as Inductor keeps it;
 *   - every move is priced at the moment it is made, against a projection of
 *     memory over the original positions ("coordinates"): the original profile
 *     plus the bytes every move so far has added.  The projection never
 *     underestimates (a buffer a move shortens is not credited), so keeping it
 *     under the cap keeps the real peak under the cap;
 *   - an all_gather allocates its output when it starts, so hoisting it costs
 *     its bytes from now to its original position; it is hoisted only while the
 *     communication channel would otherwise fall idle during the next compute
 *     node, i.e. just in time, and only if the cost fits under the cap;
 *   - a reduce_scatter's start frees nothing, but its done does: the input (a
 *     full gradient) dies there.  A done is deferred only while its collective
 *     is still running, is scheduled the moment it has finished, and while it
 *     is deferred the bytes it keeps alive are charged coordinate by coordinate;
 *     when they would cross the cap, the deferred done that releases the most
 *     memory is forced (a wait that unlocks frees is worth its exposure);
 *   - the cap is an absolute size (cap=80GB), the original peak times
 *     1 + max_increase, the tighter of the two when both are given, and
 *     otherwise the memory of the device the graph runs on (the original
 *     peak + 2% on a device without a capacity).  When the original order
 *     itself is above the cap, nothing can meet it: membound still returns a
 *     valid schedule, making only the moves that stay under the cap wherever
 *     they add bytes, so no position the original already overfills gets
 *     more, and its peak is no higher than the original's.
 *
 * Timing is tracked with the harness's simulator rules under its default
 * resources (one shared communication slot); with other --sim settings the
 * schedule stays valid and under the cap, only less well timed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

#define MB_PATH_MAX 4096 /* nodes on a start's unscheduled path; longer: not hoisted */
/* The cap with neither parameter on a device without a capacity: issue 5's
 * target, the original peak + 2%. */
#define MB_DEFAULT_INCREASE 0.02
/* The largest cap=: init receives whole bytes as a double, exact up to 2^53
 * (8 PiB, a hundred times any device's memory). */
#define MB_CAP_MAX_BYTES 9007199254740992.0

/* Both caps default to NAN, "not given", so that an explicit max_increase can
 * replace the device's memory as the cap (mb_cap). */
static const struct sb_param membound_params[] = {
    {"cap", SB_PARAM_BYTES, NAN, 1, MB_CAP_MAX_BYTES, NULL,
     "cap on peak memory as a size (80GB, 80GiB, 512MiB, 1.5TB, bytes); with "
     "max_increase too, the tighter applies; with neither, the device's memory, "
     "or the original peak + 2% on a device without one"},
    {"max_increase", SB_PARAM_DOUBLE, NAN, 0, 100, NULL,
     "cap on peak memory as a fraction above the original order's peak (issue 5 "
     "target 0.02); given, it replaces the device's memory as the default cap"},
    {"lookahead", SB_PARAM_INT, 200, 0, 4e9, NULL,
     "unscheduled collectives examined for hoisting before each compute node "
     "(as Inductor's max_coll_distance = 200)"},
    {"max_ahead", SB_PARAM_INT, 200, 0, 4e9, NULL,
     "compute nodes ahead a hoisted on-path collective may be needed (as Inductor's "
     "max_compute_pre_fetch = 200)"},
    {"compute_nodes", SB_PARAM_ENUM, 0, 0, 0, "flops|all",
     "nodes that keep their order: flops = matmul, convolution and attention ops "
     "(as Inductor's is_compute_node; casts and pointwise ops may move with a "
     "collective), all = every compute node"},
};
#define MEMBOUND_N_PARAMS (sizeof membound_params / sizeof membound_params[0])

enum { P_CAP, P_MAX_INCREASE, P_LOOKAHEAD, P_MAX_AHEAD, P_COMPUTE_NODES };

struct mb_params {
    double cap_bytes;    /* NAN: not given */
    double max_increase; /* NAN: not given */
    uint32_t lookahead, max_ahead;
    int compute_rule; /* enum sb_ovl_compute_rule */
};

enum mb_state { MB_NEW = 0, MB_DONE = 1, MB_DEFERRED = 2 };

struct mb {
    const struct sb_graph_view *g;
    const struct mb_params *P;
    uint32_t n;
    struct sb_ovl_mem mem;   /* roots, pinned flags and the use lists */
    int64_t *mem0;        /* [n] original order's memory at each position */
    int64_t *extra;       /* [n] bytes the moves add at each original position */
    int64_t *cost;        /* [n + 1] scratch: a candidate move's bytes per position */
    int64_t cap_bytes;
    uint32_t *alloc_at;   /* [n] on roots: coordinate the buffer is allocated at */
    uint32_t *end_at;     /* [n] on roots: last coordinate it is live at */
    uint32_t *dom;        /* [n] first compute node fed (sb_ovl_domination) */
    uint8_t *rs, *state;  /* [n] enum mb_state */
    uint8_t *is_compute;  /* [n] keeps its place in the order (sb_ovl_compute_nodes) */
    double *fin;          /* [n] when a scheduled node's result is available */
    double *coll_end;     /* [n] on starts: when the collective finishes */
    double *t0;           /* [n + 1] compute time of the original order before each position */
    double t, chan;       /* stream time; when the communication slot is free */
    uint32_t cursor, cur_compute;
    uint32_t *deferred, n_deferred; /* deferred nodes in file order */
    uint32_t *un_next, *un_prev, un_head; /* starts not scheduled, in file order */
    uint32_t *mark, mark_gen, *stack, *path;
    uint32_t *order, n_order;
    uint32_t twice; /* a node placed twice (a bug), or SB_NONE */
};

static void mb_free(struct mb *M)
{
    sb_ovl_mem_free(&M->mem);
    free(M->mem0); free(M->extra); free(M->cost); free(M->alloc_at); free(M->end_at);
    free(M->dom); free(M->rs); free(M->state); free(M->is_compute); free(M->fin); free(M->coll_end);
    free(M->t0); free(M->deferred); free(M->un_next); free(M->un_prev);
    free(M->mark); free(M->stack); free(M->path);
}

static int mb_alloc(struct mb *M)
{
    size_t z = (size_t)M->n + 1;
    M->mem0 = malloc(z * sizeof *M->mem0);
    M->extra = calloc(z, sizeof *M->extra);
    M->cost = calloc(z, sizeof *M->cost);
    M->alloc_at = malloc(z * sizeof *M->alloc_at);
    M->end_at = malloc(z * sizeof *M->end_at);
    M->dom = malloc(z * sizeof *M->dom);
    M->rs = malloc(z);
    M->state = calloc(z, 1);
    M->is_compute = malloc(z);
    M->fin = calloc(z, sizeof *M->fin);
    M->coll_end = calloc(z, sizeof *M->coll_end);
    M->t0 = malloc(z * sizeof *M->t0);
    M->deferred = malloc(z * sizeof *M->deferred);
    M->un_next = malloc(z * sizeof *M->un_next);
    M->un_prev = malloc(z * sizeof *M->un_prev);
    M->mark = calloc(z, sizeof *M->mark);
    M->stack = malloc(z * sizeof *M->stack);
    M->path = malloc(z * sizeof *M->path);
    if (!M->mem0 || !M->extra || !M->cost || !M->alloc_at || !M->end_at || !M->dom ||
        !M->rs || !M->state || !M->is_compute || !M->fin || !M->coll_end || !M->t0 || !M->deferred ||
        !M->un_next || !M->un_prev || !M->mark || !M->stack || !M->path)
        return -1;
    return sb_ovl_mem_init(&M->mem, M->g);
}

/* The cap, in the precedence docs/overlap.md ("membound's cap") gives: an
 * explicit cap; an explicit max_increase over the original peak; the tighter
 * when both are given; with neither, the device's memory, else the original
 * peak + MB_DEFAULT_INCREASE. */
static int64_t mb_cap(const struct sb_graph_view *g, const struct mb_params *P,
                      uint64_t peak)
{
    int has_cap = !isnan(P->cap_bytes), has_increase = !isnan(P->max_increase);
    double cap = has_cap ? P->cap_bytes : INFINITY;
    if (has_increase && (double)peak * (1 + P->max_increase) < cap)
        cap = (double)peak * (1 + P->max_increase);
    if (!has_cap && !has_increase) {
        /* the projection counts every node's bytes together: under the
         * smallest device's memory each device keeps under its own */
        uint64_t dev = sb_mem_device_bytes(g);
        cap = dev != SB_MEM_UNLIMITED ? (double)dev : (double)peak * (1 + MB_DEFAULT_INCREASE);
    }
    return cap >= (double)INT64_MAX ? INT64_MAX : (int64_t)cap;
}

/* pass 1: the original order's memory, each buffer's live coordinates, the cap */
static int mb_original(struct mb *M)
{
    const struct sb_graph_view *g = M->g;
    uint32_t n = M->n, peak_pos;
    uint64_t *mem = malloc((size_t)n * sizeof *mem + 1);
    uint32_t *identity = malloc((size_t)n * sizeof *identity + 1);
    if (!mem || !identity) {
        free(mem);
        free(identity);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        identity[i] = i;
    uint64_t peak = g->host->mem_profile(g, identity, n, mem, &peak_pos);
    for (uint32_t i = 0; i < n; i++)
        M->mem0[i] = (int64_t)mem[i];
    M->cap_bytes = mb_cap(g, M->P, peak);
    free(mem);
    free(identity);
    for (uint32_t v = 0; v < n; v++) {
        M->alloc_at[v] = g->kind[v] == SB_KIND_INPUT ? 0 : v;
        M->end_at[v] = v;
    }
    for (uint32_t v = 0; v < n; v++) {
        uint32_t k = sb_ovl_mem_uses(&M->mem, g, v);
        for (uint32_t i = 0; i < k; i++)
            if (M->end_at[M->mem.uses[i]] < v)
                M->end_at[M->mem.uses[i]] = v;
    }
    for (uint32_t r = 0; r < n; r++)
        if (M->mem.pinned[r])
            M->end_at[r] = UINT32_MAX;
    M->t0[0] = 0;
    for (uint32_t v = 0; v < n; v++)
        M->t0[v + 1] = M->t0[v] + (g->kind[v] == SB_KIND_COMPUTE ? g->dur_us[v] : 0);
    return 0;
}

static void mb_starts_list(struct mb *M)
{
    uint32_t tail = SB_NONE;
    M->un_head = SB_NONE;
    for (uint32_t v = 0; v < M->n; v++) {
        if (M->g->kind[v] != SB_KIND_START)
            continue;
        M->un_prev[v] = tail;
        M->un_next[v] = SB_NONE;
        if (tail != SB_NONE)
            M->un_next[tail] = v;
        else
            M->un_head = v;
        tail = v;
    }
}

/* ---- timing: the simulator's rules, one node at a time ------------------ */

static double mb_inputs_ready(const struct mb *M, uint32_t v)
{
    const struct sb_graph_view *g = M->g;
    double t = 0;
    uint32_t e = g->pred_off[v] + (g->kind[v] == SB_KIND_DONE);
    for (; e < g->pred_off[v + 1]; e++)
        if (M->fin[g->pred[e]] + g->edge_lat_us > t)
            t = M->fin[g->pred[e]] + g->edge_lat_us;
    return t;
}

static void mb_time(struct mb *M, uint32_t v)
{
    const struct sb_graph_view *g = M->g;
    if (g->kind[v] == SB_KIND_INPUT) {
        M->fin[v] = 0;
        return;
    }
    double t = mb_inputs_ready(M, v);
    if (t < M->t)
        t = M->t;
    switch ((enum sb_kind)g->kind[v]) {
    case SB_KIND_COMPUTE:
        t += g->dur_us[v];
        break;
    case SB_KIND_START: {
        double begin = t > M->chan ? t : M->chan;
        M->coll_end[v] = M->chan = begin + g->dur_us[v];
        break;
    }
    case SB_KIND_DONE:
        if (M->coll_end[g->partner[v]] > t)
            t = M->coll_end[g->partner[v]];
        break;
    default:
        break;
    }
    M->fin[v] = M->t = t;
}

/* ---- the memory projection over original coordinates ---------------------- */

static void mb_add(struct mb *M, uint32_t from, uint32_t to, int64_t bytes)
{
    for (uint32_t q = from; q < to && q < M->n; q++)
        M->extra[q] += bytes;
}

/* Schedules v at the current coordinate: time, order, and what the move does to
 * the projection (its buffer allocated earlier, its uses keep buffers longer). */
static void mb_place(struct mb *M, uint32_t v)
{
    const struct sb_graph_view *g = M->g;
    uint32_t p = M->cursor;
    if (M->state[v] == MB_DONE) { /* a bug here, not bad input: never overrun order */
        M->twice = v;
        return;
    }
    if (sb_ovl_mem_alloc(g, &M->mem, v) && p < M->alloc_at[v]) {
        mb_add(M, p, M->alloc_at[v], (int64_t)g->out_bytes[v]);
        M->alloc_at[v] = p;
    }
    uint32_t k = sb_ovl_mem_uses(&M->mem, g, v);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t r = M->mem.uses[i];
        if (M->end_at[r] < p) {
            mb_add(M, M->end_at[r] + 1, p + 1, (int64_t)g->out_bytes[r]);
            M->end_at[r] = p;
        }
    }
    mb_time(M, v);
    M->state[v] = MB_DONE;
    M->order[M->n_order++] = v;
    if (M->is_compute[v])
        M->cur_compute++;
    if (g->kind[v] == SB_KIND_START)
        sb_ovl_list_unlink(M->un_next, M->un_prev, &M->un_head, NULL, v);
}

static int mb_preds_done(const struct mb *M, uint32_t v)
{
    for (uint32_t e = M->g->pred_off[v]; e < M->g->pred_off[v + 1]; e++)
        if (M->state[M->g->pred[e]] != MB_DONE)
            return 0;
    return 1;
}

static void mb_defer(struct mb *M, uint32_t v)
{
    M->state[v] = MB_DEFERRED;
    M->deferred[M->n_deferred++] = v; /* the cursor moves forward: file order kept */
}

static void mb_undefer(struct mb *M, uint32_t i)
{
    memmove(M->deferred + i, M->deferred + i + 1,
            (M->n_deferred - i - 1) * sizeof *M->deferred);
    M->n_deferred--;
}

/* Schedules every deferred node that can run without waiting: nodes whose
 * inputs are all scheduled, and dones whose collective has finished. */
static void mb_release(struct mb *M)
{
    const struct sb_graph_view *g = M->g;
    for (uint32_t i = 0; i < M->n_deferred;) {
        uint32_t v = M->deferred[i];
        int can = mb_preds_done(M, v) &&
                  (g->kind[v] != SB_KIND_DONE || M->coll_end[g->partner[v]] <= M->t);
        if (can) {
            mb_undefer(M, i);
            mb_place(M, v);
            i = 0; /* it may have released an earlier one */
        } else {
            i++;
        }
    }
}

/* Schedules deferred node v now, its deferred inputs first, waiting if needed. */
static void mb_force(struct mb *M, uint32_t v)
{
    const struct sb_graph_view *g = M->g;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
        if (M->state[g->pred[e]] == MB_DEFERRED)
            mb_force(M, g->pred[e]);
    for (uint32_t i = 0; i < M->n_deferred; i++)
        if (M->deferred[i] == v) {
            mb_undefer(M, i);
            break;
        }
    mb_place(M, v);
}

/* Bytes deferred node v alone keeps alive at coordinate p beyond the projection. */
static int64_t mb_hold(struct mb *M, uint32_t v, uint32_t p)
{
    int64_t b = 0;
    uint32_t k = sb_ovl_mem_uses(&M->mem, M->g, v);
    for (uint32_t i = 0; i < k; i++) {
        uint32_t r = M->mem.uses[i];
        if (M->end_at[r] < p && M->mark[r] != M->mark_gen) {
            M->mark[r] = M->mark_gen;
            b += (int64_t)M->g->out_bytes[r];
        }
    }
    return b;
}

/* Bytes all deferred nodes keep alive at p beyond the projection (each buffer once). */
static int64_t mb_hold_all(struct mb *M, uint32_t p)
{
    int64_t b = 0;
    M->mark_gen++;
    for (uint32_t i = 0; i < M->n_deferred; i++)
        b += mb_hold(M, M->deferred[i], p);
    return b;
}

/* pass 2, at each coordinate: keep the deferred nodes deferred through p if the
 * bytes they hold fit under the cap; otherwise force the deferred done that
 * releases the most, until they fit. */
static void mb_step(struct mb *M, uint32_t p)
{
    const struct sb_graph_view *g = M->g;
    while (M->n_deferred &&
           M->mem0[p] + M->extra[p] + mb_hold_all(M, p) > M->cap_bytes) {
        uint32_t best = SB_NONE;
        int64_t best_bytes = -1;
        for (uint32_t i = 0; i < M->n_deferred; i++) {
            uint32_t v = M->deferred[i];
            if (g->kind[v] != SB_KIND_DONE || !mb_preds_done(M, v))
                continue;
            M->mark_gen++;
            int64_t b = mb_hold(M, v, p);
            if (b > best_bytes) {
                best_bytes = b;
                best = v;
            }
        }
        if (best == SB_NONE)
            best = M->deferred[0];
        mb_force(M, best);
        mb_release(M);
    }
    for (uint32_t i = 0; i < M->n_deferred; i++) {
        uint32_t k = sb_ovl_mem_uses(&M->mem, g, M->deferred[i]);
        for (uint32_t j = 0; j < k; j++) {
            uint32_t r = M->mem.uses[j];
            if (M->end_at[r] < p) {
                M->extra[p] += (int64_t)g->out_bytes[r];
                M->end_at[r] = p;
            }
        }
    }
}

/* ---- hoisting starts ------------------------------------------------------ */

/* Unscheduled ancestors of start s into M->path in file order, or -1 when s
 * cannot start now: the path needs a compute node (in Inductor's sense: a cast
 * of the weight shard may come along), another collective, a deferred node or
 * a collective not finished yet, or `before`, the node it is to start ahead of. */
static int64_t mb_find_path(struct mb *M, uint32_t s, uint32_t before)
{
    const struct sb_graph_view *g = M->g;
    uint32_t n_stack = 0, n_path = 0, gen = ++M->mark_gen;
    M->stack[n_stack++] = s;
    while (n_stack) {
        uint32_t v = M->stack[--n_stack];
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t u = g->pred[e];
            if (M->state[u] == MB_DONE || M->mark[u] == gen)
                continue;
            M->mark[u] = gen;
            uint8_t k = g->kind[u];
            if (u == before || M->state[u] == MB_DEFERRED || M->is_compute[u] ||
                k == SB_KIND_START || n_path == MB_PATH_MAX)
                return -1;
            if (k == SB_KIND_DONE && M->coll_end[g->partner[u]] > M->t)
                return -1;
            M->path[n_path++] = u;
            M->stack[n_stack++] = u;
        }
    }
    for (uint32_t i = 1; i < n_path; i++) { /* insertion sort: paths are short */
        uint32_t x = M->path[i], j = i;
        for (; j > 0 && M->path[j - 1] > x; j--)
            M->path[j] = M->path[j - 1];
        M->path[j] = x;
    }
    return n_path;
}

/* First coordinate at or after p where the stream, running the original
 * order's compute without stalls, reaches time `when`. */
static uint32_t mb_coord_at(const struct mb *M, uint32_t p, double when)
{
    double base = M->t - M->t0[p];
    uint32_t lo = p, hi = M->n; /* answer in [lo, hi]; n = never */
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (base + M->t0[mid] >= when)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo < M->n ? lo : M->n - 1;
}

static void mb_cost_add(struct mb *M, uint32_t from, uint32_t to, int64_t bytes,
                        uint32_t *hi)
{
    if (from >= to)
        return;
    if (to > M->n)
        to = M->n;
    M->cost[from] += bytes;
    M->cost[to] -= bytes;
    if (to > *hi)
        *hi = to;
}

/* Would starting s (after its path) now keep the projection under the cap?
 * Costs: each allocating node's buffer from now to its original coordinate,
 * and the bytes the deferred dones will hold until their collectives are
 * expected to finish (the hoisted collective queues ahead of nothing they need,
 * but their buffers still occupy the same coordinates). */
static int mb_fits(struct mb *M, uint32_t s, int64_t n_path)
{
    const struct sb_graph_view *g = M->g;
    uint32_t p = M->cursor, hi = p;
    for (int64_t i = 0; i <= n_path; i++) {
        uint32_t u = i < n_path ? M->path[i] : s;
        int64_t b = sb_ovl_mem_alloc(g, &M->mem, u);
        if (b)
            mb_cost_add(M, p, M->alloc_at[u], b, &hi);
    }
    M->mark_gen++;
    for (uint32_t i = 0; i < M->n_deferred; i++) {
        uint32_t d = M->deferred[i];
        if (g->kind[d] != SB_KIND_DONE)
            continue;
        uint32_t until = mb_coord_at(M, p, M->coll_end[g->partner[d]]);
        uint32_t k = sb_ovl_mem_uses(&M->mem, g, d);
        for (uint32_t j = 0; j < k; j++) {
            uint32_t r = M->mem.uses[j];
            if (M->mem.pinned[r] || M->end_at[r] >= until || M->mark[r] == M->mark_gen)
                continue;
            M->mark[r] = M->mark_gen;
            mb_cost_add(M, M->end_at[r] + 1 > p ? M->end_at[r] + 1 : p, until + 1,
                        (int64_t)g->out_bytes[r], &hi);
        }
    }
    int ok = 1;
    int64_t run = 0;
    for (uint32_t q = p; q < hi; q++) {
        run += M->cost[q];
        if (M->mem0[q] + M->extra[q] + run > M->cap_bytes)
            ok = 0;
    }
    for (uint32_t q = p; q <= hi; q++)
        M->cost[q] = 0;
    return ok;
}

/* Before compute node c: while the communication slot would fall idle during c,
 * start the first collective (in file order, among the next `lookahead`) that
 * can start now and fits under the cap.  An on-path collective that does not
 * fit stops the search, so later ones never overtake it (they share one
 * channel in issue order). */
static void mb_hoist(struct mb *M, uint32_t c)
{
    const struct sb_graph_view *g = M->g;
    while (M->chan < M->t + g->dur_us[c]) {
        uint32_t s = M->un_head, seen = 0, started = 0;
        for (; s != SB_NONE && seen < M->P->lookahead && !started; s = M->un_next[s], seen++) {
            int on_path = M->dom[s] != SB_OVL_OFF;
            if (on_path && M->dom[s] - M->cur_compute > M->P->max_ahead)
                return;
            int64_t n_path = mb_find_path(M, s, c);
            if (n_path < 0)
                continue;
            if (!mb_fits(M, s, n_path)) {
                if (on_path)
                    return;
                continue;
            }
            for (int64_t i = 0; i < n_path; i++)
                mb_place(M, M->path[i]);
            mb_place(M, s);
            started = 1;
        }
        if (!started)
            return;
    }
}

/* ---- the walk ------------------------------------------------------------- */

static void mb_visit(struct mb *M, uint32_t v)
{
    const struct sb_graph_view *g = M->g;
    if (!mb_preds_done(M, v)) {
        if (!M->is_compute[v]) {
            mb_defer(M, v); /* follows the deferred wait it depends on */
            return;
        }
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            if (M->state[g->pred[e]] == MB_DEFERRED)
                mb_force(M, g->pred[e]);
        mb_release(M);
    }
    if (g->kind[v] == SB_KIND_DONE && M->coll_end[g->partner[v]] > M->t) {
        mb_defer(M, v); /* still running: wait only when something needs it */
        return;
    }
    if (g->kind[v] == SB_KIND_COMPUTE)
        mb_hoist(M, v);
    mb_place(M, v);
    mb_release(M);
}

static int mb_run(const struct sb_graph_view *g, const struct mb_params *P,
                  struct sb_schedule *out)
{
    struct mb M;
    memset(&M, 0, sizeof M);
    M.g = g;
    M.P = P;
    M.n = g->n_nodes;
    M.order = out->order;
    M.twice = SB_NONE;
    if (mb_alloc(&M) || mb_original(&M)) {
        mb_free(&M);
        return sb_plugin_fail(out->err, out->n_err, "out of memory");
    }
    sb_ovl_compute_nodes(g, P->compute_rule, M.is_compute);
    sb_ovl_domination(g, M.is_compute, M.dom, M.rs);
    mb_starts_list(&M);
    for (M.cursor = 0; M.cursor < M.n; M.cursor++) {
        mb_step(&M, M.cursor);
        if (M.state[M.cursor] == MB_NEW)
            mb_visit(&M, M.cursor);
    }
    M.cursor = M.n - 1;
    while (M.n_deferred)
        mb_force(&M, M.deferred[0]);
    int rc = 0;
    /* the cap is the limit the row checks the peak against (mem_limit_bytes) */
    out->mem_limit_bytes = M.cap_bytes > 0 ? (uint64_t)M.cap_bytes : 0;
    if (M.twice != SB_NONE)
        rc = sb_plugin_fail(out->err, out->n_err, "internal error: node %u placed twice",
                            M.twice);
    else if (M.n_order != M.n)
        rc = sb_plugin_fail(out->err, out->n_err, "internal error: scheduled %u of %u nodes",
                            M.n_order, M.n);
    mb_free(&M);
    return rc;
}

static int membound_init(const double *param, void **state, char *err, size_t n_err)
{
    struct mb_params *P = calloc(1, sizeof *P);
    if (!P)
        return sb_plugin_fail(err, n_err, "out of memory");
    P->cap_bytes = param[P_CAP];
    P->max_increase = param[P_MAX_INCREASE];
    P->lookahead = (uint32_t)param[P_LOOKAHEAD];
    P->max_ahead = (uint32_t)param[P_MAX_AHEAD];
    P->compute_rule = (int)param[P_COMPUTE_NODES];
    *state = P;
    return 0;
}

static int membound_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    if (g->n_nodes == 0)
        return 0;
    return mb_run(g, state, out);
}

static void membound_free(void *state) { free(state); }

static const struct sb_plugin membound = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "membound",
    .summary = "overlap under a memory cap (the device's memory, cap=80GB, or the "
               "original peak + max_increase): just-in-time starts, waits deferred only "
               "while running, every move priced when made",
    .params = membound_params,
    .n_params = MEMBOUND_N_PARAMS,
    .init = membound_init,
    .run = membound_run,
    .free = membound_free,
};

const struct sb_plugin *sb_plugin_membound(void) { return &membound; }

SB_PLUGIN_EXPORT(sb_plugin_membound)
