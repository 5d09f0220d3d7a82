/* aggressive (alias lhs): XLA's LatencyHidingScheduler, re-implemented from its
 * behaviour (openxla/xla xla/service/latency_hiding_scheduler.cc).
 *
 * List scheduling over the input order on a reverse timeline (or a forward one
 * with top_down_scheduling): a node becomes ready when everything that uses it
 * is scheduled, its ready time is the latest of its users' times plus the edge
 * latency, and at each step the ready set is ranked by XLA's rules in XLA's
 * order (docs/aggressive.md has the list).  Collectives occupy a resource from
 * their done back to their start; per-type overlap limits keep the number of
 * open windows bounded.
 *
 * pass 1 builds the scheduling graph from the view (build_graph);
 * pass 2 runs the list scheduler (schedule_pass), choosing each node either by
 *        XLA's own linear rescan of the ready set (select_scan) or with an
 *        index that makes the same choice (select_fast, section "pass 2d");
 * pass 3 repeats pass 2 with a smaller memory limit while the peak exceeds the
 *        limit (XLA's `rerun`). */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedbench/plugin.h"
#include "schedbench/policy.h"

/* ---- the policy's private state ------------------------------------------
 *
 * The scheduler works on its own copy of the graph, numbered in the order of the
 * sequence it starts from (XLA's "original position"), with edges deduplicated
 * the way XLA's HloScheduleGraph has them (one edge per operand->user pair) and
 * turned to the scheduling direction: bottom-up, a node waits for its users
 * ("deps") and releases its operands ("rels"); top-down the other way round. */

/* ---- configuration (XLA SchedulerConfig; see the parameter table) ---------- */

enum lhs_estimator { LHS_EST_WORKLOAD = 0, LHS_EST_APPROXIMATE = 1 };
enum lhs_resources { LHS_RES_SHARED = 0, LHS_RES_PER_TYPE = 1 };
enum lhs_memory { LHS_MEM_HARNESS = 0, LHS_MEM_XLA = 1 };
enum lhs_selection { LHS_SEL_FAST = 0, LHS_SEL_SCAN = 1 };
enum lhs_computations { LHS_COMP_SEPARATE = 0, LHS_COMP_FLAT = 1 };

/* Resources of XLA's AsyncTracker (ResourceType), one per collective family. */
enum lhs_res {
    LHS_R_ALL_GATHER, LHS_R_ALL_REDUCE, LHS_R_REDUCE_SCATTER, LHS_R_ALL_TO_ALL,
    LHS_R_COLLECTIVE_PERMUTE, LHS_R_SEND_RECV, LHS_R_SEND_HOST, LHS_R_RECV_HOST,
    LHS_R_COPY, LHS_R_RAGGED_ALL_TO_ALL, LHS_R_COLLECTIVE_BROADCAST,
    LHS_R_SHARED, /* GPU: every collective on one stream */
    LHS_R_COUNT
};

struct lhs_config {
    enum lhs_estimator estimator;
    enum lhs_resources resources;
    int64_t limit[LHS_R_COUNT];   /* overlap limits by resource */
    int aggressive;               /* aggressive_scheduling_policies */
    int depth_over_stall;         /* prioritize_async_depth_over_stall */
    int release_start;            /* enable_release_start_policy */
    int send_recvs;               /* schedule_send_recvs */
    int same_send_recv;           /* force_send_recv_to_use_same_resource */
    uint64_t memory_limit;        /* bytes; UINT64_MAX = none */
    int limit_from_device;        /* memory_limit unset: XLA GPU's, per graph */
    int depth_memory;             /* depth_based_memory_pressure_reduction */
    int64_t rerun;
    int top_down;                 /* top_down_scheduling */
    int by_structure;             /* enable_schedule_by_structure */
    enum lhs_memory memory;
    enum lhs_selection selection;
    int always;                   /* schedule even without supported async ops */
    int flexible;                 /* flexible_scheduling_annotation_scheduling */
    int flexible_aggressive;      /* aggressive_flexible_annotation_scheduling */
    int track_sync;               /* track_sync_op_resource_usage */
    enum lhs_computations computations; /* the view's scopes: one at a time */
    int memory_guard;             /* keep the no-limit schedule if its peak is lower */
};

/* ---- the scheduling graph ---------------------------------------------------- */

/* Node bits. */
enum {
    LHS_NOP = 1u << 0,        /* XLA IsNopInstruction: nop and input kinds */
    LHS_SUP_START = 1u << 1,  /* supported async start (IsSupportedAsyncStart) */
    LHS_SUP_DONE = 1u << 2,   /* supported async done */
    LHS_UNLOCK = 1u << 3,     /* bottom-up: has an operand that is a supported
                                 done; top-down: a user that is a supported start */
    LHS_TRACKED = 1u << 4,    /* owns a buffer the memory tracker counts */
    LHS_PINNED = 1u << 5,     /* harness model: buffer never freed */
    LHS_DEPTH = 1u << 6,      /* async depth above 0 */
    LHS_SEND_HOST_DONE = 1u << 7, /* done of a send_host (ShouldDelaySendHostDone) */
};

/* Where a node is (lhs_node.where): the state in the low bits, and while in
 * the ready set under fast selection, whether it waits in its class's heap of
 * not-yet-due nodes. */
enum {
    LHS_W_WAITING = 0, LHS_W_READY = 1, LHS_W_NOP = 2, LHS_W_DONE = 3,
    LHS_W_STATE = 3,  /* mask of the four above */
    LHS_W_FUTURE = 4, /* fast selection: in the future heap, not a group */
};

/* What one scheduling step reads and writes for a node, in one cache line:
 * the node being scheduled, each node it releases (degree, ready time, its
 * deps' range) and each node entering or leaving the ready set's index.  On a
 * million-node graph these are cache misses to main memory; spread over a
 * dozen arrays they cost a dozen misses per node, packed they cost one.
 * Graph fields are set by pass 1; state fields by state_init and pass 2. */
struct lhs_node {
    double ready;          /* state: ready time; while waiting, the latest
                              time a scheduled dep allows (-inf: none yet) */
    double cost;           /* graph: NodeCost */
    double async_key;      /* graph: async depth (bottom-up) or height (top-down) */
    uint32_t dep_off, dep_end; /* graph: range in dep/dep_lat */
    uint32_t rel_off, rel_end; /* graph: range in rel */
    int32_t deg;           /* state: unscheduled deps */
    int32_t rnis;          /* state: GetReadyNodesIfScheduled */
    uint32_t ready_pos;    /* state: index in ready_set */
    /* state; a waiting node and a ready one never need the same of these,
     * so each pair shares its place (degree_one reads the xors) */
    union {
        uint32_t slot;         /* ready, fast: index in its heap (group's or future) */
        uint32_t dep_xor_done; /* waiting: xor of the deps scheduled so far */
    };
    union {
        uint32_t group;        /* ready, fast: group of a due node */
        uint32_t dep_xor;      /* waiting: xor of all its deps (state_init) */
    };
    int8_t occ, relr;      /* graph: resource occupied / released, -1 none */
    uint8_t bits;          /* graph: LHS_* */
    uint8_t where;         /* state: LHS_W_* */
};
_Static_assert(sizeof(struct lhs_node) == 64, "one node record, one cache line");

struct lhs_graph {
    uint32_t n;
    uint32_t *id;          /* [n] view id of each internal node */
    struct lhs_node *node; /* [n], 64-byte aligned, in node_mem */
    void *node_mem;        /* what node_alloc got from calloc, for free */
    uint32_t *dep;            /* [edges] CSR by node: nodes that must be scheduled first */
    double *dep_lat;          /* [edges] latency on that edge */
    uint32_t *rel;            /* [edges] CSR by node: nodes it releases, XLA's edge order */
    double *rel_lat;          /* [edges] latency on that edge (= its dep_lat) */
    double *async_depth;   /* [n] XLA GetAsyncDepth, used by kStartAtZeroDepth */
    uint32_t *graph_depth; /* [n], only with track_memory and depth_memory */
    uint32_t *partner;     /* [n] start <-> done, UINT32_MAX none */
    /* memory: the buffers scheduling a node makes live and those it frees, as
     * CSR lists of buffer owners (internal ids); built only with track_memory */
    int track_memory;      /* a memory_limit is set: the tracker can decide */
    uint32_t *alloc_off, *alloc;
    uint32_t *freed_off, *freed;
    uint64_t *bytes;       /* [n] size of the buffer each owner holds */
    /* XLA's hints (HloScheduleGraph), from the view's sched_hint: */
    uint8_t *force;        /* [n] LHS_FORCE_* bits */
    int32_t *delay_prio;   /* [n] ForceDelayPriority (scheduler_delay_priority) */
    int any_force;         /* some node has a bit: the scan decides */
    int any_send_host;     /* bottom-up, a send_host done exists */
    int forward;           /* no cost is negative or NaN: time never goes back */
    uint32_t *op;          /* [n] the view's opcode index */
    /* scheduling annotations (the view's sched_group), dense: group ids in
     * increasing order become 0..n_groups-1 */
    int32_t *group;        /* [n] dense group, -1 none */
    /* XLA's recursive resources of a node calling computations (the view's
     * holds): [n * LHS_R_COUNT], or NULL when no node has any */
    int32_t *need;
    uint32_t n_groups;
};

enum {
    LHS_FORCE_EARLY = 1u << 0, /* force_early custom-call; force_delay_async done */
    LHS_FORCE_DELAY = 1u << 1, /* force_delay custom-call / async op;
                                  force_delay_async start */
    LHS_KEEP_ORDER = 1u << 2,  /* keep_original_sequence_order_in_group */
    LHS_ASYNC_DONE_OP = 1u << 3, /* opcode async-done (HloOpcode::kAsyncDone) */
    LHS_WHILE_RES = 1u << 4,   /* occupies and releases a resource at once (net:
                                  none): a while whose body holds collectives
                                  (XLA gives it the body's resource list), or a
                                  synchronous collective under
                                  track_sync_op_resource_usage */
};

/* ---- scheduling state ---------------------------------------------------------- */

struct lhs_fast;

struct lhs_heap {               /* XLA's next_ready_stack: a std heap of nodes by */
    uint32_t n, cap;            /* ready time, earliest first; kept with the */
    uint32_t *v;                /* standard library's push/pop algorithms */
};

struct lhs_state {
    const struct lhs_graph *G;
    const struct lhs_config *cfg;
    uint64_t memory_limit;      /* shrinks by 0.9 on each rerun */
    double now;                 /* XLA current_time */
    struct lhs_node *node;      /* = G->node: deg, rnis, ready, where, ... */
    int64_t avail[LHS_R_COUNT]; /* max_concurrent_resource */
    int64_t queued[LHS_R_COUNT];/* resource_users_in_queue */
    uint32_t *ready_set, n_ready; /* XLA's vector, same push/swap-pop order */
    uint32_t *nops, n_nops;     /* XLA's nop_set (LIFO) */
    struct lhs_heap next_ready;
    uint32_t *seq, n_seq;       /* scheduled nodes in scheduling order */
    /* memory (XLA MemoryPressureTracker) */
    uint8_t *live;              /* [n] owner buffers live */
    int64_t mem;                /* live bytes */
    int64_t mem_peak;
    /* per-step candidate cache of memory pressure changes */
    uint32_t *mem_stamp;        /* [n] step the cache entry belongs to */
    int64_t *mem_inc, *mem_peak_inc;
    uint32_t step;
    int oom;                    /* an allocation failed mid-pass */
    /* fast selection (aggressive.c, "pass 2d") */
    struct lhs_fast *fast;
    /* annotation groups (XLA SchedulingState: ready_annotations, ...) */
    int32_t *grp;               /* [n] current group: ClearAnnotation sets -1 */
    uint32_t *grp_all, *grp_seen; /* [n_groups] frontier nodes, those scheduled */
    uint32_t *grp_size;         /* [n_groups] members (AnnotationTracker) */
    uint32_t *ready_groups, n_ready_groups;
    int32_t ongoing;            /* group being scheduled, -1 none */
    uint32_t *ann_ready, n_ann_ready; /* XLA annotation_ready */
    uint8_t *holding;           /* [n] nodes_holding_annotations */
    uint32_t n_holding;
    uint8_t *after_target;      /* [n] ForceDelayAfterTarget */
};

/* ---- fast selection -------------------------------------------------------------- */

/* Ready nodes are split into classes that XLA's first rules cannot tell apart
 * (same resource, occupy/release, async depth zero or not, supported or not),
 * so those rules are decided once per class and step.  Inside a class, a node
 * waits in a heap by ready time until it is due; due nodes sit in groups of
 * equal async key (kAsyncDepth), each group a heap in the order of XLA's later
 * rules (kUnlockDone, kCreatesMoreReadyNodes, kOriginalOrder). */
#define LHS_N_CLASSES (1 + 2 * LHS_R_COUNT * 2 * 2)

struct lhs_pq {
    uint32_t n, cap;
    uint64_t *v;        /* entries: id in the low 32 bits (aggressive.c, pq_id) */
};

struct lhs_group {
    uint16_t cls;
    double key;          /* async key of the members (0 without aggressive rules) */
    struct lhs_pq nodes; /* due members, best first */
    uint32_t slot;       /* index in the class's group heap while non-empty */
    uint32_t next;       /* hash chain, UINT32_MAX ends it */
    double cost_ref;     /* NodeCost of the first member since it was empty */
    uint32_t n_diff;     /* members whose cost differs from cost_ref */
};

struct lhs_fast {
    struct lhs_pq groups[LHS_N_CLASSES]; /* non-empty groups, largest key first */
    struct lhs_pq future[LHS_N_CLASSES]; /* not yet due: by ready time, then key */
    struct lhs_group *grp;
    uint32_t n_grp, cap_grp;
    uint32_t *bucket, n_bucket; /* hash of (class, key) -> first group + 1 */
    uint64_t busy[(LHS_N_CLASSES + 63) / 64]; /* classes with ready nodes */
    uint64_t *tie;      /* [n] candidates of one step: (ready-set index << 32) | node */
    uint32_t n_tie;
    int any_send_host;  /* a send_host done exists: use the scan */
};

#define LHS_NONE UINT32_MAX

/* XLA ApproximateLatencyEstimator, abstract units (latency_hiding_scheduler.h). */
#define XLA_LOW_COST 1.0       /* kLowCost: any instruction */
#define XLA_MEDIUM_COST 1000.0 /* kMediumCost: loop fusion */
#define XLA_HIGH_COST 5000.0   /* kHighCost: output fusion, convolution */
#define XLA_LOW_LATENCY 1.0    /* kLowLatency: every edge but an async pair */
#define XLA_HIGH_LATENCY 5000.0 /* kHighLatency: async start -> done */

/* XLA SchedulerConfig::memory_limit default, UINT64_MAX, as a parameter value. */
#define LHS_NO_LIMIT 18446744073709551615.0

/* ---- parameters ---------------------------------------------------------- */

enum {
    P_ESTIMATOR, P_RESOURCES, P_PARALLEL, P_AG, P_AR, P_RS, P_A2A, P_CP, P_SR, P_SRH,
    P_COPY, P_AGGRESSIVE, P_DEPTH_OVER_STALL, P_RELEASE_START, P_SEND_RECVS,
    P_SAME_SEND_RECV, P_MEMORY_LIMIT, P_DEPTH_MEMORY, P_RERUN, P_TOP_DOWN,
    P_BY_STRUCTURE, P_MEMORY_MODEL, P_SELECTION, P_ALWAYS, P_FLEXIBLE, P_FLEXIBLE_AGGRESSIVE,
    P_TRACK_SYNC, P_COMPUTATIONS, P_MEMORY_GUARD, P_RAGGED, P_BCAST, P_COUNT
};

#define LIMIT_MAX 2147483647.0 /* INT32_MAX, the largest limit XLA's tests use */

/* Defaults are XLA's GPU configuration (MakeGPUSchedulerConfig, gpu_hlo_schedule.cc):
 * aggressive policies and send/recv scheduling on, every overlap limit 1, all
 * collectives on one stream.  Per-type limits apply with resources=per_type. */
