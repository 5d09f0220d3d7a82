/* Running one cell in a child process (run --isolate): a policy that crashes,
 * hangs or corrupts memory costs its own row, not the sweep. */
#ifndef SB_ISOLATE_H
#define SB_ISOLATE_H

#include <stdio.h>

/* Writes the cell's row to f and returns its status, as run_cell does. */
typedef int (*sb_cell_fn)(FILE *f, void *ctx);

/* Runs fn in a forked child with a time limit (seconds, > 0).  Returns the
 * child's status and its row in *row (malloc'd); when the child dies by a
 * signal or runs out of time returns 1 with *row NULL and *why set to
 * "crash:<SIGNAME>", "crash:exit <n>" or "timeout" (static strings or
 * *why_buf). */
int sb_isolate(sb_cell_fn fn, void *ctx, double timeout_s, char **row, const char **why,
               char *why_buf, size_t n_why);

#endif
