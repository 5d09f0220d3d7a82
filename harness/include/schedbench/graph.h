/* schedbench: the graph a scheduler sees.
 *
 * A graph is struct-of-arrays with CSR edge lists and uint32_t indices, allocated
 * once per graph.  Node ids are dense, 0..n_nodes-1, and id order is a topological
 * order: it is the original schedule.  Plugins receive a read-only sb_graph_view;
 * the host owns the storage (sb_graph, harness/src). */
#ifndef SCHEDBENCH_GRAPH_H
#define SCHEDBENCH_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "schedbench/machine.h"

#define SB_NONE UINT32_MAX /* "no node": a start's done before it is known, etc. */

enum sb_kind {
    SB_KIND_COMPUTE = 0, /* occupies the compute stream for its cost */
    SB_KIND_NOP = 1,     /* views, get-tuple-element, bitcast: zero cost */
    SB_KIND_INPUT = 2,   /* graph input: parameter, saved activation */
    SB_KIND_START = 3,   /* a collective or async op is issued */
    SB_KIND_DONE = 4,    /* its completion: blocks the stream until it finished */
    SB_KIND_COUNT
};

enum sb_coll {
    SB_COLL_NONE = 0, /* not a start / done */
    SB_COLL_ALL_GATHER,
    SB_COLL_REDUCE_SCATTER,
    SB_COLL_ALL_REDUCE,
    SB_COLL_ALL_TO_ALL,
    SB_COLL_COLLECTIVE_PERMUTE,
    SB_COLL_SEND,
    SB_COLL_RECV,
    SB_COLL_SEND_HOST,
    SB_COLL_RECV_HOST,
    SB_COLL_COPY,
    /* appended in issue 39 (plugin ABI 2: the stride of `holds` moved) */
    SB_COLL_RAGGED_ALL_TO_ALL,    /* ragged_all_to_all */
    SB_COLL_COLLECTIVE_BROADCAST, /* collective_broadcast */
    SB_COLL_COUNT
};
/* SB_COLL_COUNT as plugin ABI 1 knew it: the stride of the `holds` an ABI 1
 * plugin is given (plugin.h). */
#define SB_COLL_COUNT_ABI1 11

/* Bits of sb_graph_view.flags. */
enum sb_flag {
    SB_FLAG_WEIGHT = 1u << 0, /* buffer never freed (a parameter shard) */
    SB_FLAG_OUTPUT = 1u << 1, /* buffer never freed (a program output) */
    SB_FLAG_ALIAS = 1u << 2,  /* owns no buffer: views its first input's buffer */
};

/* Bits of sb_graph_view.sched_hint: XLA's per-instruction scheduler hints
 * (frontend attributes scheduler_hint and keep_original_sequence_order_in_group;
 * docs/workload-format.md, `sched_hint`).  A graph carries them as written;
 * which nodes a policy honours them on is the policy's rule. */
enum sb_hint {
    SB_HINT_FORCE_DELAY = 1u << 0,       /* scheduler_hint="force_delay" */
    SB_HINT_FORCE_DELAY_ASYNC = 1u << 1, /* scheduler_hint="force_delay_async" */
    SB_HINT_FORCE_EARLY = 1u << 2,       /* scheduler_hint="force_early" */
    SB_HINT_KEEP_ORDER = 1u << 3,        /* keep_original_sequence_order_in_group */
};
#define SB_NO_ITER INT32_MIN /* sched_iter of a node without an iteration */

struct sb_graph_view;

/* Services the host lends a plugin through the view, so that policies measure
 * memory exactly as the harness will (docs/cost-model.md, "Memory model"). */
struct sb_host {
    uint32_t size; /* = sizeof(struct sb_host); fields are only appended */
    /* Memory of a complete single-device order: mem[i] = bytes live while
     * position i runs ([n] entries, n = g->n_nodes); returns the peak and its
     * first position. */
    uint64_t (*mem_profile)(const struct sb_graph_view *g, const uint32_t *order,
                            uint32_t n, uint64_t *mem, uint32_t *peak_pos);
};

