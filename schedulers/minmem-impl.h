/* minmem: its two greedy candidates one at a time, shared with
 * tests/test_minmem.c, which checks them on graphs worked out by hand and
 * against a plain rescan of the ready nodes (docs/minmem.md). */
#ifndef SB_MINMEM_IMPL_H
#define SB_MINMEM_IMPL_H

#include <stdint.h>

#include "schedbench/graph.h"

/* The forward (reverse_pass = 0) or reverse (1) greedy order of g into
 * order[n_nodes]; 0, or -1 when out of memory. */
int sb_minmem_candidate(const struct sb_graph_view *g, int reverse_pass, uint32_t *order);

#endif
