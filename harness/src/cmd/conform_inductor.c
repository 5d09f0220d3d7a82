/* `schedbench conform DIR` on PyTorch Inductor's pass tests (DIR of NAME.icase
 * + NAME.csv, workloads/conform/inductor, format in its README): each case is
 * a graph transcribed from one PyTorch test, the policy spec that plays the
 * pass under the test's knobs, and what the test asserts: an exact order, a
 * FileCheck-like subsequence, pairwise orders, the number of collectives
 * Inductor's overlap accounting calls exposed, the peak bytes, the bucket
 * count.  One PASS/FAIL/SKIP line per case, then tier counts and
 * "N passed, M failed[, K skipped]".
 *
 * The checks read only the schedule the policy returns: the exposed count is
 * Inductor's accounting (OverlapScheduler: compute time hides the collectives
 * in flight on its process group, an exposed wait lends its time to other
 * groups) replayed on that order here, not the policy's own bookkeeping, and
 * the peak is the harness's memory model (sb_mem_profile). */
#define _POSIX_C_SOURCE 200809L
#include "conform.h"
#include "core/core.h"
#include "core/num.h"
#include "import/import.h"
#include "run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ICASE_MAX_LINE 4096
#define ICASE_MAX_NAMES 256

enum ikind { I_ORDER, I_SUBSEQ, I_BEFORE, I_EXPOSED, I_PEAK, I_BUCKETS, I_COUNT };

struct idirective {
    enum ikind kind;
    uint32_t line;
    uint32_t n_names;
    char **names; /* order/subsequence/before: node names */
    uint64_t n;   /* exposed/peak/buckets */
};

struct icase {
    char source[512], commit[160], policy[1024], skip[512];
    int tier;
    uint32_t n_dir;
    struct idirective dir[32];
};

static void icase_free(struct icase *c)
{
    for (uint32_t i = 0; i < c->n_dir; i++) {
        for (uint32_t k = 0; k < c->dir[i].n_names; k++)
            free(c->dir[i].names[k]);
        free(c->dir[i].names);
    }
}

/* The text after the first word of s, without leading blanks. */
static const char *rest_of(const char *s)
{
    s += strcspn(s, " \t");
    return s + strspn(s, " \t");
}

