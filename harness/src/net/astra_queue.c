/* ASTRA-sim's system-layer scheduler for one NPU (docs/astra.md, "Queues"):
 * a collective is cut into chunk streams, each stream walks its phases through
 * one queue per network dimension, and each queue runs at most
 * active-chunks-per-dimension streams at once.
 *
 * Written from astra-sim/system/Sys.cc (insert_stream, schedule,
 * proceed_to_next_vnet_baseline and the SchedulerUnit), read at
 * astra-sim@518bd51:
 *   - every stream of a collective has the collective's priority; LIFO gives
 *     each new collective a higher one, FIFO a lower one (get_priority);
 *   - a stream entering a queue goes behind the running streams and behind
 *     every waiting stream of equal or higher priority (the default
 *     intra-dimension policy), so equal priorities are served in arrival order;
 *   - a running stream is never pre-empted;
 *   - the ready list never holds a stream back (its thresholds are 10^8), so a
 *     new stream enters its first queue at once;
 *   - at the end of a phase the stream is queued for its next phase first, then
 *     the queue it left starts its next waiting stream, then the new queue.
 * A phase's length is the congestion-unaware closed form of astra.c, so the
 * only interaction between streams is waiting in these queues. */
#define _POSIX_C_SOURCE 200809L
#include "astra.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct queue {
    uint32_t *ids;     /* [len] streams, running ones first */
    uint32_t len, cap;
    uint32_t running;
};

struct event {
    double t_ns;
    uint64_t seq; /* equal times: in the order they were scheduled */
    uint32_t stream;
};

struct sb_astra_sys {
    uint32_t limit; /* streams a queue runs at once */
    int lifo;
    int64_t prio_next;
    double now_ns;
    uint64_t seq;
    struct queue q[SB_ASTRA_MAX_DIMS];
    /* collectives */
    struct sb_astra_plan *plan; /* [n_coll] */
    uint64_t *left;             /* [n_coll] streams not finished */
    double *end_ns;             /* [n_coll] < 0 while running */
    int64_t *prio;              /* [n_coll] */
    uint32_t n_coll, cap_coll;
    /* streams */
    uint32_t *coll, *phase; /* [n_stream] */
    uint32_t n_stream, cap_stream;
    /* ids of finished streams, reused so that memory follows the streams in
     * flight, not every chunk of a whole run */
    uint32_t *spare, n_spare;
    /* events: a binary heap ordered by (t_ns, seq) */
    struct event *heap;
    uint32_t n_ev, cap_ev;
};

static void *grow(void *p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return p;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    *cap = c;
    return sb_xrealloc(p, (size_t)c * elem);
}

struct sb_astra_sys *sb_astra_sys_new(const struct sb_astra_config *c)
{
    struct sb_astra_sys *s = sb_xcalloc(1, sizeof *s);
    s->limit = c->active_chunks; /* ceil(A / queues per dimension), one queue */
    s->lifo = c->lifo;
    return s;
}

void sb_astra_sys_free(struct sb_astra_sys *s)
{
    if (!s)
        return;
    for (int d = 0; d < SB_ASTRA_MAX_DIMS; d++)
        free(s->q[d].ids);
    free(s->plan), free(s->left), free(s->end_ns), free(s->prio);
    free(s->coll), free(s->phase), free(s->heap), free(s->spare);
    free(s);
}

/* ---- the event heap ------------------------------------------------------ */

static int before(const struct event *a, const struct event *b)
{
    return a->t_ns < b->t_ns || (a->t_ns == b->t_ns && a->seq < b->seq);
}

