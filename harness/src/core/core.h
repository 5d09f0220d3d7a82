/* schedbench core: graph storage and loader, cost models, simulator, memory
 * model, schedule validator, plugin registry.  Internal to the host: plugins see
 * only include/schedbench/. */
#ifndef SB_CORE_H
#define SB_CORE_H

#include "schedbench/graph.h"
#include "schedbench/plugin.h"
#include "util.h"

/* ---- graph ------------------------------------------------------------- */

/* Owns the arrays a sb_graph_view points into. */
struct sb_graph {
    struct sb_graph_view v; /* always consistent with the arrays below */
    uint8_t *kind, *coll;
    uint32_t *flags, *group_size, *pred_off, *pred, *succ_off, *succ, *partner, *op;
    double *cost_us, *comm_us, *dur_us;
    uint64_t *out_bytes, *comm_bytes, *name_off;
    int32_t *device;
    uint32_t *units_used; /* r(v), 1 unless a machine or column says otherwise */
    uint32_t *stream;     /* the node's stream on its device, 0 by default */
    uint32_t n_streams;   /* largest stream + 1 */
    double *dev_dur_us;   /* t(v, a) under a --machine; NULL: the view uses dur_us */
    /* cost_us.<device> columns: names, and [n_nodes * n_dev_cost] times (-1
     * where a row leaves the field empty) */
    uint32_t n_dev_cost;
    char **dev_cost_name;
    double *dev_cost_us;
    /* res.<name> columns (docs/machines.md, "Resources"): names, and [n_nodes
     * * n_res_col] uses, SB_RES_ALL where a row leaves the field empty */
    uint32_t n_res_col;
    char **res_col_name;
    uint32_t *res_col_use;
    uint32_t *res_use; /* the view's r_k(v) for the applied machine, or NULL */
    uint64_t *res_line; /* [n_nodes] each node's line in its CSV file, kept for
                           graphs with res.<name> columns (messages), or NULL */
    char *names;
    char **op_names;
    uint32_t n_ops;
    char *name;   /* workload name: "# name=" metadata, else the file stem */
    char *path;   /* file it was loaded from */
    uint32_t n_meta;
    char **meta_key, **meta_val; /* "# key=value" lines, in file order */
    /* Work of each node for the roofline (appended; all three NULL when no
     * node carries them: CSV files without the columns, other importers) */
    double *flops;          /* [n_nodes] floating-point operations */
    double *bytes_accessed; /* [n_nodes] bytes read and written in HBM */
    uint8_t *dtype;         /* [n_nodes] enum sb_dtype, SB_DTYPE_NONE: no figures */
    /* Scheduling annotations (appended; all NULL when no node has one) */
    int32_t *sched_group, *sched_iter, *sched_priority; /* [n_nodes] */
    uint8_t *sched_hint;                                /* [n_nodes] */
    uint32_t *holds; /* [n_nodes * SB_COLL_COUNT] or NULL (graph.h) */
    /* [n_edges] 1 on an order-only (`after`) edge; NULL when there are none
     * (appended; the builder allocates it at the first such edge) */
    uint8_t *pred_after;
    /* Computation instances (appended; core/scope.h): NULL when every node
     * is in the top scope */
    struct sb_scopes *scopes;
    uint32_t *scope; /* [n_nodes] */
    /* Joined collectives (appended; sb_builder_join): [n_nodes] or NULL
     * when there are none; the view's join */
    uint32_t *join;
};

/* The unit a node's FLOPs run on, for the roofline's peak (docs/cost-model.md):
 * matrix products at their element type's tensor-core peak (f32 as TF32),
 * everything else at the FP32 vector peak. */
enum sb_dtype {
    SB_DTYPE_NONE = 0, SB_DTYPE_FP32, SB_DTYPE_TF32, SB_DTYPE_BF16, SB_DTYPE_FP16,
    SB_DTYPE_FP8, SB_DTYPE_INT8, SB_DTYPE_FP64, SB_DTYPE_COUNT
};
const char *sb_dtype_name(enum sb_dtype d);
int sb_dtype_parse(const char *s, enum sb_dtype *out);

/* Graphs are made by the builder (builder.h) from an importer
 * (import/import.h: sb_graph_load); the core only frees and reads them. */
