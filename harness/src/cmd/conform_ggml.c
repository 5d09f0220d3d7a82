/* `schedbench conform DIR` on ggml's scheduler cases (DIR of *.case,
 * ../shared/corpus/ggml-sched, format in its README): each case is read into
 * the description the policy toolkit's splitter works on (sb_ggml_*,
 * schedulers/lib/ggml_split.c), split, and every assignment, split, split
 * input and capacity warning compared with what the real ggml produced.
 * Ends with "N passed, M failed"; a failure prints its first difference. */
#define _POSIX_C_SOURCE 200809L
#include "conform.h"
#include "core/core.h"
#include "core/num.h"
#include "run.h"

#include "schedbench/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOK 512
/* The longest line a case may have, in bytes with its newline: ggml's dumps
 * stay under 400 (a tensor has at most GGML_MAX_SRC = 10 sources); a longer
 * line is refused rather than cut into pieces that read as separate lines. */
#define MAX_LINE_BYTES 16384

struct gcase {
    char name[128];
    uint8_t *given;    /* [L + N] a leaf or node line was read; [L + N .. 2(L + N)) its assign */
    uint32_t nb, nf, L, N;
    int32_t *backend_buft;
    uint8_t *reads;
    struct sb_ggml_problem p;
    struct sb_ggml_tensor *t;
    uint8_t *answers; /* supports and offload strings, 2 * nb per tensor */
    int32_t *srcs;
    size_t n_srcs, cap_srcs;
    int32_t *want_assign;
    uint32_t n_splits, n_split_lines;
    struct sb_ggml_split *want;
    uint32_t n_warn;
    char warn[64][160];
};

/* The fields of line; more than MAX_TOK gives MAX_TOK + 1, which the caller
 * refuses. */
static int split_tokens(char *line, char **tok)
{
    int n = 0;
    for (char *s = strtok(line, " \r\n"); s; s = strtok(NULL, " \r\n")) {
        if (n == MAX_TOK)
            return MAX_TOK + 1;
        tok[n++] = s;
    }
    return n;
}

/* A leaf, node or split index: decimal digits, below count. */
static int parse_index(const char *s, uint32_t count, uint32_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9' || v >= count)
            return -1;
        v = v * 10 + (uint64_t)(*c - '0');
    }
    if (v >= count)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* A tensor reference: '-', L<i> below n_leafs or N<i> below n_nodes (decimal
 * digits only); -2 otherwise. */
static int32_t ref(const struct gcase *c, const char *s)
{
    uint32_t i;
    if (!strcmp(s, "-"))
        return SB_GGML_NONE;
    if (s[0] == 'L' && !parse_index(s + 1, c->L, &i))
        return (int32_t)i;
    if (s[0] == 'N' && !parse_index(s + 1, c->N, &i))
        return (int32_t)(c->L + i);
    return -2;
}

/* A field that is a whole number in lo..hi, read strictly (core/num.h): atoi
 * took "abc" as 0 and "12x" as 12, so a damaged case ran as another one.  A
 * leading '-' only where lo is negative.  On failure *bad is set and lo is
 * returned, for the line to be refused once with its file and line. */
static long field(const char *s, long lo, long hi, int *bad)
{
    uint64_t v;
    const char *why;
    int neg = s[0] == '-' && lo < 0;
    if (sb_num_u64(s + neg, 0, neg ? (uint64_t)-lo : (uint64_t)(hi < 0 ? 0 : hi), &v, &why) ||
        (neg && v == 0)) {
        *bad = 1;
        return lo;
    }
    return neg ? -(long)v : (long)v;
}

