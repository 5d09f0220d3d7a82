/* HLO text importer (workloads/importers/hlo.md).
 *
 * sb_hlo_load() is the importer behind `schedbench run -w module.hlo`: it turns
 * the ENTRY computation of an XLA HLO text module into a format-v1 graph.  The
 * lower-level calls below keep the parsed module next to the graph, which the
 * conformance harness (conform.c) needs to apply XLA's test fixture: which HLO
 * instruction each node came from, shapes for XLA's test latency estimator,
 * frontend attributes. */
#ifndef SB_HLO_H
#define SB_HLO_H

#include "core/core.h"

struct sb_hlo_module; /* parsed text: computations and instructions */

struct sb_hlo_module *sb_hlo_parse(const char *path, const char *buf, size_t n,
                                   struct sb_err *e);
void sb_hlo_free(struct sb_hlo_module *m);

/* Trip counts the user gives (`--import trip_count=N`, `trip_count.NAME=N`):
 * for a while loop XLA recorded no known_trip_count for and whose counter
 * the importer does not recognise (all), or for the loop of that text name,
 * recorded count or not (name). */
#define SB_HLO_MAX_TRIPS 16       /* named loops */
#define SB_HLO_MAX_TRIP_NAME 256  /* bytes of a name, its NUL included */
#define SB_HLO_MAX_TRIP 1000000u  /* iterations of one loop, as the expansion's cap */
struct sb_hlo_trips {
    int has_all;                  /* trip_count= was given */
    uint32_t all;
    uint32_t n;
    uint32_t count[SB_HLO_MAX_TRIPS];
    char name[SB_HLO_MAX_TRIPS][SB_HLO_MAX_TRIP_NAME];
};

/* Options of the graph builder. */
struct sb_hlo_opts {
    const char *computation; /* text name; NULL = ENTRY */
    int keep_sync;           /* 1: leave synchronous collectives unsplit (XLA's
                                fixture without AsyncCollectiveCreator) */
    int step;                /* 1: the ENTRY as a training step runs (what `run`
                                imports): control flow expanded (sb_hlo_expand
                                first), FLOPs and bytes from the shapes, every
                                synchronous collective split, XLA's buffer rules
                                (workloads/importers/hlo.md, "Training steps") */
    int no_fuse;             /* step builds: 1 prices every instruction alone;
                                0 fuses elementwise chains as XLA would (issue 29)
                                in modules that hold no fusion yet */
    int no_queues;           /* 1: leave operation_queue_id and
                                wait_on_operation_queues of a scheduled module
                                unread (`--import queues=none`): one stream */
};

/* Expands the ENTRY's while loops and calls for a step build; 0, or -1 with
 * "file:line: message" (a loop without a trip count, recursion). */
int sb_hlo_expand(struct sb_hlo_module *m, struct sb_err *e);
/* The same with the user's trip counts (NULL: none); a named loop the module
 * does not have is refused. */
int sb_hlo_expand_with(struct sb_hlo_module *m, const struct sb_hlo_trips *t,
                       struct sb_err *e);
/* HloCostAnalysis figures of the ENTRY (the sum over its instructions, as a
 * visit from its root adds them) or of its instruction `instr`: out[0] FLOPs,
 * out[1] transcendentals, out[2] bytes accessed.  -1 when instr is absent. */
int sb_hlo_cost_total(const struct sb_hlo_module *m, const char *instr, double out[3]);
/* validate's report of a step graph: FLOPs and bytes by op class, collectives
 * by type. */
void sb_hlo_print_summary(const struct sb_graph *g, FILE *f);

/* What a node of the built graph is in HLO terms. */
struct sb_hlo_node {
    uint32_t instr;     /* index in the computation's instruction list */
    uint8_t half;       /* 0 the instruction itself, 1 start / 2 done of a split
                           synchronous collective */
};

