/* ASTRA-sim's queues (astra_queue.c), and its congestion-aware backend
 * (astra_ranks.c) on networks of one dimension, under collectives the bytes
 * describe:
 * a small network, LIFO or FIFO, A active chunks; then collectives of any
 * op, size and communicator group issued at nondecreasing times, waited for
 * in any order.  Besides memory errors it checks the property the lower
 * bound relies on (docs/astra.md): no collective ends sooner than
 * sb_astra_plan_floor_ns after its issue.  (Sooner than alone it can: the
 * first version of this target asserted that, and the crash it found is
 * kept in tests/fuzz/crashes.) */
#include "fuzz.h"
#include "net/astra.h"

struct in {
    const uint8_t *p;
    size_t n;
};

static uint32_t take(struct in *b)
{
    if (!b->n)
        return 0;
    b->n--;
    return *b->p++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    struct in b = {data, n};
    struct sb_astra_config c;
    struct sb_err e;
    sb_astra_defaults(&c);
    uint32_t flags = take(&b);
    c.lifo = flags & 1;
    c.n_dims = 1 + (flags >> 1) % 3;
    c.active_chunks = 1 + (flags >> 3) % 3;
    c.splits = 1 + take(&b) % 8;
    for (uint32_t d = 0; d < c.n_dims; d++) {
        uint32_t x = take(&b);
        c.topo[d] = (uint8_t)(x % 3);
        c.npus[d] = 2 + (x >> 2) % 7;
        c.bw_gbps[d] = 10 + take(&b);
        c.latency_ns[d] = take(&b) * 10;
        for (int op = 0; op < 4; op++)
            c.algo[op][d] = (uint8_t)(take(&b) % 4);
    }
    struct sb_astra_sys *s = sb_astra_sys_new(&c);
    uint32_t h[16];
    double at[16], floor_ns[16];
    uint32_t k = 0;
    double t = 0;
    while (b.n && k < 16) {
        uint32_t x = take(&b);
        enum sb_astra_op op = (enum sb_astra_op)(x % 4);
        uint64_t bytes = (uint64_t)(take(&b) + 1) << (take(&b) % 16);
        uint32_t ranks[8], n_ranks = 0;
        struct sb_astra_plan p;
        int rc;
        if ((x >> 2) & 1 && c.n_dims == 1) { /* a group of distinct ranks */
            uint32_t mask = take(&b);
            for (uint32_t r = 0; r < c.npus[0] && r < 8; r++)
                if (mask >> r & 1)
                    ranks[n_ranks++] = r;
            rc = n_ranks ? sb_astra_plan_group(&c, op, bytes, ranks, n_ranks, &p, &e) : -1;
        } else {
            rc = sb_astra_plan(&c, op, bytes, &p, &e);
        }
        if (rc)
            continue;
        if (c.n_dims == 1) /* the congestion-aware backend on the same collective */
            sb_astra_aware(&c, op, bytes, n_ranks ? ranks : NULL, n_ranks ? &n_ranks : NULL,
                           n_ranks ? 1 : 0, &e);
        floor_ns[k] = sb_astra_plan_floor_ns(&p, c.active_chunks);
        t += take(&b) * 97.0;
        at[k] = t;
        h[k++] = sb_astra_sys_issue(s, &p, t);
        if (x >> 3 & 1) /* wait for one of them now: later issues come after its end */
            t = t > sb_astra_sys_wait(s, h[x % k]) ? t : sb_astra_sys_end(s, h[x % k]);
    }
    for (uint32_t i = 0; i < k; i++) {
        double end = sb_astra_sys_wait(s, h[i]);
        SB_ASSERT(end >= at[i] + floor_ns[i] - 1e-6 * (1 + end));
    }
    sb_astra_sys_free(s);
    return 0;
}
