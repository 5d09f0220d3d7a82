/* The sweep behind `schedbench run`, and workload path collection. */
#ifndef SB_RUN_H
#define SB_RUN_H

#include "core/core.h"
#include "import/import.h"

/* Workload files: a directory contributes every file sb_graph_load reads, in
 * name order. */
struct sb_paths {
    uint32_t n;
    char **path;
};
int sb_paths_add(struct sb_paths *w, const char *path, struct sb_err *e);
void sb_paths_free(struct sb_paths *w);
/* Adds the files of dir whose names end in suffix, in name order: dir/NAME,
 * or with stem, NAME without the suffix; -1 when dir cannot be read. */
int sb_paths_suffix(struct sb_paths *w, const char *dir, const char *suffix, int stem);
/* dir holds at least one such file */
int sb_paths_has_suffix(const char *dir, const char *suffix);
/* The corpus run uses without -w: $SCHEDBENCH_CORPUS, ./workloads/corpus,
 * <prefix>/share/schedbench/corpus beside the binary (cmake --install), the
 * source tree's, the installed one; NULL when none exists. */
const char *sb_default_corpus(void);
/* A --machine value: v itself when it is a file or a path, else the machine of
 * that name beside the corpus (<corpus>/../machines/<v>.yaml) when it exists. */
const char *sb_machine_path(const char *v, char *buf, size_t n);
/* After a failed load of v: the machine names there are, when v was a name. */
void sb_machine_hint(const char *v, struct sb_err *e);

/* The fixed leading columns of a results file; more may follow. */
extern const char *const sb_result_columns[];

int sb_cmd_run(int argc, char **argv);

#endif