/* Read-only view of a loaded graph.  Every array has n_nodes entries unless its
 * comment says otherwise.  Fields are only ever appended (see SB_PLUGIN_ABI). */
struct sb_graph_view {
    uint32_t n_nodes;
    uint32_t n_edges;
    const uint8_t *kind;        /* enum sb_kind */
    const uint8_t *coll;        /* enum sb_coll; set on both start and done */
    const uint32_t *flags;      /* enum sb_flag bits */
    const double *cost_us;      /* compute time from the file (0 when absent) */
    const uint64_t *out_bytes;  /* bytes of the buffer the node allocates */
    const uint64_t *comm_bytes; /* payload of the collective (starts only) */
    const uint32_t *group_size; /* ranks taking part (starts only; 0 = unknown) */
    const double *comm_us;      /* explicit collective duration, < 0 when absent */
    const int32_t *device;      /* pre-assigned device, -1 when unassigned */
    const uint32_t *pred_off;   /* [n_nodes + 1], CSR by consumer */
    const uint32_t *pred;       /* [n_edges], producers in file order */
    const uint32_t *succ_off;   /* [n_nodes + 1], CSR by producer */
    const uint32_t *succ;       /* [n_edges], consumers in increasing id */
    const uint32_t *partner;    /* start <-> done; SB_NONE for other kinds */
    const uint32_t *op;         /* index into op_names; 0 is the empty opcode */
    uint32_t n_ops;
    const char *const *op_names; /* [n_ops] */
    const char *names;          /* arena of NUL-terminated node names */
    const uint64_t *name_off;   /* offset of each node's name in names */
    /* Durations under the run's cost model: a compute node's cost, a start's
     * collective duration, 0 for the rest.  Units are microseconds for the
     * analytical model and XLA's abstract units for approx. */
    const double *dur_us;
    double edge_lat_us;         /* latency on every edge but start->done */
    const struct sb_host *host;
    /* Placement (appended; always set, a one-device machine without --machine): */
    const struct sb_machine_view *machine;
    /* t(v, a): duration of v on device a under the run's cost model,
     * [n_nodes * machine->n_devices], node-major (v * n_devices + a);
     * INFINITY where device a cannot run v.  dur_us[v] is t(v, 0). */
    const double *dev_dur_us;
    const uint32_t *units_used; /* r(v): units v holds on its device while it runs */
    /* [n_nodes * n_devices] or NULL: 1 when device a asks to run v even though
     * v's weights live on another device (ggml's offload_op). */
    const uint8_t *dev_offload;
    /* Streams (appended): a device runs one node per stream at a time and its
     * streams at once (docs/workload-format.md, `stream`).  [n_nodes], 0 for
     * a graph of one stream; n_streams = the largest stream + 1. */
    const uint32_t *stream;
    uint32_t n_streams;
    /* Scheduling annotations (appended; all four NULL when no node has one:
     * docs/workload-format.md, `sched_group`, `sched_hint`, `sched_priority`). */
    const int32_t *sched_group;    /* XLA _scheduling_group_id, -1 none */
    const int32_t *sched_iter;     /* its iteration ("G:I"), SB_NO_ITER none */
    const uint8_t *sched_hint;     /* enum sb_hint bits, 0 none */
    const int32_t *sched_priority; /* scheduler_delay_priority, 0 default */
    /* Collectives of each type (enum sb_coll) in flight at most inside the
     * computations a node calls (XLA's recursive resources of a while, call
     * or conditional): [n_nodes * SB_COLL_COUNT], node-major, or NULL when
     * no node calls any (docs/workload-format.md, `holds`). */
    const uint32_t *holds;
    /* Resources (appended; docs/machines.md, "Resources"): r_k(v), what node
     * v holds of the machine's resource k while it runs, [n_nodes *
     * machine->n_res] at v * n_res + k, SB_RES_ALL for the device's whole
     * limit (a `res.<name>` column left empty or absent); NULL when the
     * machine has no resources.  sb_res_need() resolves it on a device. */
    const uint32_t *res_use;
    /* Order-only edges (appended; docs/workload-format.md, `after`):
     * [n_edges] in pred order, 1 where pred[e] only orders its consumer
     * (it waits for pred[e] to finish; nothing is read, copied or kept
     * alive).  NULL when the graph has none: every edge carries data. */
    const uint8_t *pred_after;
    /* Computations (appended; docs/workload-format.md, `scope`): XLA
     * schedules each computation on its own, a loop being one instruction of
     * its caller.  An importer that expands loops gives each iteration its
     * own scope: scope[v] is node v's, 0 the top (ENTRY).  Scope s > 0 is
     * iteration scope_iter[s] of loop scope_loop[s] (0..n_loops-1), a loop
     * of scope scope_parent[s].  scope is NULL when every node is in the top
     * (n_scopes 1, n_loops 0). */
    const uint32_t *scope;        /* [n_nodes] */
    uint32_t n_scopes;
    uint32_t n_loops;
    const uint32_t *scope_parent; /* [n_scopes]; scope_parent[0] = 0 */
    const uint32_t *scope_loop;   /* [n_scopes]; UINT32_MAX for scope 0 */
    const uint32_t *scope_iter;   /* [n_scopes] */
    /* Appended: the bytes of the program's inputs and outputs, which XLA's
     * GetSchedulerMemoryLimit takes as live throughout and subtracts from
     * the device's memory (its total_io_size): the importer's `# io_bytes=`
     * when it gives one (HLO: every entry parameter's and the result's
     * subshapes, minus the outputs aliased to parameters), else the input
     * nodes' buffers plus the output buffers that are not a view of an
     * input (docs/cost-model.md). */
    uint64_t io_bytes;
    /* Appended: collectives several devices join (the ranks of a job, each
     * issuing its own start; docs/machines.md, "Joined collectives").  On
     * such a start, join[v] is the next member's start, the members forming
     * a cycle; v itself on every other node.  NULL when no collective is
     * joined.  A joined collective begins on every member when the last
     * member has issued its start. */
    const uint32_t *join;
    /* Columns of dev_dur_us (appended): 0 or machine->n_devices for the
     * node-major table above.  1 only inside the host, when every device of
     * the machine takes the same time for every node (a job's identical
     * devices, docs/machines.md "Duration tables"): t(v, a) = dev_dur_us[v].
     * A plugin is always handed the full table (0 or n_devices); sb_dur_on()
     * reads either. */
    uint32_t dev_dur_cols;
};