static int icase_line(struct icase *c, char *s, uint32_t line, const char *path,
                      struct sb_err *e)
{
    char word[32];
    if (sscanf(s, "%31s", word) != 1)
        return 0;
    const char *rest = rest_of(s);
    static const struct {
        const char *w;
        enum ikind k;
        int names; /* 1: a list of names; 0: one number */
    } kw[] = {{"order", I_ORDER, 1},     {"subsequence", I_SUBSEQ, 1},
              {"before", I_BEFORE, 1},   {"exposed", I_EXPOSED, 0},
              {"peak", I_PEAK, 0},       {"buckets", I_BUCKETS, 0}};
    if (!strcmp(word, "source"))
        snprintf(c->source, sizeof c->source, "%s", rest);
    else if (!strcmp(word, "commit"))
        snprintf(c->commit, sizeof c->commit, "%s", rest);
    else if (!strcmp(word, "policy"))
        snprintf(c->policy, sizeof c->policy, "%s", rest);
    else if (!strcmp(word, "skip"))
        snprintf(c->skip, sizeof c->skip, "%s", rest);
    else if (!strcmp(word, "tier")) {
        uint64_t t;
        const char *why;
        if (sb_num_u64(rest, 1, 2, &t, &why))
            return sb_errf(e, "%s:%u: tier '%s' is not 1 or 2 (%s)", path, line, rest, why);
        c->tier = (int)t;
    } else {
        for (size_t k = 0; k < sizeof kw / sizeof kw[0]; k++) {
            if (strcmp(word, kw[k].w))
                continue;
            if (c->n_dir == sizeof c->dir / sizeof c->dir[0])
                return sb_errf(e, "%s:%u: more than %zu expectations", path, line,
                               sizeof c->dir / sizeof c->dir[0]);
            struct idirective *d = &c->dir[c->n_dir++];
            memset(d, 0, sizeof *d);
            d->kind = kw[k].k;
            d->line = line;
            if (!kw[k].names) {
                const char *why;
                if (sb_num_u64(rest, 0, UINT64_MAX, &d->n, &why))
                    return sb_errf(e, "%s:%u: %s '%s' is not a whole number (%s)", path, line,
                                   word, rest, why);
                return 0;
            }
            char *tmp = sb_xstrdup(rest), *save = NULL;
            for (char *t = strtok_r(tmp, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
                if (d->n_names == ICASE_MAX_NAMES) {
                    free(tmp);
                    return sb_errf(e, "%s:%u: more than %d names", path, line,
                                   ICASE_MAX_NAMES);
                }
                d->names = sb_xrealloc(d->names, (d->n_names + 1) * sizeof *d->names);
                d->names[d->n_names++] = sb_xstrdup(t);
            }
            free(tmp);
            if (d->n_names < (d->kind == I_ORDER ? 1u : 2u))
                return sb_errf(e, "%s:%u: %s needs %s", path, line, word,
                               d->kind == I_ORDER ? "a name" : "two names or more");
            return 0;
        }
        return sb_errf(e, "%s:%u: unknown directive '%s'", path, line, word);
    }
    return 0;
}

static int icase_read(const char *path, struct icase *c, struct sb_err *e)
{
    size_t n, at = 0;
    memset(c, 0, sizeof *c);
    char *text = sb_read_file_limited(path, sb_max_input_bytes(), &n, e);
    if (!text)
        return -1;
    uint32_t line = 0;
    int rc = 0;
    while (at < n && !rc) {
        char buf[ICASE_MAX_LINE];
        const char *nl = memchr(text + at, '\n', n - at);
        size_t len = nl ? (size_t)(nl - (text + at)) : n - at;
        line++;
        if (len >= sizeof buf || memchr(text + at, 0, len)) {
            rc = sb_errf(e, "%s:%u: %s", path, line,
                         len >= sizeof buf ? "line too long" : "NUL byte: not a text file");
            break;
        }
        memcpy(buf, text + at, len);
        buf[len] = 0;
        at += len + (nl != NULL);
        char *s = buf;
        char *hash = strchr(s, '#');
        if (hash)
            *hash = 0;
        size_t k = strlen(s);
        while (k && (s[k - 1] == ' ' || s[k - 1] == '\t' || s[k - 1] == '\r'))
            s[--k] = 0;
        rc = icase_line(c, s, line, path, e);
    }
    free(text);
    if (!rc && (!c->source[0] || !c->commit[0] || !c->policy[0]))
        rc = sb_errf(e, "%s: a case needs source, commit and policy lines", path);
    return rc;
}

/* ---- the checks ----------------------------------------------------------------- */

static int node_named(const struct sb_graph_view *v, const char *name)
{
    for (uint32_t i = 0; i < v->n_nodes; i++)
        if (!strcmp(v->names + v->name_off[i], name))
            return (int)i;
    return -1;
}

static const char *name_of(const struct sb_graph_view *v, uint32_t i)
{
    return v->names + v->name_off[i];
}

/* s for a message line: names are data, and a control byte in one (a CSV
 * name may hold a newline) would start a line of its own, so each is shown
 * as '?'; cut to n - 1 bytes. */
static const char *shown(const char *s, char *buf, size_t n)
{
    size_t k = 0;
    for (; s[k] && k + 1 < n; k++)
        buf[k] = (unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
    buf[k] = 0;
    return buf;
}

/* Positions of the names of d, or -1 with why set. */
static int positions(const struct sb_graph_view *v, const uint32_t *pos,
                     const struct idirective *d, uint32_t *out, char *why, size_t n_why)
{
    for (uint32_t k = 0; k < d->n_names; k++) {
        int id = node_named(v, d->names[k]);
        if (id < 0) {
            char a[128];
            snprintf(why, n_why, "line %u: no node named '%s'", d->line,
                     shown(d->names[k], a, sizeof a));
            return -1;
        }
        out[k] = pos[id];
    }
    return 0;
}

/* order: the non-input nodes, in schedule order, are exactly the names. */
static int check_exact(const struct sb_graph_view *v, const uint32_t *order,
                       const struct idirective *d, char *why, size_t n_why)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < v->n_nodes; i++) {
        uint32_t id = order[i];
        if (v->kind[id] == SB_KIND_INPUT)
            continue;
        if (k == d->n_names || strcmp(name_of(v, id), d->names[k])) {
            char a[128], b[128];
            snprintf(why, n_why, "line %u: order differs at %u: got '%s', expected '%s'",
                     d->line, k + 1, shown(name_of(v, id), a, sizeof a),
                     shown(k < d->n_names ? d->names[k] : "(end)", b, sizeof b));
            return -1;
        }
        k++;
    }
    if (k != d->n_names) {
        snprintf(why, n_why, "line %u: order ends after %u nodes, expected %u", d->line, k,
                 d->n_names);
        return -1;
    }
    return 0;
}

