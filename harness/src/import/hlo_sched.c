/* XLA's scheduling annotations and hints in HLO frontend attributes, for the
 * graph's sched_* columns (docs/workload-format.md, "Scheduling annotations").
 *
 * _scheduling_group_id (or _xla_scheduling_group_id) is "GROUP" or
 * "GROUP:ITERATION" (scheduling_annotations_util.cc: at most two fields,
 * GROUP a non-negative integer, ITERATION an integer, either may be empty),
 * or "noop", which XLA reads as no annotation.  scheduler_hint is one of
 * force_delay, force_delay_async, force_early; scheduler_delay_priority an
 * integer (XLA CHECK-fails on anything else); keep_original_sequence_order_in_group
 * "true" marks a group member whose text order XLA keeps. */
#include "hlo_impl.h"

#include "core/builder.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* The value of attribute key in a raw frontend_attributes text ({k="v",...}),
 * without its quotes; 1 when present. */
static int fa_get(const char *fa, const char *key, char *out, size_t n)
{
    size_t k = strlen(key);
    out[0] = 0;
    for (const char *p = fa; p && (p = strstr(p, key)); p += k) {
        if (!(p == fa || p[-1] == '{' || p[-1] == ',' || p[-1] == ' ') || p[k] != '=')
            continue;
        const char *v = p + k + 1, *end;
        if (*v == '"') {
            v++;
            end = strchr(v, '"');
        } else {
            end = v + strcspn(v, ",}");
        }
        if (!end)
            end = v + strlen(v);
        snprintf(out, n, "%.*s", (int)(end - v), v);
        return 1;
    }
    return 0;
}

/* A decimal integer within [lo, hi] with nothing after it; "" is absent. */
static int parse_int(const char *s, long lo, long hi, int32_t *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        return -1;
    *out = (int32_t)v;
    return 0;
}

/* The annotation of one attribute value into group and iteration. */
static int parse_group(const char *s, int32_t *group, int32_t *iter)
{
    char head[64];
    *group = -1;
    *iter = SB_NO_ITER;
    if (!strcmp(s, "noop"))
        return 0;
    size_t len = strcspn(s, ":");
    if (len >= sizeof head || strchr(s + len + (s[len] == ':'), ':'))
        return -1;
    memcpy(head, s, len);
    head[len] = 0;
    if (head[0] && parse_int(head, 0, INT_MAX, group))
        return -1;
    if (s[len] == ':' && s[len + 1] && parse_int(s + len + 1, INT_MIN + 1L, INT_MAX, iter))
        return -1;
    return 0;
}

int hlo_sched_read(const struct instr *in, struct sb_node_in *n, char *why, size_t n_why)
{
    char a[64], b[64], h[64], p[64], k[64];
    int has_a = in->frontend && fa_get(in->frontend, "_scheduling_group_id", a, sizeof a);
    int has_b = in->frontend && fa_get(in->frontend, "_xla_scheduling_group_id", b, sizeof b);
    int has_h = in->frontend && fa_get(in->frontend, "scheduler_hint", h, sizeof h);
    int has_p = in->frontend && fa_get(in->frontend, "scheduler_delay_priority", p, sizeof p);
    int has_k = in->frontend &&
                fa_get(in->frontend, "keep_original_sequence_order_in_group", k, sizeof k);
    n->sched = 1;
    n->sched_group = -1;
    n->sched_iter = SB_NO_ITER;
    n->sched_hint = 0;
    n->sched_priority = 0;
    if (has_a && has_b && strcmp(a, b) != 0) {
        snprintf(why, n_why, "'%s': _scheduling_group_id=\"%s\" and "
                             "_xla_scheduling_group_id=\"%s\" disagree", in->name, a, b);
        return -1;
    }
    const char *g = has_a ? a : has_b ? b : NULL;
    if (g && parse_group(g, &n->sched_group, &n->sched_iter)) {
        snprintf(why, n_why, "'%s': scheduling group \"%s\" is not GROUP[:ITERATION] (GROUP "
                             "a non-negative integer, ITERATION an integer) or \"noop\"",
                 in->name, g);
        return -1;
    }
    if (has_h) {
        if (!strcmp(h, "force_delay"))
            n->sched_hint |= SB_HINT_FORCE_DELAY;
        else if (!strcmp(h, "force_delay_async"))
            n->sched_hint |= SB_HINT_FORCE_DELAY_ASYNC;
        else if (!strcmp(h, "force_early"))
            n->sched_hint |= SB_HINT_FORCE_EARLY;
        else {
            snprintf(why, n_why, "'%s': unknown scheduler_hint \"%s\" (known: force_delay, "
                                 "force_delay_async, force_early)", in->name, h);
            return -1;
        }
    }
    if (has_p && parse_int(p, INT_MIN, INT_MAX, &n->sched_priority)) {
        snprintf(why, n_why, "'%s': scheduler_delay_priority \"%s\" is not an integer",
                 in->name, p);
        return -1;
    }
    if (has_k && !strcmp(k, "true"))
        n->sched_hint |= SB_HINT_KEEP_ORDER;
    return 0;
}