/* t(v, a), the duration of node v on device a (dev_dur_us, either layout). */
static inline double sb_dur_on(const struct sb_graph_view *g, uint32_t v, uint32_t a)
{
    if (g->dev_dur_cols == 1)
        return g->dev_dur_us[v];
    return g->dev_dur_us[(size_t)v * g->machine->n_devices + a];
}

/* What node v holds of resource k on device a while it runs: 0 where the
 * device does not limit k, and only compute nodes hold anything (a nop, a
 * start, a done or an input takes no resource). */
/* The stream node v runs on when placed on device a: its own, folded onto
 * the device's streams when the machine says how many it has. */
static inline uint32_t sb_lane(const struct sb_graph_view *g, uint32_t v, uint32_t a)
{
    const uint32_t *ns = g->machine ? g->machine->dev_streams : NULL;
    uint32_t s = g->stream[v];
    return ns && ns[a] ? s % ns[a] : s;
}

static inline uint32_t sb_res_need(const struct sb_graph_view *g, uint32_t v, uint32_t a,
                                   uint32_t k)
{
    const struct sb_machine_view *m = g->machine;
    uint32_t lim = m->res_limit[(size_t)a * m->n_res + k];
    if (!lim || g->kind[v] != SB_KIND_COMPUTE || !g->res_use)
        return 0;
    uint32_t u = g->res_use[(size_t)v * m->n_res + k];
    return u == SB_RES_ALL ? lim : u;
}

#endif