static void push(struct sb_astra_sys *s, double t_ns, uint32_t stream)
{
    s->heap = grow(s->heap, &s->cap_ev, s->n_ev + 1, sizeof *s->heap);
    uint32_t i = s->n_ev++;
    struct event e = {t_ns, s->seq++, stream};
    while (i && before(&e, &s->heap[(i - 1) / 2])) {
        s->heap[i] = s->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    s->heap[i] = e;
}

static struct event pop(struct sb_astra_sys *s)
{
    struct event top = s->heap[0], last = s->heap[--s->n_ev];
    uint32_t i = 0;
    for (;;) {
        uint32_t k = 2 * i + 1;
        if (k >= s->n_ev)
            break;
        if (k + 1 < s->n_ev && before(&s->heap[k + 1], &s->heap[k]))
            k++;
        if (!before(&s->heap[k], &last))
            break;
        s->heap[i] = s->heap[k];
        i = k;
    }
    if (s->n_ev)
        s->heap[i] = last;
    return top;
}

/* ---- queues -------------------------------------------------------------- */

static const struct sb_astra_plan *plan_of(const struct sb_astra_sys *s, uint32_t stream)
{
    return &s->plan[s->coll[stream]];
}

/* Sys::insert_stream: behind the running streams and every waiting stream of
 * equal or higher priority. */
static void enqueue(struct sb_astra_sys *s, struct queue *q, uint32_t stream)
{
    int64_t p = s->prio[s->coll[stream]];
    uint32_t at = q->running;
    while (at < q->len && s->prio[s->coll[q->ids[at]]] >= p)
        at++;
    q->ids = grow(q->ids, &q->cap, q->len + 1, sizeof *q->ids);
    memmove(q->ids + at + 1, q->ids + at, (q->len - at) * sizeof *q->ids);
    q->ids[at] = stream;
    q->len++;
}

/* SchedulerUnit::notify_stream_added/removed: start waiting streams while the
 * queue has room. */
static void start(struct sb_astra_sys *s, struct queue *q)
{
    while (q->running < q->len && q->running < s->limit) {
        uint32_t id = q->ids[q->running++];
        push(s, s->now_ns + plan_of(s, id)->t_ns[s->phase[id]], id);
    }
}

static void dequeue(struct queue *q, uint32_t stream)
{
    uint32_t at = 0;
    while (q->ids[at] != stream)
        at++;
    SB_ASSERT(at < q->running);
    memmove(q->ids + at, q->ids + at + 1, (q->len - at - 1) * sizeof *q->ids);
    q->len--;
    q->running--;
}

/* Collectives' and streams' arrays grow together. */
static void reserve_colls(struct sb_astra_sys *s, uint32_t need)
{
    if (need <= s->cap_coll)
        return;
    uint32_t c = s->cap_coll ? 2 * s->cap_coll : 16;
    s->plan = sb_xrealloc(s->plan, (size_t)c * sizeof *s->plan);
    s->left = sb_xrealloc(s->left, (size_t)c * sizeof *s->left);
    s->end_ns = sb_xrealloc(s->end_ns, (size_t)c * sizeof *s->end_ns);
    s->prio = sb_xrealloc(s->prio, (size_t)c * sizeof *s->prio);
    s->cap_coll = c;
}

static uint32_t new_stream(struct sb_astra_sys *s)
{
    if (s->n_spare)
        return s->spare[--s->n_spare];
    SB_ASSERT(s->n_stream < UINT32_MAX / 2); /* 2^20 chunks a collective, few in flight */
    if (s->n_stream == s->cap_stream) {
        uint32_t c = s->cap_stream ? 2 * s->cap_stream : 64;
        s->coll = sb_xrealloc(s->coll, (size_t)c * sizeof *s->coll);
        s->phase = sb_xrealloc(s->phase, (size_t)c * sizeof *s->phase);
        s->spare = sb_xrealloc(s->spare, (size_t)c * sizeof *s->spare);
        s->cap_stream = c;
    }
    return s->n_stream++;
}

/* ---- issuing and running ------------------------------------------------- */

double sb_astra_sys_next(const struct sb_astra_sys *s)
{
    return s->n_ev ? s->heap[0].t_ns : INFINITY;
}

/* Sys::proceed_to_next_vnet_baseline for the stream whose phase ends first. */
void sb_astra_sys_step(struct sb_astra_sys *s)
{
    SB_ASSERT(s->n_ev);
    struct event e = pop(s);
    uint32_t id = e.stream, c = s->coll[id];
    const struct sb_astra_plan *p = &s->plan[c];
    struct queue *was = &s->q[p->dim[s->phase[id]]];
    s->now_ns = e.t_ns;
    dequeue(was, id);
    if (++s->phase[id] == p->n_ph) {
        if (--s->left[c] == 0)
            s->end_ns[c] = s->now_ns;
        s->spare[s->n_spare++] = id;
        start(s, was);
        return;
    }
    struct queue *next = &s->q[p->dim[s->phase[id]]];
    enqueue(s, next, id);
    start(s, was);
    start(s, next);
}

uint32_t sb_astra_sys_issue(struct sb_astra_sys *s, const struct sb_astra_plan *p, double t_ns)
{
    /* what ends by t_ns happens first; the caller never goes back in time */
    while (sb_astra_sys_next(s) <= t_ns)
        sb_astra_sys_step(s);
    /* the simulator's times are in us: a time it got from here in ns may come
     * back a rounding error early */
    SB_ASSERT(t_ns >= s->now_ns - 1e-6 * (1 + s->now_ns));
    if (t_ns > s->now_ns)
        s->now_ns = t_ns;
    uint32_t c = s->n_coll;
    reserve_colls(s, c + 1);
    s->n_coll++;
    s->plan[c] = *p;
    s->prio[c] = s->lifo ? s->prio_next++ : s->prio_next--; /* Sys::get_priority */
    s->left[c] = p->n_ph ? p->chunks : 0;
    s->end_ns[c] = p->n_ph ? -1 : t_ns;
    if (!p->n_ph)
        return c;
    struct queue *q = &s->q[p->dim[0]];
    for (uint64_t k = 0; k < p->chunks; k++) {
        uint32_t i = new_stream(s);
        s->coll[i] = c;
        s->phase[i] = 0;
        enqueue(s, q, i);
        start(s, q);
    }
    return c;
}

double sb_astra_sys_end(const struct sb_astra_sys *s, uint32_t h)
{
    return s->end_ns[h];
}

double sb_astra_sys_wait(struct sb_astra_sys *s, uint32_t h)
{
    while (s->end_ns[h] < 0)
        sb_astra_sys_step(s);
    return s->end_ns[h];
}