static int tensor_line(struct gcase *c, char **tok, int n, uint32_t idx, struct sb_err *e,
                       const char *path, unsigned line)
{
    int bad = 0;
    if (n < 16 || idx >= c->L + c->N)
        return sb_errf(e, "%s:%u: a tensor line has at least 16 fields", path, line);
    struct sb_ggml_tensor *x = &c->t[idx];
    x->view = field(tok[4], 0, 1, &bad) != 0;
    x->exempt = !strcmp(tok[3], "ROPE") || !strcmp(tok[3], "FLASH_ATTN_EXT");
    x->input = strchr(tok[9], 'I') != NULL;
    x->view_src = ref(c, tok[5]);
    x->buft = strcmp(tok[10], "-") ? (int32_t)field(tok[10], 0, INT32_MAX, &bad) : SB_GGML_NONE;
    x->usage = !strcmp(tok[11], "weights") ? SB_GGML_USAGE_WEIGHTS
               : !strcmp(tok[11], "any") ? SB_GGML_USAGE_ANY
               : !strcmp(tok[11], "compute") ? SB_GGML_USAGE_COMPUTE : SB_GGML_USAGE_NONE;
    x->pin = strcmp(tok[12], "-") ? (int32_t)field(tok[12], 0, INT32_MAX, &bad) : SB_GGML_NONE;
    /* ids are '-' or in range: a negative one would index before the tables */
    if (bad)
        return sb_errf(e, "%s:%u: is_view_op, buft and pin are integers (0 or 1, ids), or '-'",
                       path, line);
    if (strlen(tok[13]) != c->nb || strlen(tok[14]) != c->nb || x->view_src == -2 ||
        x->buft >= (int32_t)c->nf || x->pin >= (int32_t)c->nb ||
        (strcmp(tok[10], "-") && x->buft < 0) || (strcmp(tok[12], "-") && x->pin < 0))
        return sb_errf(e, "%s:%u: supports/offload need one character per backend, refs and "
                          "ids in range", path, line);
    uint8_t *a = &c->answers[(size_t)idx * 2 * c->nb];
    for (uint32_t b = 0; b < c->nb; b++)
        a[b] = tok[13][b] == '1', a[c->nb + b] = tok[14][b] == '1';
    x->supports = a;
    x->offload = a + c->nb;
    uint32_t ns = (uint32_t)field(tok[15], 0, MAX_TOK, &bad);
    if (bad || (int)(16 + ns) != n)
        return sb_errf(e, "%s:%u: n_src %u but %d sources", path, line, ns, n - 16);
    size_t at = c->n_srcs;
    if (c->n_srcs + ns > c->cap_srcs) {
        c->cap_srcs = (c->n_srcs + ns) * 2 + 16;
        c->srcs = sb_xrealloc(c->srcs, c->cap_srcs * sizeof *c->srcs);
    }
    for (uint32_t j = 0; j < ns; j++) {
        int32_t r = ref(c, tok[16 + j]);
        if (r == -2)
            return sb_errf(e, "%s:%u: source '%s' is not a tensor of this graph", path, line,
                           tok[16 + j]);
        c->srcs[c->n_srcs++] = r;
    }
    x->n_src = ns;
    x->src = (const int32_t *)(uintptr_t)at; /* an offset until every line is read */
    return 0;
}