void sb_graph_free(struct sb_graph *g);
/* The machine of a run without --machine: one device, the built-in H100 with
 * its 80 GB (graph.c). */
extern const struct sb_machine_view sb_machine_one;
const char *sb_graph_meta(const struct sb_graph *g, const char *key);
/* Kahn's algorithm over n items whose inputs are in[off[v]..off[v+1]) (each
 * below n), always taking the smallest ready index, so items already in
 * order keep it.  Writes order[] and returns how many were placed: fewer
 * than n when the rest hold a cycle (graph.c). */
uint32_t sb_topo_order(uint32_t n, const uint32_t *off, const uint32_t *in, uint32_t *order);
/* Points g->v at g's arrays (the builder's last step). */
void sb_graph_fill_view(struct sb_graph *g);
uint32_t sb_graph_n_collectives(const struct sb_graph *g);
/* Whether edge e (an index into pred) only orders: an `after` edge. */
static inline int sb_edge_after(const struct sb_graph_view *g, uint32_t e)
{
    return g->pred_after && g->pred_after[e];
}

const char *sb_kind_name(enum sb_kind k);
const char *sb_coll_name(enum sb_coll c);
int sb_coll_parse(const char *s, enum sb_coll *out);
int sb_kind_parse(const char *s, enum sb_kind *out);

/* ---- cost models ------------------------------------------------------- */

enum sb_cost_model { SB_COST_ANALYTICAL = 0, SB_COST_APPROX = 1 };

/* One device for the roofline: time = max(flops / peak[dtype], bytes /
 * hbm) + launch, for compute nodes that carry flops/bytes and no cost_us. */
struct sb_roofline {
    double peak_tflops[SB_DTYPE_COUNT]; /* dense peak per unit, 10^12 FLOP/s */
    double hbm_gbps;                    /* memory bandwidth, 10^9 B/s */
    double launch_us;                   /* per node with work */
    /* (appended) how much of the shorter of compute and memory time is not
     * hidden by the longer: t = max(c, m) + serial_frac * min(c, m).  0: the
     * plain roofline; 0.05: XLA's GpuPerformanceModel, whose
     * CombineComputeAndMemoryAccessTime overlaps them at
     * kMemoryComputeParallelism = 0.95 (`--cost mem_compute_overlap`). */
    double serial_frac;
};
/* H100 SXM5 (the built-in device; workloads/machines/h100-sxm.yaml): its
 * roofline, and its memory, 80 GB (the datasheet's "80GB" as the yaml gives
 * it, 80e9 bytes), the capacity of every row run without a machine. */
#define SB_H100_MEM_BYTES 80000000000ull
void sb_roofline_h100(struct sb_roofline *r);
/* The roofline's two terms for node v, in us: its FLOPs at the peak of its
 * unit and its bytes at HBM bandwidth; -1 when v carries no figures. */
int sb_roofline_parts(const struct sb_roofline *r, const struct sb_graph *g, uint32_t v,
                      double *compute_us, double *memory_us);
/* Duration of node v of g on device r, or -1 when v carries no figures. */
double sb_roofline_us(const struct sb_roofline *r, const struct sb_graph *g, uint32_t v);

/* The inputs of Inductor's NCCL estimators (net/inductor_comm.c,
 * docs/cost-model.md "Inductor's collective estimators"): what PyTorch reads
 * from the machine it compiles on (GPU generation, GPUs per node, NVLink) and
 * from torch._inductor.config (intra_node_bw, inter_node_bw).  Data only: the
 * core parses the --cost keys, the net layer prices with them. */
enum sb_gpu_gen { SB_GPU_VOLTA = 0, SB_GPU_AMPERE = 1, SB_GPU_HOPPER = 2, SB_GPU_BLACKWELL = 3 };
/* The byte count Inductor hands its estimator, from the graph's comm_bytes
 * (the full tensor): the scheduler IR passes the inputs' bytes (an
 * all_gather's shard), the ATen-FX passes inputs plus outputs. */
