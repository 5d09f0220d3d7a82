/* ASTRA-sim rank by rank and message by message (docs/astra.md): its
 * congestion-aware analytical backend on a network of one dimension, and its
 * congestion-unaware one where no closed form exists (doubleBinaryTree).
 *
 * The network, read from astra-network-analytical@599a047:
 *   - aware (congestion_aware/Link.cpp, Ring.cpp, Switch, FullyConnected):
 *     every link is FIFO; a message occupies it for floor(m / B) and reaches
 *     the next device floor(L + m / B) after it started on it; routing is
 *     store and forward: a Ring goes the shorter way (clockwise on a tie), a
 *     Switch up to the switch and down, FullyConnected direct;
 *   - unaware: a message takes floor(h L + m / B), h its hop count, and
 *     nothing is shared.
 * Each rank, read from astra-sim@518bd51 system/ (Ring.cc, AllToAll.cc,
 * HalvingDoubling.cc, DoubleBinaryTreeAllReduce.cc, BinaryTree.cc,
 * PacketBundle.cc, MemBus.cc):
 *   - runs at most active-chunks-per-dimension chunks at once, the next
 *     chunk starting when one ends;
 *   - a message is taken in when it has arrived and the rank has posted its
 *     receive; taking it in costs the endpoint delay d, plus the reduction on
 *     reducing steps, and then the next message leaves;
 *   - ring and halvingDoubling: one message per step, to the next rank or the
 *     partner at the step's distance, the first after d; direct: every peer
 *     at once, and an all-reduce's second round released one message per
 *     reduced first-round arrival; doubleBinaryTree: the whole chunk up a
 *     binary tree and back down, the chunks taking the two trees in turn.
 * Communicator groups run at once and share the links.  On the unaware
 * network this reproduces every closed form of astra.c (test_astra checks
 * it on the golden cases' networks). */
#define _POSIX_C_SOURCE 200809L
#include "astra.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum ev_type {
    EV_HOP,
    EV_FREE,
    EV_LAUNCH,
    EV_SEND,
    EV_ROUND1,
    EV_GEN1,
    EV_GEN2,
    EV_FINISH,  /* a leaf took in the parent's message: done */
    EV_UP,      /* a tree node sends its reduced chunk to its parent */
    EV_DOWN     /* a tree node sends the result to its children */
};

struct event {
    double t;
    uint64_t seq; /* equal times: in the order scheduled */
    uint8_t type;
    uint32_t a, b, c, k; /* message or link; or group, rank, chunk, step */
};

struct msg {
    uint32_t group, chunk, to, key; /* the mailbox it lands in */
    uint32_t at, dst;               /* current and final device */
    int step;                       /* Ring topology: +1 or -1 */
    double bytes;
    uint32_t next; /* in its link's FIFO */
};

struct link {
    int busy;
    uint32_t head, tail; /* FIFO of waiting messages, UINT32_MAX = empty */
};

/* one communicator group's collective */
struct grp {
    const uint32_t *ranks; /* physical NPU of each position */
    uint32_t n, K;         /* ranks; steps (keys) per chunk and rank */
    uint8_t *box;          /* [chunks][n][K] 0 empty, 1 arrived, 2 posted */
    uint32_t *next_chunk;  /* [n] */
    /* direct: [chunks][n] per-chunk counters of AllToAll::run; a tree node's
     * children taken in are counted in recv1 */
    uint32_t *recv1, *free1, *sent2, *done2;
    /* doubleBinaryTree: [2][n] parent and children of each position in the
     * RootMax tree (even chunks) and the RootMin tree (odd); -1 none */
    int32_t *parent, *left, *right;
};

/* one run of the rank-by-rank model */
struct rsim {
    const struct sb_astra_config *c;
    int congestion; /* the aware network; 0: the unaware one */
    enum sb_astra_op op;
    uint8_t algo;
    uint64_t chunk, chunks;
    double B, L, d;
    uint32_t N; /* NPUs; a Switch adds device N */
    struct link *links;
    struct msg *msgs;
    uint32_t n_msgs, cap_msgs;
    struct event *heap;
    uint32_t n_ev, cap_ev;
    uint64_t seq;
    double now, end;
    double *rank_end; /* [n of group 0] each rank's last chunk end, or NULL */
    struct grp *g;
    uint32_t n_g;
};