/* ---- collectives held by called computations ------------------------------ */

/* The collective of an async op in the text, or NONE: *done is 1 for the op
 * that ends one (a done), 0 for one that begins it, 2 for a synchronous
 * collective (AsyncCollectiveCreator makes it a start and a done in place). */
static enum sb_coll async_coll(const struct sb_hlo_module *m, const struct comp *c,
                               const struct instr *in, int *done)
{
    static const struct {
        const char *op;
        enum sb_coll coll;
        int done;
    } ops[] = {
        {"all-gather-start", SB_COLL_ALL_GATHER, 0}, {"all-gather-done", SB_COLL_ALL_GATHER, 1},
        {"all-reduce-start", SB_COLL_ALL_REDUCE, 0}, {"all-reduce-done", SB_COLL_ALL_REDUCE, 1},
        {"collective-permute-start", SB_COLL_COLLECTIVE_PERMUTE, 0},
        {"collective-permute-done", SB_COLL_COLLECTIVE_PERMUTE, 1},
        {"copy-start", SB_COLL_COPY, 0}, {"copy-done", SB_COLL_COPY, 1},
        {"send", SB_COLL_SEND, 0}, {"send-done", SB_COLL_SEND, 1},
        {"recv", SB_COLL_RECV, 0}, {"recv-done", SB_COLL_RECV, 1},
        {"all-gather", SB_COLL_ALL_GATHER, 2}, {"all-reduce", SB_COLL_ALL_REDUCE, 2},
        {"collective-permute", SB_COLL_COLLECTIVE_PERMUTE, 2},
    };
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (!strcmp(in->opcode, ops[k].op)) {
            *done = ops[k].done;
            if (in->host_transfer && ops[k].coll == SB_COLL_SEND)
                return SB_COLL_SEND_HOST;
            if (in->host_transfer && ops[k].coll == SB_COLL_RECV)
                return SB_COLL_RECV_HOST;
            return ops[k].coll;
        }
    /* async-start/-done: the wrapped computation's root (the start's, for a done) */
    const struct instr *start = in;
    if (!strcmp(in->opcode, "async-done") && in->n_ops)
        for (uint32_t i = 0; i < c->n; i++)
            if (!strcmp(c->in[i].name, in->ops[0]))
                start = &c->in[i];
    if ((strcmp(in->opcode, "async-start") && strcmp(in->opcode, "async-done")) ||
        !start->n_calls)
        return SB_COLL_NONE;
    int k = hlo_find_comp(m, start->calls[0]);
    if (k < 0)
        return SB_COLL_NONE;
    const struct comp *w = &m->c[k];
    const struct instr *root = w->n ? &w->in[w->n - 1] : NULL;
    for (uint32_t i = 0; i < w->n; i++)
        if (w->in[i].root)
            root = &w->in[i];
    static const struct {
        const char *op;
        enum sb_coll coll;
    } wrapped[] = {
        {"all-gather", SB_COLL_ALL_GATHER}, {"all-reduce", SB_COLL_ALL_REDUCE},
        {"reduce-scatter", SB_COLL_REDUCE_SCATTER}, {"all-to-all", SB_COLL_ALL_TO_ALL},
        {"collective-permute", SB_COLL_COLLECTIVE_PERMUTE}, {"copy", SB_COLL_COPY},
    };
    *done = !strcmp(in->opcode, "async-done");
    for (size_t j = 0; root && j < sizeof wrapped / sizeof wrapped[0]; j++)
        if (!strcmp(root->opcode, wrapped[j].op))
            return wrapped[j].coll;
    return SB_COLL_NONE;
}

