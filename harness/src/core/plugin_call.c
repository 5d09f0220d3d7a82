/* The host's one way of calling a plugin's init, run and free on a view
 * (core.h, sb_sched_run_view): the whole graph's (registry.c) or one rank's
 * of a job (ranks.c). */
#include "core.h"

#include <stdlib.h>
#include <string.h>

/* An ABI 1 plugin indexes `holds` with ABI 1's SB_COLL_COUNT: a copy in that
 * layout, without the types it cannot name. */
static uint32_t *holds_abi1(const struct sb_graph_view *v)
{
    uint32_t *h = sb_xmalloc((size_t)v->n_nodes * SB_COLL_COUNT_ABI1 * sizeof *h);
    for (uint32_t i = 0; i < v->n_nodes; i++)
        memcpy(h + (size_t)i * SB_COLL_COUNT_ABI1, v->holds + (size_t)i * SB_COLL_COUNT,
               SB_COLL_COUNT_ABI1 * sizeof *h);
    return h;
}

int sb_sched_run_view(const struct sb_sched *s, const struct sb_graph_view *v0,
                      struct sb_schedule *out, struct sb_err *e)
{
    void *state = NULL;
    char err[512] = "";
    if (s->p->init && s->p->init(s->param, &state, err, sizeof err) != 0)
        return sb_errf(e, "%s", err[0] ? err : "init failed");
    struct sb_graph_view v = *v0;
    uint32_t *h1 = s->p->abi == 1 && v.holds ? holds_abi1(&v) : NULL;
    if (h1)
        v.holds = h1;
    int rc = s->p->run(state, &v, out);
    free(h1);
    if (rc != 0)
        sb_errf(e, "%s", out->err[0] ? out->err : "run failed");
    if (s->p->free)
        s->p->free(state);
    return rc ? -1 : 0;
}
