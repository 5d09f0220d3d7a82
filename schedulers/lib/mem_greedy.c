/* The policy toolkit's greedy minimum-memory orders (schedbench/policy.h,
 * sb_mem_greedy_order): XLA's ListMemoryScheduler as a forward greedy list by
 * bytes freed minus bytes allocated, and a reverse greedy built from the end.
 * minmem (schedulers/minmem.c, docs/minmem.md) keeps the lowest-peak of these
 * and the file order; any policy that wants a low-memory order can start here.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedbench/policy.h"

/* Both greedy passes keep their candidates in a 4-ary heap (as XLA's
 * ListMemoryScheduler keeps its ready list by priority) instead of rescanning
 * every ready node per step.  A candidate's score depends only on the use
 * counts of the buffers it reads, so it is recomputed, and pushed again with a
 * new version, exactly when one of those counts crosses a value that matters;
 * stale entries are dropped when they surface.  The picks are therefore the
 * ones a full rescan would make (the same score, the same tie-break), in
 * O((n + E) log n) for graphs whose nodes read each buffer a bounded number of
 * times.
 *
 * Layout (issue 25): what a step reads about a node or a buffer is one 32-byte
 * record (struct node), and each node's uses are listed once, in a CSR, rather
 * than gathered again from its inputs' roots at every score. */

struct entry {
    double s;     /* score: larger first */
    uint32_t v;   /* node; ties by id (forward: smaller first, reverse: larger) */
    uint32_t ver; /* == ver of v while current */
};

struct heap {
    struct entry *e;
    size_t n, cap;
    int later_first; /* ties: larger id first (the reverse pass) */
};

/* bits of node.bits */
enum { N_OWNS = 1, N_WEIGHT = 2, N_OUTPUT = 4, N_INPUT = 8 };

/* A node, and the buffer it owns (buffers are named by their owner). */
struct node {
    double bytes;     /* (double)out_bytes */
    uint32_t uses;    /* as a buffer: forward, uses left; reverse, uses placed */
    uint32_t cnt;     /* forward: unplaced preds; reverse: unplaced succs */
    uint32_t mult;    /* scratch, zero between calls: occurrences of a buffer */
    uint32_t maxmine; /* most uses of the buffer any one reader holds */
    uint32_t ver;     /* version of the node's current heap entry */
    uint8_t state;    /* 0 waiting, 1 candidate, 2 placed */
    uint8_t bits;     /* N_* */
};

struct mm {
    const struct sb_graph_view *g;
    uint32_t n;
    struct node *x;   /* [n] */
    uint32_t *use_off; /* [n + 1] CSR by node: the buffers it uses */
    uint32_t *use;    /* [n_uses] each input's buffer; for a done, its start's too */
    uint32_t *rd_off; /* [n + 1] CSR by buffer: the nodes whose uses include it */
    uint32_t *rd;     /* [n_uses] each reader once per buffer */
    uint32_t *fresh;  /* [max uses] buffers whose count changed */
    uint32_t cap;     /* the most uses any node has */
    struct heap h;
};

static int owns(const struct sb_graph_view *g, uint32_t v)
{
    return !(g->flags[v] & SB_FLAG_ALIAS) && g->kind[v] != SB_KIND_DONE;
}

static int never_freed(const struct node *b)
{
    return (b->bits & (N_WEIGHT | N_OUTPUT)) != 0;
}

/* The uses of buffers made by each node c: each input's buffer, and for a
 * done the buffers its start reads (they stay live until the done,
 * docs/cost-model.md); root[] is the buffer each node's output lives in
 * (views share their source's). */
static int build_uses(struct mm *M, const uint32_t *root)
{
    const struct sb_graph_view *g = M->g;
    uint32_t n = M->n, k = 0;
    M->cap = 1;
    for (int fill = 0; fill < 2; fill++) {
        k = 0;
        for (uint32_t c = 0; c < n; c++) {
            uint32_t k0 = k;
            if (fill)
                M->use_off[c] = k;
            for (uint32_t e = g->pred_off[c]; e < g->pred_off[c + 1]; e++, k++)
                if (fill)
                    M->use[k] = root[g->pred[e]];
            if (g->kind[c] == SB_KIND_DONE && g->partner[c] != SB_NONE) {
                uint32_t s = g->partner[c];
                for (uint32_t e = g->pred_off[s]; e < g->pred_off[s + 1]; e++, k++)
                    if (fill)
                        M->use[k] = root[g->pred[e]];
            }
            if (k - k0 > M->cap)
                M->cap = k - k0;
        }
        if (!fill && !(M->use = malloc(((size_t)k + 1) * sizeof *M->use)))
            return -1;
    }
    M->use_off[n] = k;
    return 0;
}

