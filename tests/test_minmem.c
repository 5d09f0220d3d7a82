/* minmem's two greedy candidates (sb_mem_greedy_order, in the policy
 * toolkit): on graphs worked out by hand where a ready node's score changes
 * after another node is placed (the heap must rescore it), and against a plain rescan of every ready node at
 * every step on random graphs with views, weights, outputs, repeated inputs and
 * collectives. */
#include <stdlib.h>

#include "schedbench/policy.h"
#include "check.h"
#include "core/core.h"
#include "import/import.h"

static struct sb_graph *load(const char *csv)
{
    struct sb_err e;
    struct sb_graph *g = sb_csv_load_mem("minmem.csv", csv, strlen(csv), &e);
    if (!g)
        fprintf(stderr, "%s\n", e.msg);
    return g;
}

static void check_order(const char *csv, int reverse_pass, const uint32_t *want, uint32_t n)
{
    struct sb_graph *g = load(csv);
    CHECK(g != NULL);
    if (!g)
        return;
    uint32_t got[16];
    CHECK_EQ_U(g->v.n_nodes, n);
    CHECK(sb_mem_greedy_order(&g->v, reverse_pass, got) == 0);
    for (uint32_t i = 0; i < n; i++)
        CHECK_EQ_U(got[i], want[i]);
    sb_graph_free(g);
}

/* Forward: x (input, 100 B) read by a (10 B) and b (50 B); d (40 B) reads a;
 * e (5 B) reads b and d.  Score = bytes freed (buffers whose remaining uses
 * the node holds all of) minus its own bytes.
 *   ready {a, b}: x has 2 uses left, so neither frees it: a = -10, b = -50: a.
 *   ready {d, b}: d frees a: 10 - 40 = -30; b now holds x's last use:
 *     100 - 50 = +50 (a stale -50 would lose to d): b.
 *   then d (-30), then e.  Order x a b d e = ids 0 1 3 2 4. */
static const char *const fwd_csv = "id,name,kind,inputs,out_bytes\n"
                                   "0,x,input,,100\n"
                                   "1,a,compute,0,10\n"
                                   "2,d,compute,1,40\n"
                                   "3,b,compute,0,50\n"
                                   "4,e,compute,3 2,5\n";

/* Reverse: inputs y and w (100 B each); p (10 B) and q (60 B) read y, r (30 B)
 * reads w; z (1 B) reads p, q, r.  Built from the end; gain = own bytes (once a
 * consumer is placed) minus the bytes of inputs nothing placed reads yet.
 *   z goes last (the only node without consumers);
 *   ready {p, q, r}: p = 10 - 100 = -90, q = 60 - 100 = -40, r = 30 - 100 =
 *     -70: q, just before z;
 *   y now has a placed reader: p = 10 - 0 = +10 (a stale -90 would lose to
 *     r): p, then r.
 *   Inputs lead: y w r p q z = ids 0 1 4 2 3 5. */
static const char *const rev_csv = "id,name,kind,inputs,out_bytes\n"
                                   "0,y,input,,100\n"
                                   "1,w,input,,100\n"
                                   "2,p,compute,0,10\n"
                                   "3,q,compute,0,60\n"
                                   "4,r,compute,1,30\n"
                                   "5,z,compute,2 3 4,1\n";

/* ---- the reference: the rescan minmem.c did before its heaps ---------------- */

static int owns(const struct sb_graph_view *g, uint32_t v)
{
    return !(g->flags[v] & SB_FLAG_ALIAS) && g->kind[v] != SB_KIND_DONE;
}

/* buffers node c uses: its inputs' and, for a done, its start's inputs' */
static uint32_t uses_of(const struct sb_graph_view *g, const uint32_t *root, uint32_t c,
                        uint32_t *out)
{
    uint32_t k = 0;
    for (uint32_t e = g->pred_off[c]; e < g->pred_off[c + 1]; e++)
        out[k++] = root[g->pred[e]];
    if (g->kind[c] == SB_KIND_DONE && g->partner[c] != SB_NONE)
        for (uint32_t e = g->pred_off[g->partner[c]]; e < g->pred_off[g->partner[c] + 1]; e++)
            out[k++] = root[g->pred[e]];
    return k;
}

