/* simple_overlap: PyTorch Inductor's ATen-FX `simple_overlap` pass
 * (torch/_inductor/fx_passes/simple_overlap.py, pytorch/pytorch@04766a33,
 * PR #184194; ../shared/research/inductor-passes.md §1.8).  No costs: two
 * phases of moves, each kept only if the order's peak memory did not grow.
 *   1. In order, each collective start moves up to just after the later of
 *      its latest input and the previous collective of its process group
 *      (same group size, as the overlap toolkit keys groups).
 *   2. In order, each wait moves down to just before its earliest user,
 *      unless that user already follows it, it has none, or the move would
 *      not leave it after the previous wait of its process group.
 * Peaks are the harness's memory model (the host's mem_profile), which is
 * Inductor's storage simulation (a storage freed after its last use, the
 * `primals` ones never) with weights and outputs pinned.  docs/inductor.md. */
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

static const struct sb_param params[] = {
    {"revert", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "test-only: 0 keeps a phase's moves even when they raise the peak"},
    {"pg_order", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "test-only: 0 lets a start rise above the previous collective of its group"},
};

struct so_state {
    int revert, pg_order;
};

/* Moves the node at position from to position to (shifting those between). */
static void move_to(uint32_t *order, uint32_t *pos, uint32_t from, uint32_t to)
{
    uint32_t v = order[from];
    if (from > to)
        memmove(order + to + 1, order + to, (from - to) * sizeof *order);
    else
        memmove(order + from, order + from + 1, (to - from) * sizeof *order);
    order[to] = v;
    uint32_t lo = from < to ? from : to, hi = from < to ? to : from;
    for (uint32_t i = lo; i <= hi; i++)
        pos[order[i]] = i;
}

/* Phase 1: starts as early as their inputs and their group's order allow. */
static void raise_starts(const struct sb_graph_view *g, uint32_t *order, uint32_t *pos,
                         int pg_order)
{
    uint32_t n = g->n_nodes;
    for (uint32_t v = 0; v < n; v++) { /* ids are the original order */
        if (g->kind[v] != SB_KIND_START)
            continue;
        uint32_t after = UINT32_MAX; /* position to follow; none: the top */
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            if (after == UINT32_MAX || pos[g->pred[e]] > after)
                after = pos[g->pred[e]];
        for (uint32_t u = v; pg_order && u-- > 0;)
            if (g->kind[u] == SB_KIND_START && g->group_size[u] == g->group_size[v]) {
                if (after == UINT32_MAX || pos[u] > after)
                    after = pos[u];
                break;
            }
        uint32_t to = after == UINT32_MAX ? 0 : after + 1;
        if (to < pos[v])
            move_to(order, pos, pos[v], to);
    }
}

/* Phase 2: waits down to just before their first user. */
static void sink_waits(const struct sb_graph_view *g, uint32_t *order, uint32_t *pos,
                       uint32_t *waits)
{
    uint32_t n = g->n_nodes, n_w = 0;
    for (uint32_t i = 0; i < n; i++)
        if (g->kind[order[i]] == SB_KIND_DONE)
            waits[n_w++] = order[i];
    for (uint32_t k = 0; k < n_w; k++) {
        uint32_t w = waits[k], first = UINT32_MAX;
        for (uint32_t e = g->succ_off[w]; e < g->succ_off[w + 1]; e++)
            if (first == UINT32_MAX || pos[g->succ[e]] < first)
                first = pos[g->succ[e]];
        if (first == UINT32_MAX || first == pos[w] + 1)
            continue;
        uint32_t to = first - 1; /* after removing w, first shifts up by one */
        uint32_t gs = g->group_size[g->partner[w]];
        int ok = 1;
        for (uint32_t j = k; j-- > 0;)
            if (g->group_size[g->partner[waits[j]]] == gs) {
                /* where it stands once w is taken out above it */
                uint32_t p = pos[waits[j]] - (pos[waits[j]] > pos[w]);
                ok = p < to;
                break;
            }
        if (ok && to > pos[w])
            move_to(order, pos, pos[w], to);
    }
}

static int so_init(const double *param, void **state, char *err, size_t n_err)
{
    struct so_state *S = malloc(sizeof *S);
    if (!S)
        return sb_plugin_fail(err, n_err, "out of memory");
    S->revert = param[0] != 0;
    S->pg_order = param[1] != 0;
    *state = S;
    return 0;
}

static int so_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    const struct so_state *S = state;
    int revert = S->revert;
    uint32_t n = g->n_nodes, at;
    uint32_t *pos = malloc((size_t)n * sizeof *pos + 1), *keep = malloc((size_t)n * sizeof *keep + 1);
    uint32_t *waits = malloc((size_t)n * sizeof *waits + 1);
    uint64_t *mem = malloc((size_t)n * sizeof *mem + 1);
    if (!pos || !keep || !waits || !mem) {
        free(pos); free(keep); free(waits); free(mem);
        return sb_plugin_fail(out->err, out->n_err, "out of memory");
    }
    for (uint32_t v = 0; v < n; v++)
        out->order[v] = pos[v] = v;
    uint64_t peak = g->host->mem_profile(g, out->order, n, mem, &at);
    for (int phase = 0; phase < 2; phase++) {
        memcpy(keep, out->order, (size_t)n * sizeof *keep);
        if (phase == 0)
            raise_starts(g, out->order, pos, S->pg_order);
        else
            sink_waits(g, out->order, pos, waits);
        uint64_t now = g->host->mem_profile(g, out->order, n, mem, &at);
        if (revert && now > peak) { /* every move of the phase goes back */
            memcpy(out->order, keep, (size_t)n * sizeof *keep);
            for (uint32_t i = 0; i < n; i++)
                pos[out->order[i]] = i;
        } else if (now > peak) {
            peak = now;
        }
    }
    free(pos); free(keep); free(waits); free(mem);
    return 0;
}

static void so_free(void *state) { free(state); }

static const struct sb_plugin plugin = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "simple_overlap",
    .summary = "Inductor's FX simple_overlap: starts raised, waits sunk, each phase kept only "
               "if the peak does not grow",
    .params = params,
    .n_params = 2,
    .init = so_init,
    .run = so_run,
    .free = so_free,
};

const struct sb_plugin *sb_plugin_simple_overlap(void) { return &plugin; }

SB_PLUGIN_EXPORT(sb_plugin_simple_overlap)
