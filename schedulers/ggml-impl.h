/* ggml: the backend scheduler's assignment and split passes
 * (ggml_backend_sched_split_graph, ggml-org/ggml src/ggml-backend.cpp) over a
 * description of the graph and the backends' answers, so that the same code
 * runs ggml's own cases (harness/src/cmd/conform_ggml.c) and our graphs
 * (schedulers/ggml.c).  docs/ggml.md. */
#ifndef SB_GGML_IMPL_H
#define SB_GGML_IMPL_H

#include <stdint.h>

#define GGML_NONE (-1)

enum ggml_usage { GGML_USAGE_NONE, GGML_USAGE_WEIGHTS, GGML_USAGE_ANY, GGML_USAGE_COMPUTE };

/* One tensor: leafs first (graph->leafs), then nodes (graph->nodes). */
struct ggml_t {
    int view;          /* the op is VIEW, RESHAPE, PERMUTE or TRANSPOSE */
    int exempt;        /* ROPE or FLASH_ATTN_EXT: never follows its weights */
    int input;         /* GGML_TENSOR_FLAG_INPUT */
    int32_t view_src;  /* tensor index, or GGML_NONE */
    int32_t buft;      /* its own buffer's type, or GGML_NONE */
    uint8_t usage;     /* enum ggml_usage of its own buffer */
    int32_t pin;       /* ggml_backend_sched_set_tensor_backend, or GGML_NONE */
    const uint8_t *supports; /* [n_backends] supports_op */
    const uint8_t *offload;  /* [n_backends] offload_op */
    uint32_t n_src;
    const int32_t *src; /* tensor indices, GGML_NONE for holes */
};

struct ggml_problem {
    uint32_t n_backends, n_bufts;
    const int32_t *backend_buft; /* [n_backends] the scheduler's buffer type per backend */
    const uint8_t *reads;        /* [n_backends * n_bufts] supports_buft */
    int op_offload;
    uint32_t cap0;               /* GGML_SCHED_MAX_SPLIT_INPUTS */
    uint32_t n_leafs, n_nodes;
    const struct ggml_t *t;      /* [n_leafs + n_nodes] */
};

struct ggml_split {
    int32_t backend;
    uint32_t start, end;
    uint32_t n_inputs, cap;
    uint32_t *inputs; /* tensor indices, in insertion order */
};

struct ggml_result {
    int32_t *backend; /* [n_leafs + n_nodes] */
    uint32_t n_splits;
    struct ggml_split *splits;
    uint32_t n_grow;  /* capacity increases (ggml's warn lines) */
    uint32_t grow_from[64], grow_to[64];
};

/* The same problem as arrays, the layout the passes read (at a million
 * tensors they stream through them several times: one 64-byte ggml_t each is
 * most of their time).  sb_ggml_split_graph converts a ggml_problem to it;
 * schedulers/ggml.c builds it directly.  [n = n_leafs + n_nodes] unless noted. */
enum { GGML_F_VIEW = 1, GGML_F_EXEMPT = 2, GGML_F_INPUT = 4 };

struct ggml_arrays {
    uint32_t n_backends, n_bufts;
    const int32_t *backend_buft; /* [n_backends] */
    const uint8_t *reads;        /* [n_backends * n_bufts] */
    int op_offload;
    uint32_t cap0;
    uint32_t n_leafs, n_nodes;
    const uint8_t *flags;     /* GGML_F_* bits: ggml_t's view, exempt, input */
    const int32_t *view_src;  /* tensor index, or GGML_NONE */
    const int32_t *buft;      /* its own buffer's type, or GGML_NONE */
    const uint8_t *usage;     /* enum ggml_usage */
    const int32_t *pin;       /* or GGML_NONE */
    const uint8_t *supports;  /* [n * n_backends], tensor-major */
    const uint8_t *offload;   /* [n * n_backends], tensor-major */
    const uint32_t *src_off;  /* [n + 1], CSR of the sources by tensor */
    const int32_t *src;       /* [src_off[n]] tensor indices, GGML_NONE for holes */
};

/* Returns 0, or -1 when out of memory. */
int sb_ggml_split_graph(const struct ggml_problem *p, struct ggml_result *r);
int sb_ggml_split_arrays(const struct ggml_arrays *p, struct ggml_result *r);
void sb_ggml_result_free(struct ggml_result *r);

#endif