static double score(const struct sb_graph_view *g, const uint32_t *root, const uint32_t *uses,
                    uint32_t v, int rev)
{
    uint32_t buf[64], k = uses_of(g, root, v, buf);
    double s = 0;
    if (rev) {
        s = owns(g, v) && uses[v] > 0 ? (double)g->out_bytes[v] : 0;
        if (owns(g, v) && (g->flags[v] & SB_FLAG_OUTPUT))
            s = (double)g->out_bytes[v];
    }
    for (uint32_t i = 0; i < k; i++) {
        uint32_t b = buf[i], mine = 0, seen = 0;
        for (uint32_t j = 0; j < k; j++)
            mine += buf[j] == b, seen |= j < i && buf[j] == b;
        if (seen)
            continue;
        if (!rev && mine == uses[b] && !(g->flags[b] & (SB_FLAG_WEIGHT | SB_FLAG_OUTPUT)))
            s += (double)g->out_bytes[b];
        if (rev && uses[b] == 0 && b != v && !(g->flags[b] & SB_FLAG_WEIGHT))
            s -= (double)g->out_bytes[b];
    }
    return rev ? s : s - (owns(g, v) ? (double)g->out_bytes[v] : 0);
}

static void rescan(const struct sb_graph_view *g, int rev, uint32_t *order)
{
    uint32_t n = g->n_nodes, pos = 0, buf[64];
    uint32_t *root = malloc(n * sizeof *root), *uses = calloc(n, sizeof *uses);
    uint32_t *cnt = malloc(n * sizeof *cnt);
    uint8_t *ready = calloc(n, 1);
    for (uint32_t v = 0; v < n; v++) {
        root[v] = owns(g, v) || g->pred_off[v] == g->pred_off[v + 1]
                      ? v : root[g->pred[g->pred_off[v]]];
        if (g->kind[v] == SB_KIND_INPUT)
            order[pos++] = v;
    }
    for (uint32_t v = 0; v < n; v++) {
        if (!rev) {
            uint32_t k = uses_of(g, root, v, buf);
            for (uint32_t i = 0; i < k; i++)
                uses[buf[i]]++;
        }
        cnt[v] = 0;
        if (rev)
            cnt[v] = g->succ_off[v + 1] - g->succ_off[v];
        else
            for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++)
                cnt[v] += g->kind[g->pred[e]] != SB_KIND_INPUT;
        ready[v] = g->kind[v] != SB_KIND_INPUT && cnt[v] == 0;
    }
    uint32_t end = n;
    for (;;) {
        uint32_t best = SB_NONE;
        double bs = 0;
        for (uint32_t v = 0; v < n; v++) {
            if (ready[v] != 1)
                continue;
            double s = score(g, root, uses, v, rev);
            if (best == SB_NONE || s > bs || (s == bs && (rev ? v > best : v < best)))
                best = v, bs = s;
        }
        if (best == SB_NONE)
            break;
        ready[best] = 2;
        if (rev)
            order[--end] = best;
        else
            order[pos++] = best;
        uint32_t k = uses_of(g, root, best, buf);
        for (uint32_t i = 0; i < k; i++)
            uses[buf[i]] += rev ? 1 : (uint32_t)-1;
        if (rev) {
            for (uint32_t e = g->pred_off[best]; e < g->pred_off[best + 1]; e++)
                if (--cnt[g->pred[e]] == 0 && g->kind[g->pred[e]] != SB_KIND_INPUT)
                    ready[g->pred[e]] = 1;
        } else {
            for (uint32_t e = g->succ_off[best]; e < g->succ_off[best + 1]; e++)
                if (--cnt[g->succ[e]] == 0)
                    ready[g->succ[e]] = 1;
        }
    }
    free(root), free(uses), free(cnt), free(ready);
}