enum sb_nccl_bytes { SB_NCCL_BYTES_INPUT = 0, SB_NCCL_BYTES_TENSOR = 1, SB_NCCL_BYTES_FX = 2 };
struct sb_nccl_params {
    uint32_t gpu;            /* enum sb_gpu_gen; default Hopper, the built-in H100 */
    double intra_node_gbps;  /* GB/s; NAN: the model's default (classic 300, else per GPU) */
    double inter_node_gbps;  /* GB/s; NAN: the model's default (classic 25, else per GPU) */
    uint32_t gpus_per_node;  /* 8, PyTorch's assumption without CUDA */
    uint32_t nvlink;         /* 1; 0: a node without NVLink (PCIe; newest model only) */
    uint32_t channels;       /* 0: the model's own (classic 2, newest per GPU) */
    uint32_t bytes_mode;     /* enum sb_nccl_bytes */
};

/* Ring alpha-beta constants of the analytical model (docs/cost-model.md). */
struct sb_cost_params {
    enum sb_cost_model model;
    double step_lat_us;               /* latency of one ring step */
    double bus_gbps[SB_COLL_COUNT];   /* bus bandwidth per collective type, GB/s */
    uint32_t default_ranks;           /* group size when a start gives none */
    uint32_t bw_typed;                /* bit t: bw_<coll t> was given; bw_gbps leaves it */
    struct sb_roofline roof;          /* compute nodes with flops/bytes (appended) */
    struct sb_nccl_params nccl;       /* --comm inductor-*: Inductor's estimators (appended) */
};

void sb_cost_defaults(struct sb_cost_params *c);
/* "key=value,..." overrides: lat_us, bw_gbps (the network types), bw_<coll>
 * (one type; wins over bw_gbps in any order), ranks. */
int sb_cost_parse(struct sb_cost_params *c, const char *spec, struct sb_err *e);
/* Duration of the collective issued by start node i. */
double sb_cost_coll_us(const struct sb_cost_params *c, const struct sb_graph_view *g,
                       uint32_t i);
/* Fills g->dur_us under c. */
void sb_cost_apply(const struct sb_cost_params *c, struct sb_graph *g);
/* Latency on every edge but start->done: 0 analytical, 1 approx (XLA kLowLatency). */
double sb_cost_edge_lat(const struct sb_cost_params *c);
/* The collective model's effective values as --cost would set them,
 * ';'-separated ("lat_us=2;bw_gbps=40;bw_send_host=25;..."; a type whose
 * bandwidth differs from bw_gbps by its own key), for the results' cost_params
 * column: the cost model's name alone does not say which bandwidth produced
 * the figures.  "" under the approx model, which has none. */
void sb_cost_describe(const struct sb_cost_params *c, char *buf, size_t n);

/* ---- buckets (docs/cost-model.md, "Buckets") ---------------------------- */

/* The collective of a bucket, members[0..n) (starts of one type and group),
 * as one of their summed comm_bytes (c->default_ranks: the group of a start
 * that names none, resolved by sb_cost_ranks); members whose comm_us the file gives
 * keep it (the file gives no latency to share), summed with the rest. */
double sb_cost_bucket_us(const struct sb_cost_params *c, const struct sb_graph_view *g,
                         const uint32_t *members, uint32_t n);
/* What Inductor's bucketing copies, in bytes: in, into the merged buffer
 * before the collective (an all_gather's shards, a reduce_scatter's or
 * all_reduce's whole inputs); out, after it (an all_gather's output, whose
 * per-member pieces are strided views of the merged one; a reduce_scatter's
 * or all_reduce's split of a flat buffer are contiguous views: 0). */
void sb_bucket_copy_bytes(const struct sb_graph_view *g, uint32_t ranks, const uint32_t *members,
                          uint32_t n, uint64_t *in_bytes, uint64_t *out_bytes);
/* The copies' time at the copy bandwidth (bw_copy): in + out. */
double sb_cost_bucket_copy_us(const struct sb_cost_params *c, const struct sb_graph_view *g,
                              const uint32_t *members, uint32_t n);
/* The merged buffers a bucket holds: an all_gather's or all_reduce's merged
 * tensor, a reduce_scatter's merged input and output. */
uint64_t sb_bucket_staging_bytes(const struct sb_graph_view *g, uint32_t ranks,
                                 const uint32_t *members, uint32_t n);