/* Readers of each buffer (CSR) and, per buffer, the most uses one reader holds. */
static int build_readers(struct mm *M)
{
    uint32_t n = M->n;
    struct node *x = M->x;
    memset(M->rd_off, 0, ((size_t)n + 1) * sizeof *M->rd_off);
    /* pass 1: count distinct (buffer, reader) pairs */
    for (int fill = 0; fill < 2; fill++) {
        for (uint32_t c = 0; c < n; c++) {
            const uint32_t *u = M->use + M->use_off[c];
            uint32_t k = M->use_off[c + 1] - M->use_off[c];
            for (uint32_t i = 0; i < k; i++)
                x[u[i]].mult++;
            for (uint32_t i = 0; i < k; i++) {
                uint32_t b = u[i];
                if (!x[b].mult)
                    continue;
                if (fill)
                    M->rd[M->rd_off[b]++] = c;
                else
                    M->rd_off[b + 1]++;
                if (x[b].mult > x[b].maxmine)
                    x[b].maxmine = x[b].mult;
                x[b].mult = 0;
            }
        }
        if (!fill) {
            /* pass 2: prefix sums, then fill (rd_off[b] runs as a cursor) */
            for (uint32_t b = 0; b < n; b++)
                M->rd_off[b + 1] += M->rd_off[b];
            M->rd = malloc(((size_t)M->rd_off[n] + 1) * sizeof *M->rd);
            if (!M->rd)
                return -1;
        }
    }
    /* the fill advanced each rd_off[b] to the start of b + 1's readers */
    for (uint32_t b = n; b > 0; b--)
        M->rd_off[b] = M->rd_off[b - 1];
    M->rd_off[0] = 0;
    return 0;
}

/* ---- the heap ------------------------------------------------------------- */

static int before(const struct heap *h, const struct entry *a, const struct entry *b)
{
    if (a->s != b->s)
        return a->s > b->s;
    return h->later_first ? a->v > b->v : a->v < b->v;
}

static int heap_push(struct heap *h, double s, uint32_t v, uint32_t ver)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 1024;
        struct entry *e = realloc(h->e, cap * sizeof *e);
        if (!e)
            return -1;
        h->e = e, h->cap = cap;
    }
    size_t i = h->n++;
    struct entry x = {s, v, ver};
    while (i > 0 && before(h, &x, &h->e[(i - 1) / 4])) {
        h->e[i] = h->e[(i - 1) / 4];
        i = (i - 1) / 4;
    }
    h->e[i] = x;
    return 0;
}

/* Takes the top: its hole goes down to a leaf along the better children,
 * then the last entry fills it and climbs back (it rarely climbs far), which
 * saves comparing it at every level. */
static struct entry heap_pop(struct heap *h)
{
    struct entry top = h->e[0], x = h->e[--h->n];
    size_t i = 0;
    if (!h->n)
        return top;
    for (;;) {
        size_t c = 4 * i + 1, m = c;
        if (c >= h->n)
            break;
        for (size_t k = c + 1; k < c + 4 && k < h->n; k++)
            if (before(h, &h->e[k], &h->e[m]))
                m = k;
        h->e[i] = h->e[m];
        i = m;
    }
    while (i > 0 && before(h, &x, &h->e[(i - 1) / 4])) {
        h->e[i] = h->e[(i - 1) / 4];
        i = (i - 1) / 4;
    }
    h->e[i] = x;
    return top;
}

/* The candidate with the best current score, or SB_NONE when none is left. */
static uint32_t take_best(struct mm *M)
{
    while (M->h.n) {
        struct entry t = heap_pop(&M->h);
        if (M->x[t.v].state == 1 && t.ver == M->x[t.v].ver)
            return t.v;
    }
    return SB_NONE;
}

/* ---- forward greedy -------------------------------------------------------- */

/* Bytes v frees (buffers it is the last use of) minus bytes it allocates.
 * Buffers are summed in the order of their first use in v's list. */