/* Inductor's overlap accounting replayed on a fixed order (OverlapScheduler,
 * fx_passes/overlap_scheduling.py @0196bc40): a collective starts exposed for
 * its whole time; a node with time r lends r to each process group, taken by
 * that group's collectives in flight in start order; a wait whose collective
 * is still exposed by E lends E to the other groups' collectives.  A process
 * group is the collective's group size (as the overlap toolkit keys it).
 * Returns the collectives left fully exposed (exposed == their time > 0). */
static uint64_t exposed_count(const struct sb_graph_view *v, const uint32_t *order)
{
    uint32_t n = v->n_nodes, n_fl = 0;
    double *left = sb_xcalloc(n, sizeof *left);
    uint32_t *fl = sb_xmalloc((n + 1) * sizeof *fl); /* starts in flight, in start order */
    uint64_t count = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t x = order[i];
        if (v->kind[x] == SB_KIND_START) {
            left[x] = v->dur_us[x];
            fl[n_fl++] = x;
            continue;
        }
        double lend = v->dur_us[x];
        uint32_t except = UINT32_MAX; /* a wait lends to other groups only */
        if (v->kind[x] == SB_KIND_DONE) {
            uint32_t s = v->partner[x];
            lend = left[s];
            except = v->group_size[s];
            if (left[s] > 0 && left[s] >= v->dur_us[s])
                count++;
            uint32_t k = 0;
            for (uint32_t j = 0; j < n_fl; j++)
                if (fl[j] != s)
                    fl[k++] = fl[j];
            n_fl = k;
        }
        if (lend <= 0)
            continue;
        /* per group, the lent time is spent once, in start order */
        for (uint32_t j = 0; j < n_fl; j++) {
            uint32_t gsz = v->group_size[fl[j]];
            int first = 1;
            for (uint32_t k = 0; k < j; k++)
                if (v->group_size[fl[k]] == gsz)
                    first = 0;
            if (!first || gsz == except)
                continue;
            double budget = lend;
            for (uint32_t k = j; k < n_fl && budget > 0; k++) {
                if (v->group_size[fl[k]] != gsz)
                    continue;
                double take = left[fl[k]] < budget ? left[fl[k]] : budget;
                left[fl[k]] -= take;
                budget -= take;
            }
        }
    }
    free(left);
    free(fl);
    return count;
}

/* Collective launches of the schedule: every start the schedule does not
 * bucket is one, every bucket id (sb_schedule.bucket, on starts) one more.
 * This is what the transcribed tests count: the collectives (or their waits)
 * left in the output graph after bucketing, e.g. check_count(
 * "all_gather_into_tensor", 1, exactly=True) for three bucketed all_gathers. */
