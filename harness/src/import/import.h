/* Options of the importers of other tools' formats (`--import K=V,...`):
 * what a trace does not say and a user has to (workloads/importers/). */
#ifndef SB_IMPORT_H
#define SB_IMPORT_H

#include "core/core.h"
#include "hlo.h"

struct sb_import_opts {
    double peak_tflops; /* Chakra: roofline for compute nodes without a duration */
    double mem_gbps;    /* Chakra: the roofline's memory bandwidth */
    double clock_ghz;   /* ASTRA-sim text: compute times are cycles */
    uint32_t npus;      /* ASTRA-sim text: NPUs of the whole system; Chakra: the
                           ranks of a collective without a process group */
    uint32_t npus_set;  /* npus was given (Chakra: else the trace's rank files) */
    uint32_t ctrl_deps; /* Chakra: 1 follows ctrl_deps as edges too */
    uint32_t streams;   /* Chakra: 1 (default) a stream per thread (tid), 0 one stream */
    uint32_t toposort;  /* CSV: 1 reorders rows topologically */
    uint32_t astra;     /* Chakra: 1 reads the trace as ASTRA-sim c459ab6 does
                           (data_deps only, collectives in their own slot,
                           network prices; workloads/importers/chakra.md) */
    int no_fuse;        /* HLO: fuse=none, price every instruction alone
                           (default fuse=xla: elementwise chains fused) */
    int no_queues;      /* HLO: queues=none, a scheduled module's
                           operation_queue_id left unread (default queues=xla) */
    struct sb_hlo_trips trips; /* HLO: trip_count=N, trip_count.NAME=N */
};

void sb_import_defaults(struct sb_import_opts *o);
/* "k=v,..."; unknown keys and bad values refused with a message. */
int sb_import_parse(struct sb_import_opts *o, const char *spec, struct sb_err *e);

/* Loads a workload by its extension: format v1 (.csv, docs/workload-format.md)
 * or another tool's format through its importer.  On error returns NULL and
 * writes "file:line:col: message" (or the format's own position) to e. */
struct sb_graph *sb_graph_load(const char *path, struct sb_err *e);
/* The same with the importers' options (NULL: defaults). */
struct sb_graph *sb_graph_load_with(const char *path, const struct sb_import_opts *opts,
                                    struct sb_err *e);
/* Whether the file name has an extension sb_graph_load knows. */
int sb_graph_is_workload(const char *path);
/* Writes g as format v1 (atomically); metadata lines first (csv_write.c). */
int sb_graph_write(const struct sb_graph *g, const char *path, struct sb_err *e);

/* Importers, one per format (docs in workloads/importers/): each parses its
 * input and builds the graph through the builder (core/builder.h), so every
 * graph passes the same checks.  Each takes a buffer, so fuzzers can reach
 * them without files; path names the input in messages. */
struct sb_graph *sb_csv_load_mem(const char *path, const char *buf, size_t n,
                                 struct sb_err *e);
/* The same, with toposort: rows whose inputs are later rows are put in
 * topological order (smallest id first; a cycle is refused), and nodes are
 * renumbered (convert --toposort, --import toposort=1). */
struct sb_graph *sb_csv_load_mem_sorted(const char *path, const char *buf, size_t n,
                                        int toposort, struct sb_err *e);
struct sb_graph *sb_hlo_load_mem(const char *path, const char *buf, size_t n,
                                 struct sb_err *e);
struct sb_graph *sb_chakra_load_mem(const char *path, const uint8_t *buf, size_t n,
                                    const struct sb_import_opts *o, struct sb_err *e);
/* Several ranks as one job: pattern names the rank files with one %d
 * ("dir/trace.%d.et"), read from rank 0 upward while they exist; rank r on
 * device r, each process group's k-th collectives joined across its ranks
 * (workloads/importers/chakra.md, "Several ranks"). */
struct sb_graph *sb_chakra_load_ranks(const char *pattern, const struct sb_import_opts *o,
                                      struct sb_err *e);
/* The same from the n rank files' bytes (buf[r], len[r]); pattern names them
 * in messages (and its folder holds the group file). */
struct sb_graph *sb_chakra_load_ranks_mem(const char *pattern, uint32_t n,
                                          const uint8_t *const *buf, const size_t *len,
                                          const struct sb_import_opts *o, struct sb_err *e);
/* Whether a file name (no folder) is a Chakra rank file <stem>.<rank>.et: 1
 * with the stem's length and the rank, 0 when not, -1 when the rank is
 * written with a leading zero ("t.01.et"), which names no rank (chakra.md). */
int sb_chakra_rank_name(const char *name, size_t *stem_len, uint32_t *rank);
struct sb_graph *sb_astra_text_load_mem(const char *path, const char *buf, size_t n,
                                        const struct sb_import_opts *o, struct sb_err *e);

#endif
