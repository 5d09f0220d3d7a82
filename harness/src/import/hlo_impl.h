/* HLO importer internals shared by hlo.c (parser, graph mapping),
 * hlo_flat.c (control flow expansion) and hlo_cost.c (HloCostAnalysis). */
#ifndef SB_HLO_IMPL_H
#define SB_HLO_IMPL_H

#include "hlo.h"

/* Element types, for sizes and for the peak a dot runs at. */
enum hlo_dtype {
    HLO_DT_OTHER = 0, /* pred, integers of other widths, tokens */
    HLO_DT_S8, HLO_DT_U8, HLO_DT_S32, HLO_DT_F8, HLO_DT_F16, HLO_DT_BF16,
    HLO_DT_F32, HLO_DT_F64, HLO_DT_C64, HLO_DT_C128,
};

/* A shape reduced to what the mapping and the cost analysis need.  bytes
 * follows the size function of XLA's scheduler tests: a tuple counts the sum
 * of its leaves; all_bytes adds every nested tuple's own top-level buffer,
 * i.e. the bytes of every buffer (ShapeIndex) an instruction defining the
 * whole shape owns. */
#define HLO_MAX_RANK 12
/* The pointer_size the GPU compiler passes to ShapeUtil::ByteSizeOf: a tuple's
 * index table holds one pointer per element, an opaque value is a pointer. */
#define HLO_POINTER_BYTES 8
/* io_bytes beyond this is refused: XLA holds it in an int64, and the memory
 * limit it is subtracted from is far smaller */
#define HLO_MAX_IO_BYTES ((uint64_t)1 << 62)
/* A shape holding more bytes than this (an array, or a tuple's buffers
 * summed) is refused when parsed, so sums of a few shapes' sizes cannot
 * wrap; the builder refuses any one buffer past 2^50 anyway. */
#define HLO_MAX_SHAPE_BYTES ((uint64_t)1 << 62)
struct shape {
    uint64_t bytes;     /* tuple_sum size */
    uint64_t all_bytes; /* sum over all sub-shapes of their tuple_sum size */
    uint64_t elems;     /* elements of an array shape, 0 for tuples */
    uint64_t leaf_elems; /* elements of every leaf (= elems for an array) */
    int tuple;
    uint32_t n_top;          /* top-level elements of a tuple */
    uint64_t top_all[2];     /* all_bytes of elements 0 and 1 */
    uint64_t top_bytes[2];   /* bytes of elements 0 and 1 */
    /* XLA's GetSizeOfShape(shape, pointer_size) (gpu_hlo_schedule.cc), what
     * GetSchedulerMemoryLimit counts for the module's inputs and outputs:
     * ShapeUtil::ByteSizeOf, i.e. an array's elements times its type's byte
     * width (packed to n bits when its layout says E(n)), plus an s32 per
     * dimension when a dimension is dynamic; a tuple's own index table,
     * HLO_POINTER_BYTES per element, not its leaves.  Both saturate at
     * UINT64_MAX. */
    uint64_t size_bytes;
    uint64_t sub_size_bytes; /* size_bytes summed over the shape and every
                                nested subshape (ShapeUtil::ForEachSubshape) */
    uint8_t dtype;           /* enum hlo_dtype of an array, else of leaf 0 */
    uint8_t rank;            /* of an array (of leaf 0 for a tuple); dims beyond
                                HLO_MAX_RANK are folded into the last */
    uint64_t dims[HLO_MAX_RANK];
};

