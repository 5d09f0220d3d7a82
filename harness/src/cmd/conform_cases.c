#include "conform_cases.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>

int sb_case_suite_run(const struct sb_case_suite *s, const char *dir)
{
    static const char *const label[] = {"PASS", "FAIL", "SKIP"};
    struct sb_paths w = {0};
    if (sb_paths_suffix(&w, dir, s->suffix, 0)) {
        fprintf(stderr, "schedbench conform: %s: cannot open the folder\n", dir);
        return 2;
    }
    uint32_t count[3] = {0};
    int bad_input = 0;
    void *c = sb_xmalloc(s->case_bytes);
    for (uint32_t i = 0; i < w.n; i++) {
        struct sb_err e;
        char why[1024] = "";
        if (s->read(w.path[i], dir, c, &e)) {
            fprintf(stderr, "schedbench conform: %s\n", e.msg);
            bad_input = 1;
            continue;
        }
        int v = s->run(c, why, sizeof why);
        count[v]++;
        printf("%s %s%s%s\n", label[v], s->name(c), why[0] ? ": " : "", why);
    }
    free(c);
    sb_paths_free(&w);
    printf("%s: %u passed, %u failed, %u skipped\n", s->title, count[SB_CASE_PASS],
           count[SB_CASE_FAIL], count[SB_CASE_SKIP]);
    return bad_input ? 2 : count[SB_CASE_FAIL] ? 1 : 0;
}
