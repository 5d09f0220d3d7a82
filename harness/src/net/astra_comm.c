/* ASTRA-sim's system-layer queues (astra_queue.c) behind the simulator's
 * sb_comm_queue interface, so that the core model runs `--comm astra`
 * without knowing the network model. */
#define _POSIX_C_SOURCE 200809L
#include "astra.h"

#include <stdlib.h>

struct comm {
    const struct sb_astra_config *c;
    struct sb_astra_sys *sys;
};

static void *comm_open(const void *model)
{
    struct comm *q = sb_xmalloc(sizeof *q);
    q->c = model;
    q->sys = sb_astra_sys_new(q->c);
    return q;
}

static void comm_close(void *p)
{
    struct comm *q = p;
    sb_astra_sys_free(q->sys);
    free(q);
}

static int comm_issue(void *p, const struct sb_graph *g, uint32_t v, double t_ns, uint32_t *h)
{
    struct comm *q = p;
    struct sb_astra_plan plan;
    if (!sb_astra_node_plan(q->c, g, v, &plan))
        return 0;
    *h = sb_astra_sys_issue(q->sys, &plan, t_ns);
    return 1;
}

static double comm_next(const void *p) { return sb_astra_sys_next(((const struct comm *)p)->sys); }
static void comm_step(void *p) { sb_astra_sys_step(((struct comm *)p)->sys); }

static double comm_end(const void *p, uint32_t h)
{
    return sb_astra_sys_end(((const struct comm *)p)->sys, h);
}

static double comm_wait(void *p, uint32_t h) { return sb_astra_sys_wait(((struct comm *)p)->sys, h); }

static int comm_floor(const void *model, const struct sb_graph *g, uint32_t v, double *ns)
{
    const struct sb_astra_config *c = model;
    struct sb_astra_plan plan;
    if (!sb_astra_node_plan(c, g, v, &plan))
        return 0;
    *ns = sb_astra_plan_floor_ns(&plan, c->active_chunks);
    return 1;
}

void sb_astra_comm_queue(const struct sb_astra_config *c, struct sb_comm_queue *q)
{
    *q = (struct sb_comm_queue){
        .model = c,
        .open = comm_open,
        .close = comm_close,
        .issue = comm_issue,
        .next_ns = comm_next,
        .step = comm_step,
        .end_ns = comm_end,
        .wait_ns = comm_wait,
        .floor_ns = comm_floor,
    };
}
