/* Chrome trace event JSON of one simulated schedule (`run --trace-dir`), which
 * opens in Perfetto and chrome://tracing: one lane (thread) per stream of
 * each device (compute nodes, and the waits at dones as "exposed" slices: a
 * stream runs one node at a time, so its slices never overlap, which the
 * viewers need of a thread's complete events), one lane per communication
 * slot, and memory as a counter track.  With several devices
 * (run --machine) each device is a process of its own (pid 1 + device index)
 * with those lanes, its own memory track, and a lane per link out of it that
 * carried copies ("copies to gpu1", a slice per copy named after its
 * producer).  Events are written in time order. */
#define _POSIX_C_SOURCE 200809L
#include "trace.h"
#include "core/escape.h"

#include <string.h>

#define PID 1
#define TID_COMPUTE 1
#define TID_COMM0 100
#define TID_LINK0 100000 /* + target device: past every communication lane */
#define TID_STREAM1 200000 /* + stream - 1 for the streams after the first (tid 1) */

/* The lane of node v's stream on its device (sb_lane: folded onto the
 * device's streams when the machine says how many it has). */
static uint32_t stream_tid(const struct sb_graph_view *g, uint32_t v, uint32_t d)
{
    uint32_t l = sb_lane(g, v, d);
    return l ? TID_STREAM1 + l - 1 : TID_COMPUTE;
}

enum ev_kind { EV_COMPUTE, EV_WAIT, EV_COLL, EV_MEM, EV_COPY };

struct ev {
    double ts;
    uint32_t seq; /* emission order: ties keep it, so output is deterministic */
    uint32_t kind;
    uint32_t idx; /* node id; schedule position * n_dev + device for EV_MEM;
                     index in r->copies for EV_COPY */
};

static int cmp_ev(const void *a, const void *b)
{
    const struct ev *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct ev *collect(const struct sb_graph_view *g, const struct sb_schedule *s,
                          const struct sb_sim_result *r, uint32_t *n_ev)
{
    /* several devices: a memory track each, from the recorded profiles */
    uint32_t nd = r->n_dev > 1 && r->dev_mem_bytes ? r->n_dev : 1;
    struct ev *ev = sb_xmalloc(((size_t)g->n_nodes * (1 + nd) + r->n_copies + 1) * sizeof *ev);
    uint32_t n = 0;
    uint64_t *prev = sb_xmalloc(nd * sizeof *prev);
    for (uint32_t d = 0; d < nd; d++) /* several: a device that never holds memory gets no track */
        prev[d] = nd > 1 ? 0 : UINT64_MAX;
    /* the sequence number is the event's index: assigned before n moves on
     * (ev[n++] = {..., n, ...} reads and writes n unsequenced) */
    for (uint32_t i = 0; i < s->n_nodes; i++) {
        uint32_t v = s->order[i];
        if (g->kind[v] == SB_KIND_COMPUTE && r->end_us[v] > r->begin_us[v]) {
            ev[n] = (struct ev){r->begin_us[v], n, EV_COMPUTE, v};
            n++;
        } else if (g->kind[v] == SB_KIND_DONE && r->end_us[v] > r->begin_us[v]) {
            ev[n] = (struct ev){r->begin_us[v], n, EV_WAIT, v};
            n++;
        } else if (g->kind[v] == SB_KIND_START) {
            ev[n] = (struct ev){r->coll_begin_us[v], n, EV_COLL, v};
            n++;
        }
        for (uint32_t d = 0; d < nd; d++) {
            uint64_t m = nd > 1 ? r->dev_mem_bytes[(size_t)i * nd + d] : r->mem_bytes[i];
            if (m != prev[d]) {
                ev[n] = (struct ev){r->begin_us[v], n, EV_MEM, i * nd + d};
                n++;
                prev[d] = m;
            }
        }
    }
    for (uint32_t k = 0; k < r->n_copies; k++) {
        ev[n] = (struct ev){r->copies[k].begin_us, n, EV_COPY, k};
        n++;
    }
    free(prev);
    qsort(ev, n, sizeof *ev, cmp_ev);
    *n_ev = n;
    return ev;
}

static void write_device_names(FILE *f, const struct sb_graph *G, const char *sched,
                               uint32_t d, int first, const uint8_t *lane_used)
{
    const struct sb_machine_view *m = G->v.machine;
    char title[1024];
    if (m->n_devices > 1)
        snprintf(title, sizeof title, "%s / %s / %s", G->name, sched, m->dev_name[d]);
    else
        snprintf(title, sizeof title, "%s / %s", G->name, sched);
    fprintf(f, "%s{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
               "\"args\":{\"name\":", first ? "" : ",\n", PID + d);
    sb_json_str(f, title);
    fprintf(f, "}},\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%d,"
               "\"args\":{\"name\":\"%s\"}}", PID + d, TID_COMPUTE,
            G->v.n_streams > 1 ? "stream 0" : "compute stream");
    for (uint32_t l = 1; l < G->v.n_streams; l++)
        if (lane_used[(size_t)d * G->v.n_streams + l])
            fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
                       "\"args\":{\"name\":\"stream %u\"}}", PID + d, TID_STREAM1 + l - 1, l);
}