static int read_case(const char *path, struct gcase *c, struct sb_err *e)
{
    memset(c, 0, sizeof *c);
    size_t n_text, at = 0;
    char *text = sb_read_file_limited(path, sb_max_input_bytes(), &n_text, e);
    if (!text)
        return -1;
    char buf[MAX_LINE_BYTES], *tok[MAX_TOK];
    unsigned line = 0, graph_line = 0;
    int rc = 0, ended = 0;
    uint32_t n_assign = 0;
    while (!rc && at < n_text) {
        line++;
        const char *nl = memchr(text + at, '\n', n_text - at);
        size_t len = nl ? (size_t)(nl - (text + at)) + 1 : n_text - at;
        const char *nul = memchr(text + at, 0, len);
        if (nul) {
            rc = sb_errf(e, "%s:%u:%zu: NUL byte: not a text file", path, line,
                         (size_t)(nul - (text + at)) + 1);
            break;
        }
        if (len >= sizeof buf) {
            rc = sb_errf(e, "%s:%u: a line of %zu bytes; a case line has at most %d", path,
                         line, len - (nl != NULL), MAX_LINE_BYTES - 2);
            break;
        }
        memcpy(buf, text + at, len);
        buf[len] = 0;
        at += len;
        if (buf[0] == '#' || buf[0] == '\n')
            continue;
        char raw[MAX_LINE_BYTES];
        snprintf(raw, sizeof raw, "%s", buf);
        int n = split_tokens(buf, tok);
        if (!n)
            continue;
        if (n > MAX_TOK)
            rc = sb_errf(e, "%s:%u: more than %d fields on a line", path, line, MAX_TOK);
        else if (!strcmp(tok[0], "case") && n >= 2)
            snprintf(c->name, sizeof c->name, "%.127s", tok[1]);
        else if ((!strcmp(tok[0], "sched") && c->backend_buft) ||
                 (!strcmp(tok[0], "graph") && c->t) || (!strcmp(tok[0], "splits") && c->want))
            /* each header record once: a second would replace the first's tables */
            rc = sb_errf(e, "%s:%u: a second '%s' record", path, line, tok[0]);
        else if (!strcmp(tok[0], "sched") && n >= 11) {
            int bad = 0;
            c->nb = (uint32_t)field(tok[2], 1, 64, &bad), c->nf = (uint32_t)field(tok[4], 1, 64, &bad);
            c->p.op_offload = (int)field(tok[6], 0, 1, &bad);
            c->p.cap0 = (uint32_t)field(tok[10], 1, 1 << 20, &bad);
            if (bad)
                rc = sb_errf(e, "%s:%u: 1..64 backends and buffer types, op_offload 0 or 1, split_inputs_cap "
                                "1..2^20", path, line);
            else {
                c->backend_buft = sb_xcalloc(c->nb, sizeof *c->backend_buft);
                c->reads = sb_xcalloc((size_t)c->nb * c->nf, 1);
            }
        } else if (!strcmp(tok[0], "backend") && n >= 6 && c->nb) {
            int bad = 0;
            uint32_t id = (uint32_t)field(tok[1], 0, (long)c->nb - 1, &bad);
            long bf = field(tok[4], 0, (long)c->nf - 1, &bad);
            if (bad || strlen(tok[5]) != c->nf)
                rc = sb_errf(e, "%s:%u: bad backend line", path, line);
            else {
                c->backend_buft[id] = (int32_t)bf;
                for (uint32_t k = 0; k < c->nf; k++)
                    c->reads[(size_t)id * c->nf + k] = tok[5][k] == '1';
            }
        } else if (!strcmp(tok[0], "graph") && n >= 5 && c->nb) {
            int bad = 0;
            long l = field(tok[2], 0, 1000000, &bad), nn = field(tok[4], 0, 1000000, &bad);
            c->L = (uint32_t)l, c->N = (uint32_t)nn;
            graph_line = line;
            if (bad)
                rc = sb_errf(e, "%s:%u: too many tensors", path, line);
            else {
                c->t = sb_xcalloc(c->L + c->N + 1, sizeof *c->t);
                c->answers = sb_xcalloc(((size_t)c->L + c->N + 1) * 2 * c->nb, 1);
                c->want_assign = sb_xmalloc(((size_t)c->L + c->N + 1) * sizeof *c->want_assign);
                c->given = sb_xcalloc(2 * ((size_t)c->L + c->N) + 1, 1);
            }
        } else if ((!strcmp(tok[0], "leaf") || !strcmp(tok[0], "node")) && c->t) {
            /* the index is within the count the graph line declared, and given once */
            int is_node = tok[0][0] == 'n';
            uint32_t count = is_node ? c->N : c->L, i;
            if (n < 2 || parse_index(tok[1], count, &i))
                rc = sb_errf(e, "%s:%u: %s '%s' is not an index below %s %u", path, line,
                             tok[0], n < 2 ? "" : tok[1], is_node ? "n_nodes" : "n_leafs",
                             count);
            else if (c->given[i + (is_node ? c->L : 0)])
                rc = sb_errf(e, "%s:%u: %s %u is given twice", path, line, tok[0], i);
            else {
                c->given[i + (is_node ? c->L : 0)] = 1;
                rc = tensor_line(c, tok, n, i + (is_node ? c->L : 0), e, path, line);
            }
        } else if (!strcmp(tok[0], "assign") && n == 3 && c->t) {
            int32_t r = ref(c, tok[1]);
            int bad = 0;
            long b = field(tok[2], -1, (long)c->nb - 1, &bad); /* -1: none */
            if (bad)
                rc = sb_errf(e, "%s:%u: assign's backend '%s' is not -1 or an id below %u",
                             path, line, tok[2], c->nb);
            else if (r < 0)
                rc = sb_errf(e, "%s:%u: bad tensor ref '%s'", path, line, tok[1]);
            else if (c->given[c->L + c->N + (uint32_t)r])
                rc = sb_errf(e, "%s:%u: assign %s is given twice", path, line, tok[1]);
            else
                c->want_assign[r] = (int32_t)b, n_assign++, c->given[c->L + c->N + (uint32_t)r] = 1;
        } else if (!strcmp(tok[0], "splits") && n == 2) {
            int bad = 0;
            long k = field(tok[1], 0, 1000000, &bad);
            if (bad)
                rc = sb_errf(e, "%s:%u: bad split count", path, line);
            else {
                c->n_splits = (uint32_t)k;
                c->want = sb_xcalloc(c->n_splits + 1, sizeof *c->want);
            }
        } else if (!strcmp(tok[0], "split") && n >= 6 && c->want) {
            uint32_t k;
            int bad = 0;
            long n_in = field(tok[5], 0, MAX_TOK, &bad), be = field(tok[2], 0, 64, &bad);
            long st = field(tok[3], 0, 2000000, &bad), en = field(tok[4], 0, 2000000, &bad);
            if (bad)
                rc = sb_errf(e, "%s:%u: a split's backend, start, end and n_inputs are "
                                "integers", path, line);
            else if (parse_index(tok[1], c->n_splits, &k))
                rc = sb_errf(e, "%s:%u: split '%s' is not an index below splits %u", path, line,
                             tok[1], c->n_splits);
            else if ((long)(n - 6) != n_in || c->want[k].inputs)
                rc = sb_errf(e, "%s:%u: bad or repeated split line", path, line);
            else {
                struct sb_ggml_split *s = &c->want[k];
                s->backend = (int)be, s->start = (uint32_t)st;
                s->end = (uint32_t)en, s->n_inputs = (uint32_t)(n - 6);
                s->inputs = sb_xcalloc(s->n_inputs + 1, sizeof *s->inputs);
                for (uint32_t j = 0; j < s->n_inputs && !rc; j++) {
                    int32_t r = ref(c, tok[6 + j]);
                    if (r < 0)
                        rc = sb_errf(e, "%s:%u: split input '%s' is not a tensor", path, line,
                                     tok[6 + j]);
                    s->inputs[j] = (uint32_t)r;
                }
                c->n_split_lines++;
            }
        } else if (!strcmp(tok[0], "warn") && c->n_warn < 64) {
            char *w = raw + 5;
            w[strcspn(w, "\r\n")] = 0;
            snprintf(c->warn[c->n_warn++], sizeof c->warn[0], "%.159s", w);
        } else if (!strcmp(tok[0], "end"))
            ended = 1;
    }
    free(text);
    /* every leaf and node the graph line declared, by its first missing index */
    for (uint32_t t = 0; !rc && c->t && t < c->L + c->N; t++)
        if (!c->given[t])
            rc = sb_errf(e, "%s:%u: the graph has n_leafs %u, n_nodes %u, but %s %u is never "
                            "given", path, graph_line, c->L, c->N, t < c->L ? "leaf" : "node",
                         t < c->L ? t : t - c->L);
    if (!rc && (!ended || !c->t || n_assign != c->L + c->N || c->n_split_lines != c->n_splits))
        rc = sb_errf(e, "%s: incomplete case (no 'end', or missing assign/split lines)", path);
    if (!rc)
        for (uint32_t t = 0; t < c->L + c->N; t++)
            c->t[t].src = c->srcs ? c->srcs + (uintptr_t)c->t[t].src : NULL; /* no sources at all */
    c->p = (struct sb_ggml_problem){c->nb, c->nf, c->backend_buft, c->reads, c->p.op_offload,
                                 c->p.cap0, c->L, c->N, c->t};
    return rc;
}

