/* The graph a generator builds (node by node, with names, metadata and the
 * device model that prices it) and its CSV v1 writer.  gen.c, the command,
 * sits above this file and every generator. */
#include "gen-impl.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

/* ---- device model -------------------------------------------------------- */

double sb_dev_time_us(double flops, double flop_eff, double bytes)
{
    double flop_us = flops / (SB_DEV_PEAK_FLOPS * flop_eff) * 1e6;
    double byte_us = bytes / (SB_DEV_HBM_BYTES_PER_S * SB_DEV_MEM_EFF) * 1e6;
    double t = flop_us > byte_us ? flop_us : byte_us;
    return t > SB_DEV_KERNEL_MIN_US ? t : SB_DEV_KERNEL_MIN_US;
}

/* ---- graph builder ------------------------------------------------------- */

static const char *const coll_names[SB_COLL_COUNT] = {
    "", "all_gather", "reduce_scatter", "all_reduce", "all_to_all",
    "collective_permute", "send", "recv", "send_host", "recv_host", "copy",
    "ragged_all_to_all", "collective_broadcast"};
static const char *const coll_done_ops[SB_COLL_COUNT] = {
    "", "all_gather_done", "reduce_scatter_done", "all_reduce_done",
    "all_to_all_done", "collective_permute_done", "send_done", "recv_done",
    "send_host_done", "recv_host_done", "copy_done", "ragged_all_to_all_done",
    "collective_broadcast_done"};
static const char *const kind_names[SB_KIND_COUNT] = {
    "compute", "nop", "input", "start", "done"};

static void grow_nodes(struct sb_gen *g)
{
    uint32_t cap = g->cap ? g->cap * 2 : 4096;
    SB_ASSERT(cap > g->cap); /* uint32_t ids */
    g->kind = sb_xrealloc(g->kind, cap * sizeof *g->kind);
    g->coll = sb_xrealloc(g->coll, cap * sizeof *g->coll);
    g->flags = sb_xrealloc(g->flags, cap * sizeof *g->flags);
    g->group = sb_xrealloc(g->group, cap * sizeof *g->group);
    g->op = sb_xrealloc(g->op, cap * sizeof *g->op);
    g->cost_us = sb_xrealloc(g->cost_us, cap * sizeof *g->cost_us);
    g->out_bytes = sb_xrealloc(g->out_bytes, cap * sizeof *g->out_bytes);
    g->val_bytes = sb_xrealloc(g->val_bytes, cap * sizeof *g->val_bytes);
    g->comm_bytes = sb_xrealloc(g->comm_bytes, cap * sizeof *g->comm_bytes);
    g->device = sb_xrealloc(g->device, cap * sizeof *g->device);
    g->stream = sb_xrealloc(g->stream, cap * sizeof *g->stream);
    g->res = sb_xrealloc(g->res, cap * sizeof *g->res);
    g->name_off = sb_xrealloc(g->name_off, cap * sizeof *g->name_off);
    g->in_off = sb_xrealloc(g->in_off, ((size_t)cap + 1) * sizeof *g->in_off);
    g->cap = cap;
}

void sb_gen_init(struct sb_gen *g)
{
    memset(g, 0, sizeof *g);
    grow_nodes(g);
    g->in_off[0] = 0;
}

void sb_gen_free(struct sb_gen *g)
{
    free(g->kind);
    free(g->coll);
    free(g->flags);
    free(g->group);
    free(g->op);
    free(g->cost_us);
    free(g->out_bytes);
    free(g->val_bytes);
    free(g->comm_bytes);
    free(g->device);
    free(g->stream);
    free(g->res);
    free(g->name_off);
    free(g->in_off);
    free(g->in);
    free(g->names);
    for (uint32_t i = 0; i < g->n_meta; i++)
        free(g->meta[i]);
    free(g->meta);
    memset(g, 0, sizeof *g);
}

void sb_gen_meta(struct sb_gen *g, const char *key, const char *fmt, ...)
{
    char val[1024], line[1200];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(val, sizeof val, fmt, ap);
    va_end(ap);
    SB_ASSERT(n >= 0 && (size_t)n < sizeof val);
    n = snprintf(line, sizeof line, "%s=%s", key, val);
    SB_ASSERT(n >= 0 && (size_t)n < sizeof line);
    g->meta = sb_xrealloc(g->meta, (g->n_meta + 1) * sizeof *g->meta);
    g->meta[g->n_meta++] = sb_xstrdup(line);
}

static void add_name(struct sb_gen *g, uint32_t id, const char *fmt, va_list ap)
{
    char buf[256];
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    SB_ASSERT(n > 0 && (size_t)n < sizeof buf);
    if (g->n_names + (size_t)n + 1 > g->cap_names) {
        size_t cap = g->cap_names ? g->cap_names * 2 : 65536;
        while (cap < g->n_names + (size_t)n + 1)
            cap *= 2;
        g->names = sb_xrealloc(g->names, cap);
        g->cap_names = cap;
    }
    g->name_off[id] = g->n_names;
    memcpy(g->names + g->n_names, buf, (size_t)n + 1);
    g->n_names += (size_t)n + 1;
}