struct instr {
    char *name;
    char *opcode;
    uint32_t line;
    int root;
    struct shape sh;
    uint32_t n_ops;
    char **ops;
    uint32_t *op_line;
    uint32_t n_ctrl;
    char **ctrl;
    uint32_t n_calls;
    char **calls;        /* called computations (calls=, body=, ...) */
    int body_k, cond_k;  /* while: body= and condition= in calls, -1 none */
    char *apply;         /* to_apply= (a reducer, or what a call runs) */
    char *fusion_kind;   /* kind= of a fusion */
    char *frontend;      /* frontend_attributes={...} raw */
    char *op_name;       /* metadata op_name */
    char *target;        /* custom_call_target= */
    char *backend;       /* backend_config= raw */
    char *dnums;         /* dot: lhs_contracting_dims= raw ("{1}") */
    char *dim_labels;    /* convolution: dim_labels= */
    char *window;        /* window= raw */
    char *direction;     /* compare: direction= */
    char *precision;     /* operand_precision= raw */
    uint32_t fgc, bgc;   /* feature_group_count, batch_group_count (1 default) */
    int host_transfer;   /* is_host_transfer=true */
    uint32_t group;      /* size of the first replica group, 0: {} or none */
    int64_t channel;     /* channel_id=, -1 none */
    int global_ids;      /* use_global_device_ids=true */
    int64_t index;       /* index= of a get-tuple-element, N of parameter(N),
                            -1 otherwise */
    int has_lit;         /* a scalar constant's value is in lit */
    double lit;
    int borrowed;        /* a copy made by the expansion: owns only name, ops,
                            op_line, ctrl and scope (hlo_flat.c) */
    char *scope;         /* expansion: the loop iterations it is in, as
                            core/scope.h paths ("while.1#17"); NULL: ENTRY */
};

struct comp {
    char *name;
    uint32_t line;
    int entry;
    uint32_t n, cap;
    struct instr *in;
    /* where the root's shape is in the text (byte offset, line), read again
     * to find the subshapes input_output_alias names; the root is the first
     * ROOT, else the last instruction (root_marked: a ROOT was seen) */
    size_t root_sh_at;
    uint32_t root_sh_line;
    int root_marked;
};

/* One entry of the header's input_output_alias (XLA's
 * HloInputOutputAliasConfig): output index {out} of the ENTRY's result is
 * parameter `param`'s subshape {param_index}.  Indices are ShapeIndex paths,
 * kept in the module's alias_idx pool. */
struct hlo_alias {
    uint32_t line;               /* of the header */
    uint32_t param;              /* parameter number */
    uint32_t out_at, n_out;      /* output index: alias_idx[out_at ..] */
    uint32_t param_at, n_param;  /* parameter index: alias_idx[param_at ..] */
    int must_alias;              /* must-alias; may-alias (the default) 0 */
};

struct sb_hlo_module {
    char *path;
    char *name;
    uint32_t n, cap;
    struct comp *c;
    int entry;
    int scheduled;       /* is_scheduled=true in the header */
    uint32_t replica_count, num_partitions; /* header; 0: not given (XLA: 1) */
    uint32_t ctab_cap;
    uint32_t *ctab;      /* computation index + 1 by name (hlo_find_comp) */
    uint32_t n_donated;
    uint8_t *donated;    /* [n_donated] entry parameter N is aliased to an
                            output (input_output_alias) */
    uint32_t n_alias, n_alias_idx;
    struct hlo_alias *alias;  /* [n_alias] input_output_alias, in text order */
    uint32_t *alias_idx;      /* [n_alias_idx] their indices' elements */
    /* XLA's total_io_size (GetSchedulerMemoryLimit): sub_size_bytes of every
     * ENTRY parameter and of the result, less size_bytes of each aliased
     * result subshape; at most HLO_MAX_IO_BYTES */
    uint64_t io_bytes;
    /* the ENTRY with its while loops and calls expanded (hlo_flat.c), or
     * NULL before sb_hlo_expand */
    struct comp *flat;
};

/* hlo_module.c */
uint32_t hlo_hash_name(const char *s); /* FNV-1a */
void hlo_index_comps(struct sb_hlo_module *m);
int hlo_find_comp(const struct sb_hlo_module *m, const char *name);
/* Spaces, quotes and the backslashes that escape them (older XLA printed
 * backend_config as an escaped string), between the tokens of a config. */
const char *hlo_config_gap(const char *p);
void hlo_instr_free(struct instr *in);
uint64_t hlo_dtype_bytes(uint8_t dt, uint64_t elems);