/* The group size of a start that gives none: g's "# ranks=", else c's. */
uint32_t sb_cost_ranks(const struct sb_cost_params *c, const struct sb_graph *g);

/* ---- simulator --------------------------------------------------------- */

struct sb_graph;
/* Collectives that share queues, priced by a model the core does not know
 * (ASTRA-sim's system layer, net/astra_comm.c): the simulator issues into it
 * in nondecreasing time and asks when each collective ends.  Times in ns. */
struct sb_comm_queue {
    const void *model;
    void *(*open)(const void *model);
    void (*close)(void *q);
    /* 1 with the collective's handle when the model prices start v (issued
     * at t_ns); 0 when it does not, and v takes g->dur_us[v] */
    int (*issue)(void *q, const struct sb_graph *g, uint32_t v, double t_ns, uint32_t *h);
    double (*next_ns)(const void *q);             /* next event; INFINITY when idle */
    void (*step)(void *q);                        /* handle the next event */
    double (*end_ns)(const void *q, uint32_t h);  /* < 0 while running */
    double (*wait_ns)(void *q, uint32_t h);       /* steps until h ends */
    /* 1 with what no sharing of the queues can beat for start v, 0 when the
     * model does not price v (for the lower bound) */
    int (*floor_ns)(const void *model, const struct sb_graph *g, uint32_t v, double *ns);
};

struct sb_sim_config {
    /* Collectives in flight at once.  shared != 0: one resource for every type
     * with capacity limit[0] (GPU-like: one NCCL stream).  Otherwise one
     * resource per type with capacity limit[type]. */
    int shared;
    uint32_t limit[SB_COLL_COUNT];
    double edge_lat_us; /* added on every edge but start->done (sb_cost_edge_lat) */
    uint32_t n_devices; /* unused: the device count is g->machine->n_devices */
    int record;         /* fill the per-node times of sb_sim_result (timelines) */
    /* --comm astra (docs/astra.md): on one device, collectives ASTRA-sim
     * prices go through its system layer's queues once the shared resource
     * admits them; needs shared.  NULL: every collective takes dur_us. */
    const struct sb_comm_queue *queue;
    /* Buckets (sb_schedule.bucket; docs/cost-model.md, "Buckets"): the time
     * of one collective carrying the members' summed bytes.  NULL: the core's
     * model, sb_cost_bucket_us under `cost` (the defaults when NULL too);
     * --comm inductor-* plugs its estimator in here. */
    double (*bucket_us)(const void *ctx, const struct sb_graph_view *g, uint32_t ranks,
                        const uint32_t *members, uint32_t n); /* ranks: sb_cost_ranks */
    const void *bucket_ctx;
    const struct sb_cost_params *cost;
};
void sb_sim_defaults(struct sb_sim_config *c);
int sb_sim_parse(struct sb_sim_config *c, const char *spec, struct sb_err *e);

