/* The policy toolkit's per-device memory (schedbench/policy.h): the peak of
 * each device for a placed order (docs/machines.md, "Memory is accounted per
 * device"): a buffer lives on its producer's device from the
 * producer (position 0 for an input) through its last use there, a copy
 * leaving for device b counting as a use at its trigger's position; a copy
 * lives on b from its first use there through its last; a device reading
 * another's memory in place charges that one; a weight or output flag pins
 * the buffer on its node's account.  heft and dp check their placements with
 * it when `capacity` is on.  Returns -1 when out of memory. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

static uint32_t place_account(const struct sb_graph_view *g, const int32_t *dev,
                              uint32_t r, uint32_t d)
{
    uint32_t home = (uint32_t)dev[r], nd = g->machine->n_devices;
    return home == d || g->machine->can_read[(size_t)d * nd + home] ? home : d;
}

static void place_use(uint32_t *first, uint32_t *last, size_t k, uint32_t pos)
{
    if (first[k] == UINT32_MAX || pos < first[k])
        first[k] = pos;
    if (last[k] == UINT32_MAX || pos > last[k])
        last[k] = pos;
}

int sb_mem_dev_peaks(const struct sb_graph_view *g, const uint32_t *order,
                     const int32_t *dev, const uint32_t *root, uint64_t *peak)
{
    uint32_t n = g->n_nodes, nd = g->machine->n_devices;
    size_t nn = (size_t)n * nd;
    uint32_t *pos = malloc(((size_t)n + 1) * sizeof *pos);
    uint32_t *first = malloc((nn + 1) * sizeof *first);
    uint32_t *last = malloc((nn + 1) * sizeof *last);
    uint32_t *trig = malloc((nn + 1) * sizeof *trig);
    uint8_t *pin = calloc(nn + 1, 1);
    int64_t *delta = calloc(((size_t)n + 1) * nd, sizeof *delta);
    int rc = -1;
    if (!pos || !first || !last || !trig || !pin || !delta)
        goto out;
    for (uint32_t i = 0; i < n; i++)
        pos[order[i]] = i;
    for (size_t k = 0; k < nn; k++)
        first[k] = last[k] = trig[k] = UINT32_MAX;
    for (uint32_t v = 0; v < n; v++) {
        uint32_t d = (uint32_t)dev[v];
        place_use(first, last, (size_t)root[v] * nd + place_account(g, dev, root[v], d), pos[v]);
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t p = g->pred[e], src = (uint32_t)dev[p];
            place_use(first, last, (size_t)root[p] * nd + place_account(g, dev, root[p], d),
                      pos[v]);
            int own_start = g->kind[v] == SB_KIND_DONE && e == g->pred_off[v];
            int in_place = src == d || g->machine->can_read[(size_t)d * nd + src];
            size_t k = (size_t)p * nd + d;
            if (!own_start && !in_place && pos[v] < trig[k])
                trig[k] = pos[v];
            if (g->kind[v] == SB_KIND_START)
                place_use(first, last,
                          (size_t)root[p] * nd + place_account(g, dev, root[p], d),
                          pos[g->partner[v]]);
        }
        if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT))
            pin[(size_t)root[v] * nd + place_account(g, dev, root[v], d)] = 1;
    }
    for (uint32_t p = 0; p < n; p++)
        for (uint32_t d = 0; d < nd; d++)
            if (trig[(size_t)p * nd + d] != UINT32_MAX) {
                uint32_t src = (uint32_t)dev[p];
                place_use(first, last,
                          (size_t)root[p] * nd + place_account(g, dev, root[p], src),
                          trig[(size_t)p * nd + d]);
            }
    for (uint32_t v = 0; v < n; v++) {
        if (root[v] != v || !g->out_bytes[v])
            continue;
        for (uint32_t d = 0; d < nd; d++) {
            size_t k = (size_t)v * nd + d;
            if (first[k] == UINT32_MAX)
                continue;
            int home = d == (uint32_t)dev[v];
            uint32_t a = home ? (g->kind[v] == SB_KIND_INPUT ? 0 : pos[v]) : first[k];
            delta[(size_t)a * nd + d] += (int64_t)g->out_bytes[v];
            if (!pin[k])
                delta[((size_t)last[k] + 1) * nd + d] -= (int64_t)g->out_bytes[v];
        }
    }
    for (uint32_t d = 0; d < nd; d++) {
        int64_t cur = 0;
        peak[d] = 0;
        for (uint32_t i = 0; i < n; i++) {
            cur += delta[(size_t)i * nd + d];
            if (cur > 0 && (uint64_t)cur > peak[d])
                peak[d] = (uint64_t)cur;
        }
    }
    rc = 0;
out:
    free(pos), free(first), free(last), free(trig), free(pin), free(delta);
    return rc;
}

uint64_t sb_mem_device_bytes(const struct sb_graph_view *g)
{
    const struct sb_machine_view *m = g->machine;
    uint8_t used[SB_MAX_DEVICES] = {0};
    uint64_t cap = SB_MEM_UNLIMITED;
    if (!m || !m->mem_cap_bytes)
        return cap;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if (g->kind[v] == SB_KIND_INPUT)
            continue;
        int32_t d = g->device && g->device[v] >= 0 ? g->device[v] : 0;
        if ((uint32_t)d < m->n_devices && d < SB_MAX_DEVICES)
            used[d] = 1;
    }
    for (uint32_t d = 0; d < m->n_devices && d < SB_MAX_DEVICES; d++)
        if (used[d] && m->mem_cap_bytes[d] < cap)
            cap = m->mem_cap_bytes[d];
    return cap;
}
