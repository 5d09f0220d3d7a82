/* The one way to make a graph (XLA's HloComputation::Builder, ggml's context):
 * every importer, the CSV v1 loader included, adds nodes and their inputs
 * here, and sb_builder_finish() runs the checks every graph must pass and
 * lays out the CSR arrays.  Nothing goes through another format's text.
 *
 * Nodes are added in the order that becomes the original schedule, and a
 * node's inputs right after it, each an earlier node (so the node order is
 * topological by construction; a later one is refused, with the cycle when
 * there is one).  Errors name the node by the importer's own coordinates:
 * the line of a text format, or the node id or byte offset of a binary one. */
#ifndef SB_BUILDER_H
#define SB_BUILDER_H

#include "core.h"

/* What sb_node_in.loc counts, for messages. */
enum sb_loc {
    SB_LOC_LINE = 0, /* "file:LINE[:COL]: ..." */
    SB_LOC_NODE_ID,  /* "file: node id N: ..." (a trace's own node ids) */
    SB_LOC_BYTE,     /* "file: byte N: ..." */
};

/* The parts of a node the builder's checks can blame.  A text format with
 * columns maps each to its 1-based column (sb_builder_columns) so messages
 * point at the field. */
enum sb_bfield {
    SB_BF_NONE = 0,
    SB_BF_NAME,
    SB_BF_KIND,
    SB_BF_INPUTS,
    SB_BF_COLL,
    SB_BF_OUT_BYTES,
    SB_BF_FLAGS,
    SB_BF_AFTER, /* order-only edges (an `after` column) */
    SB_BF_SCOPE, /* the computation instance (a `scope` column) */
    SB_BF_JOIN,  /* the collective a start joins (a `join` column) */
    SB_BF_COUNT
};

/* One node as an importer knows it.  Start from SB_NODE_IN_INIT. */
struct sb_node_in {
    const char *name;     /* unique, not empty, any length */
    enum sb_kind kind;
    enum sb_coll coll;    /* starts (required) and dones (optional: the start's) */
    const char *op;       /* opcode, NULL or "" for none */
    double cost_us;       /* finite, >= 0 */
    double comm_us;       /* explicit collective time, < 0 for none */
    uint64_t out_bytes;   /* bytes of the buffer the node allocates, <= 2^50 */
    uint64_t comm_bytes;  /* payload of a collective */
    uint32_t group_size;  /* ranks of a collective, 0 unknown */
    int32_t device;       /* pre-assigned device, -1 none */
    uint32_t flags;       /* enum sb_flag */
    uint32_t units;       /* r(v), >= 1 */
    uint32_t stream;      /* its stream on its device, < SB_MAX_STREAMS */
    uint64_t loc;         /* where the node is in the input (enum sb_loc) */
    /* appended: work for the roofline cost model, with dtype != SB_DTYPE_NONE */
    double flops;          /* >= 0 */
    double bytes_accessed; /* >= 0 */
    uint8_t dtype;         /* enum sb_dtype; SB_DTYPE_NONE: no figures */
    /* appended: scheduling annotations, read only when sched is 1 (so that
     * importers that know nothing of them need not set the defaults) */
    int sched;
    int32_t sched_group;    /* >= 0, or -1 none */
    int32_t sched_iter;     /* SB_NO_ITER none */
    uint8_t sched_hint;     /* enum sb_hint bits */
    int32_t sched_priority; /* 0 default */
    /* appended: collectives in flight inside what the node calls, by type */
    uint32_t holds[SB_COLL_COUNT];
    /* appended: the computation instance the node is in (core/scope.h), a
     * path of LOOP#ITERATION segments; NULL or "" for the top */
    const char *scope;
};
#define SB_NODE_IN_INIT                                                        \
    {.kind = SB_KIND_COMPUTE, .comm_us = -1, .device = -1, .units = 1}

/* Ceilings every graph keeps, so the memory model's running totals and the
 * simulator's sums cannot overflow. */
#define SB_MAX_BYTES (1ull << 50)       /* one buffer: 1 PiB */
#define SB_MAX_TOTAL_BYTES (1ull << 62) /* all buffers together */
#define SB_MAX_COST_US 1e12             /* one node: 11.6 days */
#define SB_MAX_STREAMS 1024             /* streams of one device */

struct sb_builder;

/* path names the input in messages and becomes the graph's path.  Errors
 * are written to e, which must outlive the builder. */