/* ---- events ---------------------------------------------------------------- */

static int before(const struct event *x, const struct event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static void at(struct rsim *A, double t, uint8_t type, uint32_t a, uint32_t b, uint32_t c,
               uint32_t k)
{
    if (A->n_ev == A->cap_ev) {
        A->cap_ev = A->cap_ev ? 2 * A->cap_ev : 256;
        A->heap = sb_xrealloc(A->heap, (size_t)A->cap_ev * sizeof *A->heap);
    }
    struct event e = {t, A->seq++, type, a, b, c, k};
    uint32_t i = A->n_ev++;
    while (i && before(&e, &A->heap[(i - 1) / 2])) {
        A->heap[i] = A->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    A->heap[i] = e;
}

static struct event pop(struct rsim *A)
{
    struct event top = A->heap[0], last = A->heap[--A->n_ev];
    uint32_t i = 0;
    for (;;) {
        uint32_t k = 2 * i + 1;
        if (k >= A->n_ev)
            break;
        if (k + 1 < A->n_ev && before(&A->heap[k + 1], &A->heap[k]))
            k++;
        if (!before(&A->heap[k], &last))
            break;
        A->heap[i] = A->heap[k];
        i = k;
    }
    if (A->n_ev)
        A->heap[i] = last;
    return top;
}

/* ---- the network ----------------------------------------------------------- */

static uint32_t next_device(const struct rsim *A, const struct msg *m)
{
    switch (A->c->topo[0]) {
    case SB_TOPO_SWITCH: return m->at == A->N ? m->dst : A->N;
    case SB_TOPO_FULLY_CONNECTED: return m->dst;
    default: return m->step > 0 ? (m->at + 1) % A->N : (m->at + A->N - 1) % A->N;
    }
}

static uint32_t link_of(const struct rsim *A, uint32_t from, uint32_t to)
{
    switch (A->c->topo[0]) {
    case SB_TOPO_SWITCH: return from == A->N ? A->N + to : from;
    case SB_TOPO_FULLY_CONNECTED: return from * A->N + to;
    default: return 2 * from + (to == (from + 1) % A->N ? 0 : 1);
    }
}

/* Link::schedule_chunk_transmission */
static void transmit(struct rsim *A, uint32_t id, uint32_t l)
{
    struct msg *m = &A->msgs[id];
    A->links[l].busy = 1;
    at(A, A->now + floor(A->L + m->bytes / A->B), EV_HOP, id, next_device(A, m), 0, 0);
    at(A, A->now + floor(m->bytes / A->B), EV_FREE, l, 0, 0, 0);
}

static void enter_link(struct rsim *A, uint32_t id)
{
    struct msg *m = &A->msgs[id];
    uint32_t l = link_of(A, m->at, next_device(A, m));
    struct link *L = &A->links[l];
    if (!L->busy) {
        transmit(A, id, l);
        return;
    }
    m->next = UINT32_MAX;
    if (L->head == UINT32_MAX)
        L->head = id;
    else
        A->msgs[L->tail].next = id;
    L->tail = id;
}

static void link_free(struct rsim *A, uint32_t l)
{
    struct link *L = &A->links[l];
    L->busy = 0;
    if (L->head != UINT32_MAX) {
        uint32_t id = L->head;
        L->head = A->msgs[id].next;
        if (L->head == UINT32_MAX)
            L->tail = UINT32_MAX;
        transmit(A, id, l);
    }
}

/* ---- mailboxes: a message is taken in once it arrived and was posted ------- */

static void take_in(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch, uint32_t key);

static uint8_t *box(struct rsim *A, uint32_t gi, uint32_t ch, uint32_t pos, uint32_t key)
{
    struct grp *G = &A->g[gi];
    return &G->box[((size_t)ch * G->n + pos) * G->K + key];
}

static void post(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch, uint32_t key)
{
    uint8_t *b = box(A, gi, ch, pos, key);
    if (*b == 1) {
        *b = 0;
        take_in(A, gi, pos, ch, key);
    } else {
        *b = 2;
    }
}

static void arrived(struct rsim *A, const struct msg *m)
{
    uint8_t *b = box(A, m->group, m->chunk, m->to, m->key);
    if (*b == 2) {
        *b = 0;
        take_in(A, m->group, m->to, m->chunk, m->key);
    } else {
        *b = 1;
    }
}

static void send_msg(struct rsim *A, uint32_t gi, uint32_t ch, uint32_t from, uint32_t to,
                     uint32_t key, double bytes)
{
    const struct grp *G = &A->g[gi];
    if (A->n_msgs == A->cap_msgs) {
        A->cap_msgs = A->cap_msgs ? 2 * A->cap_msgs : 256;
        A->msgs = sb_xrealloc(A->msgs, (size_t)A->cap_msgs * sizeof *A->msgs);
    }
    uint32_t id = A->n_msgs++, src = G->ranks[from], dst = G->ranks[to];
    uint32_t cw = (dst + A->N - src) % A->N;
    A->msgs[id] = (struct msg){gi, ch, to, key, src, dst, A->N - cw < cw ? -1 : 1, bytes,
                               UINT32_MAX};
    if (src == dst) {
        arrived(A, &A->msgs[id]);
    } else if (!A->congestion) { /* floor(h L + m / B) end to end */
        uint32_t h = A->c->topo[0] == SB_TOPO_SWITCH            ? 2
                     : A->c->topo[0] == SB_TOPO_FULLY_CONNECTED ? 1
                     : cw < A->N - cw                           ? cw
                                                                : A->N - cw;
        at(A, A->now + floor(h * A->L + bytes / A->B), EV_HOP, id, dst, 0, 0);
    } else {
        enter_link(A, id);
    }
}

/* ---- the ranks ------------------------------------------------------------- */

static double reduction(const struct rsim *A, double bytes)
{
    return bytes > 0 ? 3 * floor(bytes / A->c->local_mem_bw) : 0;
}

/* halvingDoubling step k: the partner's distance and the message's bytes
 * (HalvingDoubling::process_max_count) */
static void hd_step(const struct rsim *A, uint32_t n, uint32_t k, uint32_t *off, double *bytes)
{
    uint32_t lg = 0;
    while ((1u << lg) < n)
        lg++;
    if (A->op == SB_OP_ALL_GATHER) {
        *off = n >> (k + 1);
        *bytes = (double)A->chunk * (double)(1u << k);
        return;
    }
    uint32_t j = k < lg ? k : 2 * lg - 1 - k; /* an all-reduce comes back down */
    *off = 1u << j;
    *bytes = (double)(A->chunk >> (j + 1));
}

static double ring_bytes(const struct rsim *A, uint32_t n)
{
    return A->op == SB_OP_ALL_GATHER ? (double)A->chunk : (double)(A->chunk / n);
}

static void finish(struct rsim *A, uint32_t gi, uint32_t pos, double t)
{
    if (t > A->end)
        A->end = t;
    if (A->rank_end && gi == 0 && t > A->rank_end[pos])
        A->rank_end[pos] = t;
    at(A, t, EV_LAUNCH, gi, pos, 0, 0);
}

/* Ring::ready / HalvingDoubling::ready: send step k, post its receive */
static void step_send(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch, uint32_t k)
{
    struct grp *G = &A->g[gi];
    if (A->algo == SB_ALGO_HALVING_DOUBLING) {
        uint32_t off;
        double bytes;
        hd_step(A, G->n, k, &off, &bytes);
        uint32_t to = (pos / off) % 2 == 0 ? (pos + off) % G->n : (pos + G->n - off) % G->n;
        send_msg(A, gi, ch, pos, to, k, bytes);
    } else {
        send_msg(A, gi, ch, pos, (pos + 1) % G->n, k, ring_bytes(A, G->n));
    }
    post(A, gi, pos, ch, k);
}

/* direct, first round: every peer at once, peers in turn from the next one */
static void round1(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch)
{
    struct grp *G = &A->g[gi];
    uint32_t n = G->n;
    for (uint32_t i = 1; i < n; i++)
        send_msg(A, gi, ch, pos, (pos + i) % n, pos, ring_bytes(A, n));
    for (uint32_t i = 1; i < n; i++)
        post(A, gi, pos, ch, (pos + n - i) % n);
}

/* AllToAll::run on a General event after a first-round message was taken in */
static void general1(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch)
{
    struct grp *G = &A->g[gi];
    size_t s = (size_t)ch * G->n + pos;
    uint32_t n = G->n;
    G->free1[s]++;
    if (A->op != SB_OP_ALL_REDUCE) {
        if (G->free1[s] == n - 1)
            finish(A, gi, pos, A->now);
        return;
    }
    if (G->recv1[s] < n - 1)
        return;
    while (G->free1[s] > 0 && G->sent2[s] < n - 1) {
        uint32_t i = G->sent2[s]++;
        G->free1[s]--;
        send_msg(A, gi, ch, pos, (pos + 1 + i) % n, n + pos, ring_bytes(A, n));
        post(A, gi, pos, ch, n + (pos + 2 * n - 1 - i) % n);
    }
}

/* ---- doubleBinaryTree ------------------------------------------------------- */

/* A full binary tree of `depth` levels whose nodes are numbered in order from
 * *next (BinaryTree::build_tree); returns the subtree's root. */
static int32_t tree_build(struct grp *G, int t, uint32_t depth, int32_t up, int32_t *next)
{
    if (!depth)
        return -1;
    int32_t l = depth > 1 ? tree_build(G, t, depth - 1, -2, next) : -1;
    int32_t me = (*next)++;
    int32_t r = depth > 1 ? tree_build(G, t, depth - 1, -2, next) : -1;
    size_t o = (size_t)t * G->n;
    G->parent[o + me] = up;
    G->left[o + me] = l, G->right[o + me] = r;
    if (l >= 0)
        G->parent[o + l] = me;
    if (r >= 0)
        G->parent[o + r] = me;
    return me;
}

/* The two trees of DoubleBinaryTreeTopology over a power of two: RootMax has
 * the root last, above the left subtree; RootMin has it first, above the
 * right one. */
static void trees(struct grp *G)
{
    uint32_t depth = 1;
    for (uint32_t t = G->n; t > 1; t /= 2)
        depth++;
    int32_t next = 0;
    int32_t sub = tree_build(G, 0, depth - 1, -2, &next); /* RootMax */
    int32_t root = next;
    G->parent[root] = -1, G->left[root] = sub, G->right[root] = -1, G->parent[sub] = root;
    next = 1;
    root = 0;
    sub = tree_build(G, 1, depth - 1, -2, &next); /* RootMin */
    G->parent[G->n + root] = -1, G->left[G->n + root] = -1, G->right[G->n + root] = sub;
    G->parent[G->n + sub] = root;
}

static int32_t tree_at(const int32_t *a, const struct grp *G, uint32_t ch, uint32_t pos)
{
    return a[(size_t)(ch % 2) * G->n + pos];
}

/* DoubleBinaryTreeAllReduce::run: a leaf sends up after d; a node takes in its
 * children, reduces, sends up, takes in the result, reduces and sends it down;
 * the root sends the result down as soon as its one child's chunk is in */
static void tree_start(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch)
{
    struct grp *G = &A->g[gi];
    int32_t l = tree_at(G->left, G, ch, pos), r = tree_at(G->right, G, ch, pos);
    if (l < 0 && r < 0) {
        at(A, A->now + A->d, EV_UP, gi, pos, ch, 0);
        return;
    }
    if (l >= 0)
        post(A, gi, pos, ch, (uint32_t)l);
    if (r >= 0)
        post(A, gi, pos, ch, (uint32_t)r);
}

static void tree_up(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch)
{
    struct grp *G = &A->g[gi];
    uint32_t up = (uint32_t)tree_at(G->parent, G, ch, pos);
    send_msg(A, gi, ch, pos, up, pos, (double)A->chunk);
    post(A, gi, pos, ch, up);
}

static void tree_down(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch)
{
    struct grp *G = &A->g[gi];
    int32_t l = tree_at(G->left, G, ch, pos), r = tree_at(G->right, G, ch, pos);
    if (l >= 0)
        send_msg(A, gi, ch, pos, (uint32_t)l, pos, (double)A->chunk);
    if (r >= 0)
        send_msg(A, gi, ch, pos, (uint32_t)r, pos, (double)A->chunk);
    finish(A, gi, pos, A->now);
}

static void tree_take_in(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch,
                         uint32_t from)
{
    struct grp *G = &A->g[gi];
    int32_t up = tree_at(G->parent, G, ch, pos);
    int32_t l = tree_at(G->left, G, ch, pos), r = tree_at(G->right, G, ch, pos);
    double red = reduction(A, (double)A->chunk);
    if (l < 0 && r < 0) { /* a leaf: the result is in */
        at(A, A->now + A->d, EV_FINISH, gi, pos, ch, 0);
    } else if (up < 0 || (int32_t)from == up) { /* the root's child, or the result */
        at(A, A->now + A->d + red, EV_DOWN, gi, pos, ch, 0);
    } else if (++G->recv1[(size_t)ch * G->n + pos] == 2) { /* both children in */
        at(A, A->now + A->d + red, EV_UP, gi, pos, ch, 0);
    }
}

static void take_in(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch, uint32_t key)
{
    struct grp *G = &A->g[gi];
    uint32_t n = G->n;
    double d = A->d;
    if (A->algo == SB_ALGO_DBT) {
        tree_take_in(A, gi, pos, ch, key);
        return;
    }
    if (A->algo == SB_ALGO_DIRECT) {
        if (key < n) { /* first round */
            G->recv1[(size_t)ch * n + pos]++;
            int reduces = A->op == SB_OP_ALL_REDUCE || A->op == SB_OP_REDUCE_SCATTER;
            at(A, A->now + d + (reduces ? reduction(A, ring_bytes(A, n)) : 0), EV_GEN1, gi,
               pos, ch, 0);
        } else {
            at(A, A->now + d, EV_GEN2, gi, pos, ch, 0);
        }
        return;
    }
    /* which taken-in messages are reduced, and with which size */
    double red = 0;
    if (A->algo == SB_ALGO_HALVING_DOUBLING) {
        uint32_t lg = 0, off;
        double next;
        while ((1u << lg) < n)
            lg++;
        if ((A->op == SB_OP_ALL_REDUCE || A->op == SB_OP_REDUCE_SCATTER) && key + 1 < lg) {
            hd_step(A, n, key + 1, &off, &next); /* the bundle carries the next message */
            red = reduction(A, next);
        }
    } else if (A->op == SB_OP_REDUCE_SCATTER || (A->op == SB_OP_ALL_REDUCE && key < n - 1)) {
        red = reduction(A, ring_bytes(A, n));
    }
    if (key + 1 < G->K)
        at(A, A->now + d + red, EV_SEND, gi, pos, ch, key + 1);
    else
        finish(A, gi, pos, A->now + d + red);
}

static void launch(struct rsim *A, uint32_t gi, uint32_t pos)
{
    struct grp *G = &A->g[gi];
    if (G->next_chunk[pos] >= A->chunks)
        return;
    uint32_t ch = G->next_chunk[pos]++;
    if (A->algo == SB_ALGO_DBT)
        tree_start(A, gi, pos, ch);
    else
        at(A, A->now + A->d, A->algo == SB_ALGO_DIRECT ? EV_ROUND1 : EV_SEND, gi, pos, ch, 0);
}

static void direct_done2(struct rsim *A, uint32_t gi, uint32_t pos, uint32_t ch)
{
    struct grp *G = &A->g[gi];
    if (++G->done2[(size_t)ch * G->n + pos] == G->n - 1)
        finish(A, gi, pos, A->now);
}

static void run(struct rsim *A)
{
    while (A->n_ev) {
        struct event e = pop(A);
        A->now = e.t;
        switch ((enum ev_type)e.type) {
        case EV_HOP: {
            struct msg *m = &A->msgs[e.a];
            m->at = e.b;
            if (m->at == m->dst)
                arrived(A, m);
            else
                enter_link(A, e.a);
            break;
        }
        case EV_FREE: link_free(A, e.a); break;
        case EV_LAUNCH: launch(A, e.a, e.b); break;
        case EV_SEND: step_send(A, e.a, e.b, e.c, e.k); break;
        case EV_ROUND1: round1(A, e.a, e.b, e.c); break;
        case EV_GEN1: general1(A, e.a, e.b, e.c); break;
        case EV_GEN2: direct_done2(A, e.a, e.b, e.c); break;
        case EV_FINISH: finish(A, e.a, e.b, A->now); break;
        case EV_UP: tree_up(A, e.a, e.b, e.c); break;
        case EV_DOWN: tree_down(A, e.a, e.b, e.c); break;
        }
    }
}

/* ---- setup ----------------------------------------------------------------- */

static uint32_t steps(const struct rsim *A, uint32_t n)
{
    uint32_t lg = 0;
    while ((1u << lg) < n)
        lg++;
    if (A->algo == SB_ALGO_DIRECT)
        return 2 * n; /* keys: round * n + sender */
    if (A->algo == SB_ALGO_DBT)
        return n; /* keys: the sender */
    if (A->algo == SB_ALGO_HALVING_DOUBLING)
        return A->op == SB_OP_ALL_REDUCE ? 2 * lg : lg;
    switch (A->op) {
    case SB_OP_ALL_REDUCE: return 2 * (n - 1);
    case SB_OP_ALL_TO_ALL: return n * (n - 1) / 2;
    default: return n - 1;
    }
}

static int check(const struct sb_astra_config *c, int congestion, enum sb_astra_op op,
                 uint8_t *algo, const uint32_t *group_len, uint32_t n_groups, struct sb_err *e)
{
    if (c->n_dims != 1)
        return sb_errf(e, "ASTRA-sim's congestion-aware backend takes a network of one "
                          "dimension");
    if (congestion && c->topo[0] == SB_TOPO_RING && c->npus[0] == 2)
        return sb_errf(e, "ASTRA-sim's congestion-aware backend cannot build a Ring of 2 "
                          "(Device::connect asserts)");
    if (congestion && !(c->endpoint_delay > 0))
        return sb_errf(e, "endpoint-delay 0: ASTRA-sim's event queue asserts on it");
    *algo = c->algo[op][0];
    if (*algo == SB_ALGO_HALVING_DOUBLING && op == SB_OP_ALL_TO_ALL)
        *algo = SB_ALGO_DIRECT; /* ASTRA-sim has no halving-doubling all-to-all */
    if (*algo == SB_ALGO_DBT && op != SB_OP_ALL_REDUCE)
        return sb_errf(e, "doubleBinaryTree is an all-reduce only");
    for (uint32_t i = 0; i < n_groups; i++) {
        uint32_t n = group_len[i];
        if ((*algo == SB_ALGO_HALVING_DOUBLING || *algo == SB_ALGO_DBT) && (n & (n - 1)))
            return sb_errf(e, "%s needs a power-of-two group",
                           *algo == SB_ALGO_DBT ? "doubleBinaryTree" : "halvingDoubling");
        if ((double)n * n * n > 1e9)
            return sb_errf(e, "a group of %u ranks: more than this model simulates", n);
    }
    return 0;
}

static void alloc_group(struct rsim *A, struct grp *G)
{
    size_t s = (size_t)A->chunks * G->n;
    G->box = sb_xcalloc(s * G->K, 1);
    G->next_chunk = sb_xcalloc(G->n, sizeof *G->next_chunk);
    G->recv1 = sb_xcalloc(s, sizeof *G->recv1);
    G->free1 = sb_xcalloc(s, sizeof *G->free1);
    G->sent2 = sb_xcalloc(s, sizeof *G->sent2);
    G->done2 = sb_xcalloc(s, sizeof *G->done2);
    if (A->algo == SB_ALGO_DBT && G->n > 1) { /* a group of one has no tree */
        G->parent = sb_xmalloc(2 * (size_t)G->n * sizeof *G->parent);
        G->left = sb_xmalloc(2 * (size_t)G->n * sizeof *G->left);
        G->right = sb_xmalloc(2 * (size_t)G->n * sizeof *G->right);
        trees(G);
    }
}

static void free_group(struct grp *G)
{
    free(G->box), free(G->next_chunk), free(G->recv1), free(G->free1);
    free(G->sent2), free(G->done2);
    free(G->parent), free(G->left), free(G->right);
}

/* The collective of `chunks` chunks of `chunk` bytes on every group at once;
 * its end in ns, -1 with a message when not modelled. */
static double simulate(const struct sb_astra_config *c, int congestion, enum sb_astra_op op,
                       uint64_t chunk, uint64_t chunks, const uint32_t *ranks,
                       const uint32_t *group_len, uint32_t n_groups, double *rank_end,
                       struct sb_err *e)
{
    uint32_t all_len = c->npus[0], *all = NULL;
    struct rsim A = {.c = c, .congestion = congestion, .op = op, .d = c->endpoint_delay,
                      .chunk = chunk, .chunks = chunks, .rank_end = rank_end};
    if (!ranks) {
        all = sb_xmalloc((size_t)all_len * sizeof *all);
        for (uint32_t i = 0; i < all_len; i++)
            all[i] = i;
        ranks = all, group_len = &all_len, n_groups = 1;
    }
    if (check(c, congestion, op, &A.algo, group_len, n_groups, e)) {
        free(all);
        return -1;
    }
    A.N = c->npus[0];
    A.B = c->bw_gbps[0] * 1073741824.0 / 1e9;
    A.L = c->latency_ns[0];
    size_t n_links = c->topo[0] == SB_TOPO_FULLY_CONNECTED ? (size_t)A.N * A.N : 2 * (size_t)A.N;
    A.links = sb_xmalloc(n_links * sizeof *A.links);
    for (size_t l = 0; l < n_links; l++)
        A.links[l] = (struct link){0, UINT32_MAX, UINT32_MAX};
    A.g = sb_xcalloc(n_groups, sizeof *A.g);
    A.n_g = n_groups;
    double cells = 0;
    for (uint32_t i = 0, off = 0; i < n_groups; off += group_len[i++]) {
        struct grp *G = &A.g[i];
        G->ranks = ranks + off;
        G->n = group_len[i];
        G->K = steps(&A, G->n);
        cells += (double)A.chunks * G->n * G->K;
    }
    if (cells > 1e8) {
        sb_errf(e, "%.0f message slots: more than this model simulates", cells);
        A.n_g = 0; /* nothing allocated per group yet */
    }
    for (uint32_t i = 0; i < A.n_g; i++)
        alloc_group(&A, &A.g[i]);
    /* every rank starts its first A chunks at 0 (a group of one has nothing
     * to do) */
    for (uint32_t i = 0; i < A.n_g; i++)
        for (uint32_t p = 0; p < A.g[i].n && A.g[i].n > 1; p++)
            for (uint32_t k = 0; k < c->active_chunks; k++)
                launch(&A, i, p);
    run(&A);
    for (uint32_t i = 0; i < A.n_g; i++)
        free_group(&A.g[i]);
    double end = cells > 1e8 ? -1 : A.end;
    free(A.g), free(A.links), free(A.msgs), free(A.heap), free(all);
    return end;
}

double sb_astra_aware(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                      const uint32_t *ranks, const uint32_t *group_len, uint32_t n_groups,
                      struct sb_err *e)
{
    uint64_t chunk, chunks;
    if (sb_astra_chunking(c, op, bytes, &chunk, &chunks, e))
        return -1;
    return simulate(c, 1, op, chunk, chunks, ranks, group_len, n_groups, NULL, e);
}

double sb_astra_ranks_unaware(const struct sb_astra_config *c, enum sb_astra_op op,
                              uint64_t chunk, uint64_t chunks, struct sb_err *e)
{
    return simulate(c, 0, op, chunk, chunks, NULL, NULL, 0, NULL, e);
}

int sb_astra_rank_ends(const struct sb_astra_config *c, int aware, enum sb_astra_op op,
                       uint64_t bytes, double *end, struct sb_err *e)
{
    uint64_t chunk, chunks;
    if (sb_astra_chunking(c, op, bytes, &chunk, &chunks, e))
        return -1;
    memset(end, 0, c->npus[0] * sizeof *end);
    return simulate(c, aware, op, chunk, chunks, NULL, NULL, 0, end, e) < 0 ? -1 : 0;
}
