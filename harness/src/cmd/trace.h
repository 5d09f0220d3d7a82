/* Chrome trace event JSON of a simulated schedule. */
#ifndef SB_TRACE_H
#define SB_TRACE_H

#include "core/core.h"

/* r must come from sb_sim_run with record = 1; shared: the sim config's. */
int sb_trace_write(const char *path, const struct sb_graph *g, const char *sched,
                   const struct sb_schedule *s, const struct sb_sim_result *r, int shared,
                   struct sb_err *e);

#endif