static double net_free(const struct mm *M, uint32_t v)
{
    struct node *x = M->x;
    const uint32_t *u = M->use + M->use_off[v];
    uint32_t k = M->use_off[v + 1] - M->use_off[v];
    double freed = 0;
    for (uint32_t i = 0; i < k; i++)
        x[u[i]].mult++;
    for (uint32_t i = 0; i < k; i++) {
        struct node *b = &x[u[i]];
        uint32_t mine = b->mult;
        if (!mine) /* not the first occurrence */
            continue;
        b->mult = 0;
        if (mine == b->uses && !never_freed(b))
            freed += b->bytes;
    }
    return freed - ((x[v].bits & N_OWNS) ? x[v].bytes : 0);
}

typedef double (*score_fn)(const struct mm *, uint32_t);

static int push(struct mm *M, score_fn f, uint32_t v)
{
    M->x[v].state = 1;
    return heap_push(&M->h, f(M, v), v, ++M->x[v].ver);
}

/* Rescore the candidates reading buffer b. */
static int rescore_readers(struct mm *M, score_fn f, uint32_t b)
{
    for (uint32_t i = M->rd_off[b]; i < M->rd_off[b + 1]; i++)
        if (M->x[M->rd[i]].state == 1 && push(M, f, M->rd[i]))
            return -1;
    return 0;
}

static int forward(struct mm *M, uint32_t *order)
{
    const struct sb_graph_view *g = M->g;
    struct node *x = M->x;
    uint32_t pos = 0;
    M->h.n = 0, M->h.later_first = 0;
    /* a node's uses and inputs are earlier nodes: one pass counts them */
    for (uint32_t v = 0; v < M->n; v++) {
        x[v].uses = 0;
        x[v].state = x[v].bits & N_INPUT ? 2 : 0;
        if (x[v].state)
            order[pos++] = v;
        for (uint32_t i = M->use_off[v]; i < M->use_off[v + 1]; i++)
            x[M->use[i]].uses++;
        x[v].cnt = 0; /* inputs are placed already */
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
            x[v].cnt += !(x[g->pred[e]].bits & N_INPUT);
    }
    for (uint32_t v = 0; v < M->n; v++)
        if (!(x[v].bits & N_INPUT) && x[v].cnt == 0 && push(M, net_free, v))
            return -1;
    for (uint32_t v; (v = take_best(M)) != SB_NONE;) {
        x[v].state = 2;
        order[pos++] = v;
        uint32_t n_fresh = 0;
        /* each buffer once, in the order of first use (mult marks it) */
        for (uint32_t i = M->use_off[v]; i < M->use_off[v + 1]; i++) {
            struct node *b = &x[M->use[i]];
            b->uses--;
            if (!b->mult) {
                b->mult = 1;
                M->fresh[n_fresh++] = M->use[i];
            }
        }
        for (uint32_t i = 0; i < n_fresh; i++)
            x[M->fresh[i]].mult = 0;
        /* A reader's score counts buffer b's bytes when it holds all of b's
         * remaining uses; it holds at most maxmine of them, so only a count
         * that has come down to maxmine or below can change a score. */
        for (uint32_t i = 0; i < n_fresh; i++) {
            uint32_t b = M->fresh[i];
            if (!never_freed(&x[b]) && x[b].uses <= x[b].maxmine &&
                rescore_readers(M, net_free, b))
                return -1;
        }
        for (uint32_t e = g->succ_off[v]; e < g->succ_off[v + 1]; e++)
            if (--x[g->succ[e]].cnt == 0 && push(M, net_free, g->succ[e]))
                return -1;
    }
    return 0;
}

/* ---- reverse greedy -------------------------------------------------------- */

/* Placing v (going backwards) ends its own buffer's life there and starts the
 * lives of the buffers it reads that nothing placed later reads.  Returns
 * bytes that stop being live minus bytes that start. */
static double reverse_gain(const struct mm *M, uint32_t v)
{
    struct node *x = M->x;
    const uint32_t *u = M->use + M->use_off[v];
    uint32_t k = M->use_off[v + 1] - M->use_off[v];
    double gain = (x[v].bits & N_OWNS) && x[v].uses > 0 ? x[v].bytes : 0;
    if ((x[v].bits & N_OWNS) && (x[v].bits & N_OUTPUT))
        gain = x[v].bytes; /* live to the end until its producer */
    for (uint32_t i = 0; i < k; i++) {
        uint32_t b = u[i];
        if (x[b].mult) /* seen */
            continue;
        x[b].mult = 1;
        /* uses counts placed uses here: a buffer with none is not live yet */
        if (x[b].uses == 0 && b != v && !(x[b].bits & N_WEIGHT))
            gain -= x[b].bytes;
    }
    for (uint32_t i = 0; i < k; i++)
        x[u[i]].mult = 0;
    return gain;
}