static const struct sb_param params[P_COUNT] = {
    {"estimator", SB_PARAM_ENUM, 0, 0, 0, "workload|approximate",
     "latency estimator: workload = the run's cost model (dur_us, compute cost, "
     "collective duration, edge latency); approximate = XLA ApproximateLatencyEstimator"},
    {"resources", SB_PARAM_ENUM, 0, 0, 0, "shared|per_type",
     "shared = XLA GpuAsyncTracker: every collective on one stream "
     "(parallel_collective_overlap_limit); per_type = XLA AsyncTracker, one resource per type"},
    {"parallel_collective_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA parallel_collective_overlap_limit: collectives in flight, resources=shared"},
    {"all_gather_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA all_gather_overlap_limit (count, per_type)"},
    {"all_reduce_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA all_reduce_overlap_limit (count, per_type)"},
    {"reduce_scatter_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA reduce_scatter_overlap_limit (count, per_type)"},
    {"all_to_all_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA all_to_all_overlap_limit (count, per_type)"},
    {"collective_permute_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA collective_permute_overlap_limit (count, per_type)"},
    {"send_recv_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA send_recv_overlap_limit: send and recv together (count, per_type)"},
    {"send_recv_host_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA send_recv_host_overlap_limit: each of send_host, recv_host (count, per_type)"},
    {"copy_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA copy_overlap_limit (count, per_type)"},
    {"aggressive_scheduling_policies", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "XLA aggressive_scheduling_policies: rules kStartAtZeroDepth, kAsyncDepth, "
     "kAvoidWaste, kCreatesMoreReadyNodes (GPU: true)"},
    {"prioritize_async_depth_over_stall", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "XLA prioritize_async_depth_over_stall: kStartAtZeroDepth before kLessStall"},
    {"enable_release_start_policy", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "XLA enable_release_start_policy: schedule ready collective-permute starts first"},
    {"schedule_send_recvs", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "XLA schedule_send_recvs: send/recv pairs are async ops (GPU: true)"},
    {"force_send_recv_to_use_same_resource", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "XLA force_send_recv_to_use_same_resource: recv_host uses send_host's resource"},
    {"memory_limit", SB_PARAM_BYTES, NAN, 0, INFINITY, NULL,
     "XLA memory_limit in the bytes memory_model counts (80GB, 75e9, ...); unset: XLA GPU's "
     "GetSchedulerMemoryLimit from the device's memory and the program's inputs and outputs; "
     "none: SchedulerConfig's default UINT64_MAX; memory rules engage above half"},
    {"depth_based_memory_pressure_reduction", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "XLA depth_based_memory_pressure_reduction: over the limit prefer deep nodes"},
    {"rerun", SB_PARAM_INT, 0, 0, 100, NULL,
     "XLA rerun: reschedule with memory_limit x0.9 while the peak exceeds it (times)"},
    {"top_down_scheduling", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "XLA top_down_scheduling: schedule from the inputs instead of the outputs"},
    {"enable_schedule_by_structure", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "XLA enable_schedule_by_structure: delay async starts (dones top-down)"},
    {"memory_model", SB_PARAM_ENUM, 0, 0, 0, "harness|xla",
     "bytes memory_limit counts: harness = docs/cost-model.md (inputs, pinned buffers); "
     "xla = XLA MemoryPressureTracker (graph inputs not counted)"},
    {"selection", SB_PARAM_ENUM, 0, 0, 0, "fast|scan",
     "fast = indexed ready set; scan = XLA's linear rescan (same decisions, quadratic)"},
    {"schedule_without_collectives", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "schedule a graph without supported async ops too (XLA's pass leaves it as it is; "
     "calling ScheduleComputation directly does not)"},
    {"flexible_scheduling_annotation_scheduling", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "XLA flexible_scheduling_annotation_scheduling: an annotated group's last async "
     "start goes back to the ready set instead of being scheduled with the group"},
    {"aggressive_flexible_annotation_scheduling", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "XLA aggressive_flexible_annotation_scheduling: ... and is delayed "
     "(kForceDelayAfterTarget)"},
    {"track_sync_op_resource_usage", SB_PARAM_BOOL, 0, 0, 1, NULL,
     "XLA track_sync_op_resource_usage: a synchronous collective (a compute node whose op "
     "is all-gather, all-reduce, ...) needs a free slot of its type's resource"},
    {"computations", SB_PARAM_ENUM, 0, 0, 0, "separate|flat",
     "separate = XLA: each computation (the view's scopes: an expanded loop's "
     "iterations) scheduled on its own, a loop one node of its caller; flat = the "
     "whole graph as one computation, nodes free to cross iterations"},
    {"memory_guard", SB_PARAM_BOOL, 1, 0, 1, NULL,
     "not XLA's: under a memory_limit, keep the schedule the same rules give without one "
     "when its peak (the harness's count) is lower; XLA's over-limit rules are one-step "
     "greedy and, under a limit no order reaches, can raise the peak (docs/aggressive.md)"},
    {"ragged_all_to_all_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA ragged_all_to_all_overlap_limit (count, per_type)"},
    {"collective_broadcast_overlap_limit", SB_PARAM_INT, 1, 1, LIMIT_MAX, NULL,
     "XLA collective_broadcast_overlap_limit (count, per_type)"},
};

static int lhs_init(const double *p, void **state, char *err, size_t n_err)
{
    struct lhs_config *c = calloc(1, sizeof *c);
    if (!c)
        return sb_plugin_fail(err, n_err, "out of memory");
    c->estimator = (enum lhs_estimator)p[P_ESTIMATOR];
    c->resources = (enum lhs_resources)p[P_RESOURCES];
    c->limit[LHS_R_SHARED] = (int64_t)p[P_PARALLEL];
    c->limit[LHS_R_ALL_GATHER] = (int64_t)p[P_AG];
    c->limit[LHS_R_ALL_REDUCE] = (int64_t)p[P_AR];
    c->limit[LHS_R_REDUCE_SCATTER] = (int64_t)p[P_RS];
    c->limit[LHS_R_ALL_TO_ALL] = (int64_t)p[P_A2A];
    c->limit[LHS_R_COLLECTIVE_PERMUTE] = (int64_t)p[P_CP];
    c->limit[LHS_R_SEND_RECV] = (int64_t)p[P_SR];
    c->limit[LHS_R_SEND_HOST] = (int64_t)p[P_SRH];
    c->limit[LHS_R_RECV_HOST] = (int64_t)p[P_SRH];
    c->limit[LHS_R_COPY] = (int64_t)p[P_COPY];
    c->limit[LHS_R_RAGGED_ALL_TO_ALL] = (int64_t)p[P_RAGGED];
    c->limit[LHS_R_COLLECTIVE_BROADCAST] = (int64_t)p[P_BCAST];
    c->aggressive = p[P_AGGRESSIVE] != 0;
    c->depth_over_stall = p[P_DEPTH_OVER_STALL] != 0;
    c->release_start = p[P_RELEASE_START] != 0;
    c->send_recvs = p[P_SEND_RECVS] != 0;
    c->same_send_recv = p[P_SAME_SEND_RECV] != 0;
    /* unset: from the device, at run time; a double cannot hold every
     * uint64, so the largest values (and none) mean "no limit" */
    c->limit_from_device = isnan(p[P_MEMORY_LIMIT]);
    c->memory_limit = c->limit_from_device || p[P_MEMORY_LIMIT] >= LHS_NO_LIMIT
                          ? UINT64_MAX
                          : (uint64_t)p[P_MEMORY_LIMIT];
    c->depth_memory = p[P_DEPTH_MEMORY] != 0;
    c->rerun = (int64_t)p[P_RERUN];
    c->top_down = p[P_TOP_DOWN] != 0;
    c->by_structure = p[P_BY_STRUCTURE] != 0;
    c->memory = (enum lhs_memory)p[P_MEMORY_MODEL];
    c->selection = (enum lhs_selection)p[P_SELECTION];
    c->always = p[P_ALWAYS] != 0;
    c->flexible = p[P_FLEXIBLE] != 0;
    c->flexible_aggressive = p[P_FLEXIBLE_AGGRESSIVE] != 0;
    c->track_sync = p[P_TRACK_SYNC] != 0;
    c->computations = (enum lhs_computations)p[P_COMPUTATIONS];
    c->memory_guard = p[P_MEMORY_GUARD] != 0;
    *state = c;
    return 0;
}

static void lhs_free(void *state) { free(state); }

/* ---- small helpers ------------------------------------------------------- */

static void *xcalloc(size_t n, size_t size, int *oom)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        *oom = 1;
    return p;
}

/* For arrays written before they are read: no zeroing, so the part a run
 * does not reach is not touched (calloc clears reused heap memory, and a
 * cleared page the run never needed is a page fault for nothing). */
static void *xmalloc(size_t n, size_t size, int *oom)
{
    void *p = malloc((n ? n : 1) * size);
    if (!p)
        *oom = 1;
    return p;
}

/* The node records, zeroed, one cache line each: aligned by hand so that a
 * record never straddles two.  calloc rather than aligned_alloc: glibc
 * serves a large aligned request from fresh pages each time (a page fault
 * per 4 KB, 15.7 k of them at a million nodes), calloc reuses the heap. */
static struct lhs_node *node_alloc(struct lhs_graph *G, uint32_t n, int *oom)
{
    G->node_mem = calloc((size_t)n + 2, sizeof(struct lhs_node));
    if (!G->node_mem) {
        *oom = 1;
        return NULL;
    }
    uintptr_t at = ((uintptr_t)G->node_mem + 63) & ~(uintptr_t)63;
    return (struct lhs_node *)at;
}

static int is_p2p(uint8_t coll)
{
    return coll == SB_COLL_SEND || coll == SB_COLL_RECV || coll == SB_COLL_SEND_HOST ||
           coll == SB_COLL_RECV_HOST;
}

/* XLA AsyncTracker::GetResourcesFromInstructionImpl, by collective type. */
static int resource_of(const struct lhs_config *c, uint8_t coll)
{
    if (c->resources == LHS_RES_SHARED)
        return LHS_R_SHARED;
    switch (coll) {
    case SB_COLL_ALL_GATHER: return LHS_R_ALL_GATHER;
    case SB_COLL_ALL_REDUCE: return LHS_R_ALL_REDUCE;
    case SB_COLL_REDUCE_SCATTER: return LHS_R_REDUCE_SCATTER;
    case SB_COLL_ALL_TO_ALL: return LHS_R_ALL_TO_ALL;
    case SB_COLL_COLLECTIVE_PERMUTE: return LHS_R_COLLECTIVE_PERMUTE;
    case SB_COLL_SEND:
    case SB_COLL_RECV: return LHS_R_SEND_RECV;
    case SB_COLL_SEND_HOST: return LHS_R_SEND_HOST;
    case SB_COLL_RECV_HOST: return c->same_send_recv ? LHS_R_SEND_HOST : LHS_R_RECV_HOST;
    case SB_COLL_COPY: return LHS_R_COPY;
    case SB_COLL_RAGGED_ALL_TO_ALL: return LHS_R_RAGGED_ALL_TO_ALL;
    case SB_COLL_COLLECTIVE_BROADCAST: return LHS_R_COLLECTIVE_BROADCAST;
    default: return -1;
    }
}

/* XLA IsSupportedAsyncStart/Done: send/recv only with schedule_send_recvs. */
static int supported(const struct lhs_config *c, uint8_t coll)
{
    return !is_p2p(coll) || c->send_recvs;
}

/* NodeCost under the configured estimator. */
static double node_cost(const struct lhs_config *c, const struct sb_graph_view *g,
                        uint32_t v)
{
    if (c->estimator == LHS_EST_APPROXIMATE) {
        const char *op = g->op_names[g->op[v]];
        if (!strcmp(op, "loop_fusion"))
            return XLA_MEDIUM_COST;
        if (!strcmp(op, "output_fusion") || !strcmp(op, "convolution"))
            return XLA_HIGH_COST;
        return XLA_LOW_COST;
    }
    /* the simulator's compute time; kinds it runs for free keep the file's
     * cost_us (0 unless given), as XLA gives every instruction a NodeCost */
    return g->kind[v] == SB_KIND_COMPUTE ? g->dur_us[v] : g->cost_us[v];
}

/* GetLatencyBetween(u, v) for an edge u -> v of the view. */
static double edge_latency(const struct lhs_config *c, const struct sb_graph_view *g,
                           uint32_t u, uint32_t v)
{
    int pair = g->kind[u] == SB_KIND_START && g->partner[u] == v;
    if (c->estimator == LHS_EST_APPROXIMATE) /* IsAsyncPair: send/recv are not */
        return pair && !is_p2p(g->coll[u]) ? XLA_HIGH_LATENCY : XLA_LOW_LATENCY;
    return pair ? g->dur_us[u] : g->edge_lat_us;
}

/* ---- pass 1: the scheduling graph ---------------------------------------- */

struct builder {
    const struct sb_graph_view *g;
    const struct lhs_config *c;
    struct lhs_graph *G;
    uint32_t *pos;   /* [n] view id -> internal id */
    int ident;       /* internal ids are view ids (the first pass): pos unread */
    uint8_t *async_done_op; /* [n_ops] 1: the opcode is "async-done" */
    uint32_t *mark;  /* [n] dedupe stamps (memory lists) */
    uint32_t *root;  /* [n] view id -> view id of the buffer it lives in */
    int oom;
};

static uint32_t internal(const struct builder *B, uint32_t w)
{
    return B->ident ? w : B->pos[w];
}

/* Distinct neighbours of view node v (preds or succs) as sorted internal ids.
 * XLA keeps one edge per operand->user pair, ordered by original position.
 * Insertion sort (lists are short, and usually come sorted); a repeated
 * neighbour is found where it would be inserted. */
static uint32_t neighbours(struct builder *B, uint32_t v, int preds, uint32_t *out)
{
    const struct sb_graph_view *g = B->g;
    const uint32_t *off = preds ? g->pred_off : g->succ_off;
    const uint32_t *adj = preds ? g->pred : g->succ;
    uint32_t n = 0;
    for (uint32_t e = off[v]; e < off[v + 1]; e++) {
        uint32_t x = internal(B, adj[e]), k = n;
        while (k && out[k - 1] > x)
            k--;
        if (k && out[k - 1] == x)
            continue; /* a second edge between the same pair */
        memmove(out + k + 1, out + k, (n - k) * sizeof *out);
        out[k] = x;
        n++;
    }
    return n;
}

/* XLA HloScheduleGraph, top-down only: when a send-done comes after a while
 * that reaches it, each recv whose recv-done waits for that send-done
 * (a control successor) also waits for the while, so the recv's window does
 * not span the loop.  That edge can point backwards in the original order.
 * Returns the number of edges, written as (while, recv) view-id pairs to
 * *out (malloc'ed; NULL when none). */
static uint32_t while_recv_edges(struct builder *B, uint32_t **out)
{
    const struct sb_graph_view *g = B->g;
    uint32_t n = g->n_nodes, k = 0, cap = 0, n_while = 0;
    *out = NULL;
    if (!B->c->top_down)
        return 0;
    for (uint32_t v = 0; v < n; v++)
        n_while += !strcmp(g->op_names[g->op[v]], "while");
    if (!n_while)
        return 0;
    uint8_t *reach = calloc(n, 1);
    uint32_t *stack = malloc((size_t)n * sizeof *stack);
    if (!reach || !stack) {
        B->oom = 1;
        free(reach);
        free(stack);
        return 0;
    }
    for (uint32_t w = 0; w < n && !B->oom; w++) {
        if (strcmp(g->op_names[g->op[w]], "while") != 0)
            continue;
        uint32_t top = 0; /* what w reaches */
        memset(reach, 0, n);
        stack[top++] = w;
        while (top) {
            uint32_t v = stack[--top];
            for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
                if (!reach[g->succ[e]]) {
                    reach[g->succ[e]] = 1;
                    stack[top++] = g->succ[e];
                }
        }
        for (uint32_t s = w + 1; s < n; s++) {
            if (!reach[s] || g->kind[s] != SB_KIND_DONE || g->coll[s] != SB_COLL_SEND)
                continue;
            for (uint32_t e = g->succ_off[s]; e < g->succ_off[s + 1]; e++) {
                uint32_t r = g->succ[e];
                if (g->kind[r] != SB_KIND_DONE || g->coll[r] != SB_COLL_RECV ||
                    g->partner[r] == SB_NONE)
                    continue;
                if (k + 2 > cap) {
                    cap = cap ? 2 * cap : 16;
                    uint32_t *x = realloc(*out, (size_t)cap * sizeof *x);
                    if (!x) {
                        B->oom = 1;
                        break;
                    }
                    *out = x;
                }
                (*out)[k++] = w;
                (*out)[k++] = g->partner[r];
            }
        }
    }
    free(reach);
    free(stack);
    return k / 2;
}

/* What node i is: cost, opcode, partner, resources and bits (all but
 * LHS_UNLOCK, LHS_DEPTH and LHS_PINNED), no group. */
static void node_fields(struct builder *B, uint32_t i)
{
    const struct sb_graph_view *g = B->g;
    const struct lhs_config *c = B->c;
    struct lhs_graph *G = B->G;
    uint32_t v = G->id[i];
    uint8_t k = g->kind[v];
    G->node[i].cost = node_cost(c, g, v);
    G->forward &= G->node[i].cost >= 0;
    G->op[i] = g->op[v];
    G->group[i] = -1;
    if (B->async_done_op[g->op[v]])
        G->force[i] |= LHS_ASYNC_DONE_OP;
    G->node[i].occ = G->node[i].relr = -1;
    G->partner[i] = g->partner[v] == SB_NONE ? LHS_NONE : internal(B, g->partner[v]);
    G->node[i].bits = (uint8_t)(k == SB_KIND_NOP || k == SB_KIND_INPUT ? LHS_NOP : 0);
    if (k != SB_KIND_START && k != SB_KIND_DONE)
        return;
    int r = resource_of(c, g->coll[v]);
    /* bottom-up a done opens the window (occupies) and its start closes it */
    if ((k == SB_KIND_DONE) != c->top_down)
        G->node[i].occ = (int8_t)r;
    else
        G->node[i].relr = (int8_t)r;
    if (supported(c, g->coll[v]))
        G->node[i].bits |= k == SB_KIND_START ? LHS_SUP_START : LHS_SUP_DONE;
    if (k == SB_KIND_DONE && g->coll[v] == SB_COLL_SEND_HOST) {
        G->node[i].bits |= LHS_SEND_HOST_DONE;
        G->any_send_host |= !c->top_down;
    }
}

/* kUnlockDone: an operand is a supported done; kUnlockStart: a user is a
 * supported start (read from the view: its kind and type). */
static int unlocks(const struct builder *B, uint32_t v)
{
    const struct sb_graph_view *g = B->g;
    int td = B->c->top_down;
    const uint32_t *off = td ? g->succ_off : g->pred_off;
    const uint32_t *adj = td ? g->succ : g->pred;
    uint8_t want = td ? SB_KIND_START : SB_KIND_DONE;
    for (uint32_t e = off[v]; e < off[v + 1]; e++)
        if (g->kind[adj[e]] == want && supported(B->c, g->coll[adj[e]]))
            return 1;
    return 0;
}

/* XLA InitializeGraphAnalysis, forward half: the async depth (latency of
 * supported start->done pairs on the longest path from a source) and the
 * graph depth of node i, from its operands' (internal order is topological,
 * so theirs are known). */
static void node_depth(struct builder *B, uint32_t i)
{
    const struct sb_graph_view *g = B->g;
    struct lhs_graph *G = B->G;
    uint32_t v = G->id[i], gd = 0;
    int gdepth = G->graph_depth != NULL;
    double d = 0;
    int sup_done = (G->node[i].bits & LHS_SUP_DONE) != 0;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
        uint32_t p = internal(B, g->pred[e]);
        double lat = sup_done ? edge_latency(B->c, g, g->pred[e], v) : 0;
        if (G->async_depth[p] + lat > d)
            d = G->async_depth[p] + lat;
        if (gdepth && G->graph_depth[p] + 1 > gd)
            gd = G->graph_depth[p] + 1;
    }
    G->async_depth[i] = d;
    if (d != 0)
        G->node[i].bits |= LHS_DEPTH;
    if (gdepth)
        G->graph_depth[i] = gd;
    if (!B->c->top_down)
        G->node[i].async_key = d; /* top-down: the height, build_heights */
}