/* Nested calls deeper than this hold nothing (a guard for the stack: XLA's
 * modules nest a few levels). */
#define HOLDS_MAX_DEPTH 64

enum { HOLDS_UNKNOWN, HOLDS_BUSY, HOLDS_KNOWN };

static int calls_any(const struct instr *in)
{
    return in->n_calls || in->apply;
}

void hlo_holds_init(struct hlo_holds *h, const struct sb_hlo_module *m)
{
    h->n = m->n;
    h->state = sb_xcalloc((size_t)m->n + 1, 1);
    h->h = sb_xcalloc((size_t)m->n + 1, sizeof *h->h);
}

void hlo_holds_free(struct hlo_holds *h)
{
    free(h->state);
    free(h->h);
    memset(h, 0, sizeof *h);
}

static void instr_holds(const struct sb_hlo_module *m, struct hlo_holds *memo,
                        const struct instr *in, uint32_t out[SB_COLL_COUNT], int depth);

/* XLA AsyncTracker::RecursivelyComputeResourceMapForScheduledComputation on
 * the computation's text order (every computation of an is_scheduled module
 * is in its schedule): backwards, a done takes one of its type and a start
 * gives it back; a calling instruction adds what it holds; the map keeps the
 * most in flight at once. */
static void comp_holds_walk(const struct sb_hlo_module *m, struct hlo_holds *memo, int k,
                            uint32_t out[SB_COLL_COUNT], int depth)
{
    int64_t cur[SB_COLL_COUNT] = {0};
    const struct comp *c = &m->c[k];
    for (uint32_t i = c->n; i-- > 0;) {
        const struct instr *in = &c->in[i];
        int done = -1;
        enum sb_coll t = async_coll(m, c, in, &done);
        if (t != SB_COLL_NONE && done >= 1) {
            if (++cur[t] > (int64_t)out[t])
                out[t] = (uint32_t)cur[t];
        }
        if (t != SB_COLL_NONE && (done == 0 || done == 2))
            cur[t]--;
        if (t != SB_COLL_NONE || !calls_any(in) || !strcmp(in->opcode, "fusion"))
            continue;
        uint32_t h[SB_COLL_COUNT];
        instr_holds(m, memo, in, h, depth + 1);
        for (int q = 1; q < SB_COLL_COUNT; q++)
            if (h[q] && cur[q] + h[q] > (int64_t)out[q])
                out[q] = (uint32_t)(cur[q] + h[q]);
    }
}

/* Once per computation: a module whose computations call one another many
 * times over (a while body calling several copies of a condition that calls
 * ...) would otherwise be walked once per path, exponentially many. A
 * computation reached again while being walked (recursion, which XLA and
 * hlo_flat.c refuse) holds nothing. */
static void comp_holds(const struct sb_hlo_module *m, struct hlo_holds *memo, int k,
                       uint32_t out[SB_COLL_COUNT], int depth)
{
    memset(out, 0, SB_COLL_COUNT * sizeof *out);
    if (k < 0 || (uint32_t)k >= memo->n || depth > HOLDS_MAX_DEPTH ||
        memo->state[k] == HOLDS_BUSY)
        return;
    if (memo->state[k] == HOLDS_UNKNOWN) {
        memo->state[k] = HOLDS_BUSY;
        comp_holds_walk(m, memo, k, memo->h[k], depth);
        memo->state[k] = HOLDS_KNOWN;
    }
    memcpy(out, memo->h[k], SB_COLL_COUNT * sizeof *out);
}

/* XLA GetNumResourcesPerInstruction of an instruction calling computations
 * (not an async op): per type, the most any one callee holds. The callees
 * are XLA's called_computations(): calls=, body=, condition=, branches, and
 * to_apply= (a `call`'s computation; a reducer holds nothing). */
