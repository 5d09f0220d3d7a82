/* schedbench conform DIR: XLA's latency-hiding-scheduler tests as the judge of
 * the `aggressive` policy (harness/src/cmd/conform.c, docs/aggressive.md). */
#ifndef SB_CONFORM_H
#define SB_CONFORM_H

/* argv[0] = "conform"; returns 0 when no test failed, 1 when one did, 2 on bad
 * usage or an unreadable folder. */
int sb_cmd_conform(int argc, char **argv);
/* ggml's scheduler cases (conform_ggml.c): DIR holds *.case files */
int sb_conform_has_ggml_cases(const char *dir);
int sb_conform_ggml(const char *dir);
/* XLA GPU's SoL collective model cases (conform_sol.c): DIR holds *.solcase */
int sb_conform_has_sol_cases(const char *dir);
int sb_conform_sol(const char *dir);
/* XLA's GPU performance model cases (conform_perf.c): DIR holds *.perfcase */
int sb_conform_has_perf_cases(const char *dir);
int sb_conform_perf(const char *dir);
/* Inductor's pass cases (conform_inductor.c): DIR holds NAME.icase + NAME.csv;
 * only (or NULL) keeps one case, other (or NULL) runs that scheduler spec
 * instead of each case's policy (a control), param (or NULL),
 * "POLICY:KEY=VALUE", adds KEY=VALUE to the spec of every case POLICY runs. */
int sb_conform_has_inductor_cases(const char *dir);
int sb_conform_inductor(const char *dir, const char *only, const char *other,
                        const char *param);

#endif