/* hlo_module.c: what an async-start wraps.  The collective type of an
 * opcode at the root of its computation (SB_COLL_NONE: not a collective);
 * that root (NULL: it names no computation); the computation it runs when it
 * wraps work that is not a collective (XLA GPU's StreamAttributeAsyncWrapper
 * puts an instruction of another operation queue there), else -1. */
enum sb_coll hlo_wrapped_coll(const char *op);
const struct instr *hlo_async_root(const struct sb_hlo_module *m, const struct instr *in);
int hlo_async_compute(const struct sb_hlo_module *m, const struct instr *in);

/* hlo_flat.c: m->flat from the entry, with the user's trip counts t (NULL:
 * none); 0, or -1 with "file:line: msg". */
int hlo_expand(struct sb_hlo_module *m, const struct sb_hlo_trips *t, struct sb_err *e);
void hlo_flat_free(struct comp *c);

/* hlo_cost.c: HloCostAnalysis of instruction i of computation c (whose
 * operands are looked up in c). */
struct hlo_cost {
    double flops, transcendentals, bytes;
    uint8_t dtype;       /* enum sb_dtype of the unit it runs on */
    uint8_t op_class;    /* enum hlo_class */
};
enum hlo_class {
    HLO_CLASS_OTHER = 0, HLO_CLASS_DOT, HLO_CLASS_CONV, HLO_CLASS_CUSTOM,
    HLO_CLASS_ELEMENTWISE, HLO_CLASS_REDUCE, HLO_CLASS_DATA, HLO_CLASS_COLL,
    HLO_CLASS_FUSION, HLO_CLASS_COUNT
};
const char *hlo_class_name(enum hlo_class k);
/* The class of a graph node's op (custom-calls are "custom-call:TARGET"). */
enum hlo_class hlo_class_of_op(const char *op);
struct hlo_costs;
struct hlo_costs *hlo_costs_new(const struct sb_hlo_module *m, const struct comp *c);
void hlo_costs_free(struct hlo_costs *hc);
void hlo_cost_of(struct hlo_costs *hc, uint32_t i, struct hlo_cost *out);
/* Unknown custom-call targets seen, for the report: count and names. */
uint32_t hlo_costs_n_unknown(const struct hlo_costs *hc);
const char *hlo_costs_unknown(const struct hlo_costs *hc, uint32_t k, uint32_t *count);

/* hlo_sched.c: the scheduling annotation and hints of an instruction into
 * n's sched_* fields; -1 with why ("'name': problem") when malformed. */
struct sb_node_in;
int hlo_sched_read(const struct instr *in, struct sb_node_in *n, char *why, size_t n_why);
/* What each computation holds, worked out once (hlo_sched_holds). */
struct hlo_holds {
    uint32_t n;                        /* computations */
    uint8_t *state;                    /* [n] unknown, being walked, known */
    uint32_t (*h)[SB_COLL_COUNT];      /* [n] by collective type */
};
void hlo_holds_init(struct hlo_holds *h, const struct sb_hlo_module *m);
void hlo_holds_free(struct hlo_holds *h);
/* n->holds of an instruction calling computations (while, call, ...): the
 * collectives its callees have in flight at most, by type. */
void hlo_sched_holds(const struct sb_hlo_module *m, struct hlo_holds *memo,
                     const struct instr *in, struct sb_node_in *n);

/* hlo_sched.c: the stream XLA GPU runs an instruction of a scheduled module
 * on (GpuBackendConfig's operation_queue_id) and the queues it waits for
 * first (wait_on_operation_queues, which XLA versions before 183fa00 print);
 * 0 and none when its backend_config names neither.  -1 with why ("'name':
 * problem") when malformed. */
#define HLO_MAX_QUEUE 1023u /* the graph's streams are 0..1023 */
struct hlo_queues {
    uint32_t queue;
    uint32_t n_waits;
    uint32_t wait[HLO_MAX_QUEUE + 1]; /* distinct */
};
int hlo_queue_read(const struct instr *in, struct hlo_queues *q, char *why, size_t n_why);

#endif