/* One pass over the nodes in internal order: each node's fields, its edge
 * lists and depths, so that a node's record is written while it is in cache
 * (on a million nodes a pass over the records is a pass over 64 MB). */
static void build_pass(struct builder *B)
{
    const struct sb_graph_view *g = B->g;
    struct lhs_graph *G = B->G;
    uint32_t *extra, n_extra = while_recv_edges(B, &extra);
    uint32_t n = G->n, m = g->n_edges + n_extra;
    int td = B->c->top_down;
    G->dep = xmalloc(m, sizeof *G->dep, &B->oom);
    G->dep_lat = xmalloc(m, sizeof *G->dep_lat, &B->oom);
    G->rel = xmalloc(m, sizeof *G->rel, &B->oom);
    G->rel_lat = xmalloc(m, sizeof *G->rel_lat, &B->oom);
    B->async_done_op = xmalloc(g->n_ops, 1, &B->oom);
    if (B->oom) {
        free(B->async_done_op);
        free(extra);
        return;
    }
    for (uint32_t o = 0; o < g->n_ops; o++) /* opcodes compared once, not per node */
        B->async_done_op[o] = !strcmp(g->op_names[o], "async-done");
    uint32_t nd = 0, nr = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = G->id[i];
        node_fields(B, i);
        if (unlocks(B, v))
            G->node[i].bits |= LHS_UNLOCK;
        G->node[i].dep_off = nd;
        G->node[i].rel_off = nr;
        /* bottom-up a node waits for its users and releases its operands */
        uint32_t k = neighbours(B, v, td, G->dep + nd);
        for (uint32_t j = 0; j < k; j++) {
            uint32_t w = B->ident ? G->dep[nd + j] : G->id[G->dep[nd + j]];
            G->dep_lat[nd + j] = td ? edge_latency(B->c, g, w, v) : edge_latency(B->c, g, v, w);
        }
        nd += k;
        k = neighbours(B, v, !td, G->rel + nr);
        for (uint32_t j = 0; j < k; j++) { /* the same latency as at the other end */
            uint32_t w = B->ident ? G->rel[nr + j] : G->id[G->rel[nr + j]];
            G->rel_lat[nr + j] = td ? edge_latency(B->c, g, v, w) : edge_latency(B->c, g, w, v);
        }
        nr += k;
        /* the added edges, after the operand ones (latency 1, as XLA's) */
        for (uint32_t x = 0; x < n_extra; x++) {
            if (extra[2 * x + 1] == v) { /* top-down the recv waits for the while */
                G->dep[nd] = internal(B, extra[2 * x]);
                G->dep_lat[nd++] = 1;
            }
            if (extra[2 * x] == v) {
                G->rel[nr] = internal(B, extra[2 * x + 1]);
                G->rel_lat[nr++] = 1;
            }
        }
        G->node[i].dep_end = nd;
        G->node[i].rel_end = nr;
        node_depth(B, i);
    }
    free(B->async_done_op);
    free(extra);
}

/* The rarer node properties, after build_pass: hints, resources of called
 * computations, synchronous collectives, annotation groups. */
static void build_nodes(struct builder *B)
{
    const struct sb_graph_view *g = B->g;
    const struct lhs_config *c = B->c;
    struct lhs_graph *G = B->G;
    /* XLA HloScheduleGraph: which hints a node honours.  force_early on a
     * custom-call; force_delay on a custom-call, async-start or async-done
     * (by opcode: a legacy all-gather-start is not one); force_delay_async on
     * a supported async start (delay, with its priority) and on a supported
     * async done (early). */
    for (uint32_t i = 0; g->sched_hint && i < G->n; i++) {
        uint32_t v = G->id[i];
        uint8_t h = g->sched_hint[v];
        const char *op = g->op_names[g->op[v]];
        int cc = !strncmp(op, "custom-call", 11);
        int async_op = !strcmp(op, "async-start") || !strcmp(op, "async-done");
        if ((h & SB_HINT_FORCE_EARLY) && cc)
            G->force[i] |= LHS_FORCE_EARLY;
        if ((h & SB_HINT_FORCE_DELAY) && (cc || async_op)) {
            G->force[i] |= LHS_FORCE_DELAY;
            G->delay_prio[i] = g->sched_priority[v];
        }
        if ((h & SB_HINT_FORCE_DELAY_ASYNC) && (G->node[i].bits & LHS_SUP_START)) {
            G->force[i] |= LHS_FORCE_DELAY;
            G->delay_prio[i] = g->sched_priority[v];
        }
        if ((h & SB_HINT_FORCE_DELAY_ASYNC) && (G->node[i].bits & LHS_SUP_DONE))
            G->force[i] |= LHS_FORCE_EARLY;
        G->any_force |= G->force[i] != 0;
        if (h & SB_HINT_KEEP_ORDER)
            G->force[i] |= LHS_KEEP_ORDER;
    }
    /* GetNumResourcesPerInstruction of a while/call/conditional: what its
     * callees hold, by resource (types sharing a resource add up) */
    if (g->holds && !(G->need = xcalloc((size_t)G->n * LHS_R_COUNT, sizeof *G->need, &B->oom)))
        return;
    for (uint32_t i = 0; G->need && i < G->n; i++)
        for (int t = 1; t < SB_COLL_COUNT; t++) {
            uint32_t h = g->holds[(size_t)G->id[i] * SB_COLL_COUNT + t];
            if (h && supported(c, (uint8_t)t)) {
                G->need[(size_t)i * LHS_R_COUNT + resource_of(c, (uint8_t)t)] += (int32_t)h;
                if (!strcmp(g->op_names[g->op[G->id[i]]], "while"))
                    G->force[i] |= LHS_WHILE_RES;
            }
        }
    /* XLA AsyncTracker::GetResourcesFromInstructionImpl, default case: with
     * track_sync_op_resource_usage a synchronous op of a resource type
     * (GetResourceTypeForOp) occupies and releases one of it */
    static const struct {
        const char *op;
        uint8_t coll;
    } sync_res[] = {
        {"all-reduce", SB_COLL_ALL_REDUCE}, {"all-gather", SB_COLL_ALL_GATHER},
        {"all-to-all", SB_COLL_ALL_TO_ALL}, {"ragged-all-to-all", SB_COLL_RAGGED_ALL_TO_ALL},
        {"collective-broadcast", SB_COLL_COLLECTIVE_BROADCAST},
        {"collective-permute", SB_COLL_COLLECTIVE_PERMUTE}, {"copy", SB_COLL_COPY},
        {"reduce-scatter", SB_COLL_REDUCE_SCATTER},
    };
    for (uint32_t i = 0; c->track_sync && i < G->n; i++) {
        uint32_t v = G->id[i];
        if (g->kind[v] == SB_KIND_START || g->kind[v] == SB_KIND_DONE)
            continue;
        for (size_t k = 0; k < sizeof sync_res / sizeof sync_res[0]; k++) {
            if (strcmp(g->op_names[g->op[v]], sync_res[k].op) != 0)
                continue;
            if (!G->need &&
                !(G->need = xcalloc((size_t)G->n * LHS_R_COUNT, sizeof *G->need, &B->oom)))
                return;
            int32_t *nd = G->need + (size_t)i * LHS_R_COUNT + resource_of(c, sync_res[k].coll);
            if (*nd < 1)
                *nd = 1;
            G->force[i] |= LHS_WHILE_RES;
        }
    }
    /* groups: XLA AnnotationTracker keys them by id; dense in increasing id */
    if (g->sched_group) {
        int32_t prev = -1;
        for (;;) {
            int32_t next = INT32_MAX;
            int any = 0;
            for (uint32_t v = 0; v < g->n_nodes; v++)
                if (g->sched_group[v] > prev && g->sched_group[v] <= next) {
                    next = g->sched_group[v];
                    any = 1;
                }
            if (!any)
                break;
            for (uint32_t i = 0; i < G->n; i++)
                if (g->sched_group[G->id[i]] == next)
                    G->group[i] = (int32_t)G->n_groups;
            G->n_groups++;
            if (next == INT32_MAX)
                break;
            prev = next;
        }
    }
}

/* XLA InitializeGraphAnalysis, backward half, top-down only (where it is
 * the key): the async height, the latency of supported start->done pairs on
 * the longest path to a sink. */
static void build_heights(struct builder *B)
{
    const struct sb_graph_view *g = B->g;
    struct lhs_graph *G = B->G;
    double *height = xcalloc(G->n, sizeof *height, &B->oom);
    if (B->oom)
        return;
    for (uint32_t i = G->n; i-- > 0;) {
        uint32_t v = G->id[i];
        double h = 0;
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++) {
            uint32_t s = internal(B, g->succ[e]);
            double lat = G->node[i].bits & LHS_SUP_START ? edge_latency(B->c, g, v, g->succ[e]) : 0;
            if (height[s] + lat > h)
                h = height[s] + lat;
        }
        height[i] = h;
    }
    for (uint32_t i = 0; i < G->n; i++)
        G->node[i].async_key = height[i];
    free(height);
}

/* ---- pass 1b: buffers for the memory tracker ----------------------------- */

/* Buffer owner of each view node: alias nodes and dones live in their first
 * input's buffer (docs/cost-model.md). */
static void buffer_roots(struct builder *B)
{
    const struct sb_graph_view *g = B->g;
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        int views = (g->flags[v] & SB_FLAG_ALIAS) || g->kind[v] == SB_KIND_DONE;
        B->root[v] = views ? B->root[g->pred[g->pred_off[v]]] : v;
    }
}

/* Whether the tracker counts the buffer owned by view node b: XLA skips entry
 * parameters ("their memory usage is already accounted for"). */
static int tracked(const struct builder *B, uint32_t b)
{
    return B->c->memory == LHS_MEM_HARNESS || B->g->kind[b] != SB_KIND_INPUT;
}

/* Harness model: weight and output buffers are never freed once made. */
static int pinned_buffer(const struct builder *B, uint32_t b, const uint8_t *pin)
{
    return B->c->memory == LHS_MEM_HARNESS && pin[b];
}

static void add_buf(struct builder *B, uint32_t b, uint32_t *list, uint32_t *n, uint32_t v)
{
    if (!tracked(B, b) || B->mark[b] == v + 1)
        return;
    B->mark[b] = v + 1;
    list[(*n)++] = B->pos[b];
}

/* Buffers view node v reads (bottom-up: makes live when scheduled): its
 * operands', a done's start's operands' (a collective reads them until its done,
 * XLA: the start's tuple element 0 aliases the operand), and in the harness
 * model its own (a buffer lives at least at its producer's position). */
static uint32_t reads(struct builder *B, uint32_t v, uint32_t *out)
{
    const struct sb_graph_view *g = B->g;
    uint32_t n = 0;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
        add_buf(B, B->root[g->pred[e]], out, &n, v);
    if (g->kind[v] == SB_KIND_DONE) {
        uint32_t s = g->partner[v];
        for (uint32_t e = g->pred_off[s]; e < g->pred_off[s + 1]; e++)
            add_buf(B, B->root[g->pred[e]], out, &n, v);
    }
    if (B->c->memory == LHS_MEM_HARNESS)
        add_buf(B, B->root[v], out, &n, v);
    for (uint32_t k = 0; k < n; k++)
        B->mark[B->G->id[out[k]]] = 0;
    return n;
}

static uint8_t *pins(struct builder *B)
{
    const struct sb_graph_view *g = B->g;
    uint8_t *pin = xcalloc(g->n_nodes, 1, &B->oom);
    if (pin)
        for (uint32_t v = 0; v < g->n_nodes; v++)
            if (g->flags[v] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT))
                pin[B->root[v]] = 1;
    return pin;
}

/* Bottom-up (XLA MemoryPressureTracker): scheduling v makes its reads live and
 * frees the buffer v defines; pinned buffers are live from the bottom.
 * Top-down: v makes its own buffer live and frees each buffer whose last reader
 * in the input order it is (XLA's top-down rule, which uses the original
 * sequence's last use); pinned buffers are never freed. */
static void build_memory(struct builder *B)
{
    const struct sb_graph_view *g = B->g;
    struct lhs_graph *G = B->G;
    uint32_t n = G->n, cap = g->n_edges * 2 + 2 * n + 1;
    uint32_t *rd_off = xcalloc(n + 1, sizeof *rd_off, &B->oom);
    uint32_t *rd = xcalloc(cap, sizeof *rd, &B->oom);
    uint32_t *last = xcalloc(n, sizeof *last, &B->oom);
    uint8_t *pin = pins(B);
    G->alloc_off = xcalloc(n + 1, sizeof *G->alloc_off, &B->oom);
    G->alloc = xcalloc(cap, sizeof *G->alloc, &B->oom);
    G->freed_off = xcalloc(n + 1, sizeof *G->freed_off, &B->oom);
    G->freed = xcalloc(cap, sizeof *G->freed, &B->oom);
    if (B->oom)
        goto out;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = G->id[i];
        rd_off[i + 1] = rd_off[i] + reads(B, v, rd + rd_off[i]);
        G->bytes[i] = B->root[v] == v ? g->out_bytes[v] : 0;
        for (uint32_t k = rd_off[i]; k < rd_off[i + 1]; k++)
            last[rd[k]] = i; /* increasing i: ends as the last reader */
        if (pinned_buffer(B, v, pin) && B->root[v] == v)
            G->node[i].bits |= LHS_PINNED;
    }
    uint32_t na = 0, nf = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v = G->id[i];
        int own = B->root[v] == v && tracked(B, v);
        G->alloc_off[i] = na;
        G->freed_off[i] = nf;
        if (!B->c->top_down) {
            for (uint32_t k = rd_off[i]; k < rd_off[i + 1]; k++)
                G->alloc[na++] = rd[k];
            /* above its producer a buffer does not exist yet, pinned or not;
             * the harness model makes inputs exist from the program's start */
            if (own && !(B->c->memory == LHS_MEM_HARNESS && g->kind[v] == SB_KIND_INPUT))
                G->freed[nf++] = i;
            continue;
        }
        if (tracked(B, B->root[v]))
            G->alloc[na++] = B->pos[B->root[v]];
        for (uint32_t k = rd_off[i]; k < rd_off[i + 1]; k++)
            if (last[rd[k]] == i && !(G->node[rd[k]].bits & LHS_PINNED))
                G->freed[nf++] = rd[k];
    }
    G->alloc_off[n] = na;
    G->freed_off[n] = nf;
out:
    free(rd_off);
    free(rd);
    free(last);
    free(pin);
}

static void graph_free(struct lhs_graph *G)
{
    free(G->id);
    free(G->dep);
    free(G->dep_lat);
    free(G->rel);
    free(G->rel_lat);
    free(G->node_mem);
    free(G->async_depth);
    free(G->graph_depth);
    free(G->partner);
    free(G->alloc_off);
    free(G->alloc);
    free(G->freed_off);
    free(G->freed);
    free(G->bytes);
    free(G->force);
    free(G->op);
    free(G->group);
    free(G->need);
    free(G->delay_prio);
    memset(G, 0, sizeof *G);
}

/* The scheduling graph of view g with internal ids in the order `order`. */
static int build_graph(const struct sb_graph_view *g, const struct lhs_config *c,
                       const uint32_t *order, struct lhs_graph *G)
{
    struct builder B = {.g = g, .c = c, .G = G};
    uint32_t n = g->n_nodes;
    memset(G, 0, sizeof *G);
    G->n = n;
    G->forward = 1;
    G->id = xmalloc(n, sizeof *G->id, &B.oom);
    G->node = node_alloc(G, n, &B.oom);
    G->async_depth = xmalloc(n, sizeof *G->async_depth, &B.oom);
    /* the memory tracker is read only under a limit (memory_active; the peak
     * only decides a rerun, which needs a limit too): without one, neither
     * its buffers nor the graph depth (kDepthOverLimit) are built */
    G->track_memory = c->memory_limit != UINT64_MAX;
    if (G->track_memory && c->depth_memory)
        G->graph_depth = xcalloc(n, sizeof *G->graph_depth, &B.oom);
    G->partner = xmalloc(n, sizeof *G->partner, &B.oom);
    if (G->track_memory)
        G->bytes = xcalloc(n, sizeof *G->bytes, &B.oom);
    G->force = xcalloc(n, 1, &B.oom);
    G->op = xmalloc(n, sizeof *G->op, &B.oom);
    G->group = xmalloc(n, sizeof *G->group, &B.oom);
    G->delay_prio = xcalloc(n, sizeof *G->delay_prio, &B.oom);
    B.pos = xmalloc(n, sizeof *B.pos, &B.oom);
    if (G->track_memory) {
        B.mark = xcalloc(n, sizeof *B.mark, &B.oom);
        B.root = xmalloc(n, sizeof *B.root, &B.oom);
    }
    if (!B.oom) {
        B.ident = 1;
        for (uint32_t i = 0; i < n; i++) {
            G->id[i] = order[i];
            B.pos[order[i]] = i;
            B.ident &= order[i] == i;
        }
        build_pass(&B);
    }
    if (!B.oom)
        build_nodes(&B);
    if (!B.oom && c->top_down)
        build_heights(&B);
    if (!B.oom && G->track_memory) {
        buffer_roots(&B);
        build_memory(&B);
    }
    free(B.pos);
    free(B.mark);
    free(B.root);
    if (B.oom)
        graph_free(G);
    return B.oom ? -1 : 0;
}

/* ---- pass 2: the list scheduler ------------------------------------------ */

/* next_ready_stack is a std heap (std::push_heap / std::pop_heap with
 * ready_time_cmp); nodes keep their place when their ready time changes after
 * they are scheduled, so its front is reproduced by running the same
 * algorithms (libstdc++'s) rather than by any priority queue. */
static int heap_less(const struct lhs_state *S, uint32_t a, uint32_t b)
{
    return S->node[a].ready > S->node[b].ready; /* XLA ready_time_cmp */
}