static void free_case(struct gcase *c)
{
    for (uint32_t k = 0; c->want && k < c->n_splits; k++)
        free(c->want[k].inputs);
    free(c->want), free(c->t), free(c->answers), free(c->srcs), free(c->want_assign);
    free(c->backend_buft), free(c->reads), free(c->given);
}

static void tname(const struct gcase *c, uint32_t t, char *buf, size_t n)
{
    snprintf(buf, n, "%c%u", t < c->L ? 'L' : 'N', t < c->L ? t : t - c->L);
}

/* 0 when equal; else the first difference in why */
static int compare(const struct gcase *c, const struct sb_ggml_result *r, char *why, size_t n)
{
    char a[32], b[32];
    for (uint32_t t = 0; t < c->L + c->N; t++)
        if (r->backend[t] != c->want_assign[t]) {
            tname(c, t, a, sizeof a);
            return snprintf(why, n, "assign %s: %d, ggml %d", a, r->backend[t], c->want_assign[t]), 1;
        }
    if (r->n_splits != c->n_splits)
        return snprintf(why, n, "%u splits, ggml %u", r->n_splits, c->n_splits), 1;
    for (uint32_t k = 0; k < c->n_splits; k++) {
        const struct sb_ggml_split *x = &r->splits[k], *y = &c->want[k];
        if (x->backend != y->backend || x->start != y->start || x->end != y->end ||
            x->n_inputs != y->n_inputs)
            return snprintf(why, n, "split %u: backend %d [%u,%u) %u inputs, ggml backend %d "
                                    "[%u,%u) %u inputs", k, x->backend, x->start, x->end,
                            x->n_inputs, y->backend, y->start, y->end, y->n_inputs), 1;
        for (uint32_t j = 0; j < x->n_inputs; j++)
            if (x->inputs[j] != y->inputs[j]) {
                tname(c, x->inputs[j], a, sizeof a);
                tname(c, y->inputs[j], b, sizeof b);
                return snprintf(why, n, "split %u input %u: %s, ggml %s", k, j, a, b), 1;
            }
    }
    if (r->n_grow != c->n_warn)
        return snprintf(why, n, "%u capacity warnings, ggml %u", r->n_grow, c->n_warn), 1;
    for (uint32_t k = 0; k < c->n_warn; k++) {
        char w[160];
        snprintf(w, sizeof w, "ggml_backend_sched_split_inputs_grow: increasing split inputs "
                              "capacity from %u to %u", r->grow_from[k], r->grow_to[k]);
        if (strcmp(w, c->warn[k]))
            return snprintf(why, n, "warning '%s', ggml '%s'", w, c->warn[k]), 1;
    }
    return 0;
}

