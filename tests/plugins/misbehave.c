/* Test schedulers that go wrong in the ways the harness must survive:
 * mode 0 reverses the order (invalid), mode 1 returns an error, mode 2 fails
 * in init; for run --isolate, mode 3 dies of SIGSEGV, mode 4 never returns,
 * mode 5 aborts; mode 6 (mkdir) makes the folder $SB_MISBEHAVE_MKDIR and
 * returns the file order, so that a test can turn run's -o into a folder
 * while the sweep runs (its final rename then fails).  Also exercises every
 * parameter type. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "schedbench/plugin.h"

struct state {
    int mode;
};

static const struct sb_param params[] = {
    {"mode", SB_PARAM_ENUM, 0, 0, 0, "reverse|fail|initfail|crash|hang|abort|mkdir", "how to misbehave"},
    {"scale", SB_PARAM_DOUBLE, 1.5, 0, 10, NULL, "a number in 0..10"},
    {"count", SB_PARAM_INT, 3, 1, 8, NULL, "an integer in 1..8"},
    {"loud", SB_PARAM_BOOL, 0, 0, 1, NULL, "a switch"},
    {"budget", SB_PARAM_BYTES, NAN, 1, 1e15, NULL, "a size in 1 B..1 PB, no default"},
};

static int init(const double *param, void **state, char *err, size_t n_err)
{
    if (param[0] == 2)
        return sb_plugin_fail(err, n_err, "init refused: count=%g", param[2]);
    struct state *s = malloc(sizeof *s);
    if (!s)
        return sb_plugin_fail(err, n_err, "out of memory");
    s->mode = (int)param[0];
    *state = s;
    return 0;
}

static int run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    struct state *s = state;
    if (s->mode == 1)
        return sb_plugin_fail(out->err, out->n_err, "no schedule for %u nodes", g->n_nodes);
    if (s->mode == 3)
        raise(SIGSEGV);
    if (s->mode == 4)
        for (volatile int spin = 1; spin;)
            ;
    if (s->mode == 5)
        abort();
    if (s->mode == 6) {
        const char *dir = getenv("SB_MISBEHAVE_MKDIR");
        if (dir)
            mkdir(dir, 0777);
        for (uint32_t i = 0; i < g->n_nodes; i++)
            out->order[i] = i;
        return 0;
    }
    for (uint32_t i = 0; i < g->n_nodes; i++)
        out->order[i] = g->n_nodes - 1 - i;
    return 0;
}

static void release(void *state) { free(state); }

static const struct sb_plugin p = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof p,
    .name = "misbehave",
    .summary = "test scheduler that returns invalid schedules or errors",
    .params = params,
    .n_params = sizeof params / sizeof params[0],
    .init = init,
    .run = run,
    .free = release,
};

__attribute__((visibility("default"))) const struct sb_plugin *sb_plugin_entry(void) { return &p; }