static int reverse(struct mm *M, uint32_t *order)
{
    const struct sb_graph_view *g = M->g;
    struct node *x = M->x;
    uint32_t n_in = 0, pos = M->n;
    M->h.n = 0, M->h.later_first = 1;
    /* v's score reads only v and earlier nodes, already reset: one pass */
    for (uint32_t v = 0; v < M->n; v++) {
        x[v].uses = 0, x[v].state = 0;
        x[v].cnt = g->succ_off[v + 1] - g->succ_off[v];
        if (x[v].bits & N_INPUT)
            order[n_in++] = v;
        else if (x[v].cnt == 0 && push(M, reverse_gain, v))
            return -1;
    }
    for (uint32_t v; (v = take_best(M)) != SB_NONE;) {
        x[v].state = 2;
        order[--pos] = v;
        uint32_t n_fresh = 0;
        for (uint32_t i = M->use_off[v]; i < M->use_off[v + 1]; i++)
            if (x[M->use[i]].uses++ == 0)
                M->fresh[n_fresh++] = M->use[i];
        /* Scores read only whether a buffer has a placed use (its readers'
         * and its producer's): rescore when a count leaves 0. */
        for (uint32_t i = 0; i < n_fresh; i++) {
            uint32_t b = M->fresh[i];
            if (x[b].state == 1 && push(M, reverse_gain, b))
                return -1;
            if (rescore_readers(M, reverse_gain, b))
                return -1;
        }
        for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
            uint32_t p = g->pred[e];
            if (--x[p].cnt == 0 && !(x[p].bits & N_INPUT) && push(M, reverse_gain, p))
                return -1;
        }
    }
    return 0;
}

/* ---- the context both passes share ---------------------------------------- */

static void mm_free(struct mm *M)
{
    free(M->x), free(M->use_off), free(M->use), free(M->rd_off), free(M->rd);
    free(M->fresh), free(M->h.e);
}

static int mm_init(struct mm *M, const struct sb_graph_view *g)
{
    uint32_t n = g->n_nodes;
    size_t n1 = (size_t)n + 1;
    memset(M, 0, sizeof *M);
    M->g = g, M->n = n;
    M->x = calloc(n1, sizeof *M->x);
    M->use_off = malloc(n1 * sizeof *M->use_off);
    M->rd_off = malloc((n1 + 1) * sizeof *M->rd_off);
    uint32_t *root = malloc(n1 * sizeof *root);
    if (!M->x || !M->use_off || !M->rd_off || !root) {
        free(root);
        return -1;
    }
    for (uint32_t v = 0; v < n; v++) {
        struct node *x = &M->x[v];
        root[v] = owns(g, v) || g->pred_off[v] == g->pred_off[v + 1]
                      ? v : root[g->pred[g->pred_off[v]]];
        x->bytes = (double)g->out_bytes[v];
        x->bits = (uint8_t)((owns(g, v) ? N_OWNS : 0) |
                            (g->flags[v] & SB_FLAG_WEIGHT ? N_WEIGHT : 0) |
                            (g->flags[v] & SB_FLAG_OUTPUT ? N_OUTPUT : 0) |
                            (g->kind[v] == SB_KIND_INPUT ? N_INPUT : 0));
    }
    int rc = build_uses(M, root);
    free(root);
    if (rc || !(M->fresh = malloc(((size_t)M->cap + 1) * sizeof *M->fresh)))
        return -1;
    return build_readers(M);
}

static int mm_pass(struct mm *M, int reverse_pass, uint32_t *order)
{
    return reverse_pass ? reverse(M, order) : forward(M, order);
}

int sb_mem_greedy_order(const struct sb_graph_view *g, int reverse_pass, uint32_t *order)
{
    struct mm M;
    int rc = mm_init(&M, g);
    if (!rc)
        rc = mm_pass(&M, reverse_pass, order);
    mm_free(&M);
    return rc;
}