static void heap_sift_up(struct lhs_state *S, uint32_t hole, uint32_t top, uint32_t v)
{
    uint32_t *h = S->next_ready.v;
    while (hole > top && heap_less(S, h[(hole - 1) / 2], v)) {
        h[hole] = h[(hole - 1) / 2];
        hole = (hole - 1) / 2;
    }
    h[hole] = v;
}

static void heap_push(struct lhs_state *S, uint32_t v)
{
    S->next_ready.v[S->next_ready.n++] = v;
    heap_sift_up(S, S->next_ready.n - 1, 0, v);
}

static void heap_pop(struct lhs_state *S)
{
    uint32_t *h = S->next_ready.v;
    uint32_t len = --S->next_ready.n, hole = 0, child = 0;
    uint32_t v = h[len];
    if (!len)
        return;
    h[len] = h[0];
    while (child < (len - 1) / 2) {
        child = 2 * (child + 1);
        if (heap_less(S, h[child], h[child - 1]))
            child--;
        h[hole] = h[child];
        hole = child;
    }
    if ((len & 1) == 0 && child == (len - 2) / 2) {
        child = 2 * (child + 1);
        h[hole] = h[child - 1];
        hole = child - 1;
    }
    heap_sift_up(S, hole, 0, v);
}

static int fast_add(struct lhs_state *S, uint32_t v);
static void fast_remove(struct lhs_state *S, uint32_t v);

static void ready_push(struct lhs_state *S, uint32_t v)
{
    S->node[v].ready_pos = S->n_ready;
    S->ready_set[S->n_ready++] = v;
    S->node[v].where = LHS_W_READY;
    if (S->fast && fast_add(S, v))
        S->oom = 1;
}

/* XLA: std::swap(*chosen, ready_set.back()); ready_set.pop_back(). */
static void ready_take(struct lhs_state *S, uint32_t v)
{
    uint32_t k = S->node[v].ready_pos, last = S->ready_set[--S->n_ready];
    S->ready_set[k] = last;
    S->node[last].ready_pos = k;
    if (S->fast)
        fast_remove(S, v);
}

static void enqueue(struct lhs_state *S, uint32_t v)
{
    int32_t grp = S->G->n_groups ? S->grp[v] : -1;
    if ((S->G->node[v].bits & LHS_NOP) && grp < 0) {
        S->nops[S->n_nops++] = v;
        S->node[v].where = LHS_W_NOP;
    } else {
        ready_push(S, v);
        if (grp >= 0 && grp == S->ongoing)
            S->ann_ready[S->n_ann_ready++] = v;
    }
}

/* XLA ScheduleComputation's annotation set-up: each group counts the
 * distinct non-members on its dep side (bottom-up: users, GetNumSuccessors-
 * ForAnnotation; top-down: operands), and is ready when there are none. */
static int group_init(struct lhs_state *S)
{
    const struct lhs_graph *G = S->G;
    uint32_t *mark = G->n_groups ? calloc(G->n, sizeof *mark) : NULL;
    if (G->n_groups && !mark)
        return -1;
    for (uint32_t i = 0; G->n_groups && i < G->n; i++) {
        S->grp[i] = G->group[i];
        if (G->group[i] >= 0)
            S->grp_size[G->group[i]]++;
    }
    for (uint32_t k = 0; k < G->n_groups; k++) {
        for (uint32_t i = 0; i < G->n; i++) {
            if (G->group[i] != (int32_t)k)
                continue;
            for (uint32_t e = G->node[i].dep_off; e < G->node[i].dep_end; e++) {
                uint32_t w = G->dep[e];
                if (G->group[w] != (int32_t)k && mark[w] != k + 1) {
                    mark[w] = k + 1;
                    S->grp_all[k]++;
                }
            }
        }
        if (!S->grp_all[k])
            S->ready_groups[S->n_ready_groups++] = k;
    }
    free(mark);
    return 0;
}

static int state_init(struct lhs_state *S, const struct lhs_graph *G,
                      const struct lhs_config *c, uint64_t limit)
{
    uint32_t n = G->n;
    int oom = 0;
    memset(S, 0, sizeof *S);
    S->G = G;
    S->cfg = c;
    S->memory_limit = limit;
    S->node = G->node;
    S->ready_set = xmalloc(n, sizeof *S->ready_set, &oom);
    S->nops = xmalloc(n, sizeof *S->nops, &oom);
    S->next_ready.v = xmalloc(n, sizeof *S->next_ready.v, &oom);
    S->seq = xmalloc(n, sizeof *S->seq, &oom);
    if (G->track_memory) {
        S->live = xcalloc(n, 1, &oom);
        S->mem_stamp = xcalloc(n, sizeof *S->mem_stamp, &oom);
        S->mem_inc = xcalloc(n, sizeof *S->mem_inc, &oom);
        S->mem_peak_inc = xcalloc(n, sizeof *S->mem_peak_inc, &oom);
    }
    if (G->n_groups) { /* annotation state: read only when there are groups */
        S->grp = xcalloc(n, sizeof *S->grp, &oom);
        S->holding = xcalloc(n, 1, &oom);
        S->after_target = xcalloc(n, 1, &oom);
        S->ann_ready = xmalloc(n, sizeof *S->ann_ready, &oom);
    }
    S->grp_all = xcalloc(G->n_groups + 1, sizeof *S->grp_all, &oom);
    S->grp_seen = xcalloc(G->n_groups + 1, sizeof *S->grp_seen, &oom);
    S->grp_size = xcalloc(G->n_groups + 1, sizeof *S->grp_size, &oom);
    S->ready_groups = xcalloc(G->n_groups + 1, sizeof *S->ready_groups, &oom);
    if (oom)
        return -1;
    S->ongoing = -1;
    if (group_init(S))
        return -1;
    for (int r = 0; r < LHS_R_COUNT; r++)
        S->avail[r] = c->limit[r];
    /* one pass over the records, which come zeroed from build_graph (rnis 0,
     * where LHS_W_WAITING).  GetReadyNodesIfScheduled: the nodes i releases
     * that wait for i alone; counted from their side (their one dep), a write
     * per such node instead of a read per edge: dep and rel are each other's
     * transpose. */
    for (uint32_t i = 0; i < n; i++) {
        struct lhs_node *x = &S->node[i];
        x->deg = (int32_t)(x->dep_end - x->dep_off);
        for (uint32_t e = x->dep_off; e < x->dep_end; e++)
            x->dep_xor ^= G->dep[e];
        x->ready = -INFINITY; /* waiting: the latest dep time so far (release) */
        if (x->deg == 1)
            S->node[G->dep[x->dep_off]].rnis++;
        if (!c->top_down && G->track_memory && (G->node[i].bits & LHS_PINNED)) {
            S->live[i] = 1; /* harness model: never freed, so live at the bottom */
            S->mem += (int64_t)G->bytes[i];
        }
        if (!S->node[i].deg) { /* XLA FindBottomRoots / FindTopRoots */
            S->node[i].ready = 0;
            enqueue(S, i);
        }
    }
    return 0;
}

static void state_free(struct lhs_state *S)
{
    free(S->ready_set);
    free(S->nops);
    free(S->next_ready.v);
    free(S->seq);
    free(S->live);
    free(S->mem_stamp);
    free(S->mem_inc);
    free(S->mem_peak_inc);
    free(S->grp);
    free(S->holding);
    free(S->after_target);
    free(S->ann_ready);
    free(S->grp_all);
    free(S->grp_seen);
    free(S->grp_size);
    free(S->ready_groups);
}

/* XLA MemoryPressureTracker::UpdateBuffers. */
static void update_buffers(struct lhs_state *S, uint32_t v)
{
    const struct lhs_graph *G = S->G;
    for (uint32_t k = G->alloc_off[v]; k < G->alloc_off[v + 1]; k++) {
        uint32_t b = G->alloc[k];
        if (!S->live[b]) {
            S->live[b] = 1;
            S->mem += (int64_t)G->bytes[b];
        }
    }
    if (S->mem > S->mem_peak)
        S->mem_peak = S->mem;
    for (uint32_t k = G->freed_off[v]; k < G->freed_off[v + 1]; k++) {
        uint32_t b = G->freed[k];
        if (S->live[b]) {
            S->live[b] = 0;
            S->mem -= (int64_t)G->bytes[b];
        }
    }
}

/* A node on the dep side of t sees one more released neighbour with a single
 * unscheduled dep (XLA UpdateReadyNodesIfScheduled, recomputed when a degree
 * drops to 1: counts only grow while the node waits, so +1 is the same). */
static void fast_rnis_up(struct lhs_state *S, uint32_t v);

static void degree_one(struct lhs_state *S, uint32_t t)
{
    /* XLA raises the count of every dep of t; only the one not scheduled
     * can be a candidate again, and it is the xor of t's deps without those
     * scheduled (each scheduled dep's entries went into dep_xor_done) */
    uint32_t w = S->node[t].dep_xor ^ S->node[t].dep_xor_done;
    S->node[w].rnis++;
    if (S->fast)
        fast_rnis_up(S, w);
}

/* Latest ready time plus latency over the already scheduled deps of v. */
static double dep_time(const struct lhs_state *S, uint32_t v, double t)
{
    const struct lhs_graph *G = S->G;
    for (uint32_t e = G->node[v].dep_off; e < G->node[v].dep_end; e++) {
        double x = S->node[G->dep[e]].ready + G->dep_lat[e];
        if (x > t)
            t = x;
    }
    return t;
}

/* A dep v of t was scheduled: x is its time plus the edge's latency.  While t
 * waits, its ready field gathers the latest such x (XLA takes the maximum
 * over the deps when the last one is scheduled; gathered as they come, the
 * deps' records are not read again). */
static void release(struct lhs_state *S, uint32_t v, uint32_t t, double x, double now)
{
    const struct lhs_graph *G = S->G;
    if (x > S->node[t].ready)
        S->node[t].ready = x;
    S->node[t].dep_xor_done ^= v;
    if (S->node[t].deg != 1) {
        if (--S->node[t].deg == 1)
            degree_one(S, t);
        return;
    }
    S->node[t].deg = 0;
    if (now > S->node[t].ready) /* = dep_time(S, t, now) */
        S->node[t].ready = now;
    if (G->node[t].occ >= 0)
        S->queued[G->node[t].occ]++;
    enqueue(S, t);
    if ((S->node[t].where & LHS_W_STATE) == LHS_W_READY && S->node[t].ready > now)
        heap_push(S, t);
}

/* XLA DefaultSchedulerCore::ScheduleNode; returns the new current time. */
static double schedule_node(struct lhs_state *S, uint32_t v)
{
    const struct lhs_graph *G = S->G;
    S->seq[S->n_seq++] = v;
    S->node[v].where = LHS_W_DONE;
    if (S->n_holding && S->holding[v]) {
        S->holding[v] = 0;
        S->n_holding--;
    }
    /* XLA ScheduleNode: v is on the frontier of each other group among the
     * nodes it releases (GetPredecessorAnnotations bottom-up); a group whose
     * whole frontier is scheduled becomes ready */
    for (uint32_t e = G->node[v].rel_off; G->n_groups && e < G->node[v].rel_end; e++) {
        int32_t k = S->grp[G->rel[e]];
        int seen = k == S->grp[v];
        for (uint32_t f = G->node[v].rel_off; f < e && !seen; f++)
            seen = S->grp[G->rel[f]] == k;
        if (seen || k < 0)
            continue;
        if (++S->grp_seen[k] == S->grp_all[k])
            S->ready_groups[S->n_ready_groups++] = (uint32_t)k;
    }
    if (G->node[v].relr >= 0)
        S->avail[G->node[v].relr]++;
    if (G->node[v].occ >= 0) {
        S->avail[G->node[v].occ]--;
        S->queued[G->node[v].occ]--;
    }
    /* XLA recomputes the deps' latest time; the ready time holds it, taken
     * with an earlier current time, which cannot exceed today's when no cost
     * is negative (or NaN): time only moves forward.  Else recompute. */
    double at = G->forward ? (S->now > S->node[v].ready ? S->now : S->node[v].ready)
                           : dep_time(S, v, S->now);
    S->node[v].ready = at;
    double now = at + G->node[v].cost;
    while (S->next_ready.n && S->node[S->next_ready.v[0]].ready < now)
        heap_pop(S);
    for (uint32_t e = G->node[v].rel_off; e < G->node[v].rel_end; e++)
        release(S, v, G->rel[e], at + G->rel_lat[e], now);
    if (G->track_memory)
        update_buffers(S, v);
    return now;
}

/* ---- pass 2b: XLA's ready-set comparison (ReadySetLt::AIsBetterThanB) ---- */

/* XLA CmpExplicit: decides when the values differ, a wins on the larger. */
#define CMP(pa, pb)                                                            \
    do {                                                                       \
        if ((pa) != (pb))                                                      \
            return (pa) > (pb);                                                \
    } while (0)

/* XLA MemoryPressureDifference: (bytes the node would add, bytes it would add
 * before its frees). */
static void mem_diff(const struct lhs_state *S, uint32_t v, int64_t *inc, int64_t *peak)
{
    const struct lhs_graph *G = S->G;
    int64_t add = 0, sub = 0;
    for (uint32_t k = G->alloc_off[v]; k < G->alloc_off[v + 1]; k++)
        if (!S->live[G->alloc[k]])
            add += (int64_t)G->bytes[G->alloc[k]];
    for (uint32_t k = G->freed_off[v]; k < G->freed_off[v + 1]; k++) {
        uint32_t b = G->freed[k];
        int allocated_here = 0; /* harness model: a node frees its own buffer */
        for (uint32_t j = G->alloc_off[v]; j < G->alloc_off[v + 1] && !S->live[b]; j++)
            allocated_here |= G->alloc[j] == b;
        if (S->live[b] || allocated_here)
            sub += (int64_t)G->bytes[b];
    }
    *inc = add - sub;
    *peak = add;
}

/* XLA GetMemoryPressureChanges, cached for the current step: bottom-up a done
 * also counts its start's change (min increase, max peak). */
static void mem_change(struct lhs_state *S, uint32_t v, int64_t *inc, int64_t *peak)
{
    const struct lhs_graph *G = S->G;
    if (S->mem_stamp[v] != S->step) {
        int64_t a, b;
        mem_diff(S, v, &a, &b);
        if (!S->cfg->top_down && (G->node[v].bits & LHS_SUP_DONE) &&
            (G->node[G->partner[v]].bits & LHS_SUP_START)) {
            int64_t sa, sb;
            mem_diff(S, G->partner[v], &sa, &sb);
            a = sa < a ? sa : a;
            b = sb > b ? sb : b;
        }
        S->mem_stamp[v] = S->step;
        S->mem_inc[v] = a;
        S->mem_peak_inc[v] = b;
    }
    *inc = S->mem_inc[v];
    *peak = S->mem_peak_inc[v];
}

/* XLA: memory rules run only with a limit and above half of it. */
static int memory_active(const struct lhs_state *S)
{
    return S->memory_limit != UINT64_MAX && (uint64_t)S->mem > S->memory_limit / 2;
}

/* XLA ReadySetLt::MemoryPressurePolicy; -1 when it does not decide. */
static int memory_policy(struct lhs_state *S, uint32_t a, uint32_t b)
{
    const struct lhs_graph *G = S->G;
    int64_t ai, ap, bi, bp;
    uint64_t limit = S->memory_limit;
    mem_change(S, a, &ai, &ap);
    mem_change(S, b, &bi, &bp);
    if ((uint64_t)S->mem >= limit) {
        if (S->cfg->depth_memory) {
            int an = ai <= 0 && ai < bi, bn = bi <= 0 && bi < ai;
            if (an != bn) /* kNoIncreaseMemoryOverLimit */
                return an;
            if (G->graph_depth[a] != G->graph_depth[b]) /* kDepthOverLimit */
                return G->graph_depth[a] > G->graph_depth[b];
        }
        if (ai != bi) /* kDecreaseMemoryOverLimit */
            return ai < bi;
    }
    int af = (uint64_t)(ap + S->mem) <= limit, bf = (uint64_t)(bp + S->mem) <= limit;
    if (af != bf) /* kMemoryPeakOverLimit */
        return af;
    return -1;
}

static int resource_of_node(const struct lhs_graph *G, uint32_t v)
{
    return G->node[v].occ >= 0 ? G->node[v].occ : G->node[v].relr;
}

/* XLA IsResourceConstrained: its resource is used up and nodes wanting it wait. */
static int constrained(const struct lhs_state *S, uint32_t v)
{
    int r = resource_of_node(S->G, v);
    return r >= 0 && S->avail[r] <= 0 && S->queued[r] > 0;
}

static int releases(const struct lhs_graph *G, uint32_t v) { return G->node[v].relr >= 0; }

/* XLA AsyncDepth0CandidateCondition. */
static int not_zero_depth_start(const struct lhs_state *S, uint32_t v)
{
    return !(releases(S->G, v) && !(S->G->node[v].bits & LHS_DEPTH) && !constrained(S, v));
}

/* XLA ShouldDelaySendHostDone: a send_host done waits while its start's other
 * users leave more than the pair's latency to cover. */
static int delay_send_host_done(const struct lhs_state *S, uint32_t v)
{
    const struct lhs_graph *G = S->G;
    if (S->cfg->top_down || !(G->node[v].bits & LHS_SEND_HOST_DONE) ||
        G->node[v].occ != LHS_R_SEND_HOST)
        return 0;
    uint32_t s = G->partner[v];
    double latency = 0, est = 0;
    for (uint32_t e = G->node[s].dep_off; e < G->node[s].dep_end; e++) {
        uint32_t w = G->dep[e];
        /* XLA: a user not yet ready has ready time DBL_MAX */
        if ((S->node[w].where & LHS_W_STATE) == LHS_W_WAITING || S->node[w].ready >= DBL_MAX)
            return 0;
        if (w == v)
            latency = G->dep_lat[e];
        if (G->dep_lat[e] + S->node[w].ready > est)
            est = G->dep_lat[e] + S->node[w].ready;
    }
    return est - S->now > latency;
}

/* kScheduleDone (bottom-up) / kScheduleAsyncStart (top-down). */
static int opens_window(const struct lhs_state *S, uint32_t v)
{
    const struct lhs_graph *G = S->G;
    if (S->cfg->top_down)
        return (G->node[v].bits & LHS_SUP_START) && G->node[v].occ >= 0;
    if (G->force[v] & LHS_WHILE_RES) /* DoesOccupyAnyResource */
        return 1;
    return G->node[v].occ >= 0 && !delay_send_host_done(S, v);
}