/* A random graph of 6..40 nodes: a few inputs (some weights), compute nodes
 * reading 1..3 earlier nodes (repeats allowed), views, outputs, and
 * collectives (start, then its done a few rows later).  Sizes come from a
 * small set, so that scores tie and the tie-breaks are exercised. */
static size_t random_graph(uint64_t *x, char *buf, size_t cap)
{
    uint32_t n = 6 + (uint32_t)(*x % 35), open = SB_NONE, close_at = 0;
    size_t len = (size_t)snprintf(buf, cap, "id,name,kind,inputs,out_bytes,coll,flags\n");
    for (uint32_t v = 0; v < n; v++) {
        *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
        uint32_t r = (uint32_t)(*x >> 32);
        unsigned long long bytes = 10ull * (1 + r % 6);
        char in[64] = "";
        if (open != SB_NONE && v == close_at) {
            len += (size_t)snprintf(buf + len, cap - len, "%u,n%u,done,%u,0,all_gather,\n", v, v,
                                    open);
            open = SB_NONE;
            continue;
        }
        if (v < 2 || r % 11 == 0) {
            len += (size_t)snprintf(buf + len, cap - len, "%u,n%u,input,,%llu,,%s\n", v, v, bytes,
                                    r % 3 == 0 ? "weight" : "");
            continue;
        }
        uint32_t k = 1 + (r >> 4) % 3;
        size_t m = 0;
        for (uint32_t i = 0; i < k; i++) {
            uint32_t p = (r >> (8 + 5 * i)) % v;
            if (p == open) /* nothing reads a start but its done */
                p = 0;
            m += (size_t)snprintf(in + m, sizeof in - m, "%s%u", i ? " " : "", p);
        }
        if (open == SB_NONE && r % 7 == 0 && v + 2 < n) {
            open = v, close_at = v + 1 + (r >> 20) % 2;
            len += (size_t)snprintf(buf + len, cap - len, "%u,n%u,start,%s,%llu,all_gather,\n",
                                    v, v, in, bytes);
            continue;
        }
        const char *flags = r % 9 == 0 ? "alias" : r % 13 == 0 ? "output" : "";
        len += (size_t)snprintf(buf + len, cap - len, "%u,n%u,compute,%s,%llu,,%s\n", v, v, in,
                                r % 9 == 0 ? 0 : bytes, flags); /* a view owns no bytes */
    }
    return len;
}

static void against_rescan(void)
{
    uint64_t x = 0x9e3779b97f4a7c15ull;
    uint32_t graphs = 0, same = 0, compared = 0;
    char buf[8192];
    for (uint32_t t = 0; t < 400; t++) {
        random_graph(&x, buf, sizeof buf);
        struct sb_err e;
        struct sb_graph *g = sb_csv_load_mem("random.csv", buf, strlen(buf), &e);
        if (!g) { /* a draw the loader refuses (e.g. a view of an input) */
            if (getenv("SB_SHOW")) fprintf(stderr, "%s\n", e.msg);
            continue;
        }
        graphs++;
        uint32_t a[64], b[64];
        for (int rev = 0; rev < 2; rev++) {
            CHECK(sb_mem_greedy_order(&g->v, rev, a) == 0);
            rescan(&g->v, rev, b);
            compared++;
            same += memcmp(a, b, g->v.n_nodes * sizeof *a) == 0;
        }
        sb_graph_free(g);
    }
    CHECK(graphs >= 200); /* most draws load */
    CHECK_EQ_U(same, compared);
    printf("heap = rescan: %u of %u candidate orders (%u random graphs)\n", same, compared,
           graphs);
}

int main(void)
{
    static const uint32_t fwd_want[] = {0, 1, 3, 2, 4};
    static const uint32_t rev_want[] = {0, 1, 4, 2, 3, 5};
    check_order(fwd_csv, 0, fwd_want, 5);
    check_order(rev_csv, 1, rev_want, 6);
    against_rescan();
    return check_report();
}