struct sb_hlo_graph {
    struct sb_graph *g;
    struct sb_hlo_node *node; /* [g->v.n_nodes] */
};

/* The importer behind `run -w module.hlo`: the ENTRY computation's graph
 * from the module's text (path names it in messages). */
struct sb_graph *sb_hlo_load_mem(const char *path, const char *buf, size_t n,
                                 struct sb_err *e);

/* The same, with fusion off (no_fuse = 1: `--import fuse=none`). */
struct sb_graph *sb_hlo_load_mem_with(const char *path, const char *buf, size_t n,
                                      int no_fuse, struct sb_err *e);
/* The same with every step-build option: o's step is forced to 1 and its
 * computation to the ENTRY; t the user's trip counts (NULL: none). */
struct sb_graph *sb_hlo_load_mem_opts(const char *path, const char *buf, size_t n,
                                      const struct sb_hlo_opts *o,
                                      const struct sb_hlo_trips *t, struct sb_err *e);

/* Builds a graph from one computation; 0 or -1 with "file:line: message". */
int sb_hlo_build(const struct sb_hlo_module *m, const struct sb_hlo_opts *o,
                 struct sb_hlo_graph *out, struct sb_err *e);
void sb_hlo_graph_free(struct sb_hlo_graph *hg);

/* Read access for the conformance harness. */
struct sb_hlo_instr_info {
    const char *name;
    const char *opcode;
    uint32_t line;
    int is_tuple;          /* result shape is a tuple */
    uint64_t elems;        /* ShapeUtil::ElementsIn of an array result, else 0 */
    uint64_t op0_elems;    /* the same for operand 0, 0 when none */
    const char *fusion_kind; /* "kLoop", ... or NULL */
    const char *frontend;  /* raw frontend_attributes text or NULL */
    /* appended for conform's replay of XLA's memory tracker in callees */
    uint64_t bytes;        /* tuple_sum size of the result */
    uint32_t n_ops;
    const char *const *ops;   /* [n_ops] operand names */
    uint32_t n_calls;
    const char *const *calls; /* [n_calls] calls=, body=, condition=, branches */
    const char *apply;        /* to_apply= or NULL */
};
/* XLA's total_io_size of the module (GetSchedulerMemoryLimit in
 * gpu_hlo_schedule.cc), what step builds record as `# io_bytes=`: every
 * subshape of every ENTRY parameter and of the result, tuples' index tables
 * included, less each result subshape input_output_alias names; at most 2^62. */
uint64_t sb_hlo_io_bytes(const struct sb_hlo_module *m);
/* Computation index by text name (NULL = ENTRY); -1 when absent. */
int sb_hlo_find_computation(const struct sb_hlo_module *m, const char *name);
uint32_t sb_hlo_n_computations(const struct sb_hlo_module *m);
const char *sb_hlo_computation_name(const struct sb_hlo_module *m, uint32_t c);
void sb_hlo_instr(const struct sb_hlo_module *m, uint32_t comp, uint32_t i,
                  struct sb_hlo_instr_info *out);
uint32_t sb_hlo_n_instrs(const struct sb_hlo_module *m, uint32_t comp);
/* Whether computation c holds an instruction of the given opcode; whether any
 * instruction of the module has a frontend attribute with the given key. */
int sb_hlo_uses(const struct sb_hlo_module *m, uint32_t c, const char *opcode);
int sb_hlo_has_attr(const struct sb_hlo_module *m, const char *key);
/* Number of computations other than the ENTRY and fusion bodies. */
uint32_t sb_hlo_n_called(const struct sb_hlo_module *m);
/* Puts computation c's instructions in the order instr_order[] (a
 * permutation of 0..n-1 that keeps operands before users): the schedule a
 * run wrote back, for conform's second pipeline run.  -1 if not a
 * permutation. */
int sb_hlo_reorder(struct sb_hlo_module *m, uint32_t c, const uint32_t *instr_order);

#endif