/* XLA ReleaseStartPolicy; -1 when it does not decide. */
static int release_start_policy(const struct lhs_state *S, uint32_t a, uint32_t b)
{
    double ai = S->node[a].ready - S->now, bi = S->node[b].ready - S->now;
    int ar = ai <= 0 && S->G->node[a].relr == LHS_R_COLLECTIVE_PERMUTE;
    int br = bi <= 0 && S->G->node[b].relr == LHS_R_COLLECTIVE_PERMUTE;
    if (ar != br)
        return ar;
    if (ar && br && ai != bi)
        return ai > bi;
    return -1;
}

/* kAvoidWaste needs the earliest pending ready time. */
static int avoid_waste(const struct lhs_state *S, uint32_t a, uint32_t b)
{
    const struct lhs_graph *G = S->G;
    double latest = S->node[S->next_ready.v[0]].ready;
    double ad = fabs(latest - S->now - G->node[a].cost);
    double bd = fabs(latest - S->now - G->node[b].cost);
    int aw = !releases(G, a) && ad < bd, bw = !releases(G, b) && bd < ad;
    return aw != bw ? aw : -1;
}

/* Rules after kLessStall (shared by the scan and the fast selection's final
 * comparison of tied candidates). */
static int better_tail(struct lhs_state *S, uint32_t a, uint32_t b, int mem_on)
{
    const struct lhs_config *c = S->cfg;
    const struct lhs_graph *G = S->G;
    if (c->aggressive && !c->depth_over_stall) /* kStartAtZeroDepth */
        CMP(not_zero_depth_start(S, a), not_zero_depth_start(S, b));
    CMP(releases(G, a) && constrained(S, a), /* kFreeBackedupResource */
        releases(G, b) && constrained(S, b));
    if (c->aggressive) {
        CMP(G->node[a].async_key, G->node[b].async_key); /* kAsyncDepth / kAsyncHeight */
        if (S->next_ready.n) {
            int w = avoid_waste(S, a, b); /* kAvoidWaste */
            if (w >= 0)
                return w;
        }
    }
    CMP((G->node[a].bits & LHS_UNLOCK) != 0, (G->node[b].bits & LHS_UNLOCK) != 0); /* kUnlockDone */
    if (c->aggressive)
        CMP(S->node[a].rnis, S->node[b].rnis); /* kCreatesMoreReadyNodes */
    if (mem_on) {
        int64_t ai, ap, bi, bp;
        mem_change(S, a, &ai, &ap);
        mem_change(S, b, &bi, &bp);
        CMP(ai < 0, bi < 0); /* kDecreaseMemory */
    }
    return c->top_down ? a < b : a > b; /* kOriginalOrder */
}

/* XLA CmpDirectional: top-down the larger value wins, bottom-up the smaller. */
#define CMP_DIR(x, y) CMP(c->top_down ? (x) : (y), c->top_down ? (y) : (x))

/* XLA ReadySetLt::AIsBetterThanB for the rules a graph can trigger (no
 * preferences, target rules or selective resources: those are XLA-internal
 * hooks the view has no place for). */
static int better(struct lhs_state *S, uint32_t a, uint32_t b)
{
    const struct lhs_config *c = S->cfg;
    const struct lhs_graph *G = S->G;
    if (G->any_force) {
        CMP_DIR(!(G->force[a] & LHS_FORCE_EARLY), !(G->force[b] & LHS_FORCE_EARLY)); /* kForceEarly */
        CMP_DIR((G->force[a] & LHS_FORCE_DELAY) != 0, (G->force[b] & LHS_FORCE_DELAY) != 0); /* kForceDelay */
        CMP_DIR(G->delay_prio[a], G->delay_prio[b]); /* kForceDelayPriority */
    }
    int mem_on = memory_active(S);
    if (mem_on) {
        int m = memory_policy(S, a, b);
        if (m >= 0)
            return m;
    }
    if (G->n_groups) /* kForceDelayAfterTarget (aggressive flexible annotations) */
        CMP_DIR(S->after_target[a], S->after_target[b]);
    if (c->by_structure) { /* kDelayAsyncStartOfSamePreference / ...Done... */
        uint8_t bit = c->top_down ? LHS_SUP_DONE : LHS_SUP_START;
        int ax = (G->node[a].bits & bit) != 0, bx = (G->node[b].bits & bit) != 0;
        CMP(!ax && bx, ax && !bx);
    }
    CMP(opens_window(S, a), opens_window(S, b)); /* kScheduleDone / kScheduleAsyncStart */
    if (G->any_force && (G->node[a].bits & LHS_SUP_DONE) && (G->node[b].bits & LHS_SUP_DONE) &&
        G->op[a] == G->op[b]) { /* kDelayDoneOfForceDelayedAsyncStart */
        uint32_t sa = G->partner[a], sb = G->partner[b];
        if (sa != LHS_NONE && sb != LHS_NONE)
            CMP_DIR((G->force[sa] & LHS_FORCE_DELAY) != 0, (G->force[sb] & LHS_FORCE_DELAY) != 0);
    }
    if (c->release_start) {
        int r = release_start_policy(S, a, b); /* kScheduleStart */
        if (r >= 0)
            return r;
    }
    if (c->aggressive && c->depth_over_stall) /* kStartAtZeroDepth, early */
        CMP(not_zero_depth_start(S, a), not_zero_depth_start(S, b));
    if (S->node[a].ready != S->node[b].ready) { /* kLessStall */
        double ai = S->node[a].ready - S->now, bi = S->node[b].ready - S->now;
        ai = ai > 0 ? ai : 0;
        bi = bi > 0 ? bi : 0;
        CMP(ai < bi, bi < ai);
    }
    return better_tail(S, a, b, mem_on);
}

/* XLA's default overlap-limit rule: a node that would occupy a resource with
 * no free slot is skipped. */
static int crosses_limit(const struct lhs_state *S, uint32_t v)
{
    int r = S->G->node[v].occ;
    if (r >= 0 && S->avail[r] < 1)
        return 1;
    /* a node calling computations: what they hold must fit */
    const int32_t *need = S->G->need ? S->G->need + (size_t)v * LHS_R_COUNT : NULL;
    for (int q = 0; need && q < LHS_R_COUNT; q++)
        if (need[q] > S->avail[q])
            return 1;
    return 0;
}

/* XLA FindAndExtractBestNodeAvailable: a linear scan of the ready set in its
 * vector order, keeping the better candidate. */
static uint32_t select_scan(struct lhs_state *S)
{
    uint32_t best = LHS_NONE;
    for (uint32_t k = 0; k < S->n_ready; k++) {
        uint32_t v = S->ready_set[k];
        if ((S->G->n_groups && S->grp[v] >= 0) || crosses_limit(S, v)) /* kAnnotationGroupNotReady */
            continue;
        if (best == LHS_NONE || better(S, v, best))
            best = v;
    }
    return best;
}

static uint32_t select_over_limit(struct lhs_state *S)
{
    uint32_t best = LHS_NONE;
    for (uint32_t k = 0; k < S->n_ready; k++)
        if (best == LHS_NONE || better(S, S->ready_set[k], best))
            best = S->ready_set[k];
    return best;
}

/* ---- pass 2e: annotated groups -------------------------------------------- */

/* XLA GetNumResourcesNeededForAnnotation: what a group holds at once, by
 * resource.  Only dones count (GetNumResourcesPerInstruction counts the
 * resources an instruction occupies).  A generic async-done adds one when
 * its start is outside the group or with use_max; other dones need one.
 * With keep_original_sequence_order_in_group, a running count over the
 * members by original position, latest first: a done takes one, a start
 * gives its done's back (signs flipped top-down). */
static void group_needs(const struct lhs_state *S, uint32_t k, int use_max, int64_t *need)
{
    const struct lhs_graph *G = S->G;
    int td = S->cfg->top_down;
    memset(need, 0, LHS_R_COUNT * sizeof *need);
    uint32_t first = LHS_NONE;
    for (uint32_t i = 0; i < G->n && first == LHS_NONE; i++)
        if (G->group[i] == (int32_t)k)
            first = i;
    if (first != LHS_NONE && (G->force[first] & LHS_KEEP_ORDER)) {
        int64_t cur[LHS_R_COUNT] = {0};
        for (uint32_t i = G->n; i-- > 0;) {
            if (G->group[i] != (int32_t)k)
                continue;
            uint32_t d = (G->node[i].bits & LHS_SUP_START) ? G->partner[i] : i;
            int r = d == LHS_NONE ? -1 : G->node[d].occ >= 0 ? G->node[d].occ : G->node[d].relr;
            if (r < 0 || !(G->node[d].bits & LHS_SUP_DONE))
                continue;
            cur[r] += ((G->node[i].bits & LHS_SUP_START) != 0) == td ? 1 : -1;
            for (int q = 0; q < LHS_R_COUNT; q++)
                if (cur[q] > need[q])
                    need[q] = cur[q];
        }
        return;
    }
    for (uint32_t i = 0; G->need && i < G->n; i++) /* members calling computations */
        for (int q = 0; G->group[i] == (int32_t)k && q < LHS_R_COUNT; q++)
            if (G->need[(size_t)i * LHS_R_COUNT + q] > need[q])
                need[q] = G->need[(size_t)i * LHS_R_COUNT + q];
    for (uint32_t i = 0; i < G->n; i++) {
        if (G->group[i] != (int32_t)k || !(G->node[i].bits & LHS_SUP_DONE))
            continue;
        int r = G->node[i].occ >= 0 ? G->node[i].occ : G->node[i].relr;
        if (r < 0)
            continue;
        uint32_t s = G->partner[i];
        if ((G->force[i] & LHS_ASYNC_DONE_OP) &&
            (use_max || s == LHS_NONE || G->group[s] != (int32_t)k))
            need[r]++;
        else if (need[r] < 1)
            need[r] = 1;
    }
}

/* XLA AnnotationReadySetLt: 1 when candidate a beats the chosen b.  Members
 * that keep the original order go latest first; then a done (it occupies,
 * bottom-up), then anything but a start; ties go to the candidate. */
static int annotated_better(const struct lhs_state *S, uint32_t a, uint32_t b)
{
    const struct lhs_graph *G = S->G;
    if ((G->force[a] & LHS_KEEP_ORDER) && (G->force[b] & LHS_KEEP_ORDER))
        return a > b; /* kOriginalSequenceOrder */
    int aw = (G->force[a] & LHS_WHILE_RES) != 0, bw = (G->force[b] & LHS_WHILE_RES) != 0;
    int ao = G->node[a].occ >= 0 || aw, bo = G->node[b].occ >= 0 || bw;
    if (ao != bo)
        return ao; /* kAnnotatedAsyncDone */
    int ar = G->node[a].relr >= 0 || aw, br = G->node[b].relr >= 0 || bw;
    if (ar != br)
        return br; /* kAnnotatedNotAsyncStart */
    return 1;      /* kAnnotatedNoReason */
}

/* XLA ScheduleAnnotation: the ready members first, then each member as it
 * becomes ready, until none is left; members that could not be scheduled in
 * one go lose their annotation and go back to the ready set. */
static void schedule_group(struct lhs_state *S, uint32_t k)
{
    const struct lhs_graph *G = S->G;
    uint32_t done = 0, given_back = 0;
    S->n_ann_ready = 0;
    for (uint32_t j = 0; j < S->n_ready; j++)
        if (S->grp[S->ready_set[j]] == (int32_t)k)
            S->ann_ready[S->n_ann_ready++] = S->ready_set[j];
    S->ongoing = (int32_t)k;
    while (S->n_ann_ready && !S->oom) {
        uint32_t best = LHS_NONE;
        for (uint32_t j = 0; j < S->n_ann_ready; j++) {
            if (crosses_limit(S, S->ann_ready[j])) /* FindAndExtractBestAnnotatedNode */
                continue;
            if (best == LHS_NONE || annotated_better(S, S->ann_ready[j], S->ann_ready[best]))
                best = j;
        }
        if (best == LHS_NONE)
            break; /* every ready member waits for a resource: the rest lose the group */
        uint32_t v = S->ann_ready[best];
        S->ann_ready[best] = S->ann_ready[--S->n_ann_ready];
        if (S->cfg->flexible && done == S->grp_size[k] - 1 && (G->node[v].bits & LHS_SUP_START)) {
            given_back++; /* flexible: the last start goes back to the ready set */
            S->grp[v] = -1;
            if (S->cfg->flexible_aggressive)
                S->after_target[v] = 1;
            S->holding[v] = 1;
            S->n_holding++;
            continue;
        }
        ready_take(S, v);
        S->now = schedule_node(S, v);
        done++;
    }
    S->ongoing = -1;
    if (done < S->grp_size[k] - given_back)
        for (uint32_t i = 0; i < G->n; i++)
            if (S->grp[i] == (int32_t)k && (S->node[i].where & LHS_W_STATE) != LHS_W_DONE) {
                S->grp[i] = -1;
                if (!S->holding[i]) {
                    S->holding[i] = 1;
                    S->n_holding++;
                }
            }
}

/* XLA TryScheduleOneAnnotationGroup: the first ready group that fits the
 * free resources (all of it, or use_max = 0: its minimum), unless a node
 * that lost its annotation still waits. */
static int try_group(struct lhs_state *S, int use_max)
{
    if (!S->n_ready_groups || S->n_holding)
        return 0;
    for (uint32_t j = 0; j < S->n_ready_groups; j++) {
        int64_t need[LHS_R_COUNT];
        uint32_t k = S->ready_groups[j];
        group_needs(S, k, use_max, need);
        int fits = 1;
        for (int r = 0; r < LHS_R_COUNT; r++)
            fits &= need[r] <= S->avail[r];
        if (!fits)
            continue;
        S->ready_groups[j] = S->ready_groups[S->n_ready_groups - 1];
        S->n_ready_groups--;
        schedule_group(S, k);
        return 1;
    }
    return 0;
}

/* ---- pass 2c: one scheduling pass ---------------------------------------- */

static uint32_t select_node(struct lhs_state *S);
static int fast_init(struct lhs_state *S);
static void fast_free(struct lhs_fast *F);

/* XLA DefaultSchedulerCore::ScheduleComputation: nops first (LIFO), then the
 * best ready node.  Writes the order (view ids) and the tracker's peak. */
static int schedule_pass(const struct sb_graph_view *g, const struct lhs_config *c,
                         const uint32_t *in, uint64_t limit, uint32_t *out,
                         int64_t *peak, char *err, size_t n_err)
{
    struct lhs_graph G;
    struct lhs_state S;
    if (build_graph(g, c, in, &G))
        return sb_plugin_fail(err, n_err, "out of memory");
    int rc = state_init(&S, &G, c, limit);
    if (!rc && c->selection == LHS_SEL_FAST)
        rc = fast_init(&S);
    if (rc)
        rc = sb_plugin_fail(err, n_err, "out of memory");
    while (!rc && (S.n_ready || S.n_nops) && !S.oom) {
        uint32_t v;
        S.step++;
        if (G.n_groups && try_group(&S, 1))
            continue;
        if (S.n_nops) {
            v = S.nops[--S.n_nops];
        } else {
            v = select_node(&S);
            if (v == LHS_NONE && G.n_groups && try_group(&S, 0))
                continue;
            /* Every ready node waits for a resource that only a node behind
             * them can free: a start that feeds another start does this under
             * a limit of one (the bottom-up pass holds the later collective
             * while its start waits for the earlier one's done).  XLA stops
             * here; we take the best ready node over the limit, so a valid
             * graph always gets a schedule (docs/aggressive.md). */
            if (v == LHS_NONE)
                v = select_over_limit(&S);
            if (v == LHS_NONE) {
                rc = sb_plugin_fail(err, n_err, "no ready node fits the overlap limits "
                                                "(%u waiting)", S.n_ready);
                break;
            }
            ready_take(&S, v);
        }
        S.now = schedule_node(&S, v);
    }
    if (!rc && S.oom)
        rc = sb_plugin_fail(err, n_err, "out of memory");
    if (!rc && S.n_seq != G.n)
        rc = sb_plugin_fail(err, n_err, "scheduled %u of %u nodes: the graph has a cycle",
                            S.n_seq, G.n);
    for (uint32_t k = 0; !rc && k < G.n; k++) /* bottom-up: reverse */
        out[k] = G.id[S.seq[c->top_down ? k : G.n - 1 - k]];
    *peak = S.mem_peak;
    fast_free(S.fast);
    state_free(&S);
    graph_free(&G);
    return rc;
}

/* XLA schedules a computation only when it holds a supported async op or a
 * force_delay custom-call, async-start or async-done. */
static int has_async(const struct sb_graph_view *g, const struct lhs_config *c)
{
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        if ((g->kind[v] == SB_KIND_START || g->kind[v] == SB_KIND_DONE) &&
            supported(c, g->coll[v]))
            return 1;
        const char *op = g->op_names[g->op[v]];
        if (g->sched_hint && (g->sched_hint[v] & SB_HINT_FORCE_DELAY) &&
            (!strncmp(op, "custom-call", 11) || !strcmp(op, "async-start") ||
             !strcmp(op, "async-done")))
            return 1;
    }
    return 0;
}

/* ---- pass 3: rerun with a smaller memory limit --------------------------- */

/* One computation: XLA's RunImpl on it.  order holds the view's original
 * order on entry and the schedule on return. */