int sb_conform_has_ggml_cases(const char *dir)
{
    return sb_paths_has_suffix(dir, ".case");
}

int sb_conform_ggml(const char *dir)
{
    struct sb_paths w = {0};
    struct sb_err e;
    if (sb_paths_suffix(&w, dir, ".case", 0)) {
        fprintf(stderr, "schedbench conform: %s: cannot open the folder\n", dir);
        return 2;
    }
    uint32_t pass = 0, fail = 0;
    int bad_input = 0;
    for (uint32_t i = 0; i < w.n; i++) {
        struct gcase c;
        struct sb_ggml_result r;
        char why[512];
        if (read_case(w.path[i], &c, &e)) {
            fprintf(stderr, "%s\n", e.msg);
            bad_input = 1;
            free_case(&c);
            continue;
        }
        if (sb_ggml_split_graph(&c.p, &r)) {
            free_case(&c);
            fprintf(stderr, "schedbench conform: out of memory\n");
            return 2;
        }
        if (compare(&c, &r, why, sizeof why)) {
            fail++;
            printf("FAIL %s: %s\n", c.name, why);
        } else {
            pass++;
            printf("PASS %s: %u splits, %u assignments\n", c.name, r.n_splits, c.L + c.N);
        }
        sb_ggml_result_free(&r);
        free_case(&c);
    }
    sb_paths_free(&w);
    printf("ggml scheduler: %u passed, %u failed\n", pass, fail);
    return bad_input ? 2 : fail ? 1 : 0;
}
