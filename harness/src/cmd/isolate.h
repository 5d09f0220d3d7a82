/* Running one cell in a child process (run --isolate): a policy that crashes,
 * hangs or corrupts memory costs its own row, not the sweep. */
#ifndef SB_ISOLATE_H
#define SB_ISOLATE_H

#include <stdio.h>

/* Writes the cell's row to f and returns its status, as run_cell does. */
typedef int (*sb_cell_fn)(FILE *f, void *ctx);

/* What sb_isolate returns for a child stopped by SIGINT, SIGTERM or SIGHUP:
 * the user's (or the system's) request to stop, not a crash of the cell. */
#define SB_ISOLATE_INTERRUPTED 4

/* Runs fn in a forked child with a time limit (seconds, > 0).  Returns the
 * child's status and its row in *row (malloc'd); when the child dies by a
 * signal or runs out of time returns 1 with *row NULL and *why set to
 * "crash:<SIGNAME>", "crash:exit <n>" or "timeout" (static strings or
 * *why_buf); when it died of SIGINT, SIGTERM or SIGHUP, returns
 * SB_ISOLATE_INTERRUPTED with *why the signal's name and *sig its number. */
int sb_isolate(sb_cell_fn fn, void *ctx, double timeout_s, char **row, const char **why,
               char *why_buf, size_t n_why, int *sig);

/* SIGKILL to every child sb_isolate is waiting for: for a signal handler
 * (it calls kill() only), so that a sweep that is stopped leaves no cell
 * running on. */
void sb_isolate_kill_all(void);

#endif
