/* Subcommands that live outside cli.c.  Each takes argv with argv[0] = the
 * command name and returns the process exit status. */
#ifndef SB_COMMANDS_H
#define SB_COMMANDS_H

int sb_cmd_compare(int argc, char **argv);
int sb_cmd_merge(int argc, char **argv);
int sb_cmd_plot(int argc, char **argv);
int sb_cmd_summary(int argc, char **argv);
int sb_cmd_report(int argc, char **argv);

#include <stdint.h>
#include <stdio.h>
struct sb_err;
/* The text summary of a results file (summary.c), as `run` prints it at the
 * end of a sweep; -1 with a message when the file cannot be read. */
int sb_summary_print(const char *results, FILE *f, struct sb_err *e);
/* The same as HTML tables, for the report page (vs and workload may be NULL;
 * all_rows: rank rows that do not fit their devices' memory too). */
int sb_summary_html(const char *results, const char *vs, const char *workload, int all_rows,
                    FILE *f, struct sb_err *e);
/* The name of names[0..n) nearest to typed (case and surrounding spaces
 * ignored), or NULL when none is near enough to suggest (suggest.c). */
const char *sb_did_you_mean(const char *typed, const char *const *names, uint32_t n);

/* Every command reads its whole line before it acts, options wherever they
 * stand, and an option that takes one value may be given once: a second is
 * refused rather than settled by whichever came last (suggest.c).
 * sb_opt_once: 0 the first time flag is seen in s, else -1 and "schedbench
 * CMD: FLAG given twice (the second is 'VALUE'): give it once".  s starts
 * zeroed; flag must outlive it (a literal or an argv string). */
struct sb_opt_seen {
    const char *flag[32];
    uint32_t n;
};
int sb_opt_once(struct sb_opt_seen *s, const char *cmd, const char *flag, const char *value,
                struct sb_err *e);

/* schedbench collective: one collective under ASTRA-sim's model (collective.c). */
int sb_cmd_collective(int argc, char **argv);

#endif
