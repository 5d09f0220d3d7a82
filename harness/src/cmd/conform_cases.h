/* One way to run a folder of conformance cases that each pass, fail or are
 * skipped with a reason (conform_sol.c, conform_perf.c): list DIR's files of
 * one suffix, read each, run it, print a line per case and the counts. */
#ifndef SB_CONFORM_CASES_H
#define SB_CONFORM_CASES_H

#include <stddef.h>

#include "core/core.h"

enum { SB_CASE_PASS, SB_CASE_FAIL, SB_CASE_SKIP };

struct sb_case_suite {
    const char *suffix; /* ".solcase" */
    const char *title;  /* "xla-sol": the counts line's name */
    size_t case_bytes;  /* one case, allocated once and reused */
    /* 0, or -1 with the file:line message in e */
    int (*read)(const char *path, const char *dir, void *c, struct sb_err *e);
    /* SB_CASE_*, with what was found (or why skipped) in why */
    int (*run)(const void *c, char *why, size_t n_why);
    const char *(*name)(const void *c);
};

/* 0 when no case failed, 1 when one did, 2 for an unreadable folder or case. */
int sb_case_suite_run(const struct sb_case_suite *s, const char *dir);

#endif