/* Appends a node with its inputs; every other field starts at zero. */
static uint32_t node_new(struct sb_gen *g, enum sb_kind k, const char *op,
                         uint32_t n_in, const uint32_t *in)
{
    if (g->n_nodes == g->cap)
        grow_nodes(g);
    uint32_t id = g->n_nodes++;
    g->kind[id] = (uint8_t)k;
    g->coll[id] = SB_COLL_NONE;
    g->flags[id] = 0;
    g->group[id] = 0;
    g->op[id] = op ? op : "";
    g->cost_us[id] = 0;
    g->out_bytes[id] = 0;
    g->val_bytes[id] = 0;
    g->comm_bytes[id] = 0;
    g->device[id] = -1;
    g->stream[id] = 0;
    g->res[id] = SB_RES_ALL;
    if (g->n_in + n_in > g->cap_in) {
        uint32_t cap = g->cap_in ? g->cap_in * 2 : 8192;
        while (cap < g->n_in + n_in)
            cap *= 2;
        g->in = sb_xrealloc(g->in, cap * sizeof *g->in);
        g->cap_in = cap;
    }
    for (uint32_t i = 0; i < n_in; i++) {
        SB_ASSERT(in[i] < id); /* file order is a topological order */
        g->in[g->n_in++] = in[i];
    }
    g->in_off[id + 1] = g->n_in;
    return id;
}

uint32_t sb_gen_input(struct sb_gen *g, uint64_t bytes, uint32_t flags,
                      const char *fmt, ...)
{
    uint32_t id = node_new(g, SB_KIND_INPUT, "", 0, NULL);
    va_list ap;
    va_start(ap, fmt);
    add_name(g, id, fmt, ap);
    va_end(ap);
    g->out_bytes[id] = g->val_bytes[id] = bytes;
    g->flags[id] = flags;
    return id;
}

uint32_t sb_gen_compute(struct sb_gen *g, const char *op, double cost_us,
                        uint64_t out_bytes, uint32_t n_in, const uint32_t *in,
                        const char *fmt, ...)
{
    uint32_t id = node_new(g, SB_KIND_COMPUTE, op, n_in, in);
    va_list ap;
    va_start(ap, fmt);
    add_name(g, id, fmt, ap);
    va_end(ap);
    g->cost_us[id] = cost_us;
    g->out_bytes[id] = g->val_bytes[id] = out_bytes;
    return id;
}

uint32_t sb_gen_elem(struct sb_gen *g, const char *op, uint64_t out_bytes,
                     uint32_t n_in, const uint32_t *in, const char *fmt, ...)
{
    double bytes = (double)out_bytes;
    for (uint32_t i = 0; i < n_in; i++)
        bytes += (double)g->val_bytes[in[i]];
    uint32_t id = node_new(g, SB_KIND_COMPUTE, op, n_in, in);
    va_list ap;
    va_start(ap, fmt);
    add_name(g, id, fmt, ap);
    va_end(ap);
    g->cost_us[id] = sb_dev_time_us(0, 1, bytes);
    g->out_bytes[id] = g->val_bytes[id] = out_bytes;
    return id;
}

uint32_t sb_gen_view(struct sb_gen *g, const char *op, uint32_t src,
                     uint64_t val_bytes, const char *fmt, ...)
{
    uint32_t id = node_new(g, SB_KIND_NOP, op, 1, &src);
    va_list ap;
    va_start(ap, fmt);
    add_name(g, id, fmt, ap);
    va_end(ap);
    g->flags[id] = SB_FLAG_ALIAS;
    g->val_bytes[id] = val_bytes ? val_bytes : g->val_bytes[src];
    return id;
}

static uint32_t start_new(struct sb_gen *g, enum sb_coll c, uint32_t n_in,
                          const uint32_t *in, uint64_t out_bytes,
                          uint64_t comm_bytes, uint32_t group)
{
    SB_ASSERT(c > SB_COLL_NONE && c < SB_COLL_COUNT);
    uint32_t id = node_new(g, SB_KIND_START, coll_names[c], n_in, in);
    g->coll[id] = (uint8_t)c;
    g->out_bytes[id] = g->val_bytes[id] = out_bytes;
    g->comm_bytes[id] = comm_bytes;
    g->group[id] = group;
    return id;
}

uint32_t sb_gen_start(struct sb_gen *g, enum sb_coll c, uint32_t n_in,
                      const uint32_t *in, uint64_t out_bytes, uint64_t comm_bytes,
                      uint32_t group, const char *fmt, ...)
{
    uint32_t id = start_new(g, c, n_in, in, out_bytes, comm_bytes, group);
    va_list ap;
    va_start(ap, fmt);
    add_name(g, id, fmt, ap);
    va_end(ap);
    return id;
}