static int schedule_view(const struct sb_graph_view *g, const struct lhs_config *c,
                         uint32_t *order, int *engaged, char *err, size_t n_err)
{
    uint32_t n = g->n_nodes;
    for (uint32_t v = 0; v < n; v++)
        order[v] = v;
    if (!c->always && !has_async(g, c))
        return 0; /* XLA leaves the computation's sequence as it is */
    uint32_t *prev = malloc(((size_t)n + 1) * sizeof *prev);
    if (!prev)
        return sb_plugin_fail(err, n_err, "out of memory");
    uint64_t limit = c->memory_limit;
    int64_t peak = 0;
    int rc = schedule_pass(g, c, order, limit, prev, &peak, err, n_err);
    /* the memory rules read the tracker only above half the limit: below it
     * every decision was the one made without a limit */
    *engaged |= limit != UINT64_MAX && (uint64_t)peak > limit / 2;
    /* XLA LatencyHidingScheduler::RunImpl: reschedule, starting from the last
     * schedule, with the limit cut by 0.9 while the peak exceeds the original
     * limit */
    for (int64_t k = 0; !rc && k < c->rerun && (uint64_t)peak > c->memory_limit; k++) {
        limit = (uint64_t)((double)limit * 0.9);
        memcpy(order, prev, (size_t)n * sizeof *prev);
        rc = schedule_pass(g, c, order, limit, prev, &peak, err, n_err);
        *engaged = 1;
    }
    if (!rc)
        memcpy(order, prev, (size_t)n * sizeof *prev);
    free(prev);
    return rc;
}

/* ---- pass 0: one computation at a time ------------------------------------
 *
 * XLA's LatencyHidingScheduler schedules each computation of a module on its
 * own (RunImpl walks the module's non-fusion computations): a while is one
 * instruction of its caller, its body is scheduled apart, and no instruction
 * leaves the computation it is in.  An importer that expands a loop by its
 * trip count keeps that structure in the view's scopes (one per iteration).
 * Scheduled as one flat graph instead, the expanded Llama 3.1 70B step let
 * each backward iteration's weight-gradient products and reductions drift
 * past the iterations after it, and their operands stayed live across the
 * whole backward loop (730 GB, docs/aggressive.md "Memory that fits").
 *
 * So each scope is a graph of its own (a sub-view): its nodes, plus one node
 * per loop it holds, standing for all of that loop's iterations the way the
 * while instruction does.  Edges between a loop and the rest of the scope
 * become edges of that node; edges from outside the scope are dropped (XLA's
 * parameters of a called computation).  The scope's schedule places each
 * loop's iterations, each scheduled the same way, where its node is. */

struct comp_sched {
    const struct sb_graph_view *g;
    const struct lhs_config *c;
    uint32_t *out;       /* the schedule, filled in order */
    uint32_t n_out;
    uint32_t *by_scope;  /* [n] view ids sorted by scope's DFS position, then id */
    uint32_t *first;     /* [n_scopes + 1] subtree of scope s (DFS): by_scope[first[s]..last[s]) */
    uint32_t *last;      /* [n_scopes] */
    uint32_t *loop_off, *loop_of;  /* CSR: loops of each scope, by first node */
    uint32_t *iter_off, *iter_of;  /* CSR: iterations of each loop, by iteration */
    uint32_t *depth;     /* [n_scopes] */
    uint32_t *pos, *end; /* [n_scopes] DFS position of scope s, and past its subtree */
    uint32_t *rep;       /* [n] scratch: the sub-view node a view node maps to */
    uint32_t while_op;   /* op index of "while", or n_ops (appended by sub-views) */
    int engaged;         /* some computation's memory rules were read */
    char *err;
    size_t n_err;
};

struct subview {
    struct sb_graph_view v;
    uint8_t *kind, *coll;
    uint32_t *flags, *pred_off, *pred, *succ_off, *succ, *partner, *op, *units, *stream,
        *group_size, *holds;
    double *cost_us, *dur_us, *comm_us;
    uint64_t *out_bytes, *comm_bytes, *name_off;
    int32_t *device, *sched_group, *sched_iter, *sched_priority;
    uint8_t *sched_hint, *pred_after;
    const char **op_names;
    uint32_t *id;        /* [m] view id of a member; a loop node's loop */
    uint8_t *is_loop;    /* [m] */
    uint32_t n_mem;
};

static void subview_free(struct subview *S)
{
    free(S->kind), free(S->coll), free(S->flags), free(S->pred_off), free(S->pred);
    free(S->succ_off), free(S->succ), free(S->partner), free(S->op), free(S->units);
    free(S->stream), free(S->group_size), free(S->holds), free(S->cost_us), free(S->dur_us);
    free(S->comm_us), free(S->out_bytes), free(S->comm_bytes), free(S->name_off);
    free(S->device), free(S->sched_group), free(S->sched_iter), free(S->sched_priority);
    free(S->sched_hint), free(S->pred_after), free(S->op_names), free(S->id);
    free(S->is_loop);
}

static int subview_alloc(struct subview *S, uint32_t m, uint64_t e, int annotated, int after)
{
    size_t M = (size_t)m + 1, E = (size_t)e + 1;
    S->kind = calloc(M, 1), S->coll = calloc(M, 1), S->flags = calloc(M, 4);
    S->pred_off = calloc(M + 1, 4), S->pred = calloc(E, 4), S->succ_off = calloc(M + 1, 4);
    S->succ = calloc(E, 4), S->partner = calloc(M, 4), S->op = calloc(M, 4);
    S->units = calloc(M, 4), S->stream = calloc(M, 4), S->group_size = calloc(M, 4);
    S->holds = calloc(M * SB_COLL_COUNT, 4), S->cost_us = calloc(M, 8);
    S->dur_us = calloc(M, 8), S->comm_us = calloc(M, 8), S->out_bytes = calloc(M, 8);
    S->comm_bytes = calloc(M, 8), S->name_off = calloc(M, 8), S->device = calloc(M, 4);
    S->id = calloc(M, 4);
    if (annotated) {
        S->sched_group = calloc(M, 4), S->sched_iter = calloc(M, 4);
        S->sched_priority = calloc(M, 4), S->sched_hint = calloc(M, 1);
    }
    if (after)
        S->pred_after = calloc(E, 1);
    return !S->kind || !S->coll || !S->flags || !S->pred_off || !S->pred || !S->succ_off ||
           !S->succ || !S->partner || !S->op || !S->units || !S->stream || !S->group_size ||
           !S->holds || !S->cost_us || !S->dur_us || !S->comm_us || !S->out_bytes ||
           !S->comm_bytes || !S->name_off || !S->device || !S->id ||
           (annotated && (!S->sched_group || !S->sched_iter || !S->sched_priority ||
                          !S->sched_hint)) ||
           (after && !S->pred_after);
}

/* Copies view node v's fields to sub-view node i. */
static void copy_member(struct subview *S, const struct sb_graph_view *g, uint32_t i, uint32_t v)
{
    S->id[i] = v;
    S->kind[i] = g->kind[v], S->coll[i] = g->coll[v], S->flags[i] = g->flags[v];
    S->op[i] = g->op[v], S->units[i] = g->units_used[v], S->stream[i] = g->stream[v];
    S->group_size[i] = g->group_size[v], S->cost_us[i] = g->cost_us[v];
    S->dur_us[i] = g->dur_us[v], S->comm_us[i] = g->comm_us[v];
    S->out_bytes[i] = g->out_bytes[v], S->comm_bytes[i] = g->comm_bytes[v];
    S->name_off[i] = g->name_off[v], S->device[i] = g->device[v];
    if (g->holds)
        memcpy(S->holds + (size_t)i * SB_COLL_COUNT, g->holds + (size_t)v * SB_COLL_COUNT,
               SB_COLL_COUNT * sizeof *S->holds);
    if (S->sched_group) {
        S->sched_group[i] = g->sched_group[v], S->sched_iter[i] = g->sched_iter[v];
        S->sched_priority[i] = g->sched_priority[v], S->sched_hint[i] = g->sched_hint[v];
    }
}

/* Loop node i standing for the nodes by_scope[b..e) (a loop's iterations):
 * a while instruction of the scope, costing its compute run one node after
 * another, holding one slot of each collective type its body uses (XLA
 * gives a while its body's resources). */
static void fill_loop(struct subview *S, const struct comp_sched *C, uint32_t i, uint32_t b,
                      uint32_t e)
{
    const struct sb_graph_view *g = C->g;
    S->kind[i] = SB_KIND_COMPUTE, S->op[i] = C->while_op, S->units[i] = 1;
    S->comm_us[i] = -1, S->device[i] = -1, S->name_off[i] = g->name_off[C->by_scope[b]];
    if (S->sched_group)
        S->sched_group[i] = -1, S->sched_iter[i] = SB_NO_ITER;
    for (uint32_t k = b; k < e; k++) {
        uint32_t u = C->by_scope[k];
        if (g->kind[u] == SB_KIND_COMPUTE)
            S->dur_us[i] += g->dur_us[u];
        if (g->kind[u] == SB_KIND_START)
            S->holds[(size_t)i * SB_COLL_COUNT + g->coll[u]] = 1;
        for (int t = 0; g->holds && t < SB_COLL_COUNT; t++)
            if (g->holds[(size_t)u * SB_COLL_COUNT + t])
                S->holds[(size_t)i * SB_COLL_COUNT + t] = 1;
    }
}

/* Points S->v at S's arrays; the rest is the whole view's. */
static void subview_view(struct subview *S, const struct comp_sched *C, uint32_t m, uint32_t ne)
{
    const struct sb_graph_view *g = C->g;
    struct sb_graph_view *v = &S->v;
    *v = *g;
    v->n_nodes = m, v->n_edges = ne;
    v->kind = S->kind, v->coll = S->coll, v->flags = S->flags, v->cost_us = S->cost_us;
    v->out_bytes = S->out_bytes, v->comm_bytes = S->comm_bytes, v->group_size = S->group_size;
    v->comm_us = S->comm_us, v->device = S->device, v->pred_off = S->pred_off;
    v->pred = S->pred, v->succ_off = S->succ_off, v->succ = S->succ, v->partner = S->partner;
    v->op = S->op, v->n_ops = C->while_op < g->n_ops ? g->n_ops : g->n_ops + 1;
    v->op_names = S->op_names ? S->op_names : g->op_names, v->name_off = S->name_off;
    v->dur_us = S->dur_us, v->dev_dur_us = S->dur_us, v->units_used = S->units;
    v->dev_offload = NULL, v->stream = S->stream, v->holds = S->holds;
    v->sched_group = S->sched_group, v->sched_iter = S->sched_iter;
    v->sched_hint = S->sched_hint, v->sched_priority = S->sched_priority;
    v->res_use = NULL, v->pred_after = S->pred_after;
    v->scope = NULL, v->n_scopes = 1, v->n_loops = 0;
    v->scope_parent = v->scope_loop = v->scope_iter = NULL;
}

/* Whether view node u is in scope P's subtree (P or a loop iteration below). */
static int in_subtree(const struct comp_sched *C, uint32_t u, uint32_t P)
{
    uint32_t d = C->pos[C->g->scope[u]];
    return d >= C->pos[P] && d < C->end[P];
}

/* Kahn's algorithm on the sub-view's provisional numbering, smallest key
 * first (a node's first view id), so that a scope whose nodes and loops come
 * in order keeps it.  Returns the number placed (fewer: a cycle through a
 * loop node, which a valid expansion never makes). */
static uint32_t sub_topo(uint32_t m, const uint32_t *off, const uint32_t *in,
                         const uint32_t *key, uint32_t *order, int *oom)
{
    uint32_t *deg = calloc((size_t)m + 1, sizeof *deg), *soff = calloc((size_t)m + 2, 4);
    uint32_t *succ = malloc(((size_t)off[m] + 1) * sizeof *succ), *heap = malloc(((size_t)m + 1) * 4);
    uint32_t placed = 0, nh = 0;
    if (!deg || !soff || !succ || !heap) {
        *oom = 1;
        goto out;
    }
    for (uint32_t x = 0; x < m; x++)
        for (uint32_t e = off[x]; e < off[x + 1]; e++)
            deg[x]++, soff[in[e] + 1]++;
    for (uint32_t x = 0; x < m; x++)
        soff[x + 1] += soff[x];
    for (uint32_t x = 0; x < m; x++)
        for (uint32_t e = off[x]; e < off[x + 1]; e++)
            succ[soff[in[e]]++] = x;
    for (uint32_t x = m; x-- > 0;)
        soff[x + 1] = soff[x];
    soff[0] = 0;
    for (uint32_t x = 0; x < m; x++)
        if (!deg[x])
            heap[nh++] = x; /* increasing keys: already a heap */
    while (nh) {
        uint32_t x = heap[0], h = 0;
        heap[0] = heap[--nh];
        for (;;) { /* sift down by key */
            uint32_t l = 2 * h + 1, r = l + 1, b = h;
            if (l < nh && key[heap[l]] < key[heap[b]])
                b = l;
            if (r < nh && key[heap[r]] < key[heap[b]])
                b = r;
            if (b == h)
                break;
            uint32_t t = heap[h];
            heap[h] = heap[b], heap[b] = t, h = b;
        }
        order[placed++] = x;
        for (uint32_t e = soff[x]; e < soff[x + 1]; e++)
            if (!--deg[succ[e]]) {
                uint32_t k = nh++;
                heap[k] = succ[e];
                while (k && key[heap[(k - 1) / 2]] > key[heap[k]]) { /* sift up */
                    uint32_t t = heap[k];
                    heap[k] = heap[(k - 1) / 2], heap[(k - 1) / 2] = t, k = (k - 1) / 2;
                }
            }
    }
out:
    free(deg), free(soff), free(succ), free(heap);
    return placed;
}

/* Scope P's graph.  Pass 1 numbers P's own nodes 0.. (view order) and its
 * loops after them, mapping every node of P's subtree in rep; pass 2 lists
 * each node's distinct predecessors in that numbering; pass 3 puts the nodes
 * in a topological order and writes the sub-view. */
static int build_subview(struct comp_sched *C, uint32_t P, struct subview *S)
{
    const struct sb_graph_view *g = C->g;
    uint32_t b = C->first[P], e = C->last[P], n_own = 0;
    uint32_t L0 = C->loop_off[P], nl = C->loop_off[P + 1] - L0, ne = 0;
    int oom = 0, rc = -1;
    while (b + n_own < e && g->scope[C->by_scope[b + n_own]] == P)
        n_own++;
    uint32_t m = n_own + nl;
    /* pass 1 */
    uint32_t *key = malloc(((size_t)m + 1) * sizeof *key);
    uint32_t *lo = malloc(((size_t)nl + 1) * sizeof *lo), *hi = malloc(((size_t)nl + 1) * 4);
    uint64_t n_in = 0;
    if (!key || !lo || !hi)
        goto out;
    for (uint32_t i = 0; i < n_own; i++) {
        C->rep[C->by_scope[b + i]] = i;
        key[i] = C->by_scope[b + i];
    }
    for (uint32_t j = 0; j < nl; j++) {
        uint32_t l = C->loop_of[L0 + j];
        uint32_t it0 = C->iter_of[C->iter_off[l]], it1 = C->iter_of[C->iter_off[l + 1] - 1];
        lo[j] = C->first[it0], hi[j] = C->last[it1];
        key[n_own + j] = UINT32_MAX;
        for (uint32_t k = lo[j]; k < hi[j]; k++) {
            uint32_t u = C->by_scope[k];
            C->rep[u] = n_own + j;
            key[n_own + j] = u < key[n_own + j] ? u : key[n_own + j];
        }
    }
    for (uint32_t k = b; k < e; k++)
        n_in += g->pred_off[C->by_scope[k] + 1] - g->pred_off[C->by_scope[k]];
    /* pass 2: provisional predecessor lists; a repeated one is kept once
     * (stamp), a member's in its view order so that an alias's buffer and a
     * done's start stay first */
    uint32_t *poff = calloc((size_t)m + 1, sizeof *poff), *pin = malloc((n_in + 1) * 4);
    uint32_t *stamp = malloc(((size_t)m + 1) * sizeof *stamp);
    uint8_t *paft = g->pred_after ? malloc(n_in + 1) : NULL;
    if (!poff || !pin || !stamp || (g->pred_after && !paft))
        goto out2;
    for (uint32_t x = 0; x < m; x++)
        stamp[x] = UINT32_MAX;
    uint32_t np = 0;
    for (uint32_t x = 0; x < m; x++) {
        uint32_t kb = x < n_own ? b + x : lo[x - n_own], ke = x < n_own ? b + x + 1 : hi[x - n_own];
        poff[x] = np;
        stamp[x] = x; /* no edge from a loop to itself */
        for (uint32_t k = kb; k < ke; k++) {
            uint32_t w = C->by_scope[k];
            for (uint32_t q = g->pred_off[w]; q < g->pred_off[w + 1]; q++) {
                uint32_t u = g->pred[q];
                if (!in_subtree(C, u, P) || stamp[C->rep[u]] == x)
                    continue;
                stamp[C->rep[u]] = x;
                if (paft)
                    paft[np] = x < n_own && g->pred_after[q];
                pin[np++] = C->rep[u];
            }
        }
    }
    poff[m] = np;
    /* pass 3 */
    uint32_t *order = malloc(((size_t)m + 1) * sizeof *order), *at = malloc(((size_t)m + 1) * 4);
    if (!order || !at || subview_alloc(S, m, np, g->sched_group != NULL, paft != NULL))
        goto out3;
    S->is_loop = calloc((size_t)m + 1, 1);
    if (C->while_op == g->n_ops && (S->op_names = malloc(((size_t)g->n_ops + 1) * sizeof(char *)))) {
        memcpy(S->op_names, g->op_names, g->n_ops * sizeof(char *));
        S->op_names[g->n_ops] = "while"; /* the loop nodes' opcode */
    }
    if (C->while_op == g->n_ops && !S->op_names)
        goto out3;
    if (!S->is_loop || sub_topo(m, poff, pin, key, order, &oom) != m) {
        if (!oom && S->is_loop)
            rc = sb_plugin_fail(C->err, C->n_err, "scope %u: its loops and nodes form a cycle "
                                "(a loop both feeds and uses a node of its caller)", P);
        goto out3;
    }
    for (uint32_t i = 0; i < m; i++)
        at[order[i]] = i;
    for (uint32_t i = 0; i < m; i++) {
        uint32_t x = order[i];
        if (x < n_own) {
            copy_member(S, g, i, C->by_scope[b + x]);
        } else {
            uint32_t j = x - n_own;
            fill_loop(S, C, i, lo[j], hi[j]);
            S->is_loop[i] = 1;
            S->id[i] = C->loop_of[L0 + j];
        }
        S->pred_off[i] = ne;
        for (uint32_t q = poff[x]; q < poff[x + 1]; q++) {
            if (paft)
                S->pred_after[ne] = paft[q];
            S->pred[ne++] = at[pin[q]];
        }
        /* an alias of a buffer outside the scope (its caller's, a parameter
         * here) views nothing of this graph: it owns nothing either */
        if ((S->flags[i] & SB_FLAG_ALIAS) &&
            (S->pred_off[i] == ne || !in_subtree(C, g->pred[g->pred_off[S->id[i]]], P))) {
            S->flags[i] &= ~(uint32_t)SB_FLAG_ALIAS;
            S->out_bytes[i] = 0;
        }
    }
    S->pred_off[m] = ne;
    /* a loop's buffer: what its iterations make that the rest of the scope
     * reads (the while's result) */
    for (uint32_t x = n_own; x < m; x++) {
        uint32_t j = x - n_own;
        for (uint32_t k = lo[j]; k < hi[j]; k++) {
            uint32_t w = C->by_scope[k];
            int owner = !(g->flags[w] & SB_FLAG_ALIAS) && g->kind[w] != SB_KIND_DONE, read = 0;
            for (uint32_t q = g->succ_off[w]; owner && !read && q < g->succ_off[w + 1]; q++)
                read = in_subtree(C, g->succ[q], P) && C->rep[g->succ[q]] != x;
            if (read)
                S->out_bytes[at[x]] += g->out_bytes[w];
        }
    }
    for (uint32_t i = 0; i < m; i++) /* partners, in the new numbering */
        S->partner[i] = !S->is_loop[i] && g->partner[S->id[i]] != SB_NONE &&
                                in_subtree(C, g->partner[S->id[i]], P)
                            ? at[C->rep[g->partner[S->id[i]]]]
                            : SB_NONE;
    for (uint32_t q = 0; q < ne; q++) /* successors: CSR by producer, consumers increasing */
        S->succ_off[S->pred[q] + 1]++;
    for (uint32_t i = 0; i < m; i++)
        S->succ_off[i + 1] += S->succ_off[i];
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t q = S->pred_off[i]; q < S->pred_off[i + 1]; q++)
            S->succ[S->succ_off[S->pred[q]]++] = i;
    for (uint32_t i = m; i-- > 0;)
        S->succ_off[i + 1] = S->succ_off[i];
    S->succ_off[0] = 0;
    S->n_mem = n_own;
    rc = 0;
