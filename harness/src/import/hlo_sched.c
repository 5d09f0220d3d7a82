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