static uint64_t schedule_launches(const struct sb_graph_view *v, const struct sb_schedule *s)
{
    uint64_t count = 0;
    uint32_t n = v->n_nodes;
    uint8_t *seen = sb_xcalloc((size_t)n + 1, 1); /* ids are at most n */
    for (uint32_t i = 0; i < n; i++) {
        if (v->kind[i] != SB_KIND_START)
            continue;
        uint32_t id = s->bucket ? s->bucket[i] : 0;
        if (!id || id > n)
            count++;
        else if (!seen[id])
            seen[id] = 1, count++;
    }
    free(seen);
    return count;
}

enum iverdict { IV_PASS, IV_FAIL, IV_SKIP };

static enum iverdict check_case(const struct sb_graph *g, const struct sb_schedule *s,
                                const struct icase *c, char *why, size_t n_why)
{
    const struct sb_graph_view *v = &g->v;
    uint32_t n = v->n_nodes;
    uint32_t *pos = sb_xmalloc((size_t)n * sizeof *pos);
    uint32_t p[ICASE_MAX_NAMES];
    enum iverdict r = IV_PASS;
    for (uint32_t i = 0; i < n; i++)
        pos[s->order[i]] = i;
    for (uint32_t k = 0; k < c->n_dir && r == IV_PASS; k++) {
        const struct idirective *d = &c->dir[k];
        switch (d->kind) {
        case I_ORDER:
            if (check_exact(v, s->order, d, why, n_why))
                r = IV_FAIL;
            break;
        case I_SUBSEQ:
        case I_BEFORE:
            if (positions(v, pos, d, p, why, n_why)) {
                r = IV_FAIL;
                break;
            }
            for (uint32_t j = 1; j < d->n_names && r == IV_PASS; j++)
                if (p[j - 1] >= p[j]) {
                    char a[128], b[128];
                    snprintf(why, n_why, "line %u: '%s' (position %u) is not before '%s' "
                                         "(position %u)", d->line,
                             shown(d->names[j - 1], a, sizeof a), p[j - 1],
                             shown(d->names[j], b, sizeof b), p[j]);
                    r = IV_FAIL;
                }
            break;
        case I_EXPOSED: {
            uint64_t got = exposed_count(v, s->order);
            if (got != d->n) {
                snprintf(why, n_why, "line %u: %llu collectives exposed, expected %llu",
                         d->line, (unsigned long long)got, (unsigned long long)d->n);
                r = IV_FAIL;
            }
            break;
        }
        case I_PEAK: {
            uint32_t at;
            uint64_t *mem = sb_xmalloc((size_t)n * sizeof *mem + 1);
            uint64_t got = sb_mem_profile(v, s->order, n, mem, &at);
            free(mem);
            if (got != d->n) {
                snprintf(why, n_why, "line %u: peak %llu bytes (at position %u), expected %llu",
                         d->line, (unsigned long long)got, at, (unsigned long long)d->n);
                r = IV_FAIL;
            }
            break;
        }
        case I_BUCKETS: {
            uint64_t got = schedule_launches(v, s);
            if (got != d->n) {
                snprintf(why, n_why, "line %u: %llu collective launches, expected %llu",
                         d->line, (unsigned long long)got, (unsigned long long)d->n);
                r = IV_FAIL;
            }
            break;
        }
        case I_COUNT:
            break;
        }
    }
    free(pos);
    return r;
}

/* The spec a case runs: its policy, with --param's KEY=VALUE added when the
 * policy is the one --param names. */
static void case_spec(const char *policy, const char *param, char *spec, size_t n)
{
    const char *colon = param ? strchr(param, ':') : NULL;
    size_t len = strcspn(policy, ":");
    snprintf(spec, n, "%s", policy);
    if (colon && (size_t)(colon - param) == len && !strncmp(policy, param, len))
        snprintf(spec + strlen(spec), n - strlen(spec), "%s%s", policy[len] ? "," : ":",
                 colon + 1);
}