struct sb_builder *sb_builder_new(const char *path, enum sb_loc loc, struct sb_err *e);
/* Sizes the arrays for about this many nodes, edges and bytes of names
 * (NULs included), a hint: a text format's size bounds its names, and an
 * arena sized once is never copied as it grows (its pages past the last name
 * are never touched). */
void sb_builder_reserve(struct sb_builder *b, uint32_t n_nodes, uint64_t n_edges,
                        size_t name_bytes);
/* From now on the arrays every node writes are faulted in ahead of the
 * nodes, 2^18 nodes at a time, in a call per array rather than a fault per
 * page (sb_prefault): at 10^6 nodes they are 100 MB, and their faults were a
 * third of a cold load. */
void sb_builder_prefault(struct sb_builder *b);
/* col[f]: the 1-based column of field f in the input, 0 when it has none. */
void sb_builder_columns(struct sb_builder *b, const uint32_t col[SB_BF_COUNT]);
/* "# key=value" metadata, in order; "name" names the workload. */
void sb_builder_meta(struct sb_builder *b, const char *key, const char *val);
/* A cost_us.<device> column (docs/machines.md); returns its index, or -1
 * with a message when it repeats or there are more than SB_MAX_DEVICES. */
int sb_builder_dev_cost_column(struct sb_builder *b, const char *device, uint64_t loc,
                               uint32_t col);
uint32_t sb_builder_n_dev_cost(const struct sb_builder *b);
/* A res.<name> column (docs/machines.md, "Resources"); returns its index, or
 * -1 with a message when it repeats, is res.units, or there are more than
 * SB_MAX_RES.  sb_builder_res sets the last node's use (default SB_RES_ALL,
 * the device's whole limit). */
int sb_builder_res_column(struct sb_builder *b, const char *res, uint64_t loc, uint32_t col);
uint32_t sb_builder_n_res(const struct sb_builder *b);
const char *sb_builder_res_name(const struct sb_builder *b, uint32_t k);
void sb_builder_res(struct sb_builder *b, uint32_t k, uint32_t use);
const char *sb_builder_dev_cost_name(const struct sb_builder *b, uint32_t k);

/* Adds a node; returns its id (dense, in the order of adding), or SB_NONE
 * once anything failed. */
uint32_t sb_builder_node(struct sb_builder *b, const struct sb_node_in *n);
/* A hint, no effect on the result: the node named `name` comes next.  At 10^6
 * nodes the name table's slot is a cache miss; an importer that calls this as
 * soon as it has the name, and converts the row's other fields before
 * sb_builder_node, hides most of it. */
void sb_builder_prefetch_name(const struct sb_builder *b, const char *name);
/* The last node's next input (a done's first input is its start). */
int sb_builder_input(struct sb_builder *b, uint32_t src);
/* The last node's next order-only edge (`after`, docs/workload-format.md):
 * it waits for src, an earlier node, to finish; nothing is read or copied.
 * A done's first edge (its start) and an alias's (the buffer it views) must
 * be inputs, and an input node takes neither. */
int sb_builder_after(struct sb_builder *b, uint32_t src);
/* The last node, a start pre-assigned to a device, joins the collective of
 * start `with`, an earlier start of the same type whose members are all on
 * other devices: one collective the devices meet at (graph.h, `join`). */
int sb_builder_join(struct sb_builder *b, uint32_t with);
/* t(v, device k) of the last node, for a cost_us.<device> column; < 0: empty. */
void sb_builder_dev_cost(struct sb_builder *b, uint32_t k, double us);
uint32_t sb_builder_n_nodes(const struct sb_builder *b);
const char *sb_builder_name(const struct sb_builder *b, uint32_t id);
uint64_t sb_builder_loc(const struct sb_builder *b, uint32_t id); /* node id's loc */

/* An importer's own error, in the builder's format: "file:LOC[:COL]: msg".
 * Returns -1; the first error wins. */
int sb_builder_fail(struct sb_builder *b, uint64_t loc, uint32_t col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int sb_builder_failed(const struct sb_builder *b);

/* Runs the graph-wide checks (every start has its done, the buffers' total)
 * and returns the graph; NULL with the message in e.  Frees b either way. */
struct sb_graph *sb_builder_finish(struct sb_builder *b);
/* Abandons b (after an error of the importer's own). */
void sb_builder_free(struct sb_builder *b);

#endif
