/* Options of the importers of other tools' formats (`--import K=V,...`):
 * what a trace does not say and a user has to (workloads/importers/). */
#ifndef SB_IMPORT_H
#define SB_IMPORT_H

#include "core/core.h"

struct sb_import_opts {
    double peak_tflops; /* Chakra: roofline for compute nodes without a duration */
    double mem_gbps;    /* Chakra: the roofline's memory bandwidth */
    double clock_ghz;   /* ASTRA-sim text: compute times are cycles */
    uint32_t npus;      /* ASTRA-sim text: NPUs of the whole system */
};

void sb_import_defaults(struct sb_import_opts *o);
/* "k=v,..."; unknown keys and bad values refused with a message. */
int sb_import_parse(struct sb_import_opts *o, const char *spec, struct sb_err *e);

/* Importers: each turns its format into workload CSV v1 text (docs in
 * workloads/importers/) and loads that, so every graph passes the same checks.
 * Both take a buffer, so fuzzers can reach them without files. */
struct sb_graph *sb_chakra_load_mem(const char *path, const uint8_t *buf, size_t n,
                                    const struct sb_import_opts *o, struct sb_err *e);
struct sb_graph *sb_astra_text_load_mem(const char *path, const char *buf, size_t n,
                                        const struct sb_import_opts *o, struct sb_err *e);

#endif
