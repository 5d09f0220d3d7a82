/* memlist: a list scheduler with a memory limit, built on the policy toolkit
 * (docs/plugins.md, "Building on the toolkit").  The toolkit's memory tracker
 * (sb_ovl_mem, the harness's own memory model) says what each ready node would
 * allocate; the first ready node in file order whose allocation keeps the live
 * bytes within `limit` runs next, and when none does, the one allocating least.
 * O(n * ready) per graph: an example, not a policy for a million nodes.
 *
 *   cc -std=c11 -fPIC -shared -DSB_BUILD_MODULE -I<prefix>/include memlist.c \
 *      -L<prefix>/lib -lschedbench_policy -lm -o memlist.so
 *   schedbench run --plugin ./memlist.so -s memlist:limit=2GB -w <workload> */
#include <stdlib.h>

#include "schedbench/plugin.h"
#include "schedbench/policy.h"

static const struct sb_param memlist_params[] = {
    {"limit", SB_PARAM_BYTES, 16e9, 0, 1e15, NULL,
     "live bytes the order tries to stay within (the harness's peak_mem_bytes)"},
};

static int memlist_init(const double *p, void **state, char *err, size_t n_err)
{
    double *limit_bytes = malloc(sizeof *limit_bytes);
    if (!limit_bytes)
        return sb_plugin_fail(err, n_err, "memlist: out of memory");
    *limit_bytes = p[0];
    *state = limit_bytes;
    return 0;
}

static void memlist_free(void *state) { free(state); }

static int memlist_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    double limit_bytes = *(const double *)state;
    uint32_t n = g->n_nodes, n_ready = 0, pos = 0;
    uint32_t *left = malloc(((size_t)n + 1) * sizeof *left);  /* [n] unscheduled producers */
    uint32_t *ready = malloc(((size_t)n + 1) * sizeof *ready); /* [n_ready] node ids */
    struct sb_ovl_mem m;
    if (!left || !ready || sb_ovl_mem_init(&m, g)) {
        free(left), free(ready);
        return sb_plugin_fail(out->err, out->n_err, "memlist: out of memory");
    }
    for (uint32_t v = 0; v < n; v++)
        if ((left[v] = g->pred_off[v + 1] - g->pred_off[v]) == 0)
            ready[n_ready++] = v;
    while (n_ready) {
        /* pass 1: the first ready node (lowest id) within the limit, else the
         * one allocating least (lowest id among equals) */
        uint32_t pick = UINT32_MAX, least = UINT32_MAX;
        for (uint32_t i = 0; i < n_ready; i++) {
            int64_t a = sb_ovl_mem_alloc(g, &m, ready[i]);
            if ((double)(m.cur_bytes + a) <= limit_bytes &&
                (pick == UINT32_MAX || ready[i] < ready[pick]))
                pick = i;
            if (least == UINT32_MAX || a < sb_ovl_mem_alloc(g, &m, ready[least]) ||
                (a == sb_ovl_mem_alloc(g, &m, ready[least]) && ready[i] < ready[least]))
                least = i;
        }
        if (pick == UINT32_MAX)
            pick = least;
        /* pass 2: schedule it, let the tracker free what it used last, and
         * release its consumers */
        uint32_t v = ready[pick];
        ready[pick] = ready[--n_ready];
        out->order[pos++] = v;
        sb_ovl_mem_schedule(&m, g, v);
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--left[g->succ[e]] == 0)
                ready[n_ready++] = g->succ[e];
    }
    out->mem_limit_bytes = (uint64_t)limit_bytes;
    sb_ovl_mem_free(&m);
    free(left), free(ready);
    return 0;
}

static const struct sb_plugin memlist = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "memlist",
    .summary = "list scheduler in file order under a memory limit (toolkit example)",
    .params = memlist_params,
    .n_params = 1,
    .init = memlist_init,
    .run = memlist_run,
    .free = memlist_free,
};

const struct sb_plugin *sb_plugin_memlist(void) { return &memlist; }

SB_PLUGIN_EXPORT(sb_plugin_memlist)