struct sb_sim_result {
    double makespan_us;
    double exposed_comm_us; /* stream time spent waiting at dones */
    double compute_us;      /* sum of compute durations */
    double comm_us;         /* sum of collective durations */
    double makespan_lb_us;  /* sb_sim_lower_bound */
    uint64_t peak_mem_bytes;
    uint32_t peak_pos;      /* first schedule position reaching the peak */
    uint32_t n_pos;
    uint64_t *mem_bytes;    /* [n_pos] memory live at each position, device 0 */
    /* Only with sb_sim_config.record, [n_nodes] each, for timelines: */
    double *begin_us;       /* compute: start; done: when it began waiting; start: issue */
    double *end_us;         /* compute: end; done: when the wait ended; start: issue */
    double *coll_begin_us;  /* starts: when the collective began running */
    double *coll_end_us;    /* starts: when it finished */
    uint32_t *coll_lane;    /* starts: resource * SB_SIM_MAX_INFLIGHT + slot */
    /* Placement (docs/machines.md); with one device: 1, 0, 0, {peak}, 0. */
    uint32_t devices_used;   /* devices that run at least one non-input node */
    uint64_t transfer_bytes; /* bytes copied over links */
    uint32_t n_transfers;
    uint32_t barriers;       /* positions with sb_schedule.barrier set */
    uint32_t n_dev;
    uint64_t *dev_peak_bytes; /* [n_dev] each device's peak */
    uint32_t over_capacity;   /* devices whose peak exceeds their mem_cap_bytes */
    uint32_t buckets;         /* buckets of two or more collectives the schedule sent */
    /* ASTRA-sim's exposed communication (Workload::report): each device's
     * end minus the time of its device compute (compute nodes but those of
     * op "host" or "comm_host", the CPU's), the largest over the devices
     * that run a node (docs/ready.md) */
    double astra_exposed_us;
    /* [n_dev] exposed_comm_us, compute_us and comm_us of each device's nodes
     * (a job of ranks reports them per rank: sb_graph_is_job) */
    double *dev_exposed_us, *dev_compute_us, *dev_comm_us;
    /* Only with sb_sim_config.record, for per-device timelines and Gantt charts
     * (docs/machines.md): every device's memory, and each copy over a link in
     * the order the simulator made them.  Recording changes no figure above. */
    uint64_t *dev_mem_bytes;     /* [n_pos * n_dev] memory of device d at position i */
    struct sb_sim_copy *copies;  /* [n_copies] */
    uint32_t n_copies;
};
/* One copy of a producer's buffer from its device to another (several devices). */
struct sb_sim_copy {
    uint32_t producer;         /* node whose buffer (sb_mem_buffer_roots) is copied */
    uint32_t from_dev, to_dev; /* the link from_dev -> to_dev carried it */
    double begin_us, end_us;   /* on the link, latency included */
    uint64_t bytes;
};
/* The most a plugin handed a whole graph of identical devices gets as its
 * table of t(v, a) (graph.h, dev_dur_us): 4 GB, a job of 256 ranks of a
 * 3,700-node trace takes 1.9 GB (docs/machines.md, "Duration tables"). */
#define SB_DUR_TABLE_MAX_BYTES 4000000000.0
#define SB_SIM_MAX_INFLIGHT 64 /* slots per resource; more would be no limit */

/* Replays a validated schedule.  Times come from g->v.dur_us. */
void sb_sim_run(const struct sb_graph *g, const struct sb_schedule *s,
                const struct sb_sim_config *c, struct sb_sim_result *r);
void sb_sim_result_free(struct sb_sim_result *r);
/* A makespan no schedule of g under c can beat (harness/src/core/bound.c). */
double sb_sim_lower_bound(const struct sb_graph_view *g, const struct sb_sim_config *c);
/* With several devices: max(critical path with every node on its fastest
 * device, sum of fastest times / n_devices); transfers are left out. */
double sb_sim_device_bound(const struct sb_graph_view *g, double edge_lat_us);

/* The buffer each node's output lives in (root[n_nodes]): alias nodes and
 * dones own none and view their first input's (harness/src/core/memory.c). */
void sb_mem_buffer_roots(const struct sb_graph_view *g, uint32_t *root);
/* A view's inputs' buffers and its outputs' that view no input, each once
 * (io_bytes without a '# io_bytes=' line; a rank's, core/ranks.c). */
uint64_t sb_view_io_bytes(const struct sb_graph_view *v);
/* Memory of `order` (n entries, one device) in position order: mem[i] is the
 * bytes live while position i runs.  Returns the peak; *peak_pos its first
 * position.  Used by the simulator and reusable by policies' tests. */
uint64_t sb_mem_profile(const struct sb_graph_view *g, const uint32_t *order,
                        uint32_t n, uint64_t *mem, uint32_t *peak_pos);

extern const struct sb_host sb_host_services;

/* ---- schedules --------------------------------------------------------- */

void sb_schedule_init(struct sb_schedule *s, const struct sb_graph *g,
                      uint32_t n_devices);
/* The same on a view (a rank's program cut out of a job, core/ranks.c). */
void sb_schedule_init_view(struct sb_schedule *s, const struct sb_graph_view *g,
                           uint32_t n_devices);
void sb_schedule_free(struct sb_schedule *s);
/* 1 when some start of s is in a bucket (sb_schedule.bucket). */
int sb_schedule_buckets(const struct sb_schedule *s);
/* 0 when valid; otherwise a short reason in e ("node 7 scheduled twice"). */
int sb_schedule_validate(const struct sb_graph_view *g, const struct sb_schedule *s,
                         struct sb_err *e);