static void write_lane_names(FILE *f, const struct sb_graph *G, const char *sched,
                             const struct sb_schedule *s, const struct sb_sim_result *r,
                             int shared)
{
    const struct sb_graph_view *g = &G->v;
    uint32_t nd = g->machine->n_devices, lanes = SB_COLL_COUNT * SB_SIM_MAX_INFLIGHT;
    uint8_t *dev_used = sb_xcalloc(nd, 1);
    uint8_t *lane_used = sb_xcalloc((size_t)nd * g->n_streams, 1);
    dev_used[0] = 1; /* the first process always exists: it holds the memory track */
    for (uint32_t v = 0; v < g->n_nodes; v++) {
        dev_used[s->device[v]] = 1;
        lane_used[(size_t)s->device[v] * g->n_streams + sb_lane(g, v, (uint32_t)s->device[v])] = 1;
    }
    for (uint32_t d = 0, first = 1; d < nd; d++)
        if (dev_used[d]) {
            write_device_names(f, G, sched, d, (int)first, lane_used);
            first = 0;
        }
    free(lane_used);
    /* one name per communication slot that was used, in lane order */
    uint8_t *used = sb_xcalloc((size_t)nd * lanes, 1);
    for (uint32_t v = 0; v < g->n_nodes; v++)
        if (g->kind[v] == SB_KIND_START)
            used[(size_t)s->device[v] * lanes + r->coll_lane[v]] = 1;
    for (uint32_t d = 0; d < nd; d++)
        for (uint32_t l = 0; l < lanes; l++) {
            if (!used[(size_t)d * lanes + l])
                continue;
            uint32_t res = l / SB_SIM_MAX_INFLIGHT, slot = l % SB_SIM_MAX_INFLIGHT;
            fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
                       "\"args\":{\"name\":\"comm %s slot %u\"}}",
                    PID + d, TID_COMM0 + l,
                    shared ? "shared" : sb_coll_name((enum sb_coll)res), slot);
        }
    /* one lane per link that carried copies, on its source device */
    uint8_t *link = sb_xcalloc((size_t)nd * nd, 1);
    for (uint32_t k = 0; k < r->n_copies; k++)
        link[(size_t)r->copies[k].from_dev * nd + r->copies[k].to_dev] = 1;
    for (uint32_t a = 0; a < nd; a++)
        for (uint32_t b = 0; b < nd; b++)
            if (link[(size_t)a * nd + b]) {
                fprintf(f, ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,"
                           "\"tid\":%u,\"args\":{\"name\":", PID + a, TID_LINK0 + b);
                char name[300];
                snprintf(name, sizeof name, "copies to %s", g->machine->dev_name[b]);
                sb_json_str(f, name);
                fprintf(f, "}}");
            }
    free(link);
    free(used);
    free(dev_used);
}

static void write_event(FILE *f, const struct sb_graph_view *g, const struct sb_schedule *s,
                        const struct sb_sim_result *r, const struct ev *e)
{
    uint32_t v = e->idx;
    if (e->kind == EV_MEM) {
        uint32_t nd = r->n_dev > 1 && r->dev_mem_bytes ? r->n_dev : 1;
        uint64_t m = nd > 1 ? r->dev_mem_bytes[v] : r->mem_bytes[v];
        fprintf(f, ",\n{\"name\":\"memory\",\"ph\":\"C\",\"pid\":%u,\"ts\":%.3f,"
                   "\"args\":{\"bytes\":%llu}}", PID + v % nd, e->ts, (unsigned long long)m);
        return;
    }
    if (e->kind == EV_COPY) {
        const struct sb_sim_copy *c = &r->copies[v];
        fprintf(f, ",\n{\"name\":");
        sb_json_str(f, g->names + g->name_off[c->producer]);
        fprintf(f, ",\"cat\":\"copy\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,"
                   "\"dur\":%.3f,\"args\":{\"id\":%u,\"bytes\":%llu}}",
                PID + c->from_dev, TID_LINK0 + c->to_dev, e->ts, c->end_us - c->begin_us,
                c->producer, (unsigned long long)c->bytes);
        return;
    }
    double dur = e->kind == EV_COLL ? r->coll_end_us[v] - r->coll_begin_us[v]
                                    : r->end_us[v] - r->begin_us[v];
    uint32_t tid = e->kind == EV_COLL ? TID_COMM0 + r->coll_lane[v]
                                      : stream_tid(g, v, (uint32_t)s->device[v]);
    const char *cat = e->kind == EV_COMPUTE ? "compute"
                      : e->kind == EV_WAIT  ? "exposed"
                                            : sb_coll_name((enum sb_coll)g->coll[v]);
    fprintf(f, ",\n{\"name\":");
    sb_json_str(f, g->names + g->name_off[v]);
    fprintf(f, ",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,"
               "\"dur\":%.3f,\"args\":{\"id\":%u",
            cat, PID + (uint32_t)s->device[v], tid, e->ts, dur, v);
    if (e->kind == EV_COLL)
        fprintf(f, ",\"comm_bytes\":%llu", (unsigned long long)g->comm_bytes[v]);
    else if (g->op[v]) {
        fprintf(f, ",\"op\":");
        sb_json_str(f, g->op_names[g->op[v]]);
    }
    fprintf(f, "}}");
}

int sb_trace_write(const char *path, const struct sb_graph *G, const char *sched,
                   const struct sb_schedule *s, const struct sb_sim_result *r, int shared,
                   struct sb_err *e)
{
    struct sb_atomic out;
    uint32_t n_ev;
    SB_ASSERT(r->begin_us); /* simulated with record = 1 */
    if (sb_atomic_open(&out, path, e))
        return -1;
    struct ev *ev = collect(&G->v, s, r, &n_ev);
    fprintf(out.f, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
    write_lane_names(out.f, G, sched, s, r, shared);
    for (uint32_t i = 0; i < n_ev; i++)
        write_event(out.f, &G->v, s, r, &ev[i]);
    fprintf(out.f, "\n]}\n");
    free(ev);
    return sb_atomic_commit(&out, e);
}
