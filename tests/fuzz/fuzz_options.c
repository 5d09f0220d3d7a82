/* The key=value parsers of --cost and --sim and the scheduler spec: the input
 * is up to three lines, one for each. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static int init;
    if (!init)
        sb_registry_add_builtins(), init = 1;
    char *s = malloc(n + 1), *line[3] = {"", "", ""};
    memcpy(s, data, n);
    s[n] = 0;
    char *p = s;
    for (int i = 0; i < 3 && p; i++) {
        line[i] = p;
        p = strchr(p, '\n');
        if (p)
            *p++ = 0;
    }
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_sim_config sc;
    struct sb_sched sched;
    sb_cost_defaults(&c);
    sb_cost_parse(&c, line[0], &e);
    sb_sim_defaults(&sc);
    sb_sim_parse(&sc, line[1], &e);
    if (!sb_sched_parse(&sched, line[2], &e))
        sb_sched_free(&sched);
    free(s);
    return 0;
}