static enum iverdict run_case(const char *dir, const char *name, const char *other,
                              const char *param, int *tier, char *why, size_t n_why,
                              int *bad_input)
{
    char path[4096];
    struct icase c;
    struct sb_err e;
    snprintf(path, sizeof path, "%s/%s.icase", dir, name);
    if (icase_read(path, &c, &e)) {
        fprintf(stderr, "schedbench conform: %s\n", e.msg);
        snprintf(why, n_why, "%s", e.msg);
        icase_free(&c);
        *bad_input = 1;
        return IV_FAIL;
    }
    *tier = c.tier;
    if (c.skip[0]) {
        snprintf(why, n_why, "%s", c.skip);
        icase_free(&c);
        return IV_SKIP;
    }
    snprintf(path, sizeof path, "%s/%s.csv", dir, name);
    struct sb_graph *g = sb_graph_load(path, &e);
    if (!g) {
        fprintf(stderr, "schedbench conform: %s\n", e.msg);
        snprintf(why, n_why, "%s", e.msg);
        icase_free(&c);
        *bad_input = 1;
        return IV_FAIL;
    }
    struct sb_cost_params cp;
    sb_cost_defaults(&cp);
    sb_cost_apply(&cp, g);
    struct sb_sched sched;
    struct sb_schedule s;
    enum iverdict r = IV_FAIL;
    char spec[2048];
    case_spec(c.policy, param, spec, sizeof spec);
    if (sb_sched_parse(&sched, other ? other : spec, &e)) {
        snprintf(why, n_why, "%s", e.msg);
    } else {
        sb_schedule_init(&s, g, 1);
        if (sb_sched_run(&sched, g, &s, &e) || sb_schedule_validate(&g->v, &s, &e))
            snprintf(why, n_why, "%s: %s", sched.spec, e.msg);
        else
            r = check_case(g, &s, &c, why, n_why);
        sb_schedule_free(&s);
        sb_sched_free(&sched);
    }
    sb_graph_free(g);
    icase_free(&c);
    return r;
}

int sb_conform_has_inductor_cases(const char *dir)
{
    return sb_paths_has_suffix(dir, ".icase");
}

int sb_conform_inductor(const char *dir, const char *only, const char *other,
                        const char *param)
{
    struct sb_paths w = {0};
    if (sb_paths_suffix(&w, dir, ".icase", 1)) {
        fprintf(stderr, "schedbench conform: %s: cannot open the folder\n", dir);
        return 2;
    }
    static const char *const label[] = {"PASS", "FAIL", "SKIP"};
    uint32_t counts[3] = {0}, by_tier[3][3] = {{0}};
    int bad_input = 0;
    for (uint32_t i = 0; i < w.n; i++) {
        char why[1024] = "";
        int tier = 0;
        if (only && strcmp(only, w.path[i]))
            continue;
        enum iverdict v =
            run_case(dir, w.path[i], other, param, &tier, why, sizeof why, &bad_input);
        counts[v]++;
        by_tier[tier == 1 ? 1 : tier == 2 ? 2 : 0][v]++;
        char name[256], msg[1024];
        printf("%s %s (tier %d)%s%s\n", label[v], shown(w.path[i], name, sizeof name), tier,
               why[0] ? ": " : "", shown(why, msg, sizeof msg));
    }
    sb_paths_free(&w);
    for (int t = 1; t <= 2; t++)
        printf("tier %d: %u passed, %u failed, %u skipped\n", t, by_tier[t][IV_PASS],
               by_tier[t][IV_FAIL], by_tier[t][IV_SKIP]);
    printf("inductor: %u passed, %u failed", counts[IV_PASS], counts[IV_FAIL]);
    if (counts[IV_SKIP])
        printf(", %u skipped", counts[IV_SKIP]);
    printf("\n");
    return bad_input ? 2 : counts[IV_FAIL] ? 1 : 0;
}