out3:
    free(order), free(at);
out2:
    free(poff), free(pin), free(stamp), free(paft);
out:
    free(key), free(lo), free(hi);
    if (rc && !C->err[0])
        rc = sb_plugin_fail(C->err, C->n_err, "out of memory");
    if (!rc)
        subview_view(S, C, m, ne);
    return rc;
}

/* Schedules scope P and, where its schedule places a loop, each iteration
 * of it, appending to C->out. */
static int schedule_scope(struct comp_sched *C, uint32_t P)
{
    struct subview S;
    memset(&S, 0, sizeof S);
    int rc = build_subview(C, P, &S);
    uint32_t m = S.v.n_nodes, *order = rc ? NULL : malloc(((size_t)m + 1) * sizeof *order);
    if (!rc && !order)
        rc = sb_plugin_fail(C->err, C->n_err, "out of memory");
    if (!rc)
        rc = schedule_view(&S.v, C->c, order, &C->engaged, C->err, C->n_err);
    for (uint32_t k = 0; !rc && k < m; k++) {
        uint32_t x = order[k];
        if (!S.is_loop[x]) {
            C->out[C->n_out++] = S.id[x];
            continue;
        }
        uint32_t l = S.id[x];
        for (uint32_t q = C->iter_off[l]; !rc && q < C->iter_off[l + 1]; q++)
            rc = schedule_scope(C, C->iter_of[q]);
    }
    free(order);
    subview_free(&S);
    return rc;
}

/* Scope s and everything below it in DFS order: its loops by first node,
 * each loop's iterations by number (recursion as deep as loops nest, at
 * most SB_SCOPE_MAX_DEPTH). */
static void scope_dfs(struct comp_sched *C, uint32_t s, uint32_t *next)
{
    C->pos[s] = (*next)++;
    for (uint32_t q = C->loop_off[s]; q < C->loop_off[s + 1]; q++) {
        uint32_t l = C->loop_of[q];
        for (uint32_t k = C->iter_off[l]; k < C->iter_off[l + 1]; k++)
            scope_dfs(C, C->iter_of[k], next);
    }
    C->end[s] = *next;
}

/* Sorts ids[0..n) by (k1[id], k2[id]) (k2 may be NULL), stable: a bottom-up
 * merge sort, since C11 has no qsort with a context and loops can be many. */
static int sort_ids(uint32_t *ids, uint32_t n, const uint32_t *k1, const uint32_t *k2)
{
    uint32_t *tmp = malloc(((size_t)n + 1) * sizeof *tmp);
    if (!tmp)
        return -1;
    for (uint32_t w = 1; w < n; w *= 2) {
        for (uint32_t lo = 0; lo < n; lo += 2 * w) {
            uint32_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            uint32_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi) {
                uint32_t x = ids[a], y = ids[b];
                int y_first = k1[y] < k1[x] || (k1[y] == k1[x] && k2 && k2[y] < k2[x]);
                tmp[k++] = y_first ? ids[b++] : ids[a++];
            }
            while (a < mid)
                tmp[k++] = ids[a++];
            while (b < hi)
                tmp[k++] = ids[b++];
        }
        memcpy(ids, tmp, (size_t)n * sizeof *ids);
    }
    free(tmp);
    return 0;
}

/* Sorts ids [0, n) into out by key[id] (< n_keys), stable: a counting sort. */
static int count_sort(const uint32_t *key, uint32_t n, uint32_t n_keys, uint32_t *out)
{
    uint32_t *cnt = calloc((size_t)n_keys + 1, sizeof *cnt);
    if (!cnt)
        return -1;
    for (uint32_t i = 0; i < n; i++)
        cnt[key[i] + 1]++;
    for (uint32_t k = 0; k < n_keys; k++)
        cnt[k + 1] += cnt[k];
    for (uint32_t i = 0; i < n; i++)
        out[cnt[key[i]]++] = i;
    free(cnt);
    return 0;
}

/* The tables of comp_sched: depths, each scope's loops, each loop's
 * iterations, the DFS order and the nodes sorted by it. */
static int comp_init(struct comp_sched *C)
{
    const struct sb_graph_view *g = C->g;
    uint32_t ns = g->n_scopes, nl = g->n_loops, n = g->n_nodes;
    uint32_t *min_id = malloc(((size_t)ns + 1) * 4), *tmp = malloc(((size_t)ns + nl + 1) * 4);
    uint32_t *nkey = malloc(((size_t)n + 1) * 4);
    int rc = -1;
    C->depth = calloc((size_t)ns + 1, 4), C->pos = calloc((size_t)ns + 1, 4);
    C->end = calloc((size_t)ns + 1, 4), C->first = calloc((size_t)ns + 1, 4);
    C->last = calloc((size_t)ns + 1, 4), C->loop_off = calloc((size_t)ns + 2, 4);
    C->loop_of = malloc(((size_t)nl + 1) * 4), C->iter_off = calloc((size_t)nl + 2, 4);
    C->iter_of = malloc(((size_t)ns + 1) * 4), C->by_scope = malloc(((size_t)n + 1) * 4);
    C->rep = malloc(((size_t)n + 1) * 4);
    if (!min_id || !tmp || !nkey || !C->depth || !C->pos || !C->end ||
        !C->first || !C->last || !C->loop_off || !C->loop_of || !C->iter_off || !C->iter_of ||
        !C->by_scope || !C->rep)
        goto out;
    /* parents are interned before their children: increasing ids go down */
    for (uint32_t s = 1; s < ns; s++)
        C->depth[s] = C->depth[g->scope_parent[s]] + 1;
    for (uint32_t s = 0; s < ns; s++)
        min_id[s] = UINT32_MAX;
    for (uint32_t v = n; v-- > 0;)
        min_id[g->scope[v]] = v;
    for (uint32_t s = ns; s-- > 1;) /* a scope's first node, its subtree's included */
        if (min_id[s] < min_id[g->scope_parent[s]])
            min_id[g->scope_parent[s]] = min_id[s];
    /* loops of each scope, by first node: sort loops by that id, then by parent */
    uint32_t *lparent = tmp, *lfirst = tmp + ns;
    for (uint32_t l = 0; l < nl; l++)
        lfirst[l] = UINT32_MAX;
    for (uint32_t s = 1; s < ns; s++) {
        uint32_t l = g->scope_loop[s];
        lparent[l] = g->scope_parent[s];
        if (min_id[s] < lfirst[l])
            lfirst[l] = min_id[s];
    }
    /* loops: order by (parent, first node): a loop with no node sorts last */
    for (uint32_t l = 0; l < nl; l++)
        C->loop_of[l] = l;
    if (sort_ids(C->loop_of, nl, lparent, lfirst))
        goto out;
    for (uint32_t l = 0; l < nl; l++)
        C->loop_off[lparent[l] + 1]++;
    for (uint32_t s = 0; s < ns; s++)
        C->loop_off[s + 1] += C->loop_off[s];
    /* iterations of each loop, by number */
    for (uint32_t s = 1; s < ns; s++)
        C->iter_off[g->scope_loop[s] + 1]++;
    for (uint32_t l = 0; l < nl; l++)
        C->iter_off[l + 1] += C->iter_off[l];
    for (uint32_t s = 1; s < ns; s++)
        C->iter_of[C->iter_off[g->scope_loop[s]]++] = s;
    for (uint32_t l = nl; l-- > 0;)
        C->iter_off[l + 1] = C->iter_off[l];
    C->iter_off[0] = 0;
    for (uint32_t l = 0; l < nl; l++)
        if (sort_ids(C->iter_of + C->iter_off[l], C->iter_off[l + 1] - C->iter_off[l],
                     g->scope_iter, NULL))
            goto out;
    uint32_t next = 0;
    scope_dfs(C, 0, &next);
    /* scopes that no DFS reached cannot exist: every scope but 0 is an
     * iteration of a loop of its parent */
    for (uint32_t v = 0; v < n; v++)
        nkey[v] = C->pos[g->scope[v]];
    if (count_sort(nkey, n, ns, C->by_scope))
        goto out;
    /* first[s], last[s]: the range of scope s's subtree in by_scope */
    uint32_t *at_pos = calloc((size_t)ns + 2, 4);
    if (!at_pos)
        goto out;
    for (uint32_t v = 0; v < n; v++)
        at_pos[nkey[v] + 1]++;
    for (uint32_t d = 0; d < ns; d++)
        at_pos[d + 1] += at_pos[d];
    for (uint32_t s = 0; s < ns; s++) {
        C->first[s] = at_pos[C->pos[s]];
        C->last[s] = at_pos[C->end[s]];
    }
    free(at_pos);
    C->while_op = g->n_ops;
    for (uint32_t o = 0; o < g->n_ops; o++)
        if (!strcmp(g->op_names[o], "while"))
            C->while_op = o;
    rc = 0;
out:
    free(min_id), free(tmp), free(nkey);
    return rc;
}

static void comp_free(struct comp_sched *C)
{
    free(C->depth), free(C->pos), free(C->end), free(C->first), free(C->last);
    free(C->loop_off), free(C->loop_of), free(C->iter_off), free(C->iter_of);
    free(C->by_scope), free(C->rep);
}

/* XLA GPU's memory limit (GetSchedulerMemoryLimit, xla/service/gpu/
 * gpu_hlo_schedule.cc at openxla/xla 025352635a15): the device's memory
 * scaled to the share XLA's allocator gets, less the program's inputs and
 * outputs (taken as live throughout), times the slop factor.  XLA computes it
 * in int64 and returns it as uint64: when the inputs and outputs alone exceed
 * the base it wraps to a limit nothing reaches, which is "none" here too. */
#define XLA_DEVICE_SHARE_PCT 80 /* device_memory_size() * 80 / 100 */
#define XLA_SLOP_PCT 95         /* xla_gpu_memory_limit_slop_factor default */

static uint64_t xla_gpu_memory_limit(uint64_t device_bytes, uint64_t io_bytes)
{
    uint64_t base = device_bytes / 100 * XLA_DEVICE_SHARE_PCT +
                    device_bytes % 100 * XLA_DEVICE_SHARE_PCT / 100;
    if (io_bytes >= base)
        return UINT64_MAX;
    uint64_t free_bytes = base - io_bytes;
    return free_bytes / 100 * XLA_SLOP_PCT + free_bytes % 100 * XLA_SLOP_PCT / 100;
}

/* Bytes of the graph's inputs: what memory_model=xla does not count. */
static uint64_t input_bytes(const struct sb_graph_view *g)
{
    uint64_t sum = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->kind[v] == SB_KIND_INPUT)
            sum += g->out_bytes[v];
    return sum;
}

/* The limit this run schedules under, in the bytes the tracker counts, and
 * the same in the harness's bytes for the row (0: none).  Unset, it is XLA
 * GPU's: harness bytes count the inputs and outputs XLA subtracted, so there
 * the limit adds them back. */
static uint64_t run_limit(const struct lhs_config *c, const struct sb_graph_view *g,
                          uint64_t *harness_bytes)
{
    uint64_t limit = c->memory_limit;
    if (c->limit_from_device) {
        uint64_t cap = sb_mem_device_bytes(g);
        limit = cap == SB_MEM_UNLIMITED ? UINT64_MAX : xla_gpu_memory_limit(cap, g->io_bytes);
        if (limit != UINT64_MAX && c->memory == LHS_MEM_HARNESS)
            limit += g->io_bytes;
    }
    *harness_bytes = limit == UINT64_MAX ? 0
                     : c->memory == LHS_MEM_XLA ? limit + input_bytes(g)
                                                : limit;
    return limit;
}

/* The whole graph under configuration c: one computation, or each of its
 * scopes apart. */
static int schedule_all(const struct sb_graph_view *g, const struct lhs_config *c,
                        uint32_t *order, int *engaged, char *err, size_t n_err)
{
    if (!g->scope || g->n_scopes < 2 || c->computations == LHS_COMP_FLAT)
        return schedule_view(g, c, order, engaged, err, n_err);
    struct comp_sched C = {.g = g, .c = c, .out = order, .err = err, .n_err = n_err};
    if (n_err)
        err[0] = 0;
    int rc = comp_init(&C) ? sb_plugin_fail(err, n_err, "out of memory")
                           : schedule_scope(&C, 0);
    if (!rc && C.n_out != g->n_nodes)
        rc = sb_plugin_fail(err, n_err, "scheduled %u of %u nodes by scope", C.n_out,
                            g->n_nodes);
    *engaged |= C.engaged;
    comp_free(&C);
    return rc;
}

/* memory_guard: the same rules without a limit, kept when their peak is
 * lower (ties keep the limited schedule).  Both peaks are the harness's. */
static int guard(const struct sb_graph_view *g, const struct lhs_config *c, uint32_t *order,
                 char *err, size_t n_err)
{
    uint32_t n = g->n_nodes, pos;
    struct lhs_config free_cfg = *c;
    free_cfg.memory_limit = UINT64_MAX;
    uint32_t *other = malloc(((size_t)n + 1) * sizeof *other);
    uint64_t *mem = malloc(((size_t)n + 1) * sizeof *mem);
    int ignored = 0;
    int rc = !other || !mem ? sb_plugin_fail(err, n_err, "out of memory")
                            : schedule_all(g, &free_cfg, other, &ignored, err, n_err);
    if (!rc && g->host->mem_profile(g, other, n, mem, &pos) <
                   g->host->mem_profile(g, order, n, mem, &pos))
        memcpy(order, other, (size_t)n * sizeof *order);
    free(other);
    free(mem);
    return rc;
}

static int lhs_run(void *state, const struct sb_graph_view *g, struct sb_schedule *out)
{
    struct lhs_config local = *(const struct lhs_config *)state;
    local.memory_limit = run_limit(&local, g, &out->mem_limit_bytes);
    int engaged = 0;
    int rc = schedule_all(g, &local, out->order, &engaged, out->err, out->n_err);
    /* only where the memory rules were read can the schedule differ from
     * the one without a limit */
    if (!rc && local.memory_guard && engaged)
        rc = guard(g, &local, out->order, out->err, out->n_err);
    return rc;
}

/* ---- pass 2d: fast selection --------------------------------------------- */

/* Class of a node: 0 plain; then per resource: occupier, or releaser with a
 * zero or positive async depth; each split by supported or not. */
static uint16_t class_of(const struct lhs_graph *G, uint32_t v)
{
    int sup = (G->node[v].bits & (LHS_SUP_START | LHS_SUP_DONE)) != 0;
    if (G->node[v].occ >= 0)
        return (uint16_t)(1 + (G->node[v].occ * 2 + 0) * 2 + sup);
    if (G->node[v].relr >= 0)
        return (uint16_t)(1 + (G->node[v].relr * 2 + 1) * 2 + sup + 2 * LHS_R_COUNT * 2 *
                          ((G->node[v].bits & LHS_DEPTH) != 0));
    return 0;
}

enum pq_kind {
    PQ_MEMBERS, /* a group's due nodes: XLA's rules after kAvoidWaste */
    PQ_FUTURE,  /* by ready time, then async key */
    PQ_GROUPS,  /* a class's groups by async key */
};

/* A heap entry: the node (or group) id in the low 32 bits; in a group's
 * members heap, the rules it is ordered by above them (member_key), so that
 * moving an entry reads the heap's array and not the node records. */
static uint32_t pq_id(const struct lhs_pq *q, uint32_t i) { return (uint32_t)q->v[i]; }

/* kUnlockDone, then kCreatesMoreReadyNodes (aggressive rules only): the
 * larger wins.  rnis counts released nodes, below 2^31. */
static uint64_t member_key(const struct lhs_state *S, uint32_t v)
{
    uint64_t unlock = (S->G->node[v].bits & LHS_UNLOCK) != 0;
    uint64_t rnis = S->cfg->aggressive ? (uint32_t)S->node[v].rnis : 0;
    return (unlock << 63 | rnis << 32) | v;
}