static void instr_holds(const struct sb_hlo_module *m, struct hlo_holds *memo,
                        const struct instr *in, uint32_t out[SB_COLL_COUNT], int depth)
{
    memset(out, 0, SB_COLL_COUNT * sizeof *out);
    for (uint32_t j = 0; j <= in->n_calls; j++) {
        const char *callee = j < in->n_calls ? in->calls[j] : in->apply;
        if (!callee)
            continue;
        uint32_t h[SB_COLL_COUNT];
        comp_holds(m, memo, hlo_find_comp(m, callee), h, depth);
        for (int q = 1; q < SB_COLL_COUNT; q++)
            if (h[q] > out[q])
                out[q] = h[q];
    }
}

void hlo_sched_holds(const struct sb_hlo_module *m, struct hlo_holds *memo,
                     const struct instr *in, struct sb_node_in *n)
{
    int done;
    memset(n->holds, 0, sizeof n->holds);
    if (!calls_any(in) || !strcmp(in->opcode, "fusion") ||
        !strcmp(in->opcode, "async-start") || !strcmp(in->opcode, "async-done") ||
        async_coll(m, NULL, in, &done) != SB_COLL_NONE)
        return;
    instr_holds(m, memo, in, n->holds, 0);
}

/* ---- streams of a scheduled module ---------------------------------------- */

/* A queue number at p (quoted or not: proto JSON prints an int64 as a
 * string), 0..HLO_MAX_QUEUE; the text after it, NULL when malformed. */
static const char *queue_number(const char *p, uint32_t *out)
{
    uint64_t v = 0;
    const char *d = p = hlo_config_gap(p);
    while (*p >= '0' && *p <= '9' && v <= HLO_MAX_QUEUE)
        v = v * 10 + (uint64_t)(*p++ - '0');
    if (p == d || v > HLO_MAX_QUEUE || (*p >= '0' && *p <= '9'))
        return NULL;
    *out = (uint32_t)v;
    return hlo_config_gap(p);
}

/* The key's value in a raw backend_config: the text after "key" and its
 * ':', NULL when the config does not name the key. */
static const char *config_value(const char *cfg, const char *key, int *ok)
{
    size_t k = strlen(key);
    *ok = 1;
    for (const char *p = cfg; p && (p = strstr(p, key)); p += k)
        if (p > cfg && (p[-1] == '"' || p[-1] == '\\')) {
            const char *v = hlo_config_gap(p + k);
            if (*v != ':')
                *ok = 0;
            return *ok ? v + 1 : NULL;
        }
    return NULL;
}

int hlo_queue_read(const struct instr *in, struct hlo_queues *q, char *why, size_t n_why)
{
    int ok;
    const char *v;
    q->queue = 0;
    q->n_waits = 0;
    if (!in->backend)
        return 0;
    if ((v = config_value(in->backend, "operation_queue_id", &ok)) &&
        !queue_number(v, &q->queue))
        ok = 0;
    if (!ok) {
        snprintf(why, n_why, "'%s': operation_queue_id is not a queue in 0..%u", in->name,
                 HLO_MAX_QUEUE);
        return -1;
    }
    v = config_value(in->backend, "wait_on_operation_queues", &ok);
    if (ok && v && *(v = hlo_config_gap(v)) != '[')
        ok = 0;
    if (ok && v) {
        v = hlo_config_gap(v + 1);
        while (ok && *v != ']') {
            uint32_t w;
            v = queue_number(v, &w);
            ok = v && (*v == ',' || *v == ']');
            if (!ok)
                break;
            int seen = 0; /* a queue listed twice is one wait */
            for (uint32_t k = 0; k < q->n_waits; k++)
                seen |= q->wait[k] == w;
            if (!seen)
                q->wait[q->n_waits++] = w;
            if (*v == ',')
                v = hlo_config_gap(v + 1);
        }
    }
    if (!ok) {
        snprintf(why, n_why, "'%s': wait_on_operation_queues is not a list of queues in "
                             "0..%u ([\"1\",\"2\"])", in->name, HLO_MAX_QUEUE);
        return -1;
    }
    return 0;
}