/* The order the simulator replays a schedule of joined collectives in
 * (graph.h, `join`; docs/machines.md, "Joined collectives"): positions of
 * s->order, smallest first among those that can go, where a node can go once
 * its inputs and the node before it on its device's stream have gone, a
 * joined collective's done once every member's start has (a bucket's
 * member's: every start of its bucket and of the buckets it is matched
 * with), and a node after a barrier once every position up to the barrier
 * has.  Without joins that is 0, 1, 2, ...  Returns the positions written to out[n_nodes]; fewer when
 * the devices wait on each other in a cycle, *stuck then the first position
 * left out. */
uint32_t sb_replay_order(const struct sb_graph_view *g, const struct sb_schedule *s,
                         uint32_t *out, uint32_t *stuck);

/* The same order, a step at a time, for the simulator: sb_replay_next gives
 * the next position that can go (0 when none can now), sb_replay_went lets
 * what waited on it go.  With hold_dones, every done also waits for one
 * sb_replay_release of it (the simulator's: its collective has begun). */
struct sb_replay {
    const struct sb_graph_view *g;
    const struct sb_schedule *s;
    uint32_t *need, *next, *pos, *heap, n_heap, fence, placed;
    uint32_t *lead, *left; /* a joined collective's starts still to go (schedule.c) */
    const uint32_t *ring; /* what a joined start's done waits for: join, or a
                             bucket's group (a matched group of joined
                             buckets, or one bucket) as one cycle */
    uint32_t *own_ring;   /* ring when allocated (buckets), else NULL */
};
void sb_replay_init(struct sb_replay *R, const struct sb_graph_view *g,
                    const struct sb_schedule *s, int hold_dones);
int sb_replay_next(struct sb_replay *R, uint32_t *i);
void sb_replay_went(struct sb_replay *R, uint32_t i);
void sb_replay_release(struct sb_replay *R, uint32_t v);
void sb_replay_free(struct sb_replay *R);

/* ---- plugin registry (the only global mutable state) ------------------- */

int sb_registry_add(const struct sb_plugin *p, const char *origin, struct sb_err *e);
int sb_registry_load(const char *so_path, struct sb_err *e);
void sb_registry_add_builtins(void);
uint32_t sb_registry_count(void);
const struct sb_plugin *sb_registry_at(uint32_t i);
const struct sb_plugin *sb_plugin_find(const char *name);
void sb_registry_clear(void); /* unloads modules; for tests and exit */

/* A configured scheduler: plugin plus parsed parameters, from "name:k=v,...". */
struct sb_sched {
    const struct sb_plugin *p;
    char *spec;     /* canonical name plus parameters as given: the scheduler column */
    double *param;  /* [p->n_params] */
    char *ident;    /* build and effective parameters: the scheduler_id column */
};
/* A job of ranks (graph.h, `join`; every node pre-assigned) and a policy
 * that is no placer: it schedules each rank's program alone (core/ranks.c). */
int sb_sched_per_rank(const struct sb_sched *s, const struct sb_graph *g);
/* A job of ranks: joined collectives, every node pre-assigned, two devices
 * or more (each device one rank's program). */
int sb_graph_is_job(const struct sb_graph_view *g);
int sb_sched_run_ranks(const struct sb_sched *s, const struct sb_graph *g,
                       struct sb_schedule *out, struct sb_err *e);
/* "built-in", or a module's file name and the hash of its bytes */
const char *sb_registry_build(const struct sb_plugin *p);
int sb_sched_parse(struct sb_sched *s, const char *spec, struct sb_err *e);
void sb_sched_free(struct sb_sched *s);
/* Runs the plugin: init, run, free.  Returns 0; -1 with "error:<msg>" in e. */
int sb_sched_run(const struct sb_sched *s, const struct sb_graph *g,
                 struct sb_schedule *out, struct sb_err *e);
/* init, run and free on one view as the host hands views to plugins (an ABI 1
 * plugin gets `holds` at its stride); sb_sched_run and each rank of a job. */
int sb_sched_run_view(const struct sb_sched *s, const struct sb_graph_view *v,
                      struct sb_schedule *out, struct sb_err *e);

#endif