static int pq_before(const struct lhs_state *S, enum pq_kind k, uint64_t ea, uint64_t eb)
{
    const struct lhs_graph *G = S->G;
    const struct lhs_group *grp = S->fast->grp;
    uint32_t a = (uint32_t)ea, b = (uint32_t)eb;
    switch (k) {
    case PQ_MEMBERS:
        if (ea >> 32 != eb >> 32) /* kUnlockDone, kCreatesMoreReadyNodes */
            return ea >> 32 > eb >> 32;
        return S->cfg->top_down ? a < b : a > b; /* kOriginalOrder */
    case PQ_FUTURE:
        if (S->node[a].ready != S->node[b].ready)
            return S->node[a].ready < S->node[b].ready;
        if (G->node[a].async_key != G->node[b].async_key)
            return G->node[a].async_key > G->node[b].async_key;
        return a < b; /* any fixed order: tied nodes are all read */
    default:
        return grp[a].key > grp[b].key;
    }
}

static void pq_set(struct lhs_state *S, enum pq_kind k, struct lhs_pq *q, uint32_t i,
                   uint64_t v)
{
    q->v[i] = v;
    if (k == PQ_GROUPS)
        S->fast->grp[(uint32_t)v].slot = i;
    else
        S->node[(uint32_t)v].slot = i;
}

static void pq_up(struct lhs_state *S, enum pq_kind k, struct lhs_pq *q, uint32_t i)
{
    uint64_t v = q->v[i];
    while (i && pq_before(S, k, v, q->v[(i - 1) / 2])) {
        pq_set(S, k, q, i, q->v[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    pq_set(S, k, q, i, v);
}

static void pq_down(struct lhs_state *S, enum pq_kind k, struct lhs_pq *q, uint32_t i)
{
    uint64_t v = q->v[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && pq_before(S, k, q->v[c + 1], q->v[c]))
            c++;
        if (!pq_before(S, k, q->v[c], v))
            break;
        pq_set(S, k, q, i, q->v[c]);
        i = c;
    }
    pq_set(S, k, q, i, v);
}

static int pq_push(struct lhs_state *S, enum pq_kind k, struct lhs_pq *q, uint64_t v)
{
    if (q->n == q->cap) {
        uint32_t cap = q->cap ? q->cap * 2 : 8;
        uint64_t *nv = realloc(q->v, cap * sizeof *nv);
        if (!nv)
            return -1;
        q->v = nv;
        q->cap = cap;
    }
    q->v[q->n++] = v;
    pq_up(S, k, q, q->n - 1);
    return 0;
}

static void pq_remove(struct lhs_state *S, enum pq_kind k, struct lhs_pq *q, uint32_t i)
{
    uint64_t last = q->v[--q->n];
    uint32_t id = (uint32_t)last;
    if (i == q->n)
        return;
    pq_set(S, k, q, i, last);
    pq_down(S, k, q, i);
    pq_up(S, k, q, k == PQ_GROUPS ? S->fast->grp[id].slot : S->node[id].slot);
}

static uint32_t group_hash(uint16_t cls, double key, uint32_t n_bucket)
{
    uint64_t bits;
    memcpy(&bits, &key, sizeof bits);
    bits ^= (uint64_t)cls * 0x9e3779b97f4a7c15ull;
    bits *= 0xff51afd7ed558ccdull;
    return (uint32_t)(bits >> 32) & (n_bucket - 1);
}

/* Twice the buckets, the chains rebuilt: lookups find the same groups (one
 * per class and key), only the chains' order changes. */
static int group_rehash(struct lhs_fast *F)
{
    uint32_t n = F->n_bucket * 2;
    uint32_t *b = calloc(n, sizeof *b);
    if (!b)
        return -1;
    free(F->bucket);
    F->bucket = b;
    F->n_bucket = n;
    for (uint32_t g = 0; g < F->n_grp; g++) {
        uint32_t h = group_hash(F->grp[g].cls, F->grp[g].key, n);
        F->grp[g].next = b[h] - 1;
        b[h] = g + 1;
    }
    return 0;
}

/* The group of (class, key), created on first use. */
static uint32_t group_get(struct lhs_state *S, uint16_t cls, double key)
{
    struct lhs_fast *F = S->fast;
    uint32_t h = group_hash(cls, key, F->n_bucket);
    for (uint32_t g = F->bucket[h]; g; g = F->grp[g - 1].next + 1)
        if (F->grp[g - 1].cls == cls && F->grp[g - 1].key == key)
            return g - 1;
    if (F->n_grp == F->cap_grp) {
        uint32_t cap = F->cap_grp ? F->cap_grp * 2 : 64;
        struct lhs_group *ng = realloc(F->grp, cap * sizeof *ng);
        if (!ng)
            return LHS_NONE;
        F->grp = ng;
        F->cap_grp = cap;
    }
    struct lhs_group *g = &F->grp[F->n_grp];
    memset(g, 0, sizeof *g);
    g->cls = cls;
    g->key = key;
    g->next = F->bucket[h] - 1; /* UINT32_MAX when the chain was empty */
    F->bucket[h] = ++F->n_grp;
    if (F->n_grp > F->n_bucket / 2 && group_rehash(F))
        return LHS_NONE;
    return F->n_grp - 1;
}

static void mark_class(struct lhs_fast *F, uint16_t c)
{
    int busy = F->groups[c].n || F->future[c].n;
    uint64_t bit = 1ull << (c % 64);
    F->busy[c / 64] = busy ? F->busy[c / 64] | bit : F->busy[c / 64] & ~bit;
}

static int due_add(struct lhs_state *S, uint32_t v)
{
    struct lhs_fast *F = S->fast;
    double key = S->cfg->aggressive ? S->G->node[v].async_key : 0;
    uint32_t g = group_get(S, class_of(S->G, v), key);
    if (g == LHS_NONE)
        return -1;
    S->node[v].group = g;
    S->node[v].where &= (uint8_t)~LHS_W_FUTURE;
    if (!F->grp[g].nodes.n)
        F->grp[g].cost_ref = S->G->node[v].cost;
    F->grp[g].n_diff += S->G->node[v].cost != F->grp[g].cost_ref;
    if (pq_push(S, PQ_MEMBERS, &F->grp[g].nodes, member_key(S, v)))
        return -1;
    if (F->grp[g].nodes.n == 1 && pq_push(S, PQ_GROUPS, &F->groups[F->grp[g].cls], g))
        return -1;
    mark_class(F, class_of(S->G, v));
    return 0;
}

static int fast_add(struct lhs_state *S, uint32_t v)
{
    struct lhs_fast *F = S->fast;
    if (S->node[v].ready <= S->now)
        return due_add(S, v);
    S->node[v].where |= LHS_W_FUTURE;
    if (pq_push(S, PQ_FUTURE, &F->future[class_of(S->G, v)], v))
        return -1;
    mark_class(F, class_of(S->G, v));
    return 0;
}

static void fast_remove(struct lhs_state *S, uint32_t v)
{
    struct lhs_fast *F = S->fast;
    if (S->node[v].where & LHS_W_FUTURE) {
        pq_remove(S, PQ_FUTURE, &F->future[class_of(S->G, v)], S->node[v].slot);
    } else {
        struct lhs_group *g = &F->grp[S->node[v].group];
        pq_remove(S, PQ_MEMBERS, &g->nodes, S->node[v].slot);
        g->n_diff -= S->G->node[v].cost != g->cost_ref;
        if (!g->nodes.n)
            pq_remove(S, PQ_GROUPS, &F->groups[g->cls], g->slot);
    }
    mark_class(F, class_of(S->G, v));
}

/* kCreatesMoreReadyNodes rose for v: it moves up in its group. */
static void fast_rnis_up(struct lhs_state *S, uint32_t v)
{
    struct lhs_fast *F = S->fast;
    if (S->node[v].where != LHS_W_READY) /* waiting, or in the future heap */
        return;
    struct lhs_pq *q = &F->grp[S->node[v].group].nodes;
    q->v[S->node[v].slot] = member_key(S, v);
    pq_up(S, PQ_MEMBERS, q, S->node[v].slot);
}

/* Nodes whose ready time has come move to their class's groups. */
static int fast_advance(struct lhs_state *S, int c)
{
    struct lhs_pq *f = &S->fast->future[c];
    while (f->n && S->node[pq_id(f, 0)].ready <= S->now) {
        uint32_t v = pq_id(f, 0);
        pq_remove(S, PQ_FUTURE, f, 0);
        if (due_add(S, v))
            return -1;
    }
    return 0;
}

/* The class-wide values of XLA's rules up to kFreeBackedupResource:
 * kScheduleDone, kStartAtZeroDepth (early), kLessStall (the class's smallest
 * ready interval), kStartAtZeroDepth, kFreeBackedupResource. */
struct class_key {
    int window, nzd_early, nzd, backed_up;
    double stall;
};

static void class_key(const struct lhs_state *S, int c, uint32_t any, struct class_key *k)
{
    const struct lhs_config *cfg = S->cfg;
    const struct lhs_fast *F = S->fast;
    int nzd = not_zero_depth_start(S, any);
    k->window = opens_window(S, any);
    k->nzd_early = cfg->aggressive && cfg->depth_over_stall ? nzd : 0;
    k->nzd = cfg->aggressive && !cfg->depth_over_stall ? nzd : 0;
    k->backed_up = releases(S->G, any) && constrained(S, any);
    k->stall = F->groups[c].n ? 0 : S->node[pq_id(&F->future[c], 0)].ready - S->now;
}

/* -1, 0, 1: a worse, tied, better than b. */
static int class_cmp(const struct class_key *a, const struct class_key *b)
{
    if (a->window != b->window)
        return a->window > b->window ? 1 : -1;
    if (a->nzd_early != b->nzd_early)
        return a->nzd_early > b->nzd_early ? 1 : -1;
    if (a->stall != b->stall)
        return a->stall < b->stall ? 1 : -1;
    if (a->nzd != b->nzd)
        return a->nzd > b->nzd ? 1 : -1;
    if (a->backed_up != b->backed_up)
        return a->backed_up > b->backed_up ? 1 : -1;
    return 0;
}

/* A node of class c standing for the class (its rules are class-wide). */
static uint32_t class_any(const struct lhs_state *S, int c)
{
    const struct lhs_fast *F = S->fast;
    if (F->groups[c].n)
        return pq_id(&F->grp[pq_id(&F->groups[c], 0)].nodes, 0);
    return F->future[c].n ? pq_id(&F->future[c], 0) : LHS_NONE;
}

/* The classes XLA's first rules prefer; returns how many, in `win`. */
static int best_classes(struct lhs_state *S, int *win)
{
    struct class_key best = {0}, k;
    int n = 0;
    for (int c = 0; c < LHS_N_CLASSES; c++) {
        if (!(S->fast->busy[c / 64] >> (c % 64) & 1))
            continue; /* no ready node of this class */
        if (fast_advance(S, c))
            return -1;
        uint32_t any = class_any(S, c);
        if (any == LHS_NONE || crosses_limit(S, any))
            continue;
        class_key(S, c, any, &k);
        int cmp = n ? class_cmp(&k, &best) : 1;
        if (cmp > 0) {
            best = k;
            n = 0;
        }
        if (cmp >= 0)
            win[n++] = c;
    }
    return n;
}

static void tie_add(struct lhs_fast *F, const struct lhs_state *S, uint32_t v)
{
    F->tie[F->n_tie++] = (uint64_t)S->node[v].ready_pos << 32 | v;
}

/* Future nodes of a class tied with its top on ready time and on `key`
 * (kAsyncDepth; any key without aggressive rules): the heap property lets the
 * walk stop below any entry that differs. */
static void future_ties(struct lhs_state *S, const struct lhs_pq *q, int any_key, double key)
{
    struct lhs_fast *F = S->fast;
    const struct lhs_graph *G = S->G;
    uint32_t top = pq_id(q, 0), start = F->n_tie;
    if (!any_key && G->node[top].async_key != key)
        return;
    F->tie[F->n_tie++] = 0; /* heap indices first, replaced by nodes below */
    for (uint32_t k = start; k < F->n_tie; k++) {
        uint32_t i = (uint32_t)F->tie[k];
        for (uint32_t c = 2 * i + 1; c <= 2 * i + 2 && c < q->n; c++) {
            uint32_t v = pq_id(q, c);
            if (S->node[v].ready == S->node[top].ready && (any_key || G->node[v].async_key == key))
                F->tie[F->n_tie++] = c;
        }
    }
    for (uint32_t k = start; k < F->n_tie; k++) {
        uint32_t v = pq_id(q, (uint32_t)F->tie[k]);
        F->tie[k] = (uint64_t)S->node[v].ready_pos << 32 | v;
    }
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The candidates tied on XLA's rules through kAsyncDepth: due groups of the
 * winning classes with the best key, and future nodes at the earliest ready
 * time.  A group's best member dominates the others on every later rule but
 * kAvoidWaste, which compares costs: only with `waste` and unequal costs are
 * all members needed. */
static void collect(struct lhs_state *S, const int *win, int n, double key, int waste)
{
    struct lhs_fast *F = S->fast;
    int any_key = !S->cfg->aggressive;
    F->n_tie = 0;
    for (int k = 0; k < n; k++) {
        int c = win[k];
        if (!F->groups[c].n) {
            future_ties(S, &F->future[c], any_key, key);
            continue;
        }
        const struct lhs_group *g = &F->grp[pq_id(&F->groups[c], 0)];
        if (!any_key && g->key != key)
            continue;
        uint32_t m = waste && g->n_diff ? g->nodes.n : 1;
        for (uint32_t i = 0; i < m; i++)
            tie_add(F, S, pq_id(&g->nodes, i));
    }
}

/* How the tied candidates must be compared: kAvoidWaste is the one rule that
 * is not transitive, and only between a node that releases a resource and one
 * that does not.  Without such a pair the rules from kAvoidWaste on order the
 * candidates totally, so the scan's winner is the best of them in any order;
 * with one, it depends on the ready set's order, which is then followed. */
static int needs_order(const struct lhs_state *S, const int *win, int n)
{
    int rel = 0, other = 0;
    if (!S->cfg->aggressive || !S->next_ready.n)
        return 0;
    for (int k = 0; k < n; k++) {
        uint32_t any = class_any(S, win[k]);
        rel |= releases(S->G, any);
        other |= !releases(S->G, any);
    }
    return rel && other;
}

/* Same choice as select_scan.  The rules up to kAsyncDepth are transitive, so
 * the scan's winner is among the candidates tied on them; among those it is the
 * best, or, when kAvoidWaste can cycle, what the scan meets in the ready set's
 * order.  kAvoidWaste compares ready nodes' costs with the time to the next
 * ready one, so it needs every candidate; the later rules only each group's
 * best. */
static uint32_t select_fast(struct lhs_state *S)
{
    struct lhs_fast *F = S->fast;
    int win[LHS_N_CLASSES];
    int n = best_classes(S, win);
    if (n <= 0)
        return LHS_NONE;
    double key = -DBL_MAX;
    for (int k = 0; k < n && S->cfg->aggressive; k++) { /* kAsyncDepth */
        int c = win[k];
        double kk = F->groups[c].n ? F->grp[pq_id(&F->groups[c], 0)].key
                                   : S->G->node[pq_id(&F->future[c], 0)].async_key;
        if (kk > key)
            key = kk;
    }
    int ordered = needs_order(S, win, n);
    collect(S, win, n, key, S->cfg->aggressive && S->next_ready.n);
    if (ordered)
        qsort(F->tie, F->n_tie, sizeof *F->tie, by_u64);
    uint32_t best = (uint32_t)F->tie[0];
    for (uint32_t k = 1; k < F->n_tie; k++)
        if (better(S, (uint32_t)F->tie[k], best))
            best = (uint32_t)F->tie[k];
    return best;
}

/* XLA's scan for the steps the classes cannot decide: memory rules (their
 * values change per node), the release-start and structure policies, and
 * send_host dones (ShouldDelaySendHostDone depends on the node). */
static int needs_scan(const struct lhs_state *S)
{
    const struct lhs_config *c = S->cfg;
    return !S->fast || c->release_start || c->by_structure || memory_active(S) ||
           S->fast->any_send_host || S->G->any_force || S->G->n_groups || S->G->need;
}

static uint32_t select_node(struct lhs_state *S)
{
    return needs_scan(S) ? select_scan(S) : select_fast(S);
}

static int fast_init(struct lhs_state *S)
{
    const struct lhs_graph *G = S->G;
    struct lhs_fast *F = calloc(1, sizeof *F);
    int oom = !F;
    if (oom)
        return -1;
    S->fast = F;
    F->n_bucket = 64; /* doubled as groups are made (group_get) */
    F->bucket = xcalloc(F->n_bucket, sizeof *F->bucket, &oom);
    F->tie = xmalloc(G->n, sizeof *F->tie, &oom);
    F->any_send_host = G->any_send_host;
    for (uint32_t k = 0; k < S->n_ready && !oom; k++) /* the roots */
        oom = fast_add(S, S->ready_set[k]) != 0;
    return oom ? -1 : 0;
}

static void fast_free(struct lhs_fast *F)
{
    if (!F)
        return;
    for (int c = 0; c < LHS_N_CLASSES; c++) {
        free(F->groups[c].v);
        free(F->future[c].v);
    }
    for (uint32_t g = 0; g < F->n_grp; g++)
        free(F->grp[g].nodes.v);
    free(F->grp);
    free(F->bucket);
    free(F->tie);
    free(F);
}

/* ---- descriptor ---------------------------------------------------------- */

static const struct sb_plugin aggressive = {
    .abi = SB_PLUGIN_ABI,
    .size = sizeof(struct sb_plugin),
    .name = "aggressive",
    .summary = "XLA's latency-hiding scheduler (alias lhs): hides collectives behind "
               "compute, GPU configuration",
    .params = params,
    .n_params = P_COUNT,
    .init = lhs_init,
    .run = lhs_run,
    .free = lhs_free,
};

const struct sb_plugin *sb_plugin_aggressive(void) { return &aggressive; }

SB_PLUGIN_EXPORT(sb_plugin_aggressive)