/* add_name takes a va_list; this forwards a fixed format. */
static void add_name_f(struct sb_gen *g, uint32_t id, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    add_name(g, id, fmt, ap);
    va_end(ap);
}

uint32_t sb_gen_done(struct sb_gen *g, uint32_t start, uint32_t flags)
{
    SB_ASSERT(g->kind[start] == SB_KIND_START);
    enum sb_coll c = (enum sb_coll)g->coll[start];
    uint32_t id = node_new(g, SB_KIND_DONE, coll_done_ops[c], 1, &start);
    add_name_f(g, id, "%s.done", g->names + g->name_off[start]);
    g->coll[id] = (uint8_t)c;
    g->flags[id] = flags;
    g->val_bytes[id] = g->val_bytes[start];
    return id;
}

uint32_t sb_gen_coll(struct sb_gen *g, enum sb_coll c, uint32_t n_in,
                     const uint32_t *in, uint64_t out_bytes, uint64_t comm_bytes,
                     uint32_t group, uint32_t done_flags, const char *fmt, ...)
{
    uint32_t s = start_new(g, c, n_in, in, out_bytes, comm_bytes, group);
    va_list ap;
    va_start(ap, fmt);
    add_name(g, s, fmt, ap);
    va_end(ap);
    return sb_gen_done(g, s, done_flags);
}

/* ---- CSV writer ---------------------------------------------------------- */

static void field_u64(FILE *f, uint64_t x)
{
    char buf[24];
    if (!x) {
        sb_csv_field(f, "", 0);
        return;
    }
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)x);
    sb_csv_field(f, buf, 0);
}

static void field_flags(FILE *f, uint32_t flags)
{
    char buf[32] = "";
    if (flags & SB_FLAG_WEIGHT)
        strcat(buf, "weight");
    if (flags & SB_FLAG_OUTPUT)
        strcat(buf, *buf ? "|output" : "output");
    if (flags & SB_FLAG_ALIAS)
        strcat(buf, *buf ? "|alias" : "alias");
    sb_csv_field(f, buf, 0);
}

void sb_gen_write(const struct sb_gen *g, FILE *f)
{
    size_t cap = 256;
    char *ins = sb_xmalloc(cap);
    for (uint32_t i = 0; i < g->n_meta; i++)
        fprintf(f, "# %s\n", g->meta[i]);
    int streams = 0;
    for (uint32_t v = 0; v < g->n_nodes; v++)
        streams |= g->stream[v] != 0;
    fputs("id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group,"
          "comm_us,device,flags", f);
    if (streams) /* streams and resources only where a generator set them */
        fputs(",stream", f);
    if (g->res_name)
        fprintf(f, ",res.%s", g->res_name);
    fputs("\n", f);
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        char num[32];
        size_t len = 0;
        uint32_t n_in = g->in_off[v + 1] - g->in_off[v];
        if ((size_t)n_in * 11 + 1 > cap) {
            cap = (size_t)n_in * 11 + 1;
            ins = sb_xrealloc(ins, cap);
        }
        ins[0] = 0;
        for (uint32_t e = g->in_off[v]; e < g->in_off[v + 1]; e++)
            len += (size_t)snprintf(ins + len, cap - len, len ? " %u" : "%u",
                                    g->in[e]);
        snprintf(num, sizeof num, "%u", v);
        sb_csv_field(f, num, 1);
        sb_csv_field(f, g->names + g->name_off[v], 0);
        sb_csv_field(f, kind_names[g->kind[v]], 0);
        sb_csv_field(f, ins, 0);
        sb_csv_field(f, g->op[v], 0);
        if (g->kind[v] == SB_KIND_COMPUTE) {
            snprintf(num, sizeof num, "%.3f", g->cost_us[v]);
            sb_csv_field(f, num, 0);
        } else
            sb_csv_field(f, "", 0);
        field_u64(f, g->out_bytes[v]);
        sb_csv_field(f, coll_names[g->coll[v]], 0);
        field_u64(f, g->kind[v] == SB_KIND_START ? g->comm_bytes[v] : 0);
        field_u64(f, g->kind[v] == SB_KIND_START ? g->group[v] : 0);
        sb_csv_field(f, "", 0); /* comm_us: left to the harness's cost model */
        if (g->device[v] >= 0) { /* pre-assigned (placement workloads); 0 too */
            snprintf(num, sizeof num, "%d", g->device[v]);
            sb_csv_field(f, num, 0);
        } else
            sb_csv_field(f, "", 0);
        field_flags(f, g->flags[v]);
        if (streams)
            field_u64(f, g->stream[v]);
        if (g->res_name && g->res[v] != SB_RES_ALL) { /* 0 is a use, not empty */
            snprintf(num, sizeof num, "%u", g->res[v]);
            sb_csv_field(f, num, 0);
        } else if (g->res_name)
            sb_csv_field(f, "", 0);
        sb_csv_end(f);
    }
    free(ins);
}

/* ---- kinds, options, command line ---------------------------------------- */

