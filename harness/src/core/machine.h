/* Machine descriptions (docs/machines.md): YAML read with libyaml into the
 * arrays a sb_machine_view points into. */
#ifndef SB_MACHINE_H
#define SB_MACHINE_H

#include "core.h"

struct sb_machine {
    struct sb_machine_view v; /* points into the arrays below */
    char **name;
    uint8_t *kind;
    uint64_t *cap;
    uint32_t *units;
    double *gbps, *lat_us;
    uint8_t *can_read;
    /* speed: t(v, a) = dur_us[v] / speed; per device a default factor and an
     * optional per-op table (names owned here) */
    double *speed;
    uint32_t *n_op_speed;
    char ***op_speed_name;
    double **op_speed;
    /* ops a device supports: NULL list = every op */
    uint32_t *n_ops;
    char ***ops;
    char *path;
    uint32_t n_alloc; /* devices allocated (n_devices may be fewer on error) */
    /* appended: a device's roofline (peak_tflops, hbm_gbps, launch_us keys),
     * for compute nodes that carry flops/bytes (docs/machines.md) */
    struct sb_roofline *roof; /* [n_alloc] */
    uint8_t *has_roof;        /* [n_alloc] */
    /* appended: resources (docs/machines.md, "Resources"); while loading,
     * res_decl holds [n_alloc * SB_MAX_RES] limits by name index, and
     * fill_machine_view packs the declared ones into res_limit */
    uint32_t n_res;
    char *res_name[SB_MAX_RES];
    uint32_t *res_decl;  /* [n_alloc * SB_MAX_RES], 0 = not declared */
    uint32_t *res_limit; /* [n_devices * n_res], the view's */
    uint32_t *streams;   /* appended: [n_alloc], the `streams` key, 0 = not given */
    /* appended: the `xla_sol` map (XLA's SoL collective model, docs/machines.md)
     * as "sol_<key>=<value>,...", read by net/xla_sol.c; NULL when absent */
    char *xla_sol;
    /* appended: every device alike (a job's `devices=N` machine): t(v, a) is
     * one column, whatever a (graph.h, dev_dur_cols) */
    uint8_t identical;
};

/* On error returns NULL with "file:line:col: problem" in e. */
struct sb_machine *sb_machine_load(const char *path, struct sb_err *e);
void sb_machine_free(struct sb_machine *m);
/* Points g's view at m and fills t(v, a) from g->dur_us (call after the cost
 * model).  Fails when a pre-assigned device is outside the machine or cannot
 * run its node. */
int sb_machine_apply(const struct sb_machine *m, struct sb_graph *g, struct sb_err *e);

/* The machine a workload's '# machine=' line names (a path relative to the
 * workload file), loaded and applied to g.  Returns 0 with *out = NULL when
 * the workload names none; -1 with the message in e on error. */
int sb_machine_of_graph(struct sb_graph *g, struct sb_machine **out, struct sb_err *e);

#endif
