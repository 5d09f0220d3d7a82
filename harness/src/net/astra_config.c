/* ASTRA-sim's configuration files for `--comm astra` and `collective`: the
 * system JSON (jansson) and the analytical network YAML (libyaml).  Keys we
 * model are read, keys ASTRA-sim has but we do not model are accepted and
 * listed in docs/astra.md, anything else is refused with file:line. */
#define _POSIX_C_SOURCE 200809L
#include "astra.h"
#include "core/num.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* jansson keeps no positions for values: the line of a key is found in the
 * text, which is enough to point a user at it. */
static unsigned line_of(const char *text, const char *key)
{
    char *pat = sb_strf("\"%s\"", key);
    const char *at = text ? strstr(text, pat) : NULL;
    free(pat);
    unsigned line = 1;
    for (const char *c = text; at && c < at; c++)
        line += *c == '\n';
    return line;
}

static int impl_list(json_t *v, struct sb_astra_config *c, int op, const char *path,
                     const char *text, const char *key, struct sb_err *e)
{
    if (!json_is_array(v) || !json_array_size(v) || json_array_size(v) > SB_ASTRA_MAX_DIMS)
        return sb_errf(e, "%s:%u: %s must be a list of 1..%d algorithms", path,
                       line_of(text, key), key, SB_ASTRA_MAX_DIMS);
    for (size_t d = 0; d < SB_ASTRA_MAX_DIMS; d++) {
        json_t *a = json_array_get(v, d < json_array_size(v) ? d : json_array_size(v) - 1);
        if (!json_is_string(a) || sb_astra_parse_algo(json_string_value(a), &c->algo[op][d]))
            return sb_errf(e, "%s:%u: %s: '%s' is not ring, direct, halvingDoubling or "
                              "doubleBinaryTree", path, line_of(text, key), key,
                           json_is_string(a) ? json_string_value(a) : "(not a string)");
    }
    return 0;
}

static int number(json_t *v, double lo, double hi, double *out)
{
    if (!json_is_number(v))
        return -1;
    *out = json_number_value(v);
    return *out >= lo && *out <= hi ? 0 : -1;
}

int sb_astra_load_system(const char *path, struct sb_astra_config *c, struct sb_err *e)
{
    static const char *const ignored[] = {"boost-mode", "roofline-enabled", "peak-perf",
                                          "local-reduction-delay", "trace-enabled",
                                          "replay-only", "track-local-mem", "L", "o", "g", "G"};
    static const char *const impl[4] = {"all-reduce-implementation", "all-gather-implementation",
                                        "reduce-scatter-implementation",
                                        "all-to-all-implementation"};
    size_t n;
    char *text = sb_read_file_limited(path, sb_max_input_bytes(), &n, e);
    if (!text)
        return -1;
    if (sb_check_nesting(path, text, n, 1, SB_MAX_NESTING, e)) {
        free(text);
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadb(text, n, 0, &je);
    if (!root) {
        free(text);
        return sb_errf(e, "%s:%d:%d: %s", path, je.line, je.column, je.text);
    }
    int rc = json_is_object(root) ? 0 : sb_errf(e, "%s:1: the system config is a JSON object", path);
    const char *key;
    json_t *v;
    json_object_foreach(root, key, v) {
        double x = 0;
        int op = -1;
        if (rc)
            break;
        for (int k = 0; k < 4; k++)
            if (!strcmp(key, impl[k]))
                op = k;
        if (op >= 0)
            rc = impl_list(v, c, op, path, text, key, e);
        else if (!strcmp(key, "scheduling-policy")) {
            const char *s = json_string_value(v);
            if (!s || (strcmp(s, "LIFO") && strcmp(s, "FIFO")))
                rc = sb_errf(e, "%s:%u: scheduling-policy is LIFO or FIFO", path, line_of(text, key));
            else
                c->lifo = !strcmp(s, "LIFO");
        } else if (!strcmp(key, "collective-optimization")) {
            const char *s = json_string_value(v);
            if (!s || (strcmp(s, "localBWAware") && strcmp(s, "baseline")))
                rc = sb_errf(e, "%s:%u: collective-optimization is localBWAware or baseline", path,
                             line_of(text, key));
            else
                c->local_bw_aware = !strcmp(s, "localBWAware");
        } else if (!strcmp(key, "endpoint-delay")) {
            rc = number(v, 0, 1e9, &c->endpoint_delay) ?
                 sb_errf(e, "%s:%u: endpoint-delay must be a number of ns", path, line_of(text, key)) : 0;
        } else if (!strcmp(key, "local-mem-bw")) {
            rc = number(v, SB_MIN_GBPS, SB_MAX_GBPS, &c->local_mem_bw) ?
                 sb_errf(e, "%s:%u: local-mem-bw must be a number of GB/s in 0.001..100000", path, line_of(text, key)) : 0;
        } else if (!strcmp(key, "active-chunks-per-dimension") || !strcmp(key, "preferred-dataset-splits")) {
            if (number(v, 1, 1 << 20, &x) || x != floor(x))
                rc = sb_errf(e, "%s:%u: %s must be a positive integer", path, line_of(text, key), key);
            else if (key[0] == 'a')
                c->active_chunks = (uint32_t)x;
            else
                c->splits = (uint32_t)x;
        } else {
            size_t k = 0;
            while (k < sizeof ignored / sizeof ignored[0] && strcmp(ignored[k], key))
                k++;
            if (k == sizeof ignored / sizeof ignored[0])
                rc = sb_errf(e, "%s:%u: unknown key '%s' (docs/astra.md lists the keys read)",
                             path, line_of(text, key), key);
        }
    }
    json_decref(root);
    free(text);
    return rc;
}

/* ---- network YAML ----------------------------------------------------------- */

static int yfail(const char *path, const yaml_node_t *n, const char *msg, struct sb_err *e)
{
    return sb_errf(e, "%s:%lu:%lu: %s", path, (unsigned long)n->start_mark.line + 1,
                   (unsigned long)n->start_mark.column + 1, msg);
}

/* The scalars of a list, kept as nodes (their text whole, however long, and
 * their line and column for messages). */
static int yaml_list(yaml_document_t *doc, yaml_node_t *v, const char *path,
                     yaml_node_t *out[SB_ASTRA_MAX_DIMS], uint32_t *n, struct sb_err *e)
{
    if (v->type != YAML_SEQUENCE_NODE)
        return yfail(path, v, "expected a list [ ... ]", e);
    *n = 0;
    for (yaml_node_item_t *i = v->data.sequence.items.start; i < v->data.sequence.items.top; i++) {
        yaml_node_t *x = yaml_document_get_node(doc, *i);
        if (!x || x->type != YAML_SCALAR_NODE || *n == SB_ASTRA_MAX_DIMS)
            return yfail(path, x ? x : v, "expected at most 8 values", e);
        out[(*n)++] = x;
    }
    return 0;
}

static const char *text_of(const yaml_node_t *x)
{
    return (const char *)x->data.scalar.value;
}

/* One dimension's value, read strictly within its range (core/num.h: the
 * same ceilings as a machine's links, so no time ASTRA-sim's model derives
 * is infinite). */
static int dim_value(const char *path, const yaml_node_t *x, uint32_t d, const char *what,
                     const char *range, double lo, double hi, int integer, double *out,
                     struct sb_err *e)
{
    const char *why;
    uint64_t u;
    int bad = integer ? sb_num_u64(text_of(x), (uint64_t)lo, (uint64_t)hi, &u, &why)
                      : sb_num_real(text_of(x), lo, hi, out, &why);
    if (bad) {
        char msg[300];
        snprintf(msg, sizeof msg, "dimension %u: %s '%.40s%s' is not %s (%s)", d + 1, what,
                 text_of(x), strlen(text_of(x)) > 40 ? "..." : "", range, why);
        return yfail(path, x, msg, e);
    }
    if (integer)
        *out = (double)u;
    return 0;
}

int sb_astra_load_network(const char *path, struct sb_astra_config *c, struct sb_err *e)
{
    size_t n;
    char *text = sb_read_file_limited(path, sb_max_input_bytes(), &n, e);
    if (!text)
        return -1;
    if (sb_check_nesting(path, text, n, 0, SB_MAX_NESTING, e)) {
        free(text);
        return -1;
    }
    yaml_parser_t p;
    yaml_document_t doc;
    yaml_parser_initialize(&p);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, n);
    int ok = yaml_parser_load(&p, &doc);
    free(text);
    if (!ok) {
        int rc = sb_errf(e, "%s:%lu:%lu: %s", path, (unsigned long)p.problem_mark.line + 1,
                         (unsigned long)p.problem_mark.column + 1, p.problem ? p.problem : "not YAML");
        yaml_parser_delete(&p);
        return rc;
    }
    yaml_parser_delete(&p);
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    int rc = 0;
    yaml_node_t *val[4][SB_ASTRA_MAX_DIMS];
    uint32_t cnt[4] = {0};
    static const char *const keys[4] = {"topology", "npus_count", "bandwidth", "latency"};
    if (!root || root->type != YAML_MAPPING_NODE)
        rc = sb_errf(e, "%s:1:1: a network is a map (topology, npus_count, bandwidth, latency)", path);
    for (yaml_node_pair_t *q = rc ? NULL : root->data.mapping.pairs.start;
         q && q < root->data.mapping.pairs.top && !rc; q++) {
        yaml_node_t *k = yaml_document_get_node(&doc, q->key), *v = yaml_document_get_node(&doc, q->value);
        const char *key = k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : "";
        int i = 0;
        while (i < 4 && strcmp(keys[i], key))
            i++;
        if (i == 4)
            rc = yfail(path, k, "unknown key (topology, npus_count, bandwidth, latency)", e);
        else
            rc = yaml_list(&doc, v, path, val[i], &cnt[i], e);
    }
    if (!rc && (!cnt[0] || cnt[0] != cnt[1] || cnt[0] != cnt[2] || cnt[0] != cnt[3]))
        rc = sb_errf(e, "%s: topology, npus_count, bandwidth and latency need one value per "
                        "dimension each", path);
    for (uint32_t d = 0; !rc && d < cnt[0]; d++) {
        double npus = 0;
        if (sb_astra_parse_topo(text_of(val[0][d]), &c->topo[d]))
            rc = sb_errf(e, "%s: dimension %u: topology '%s' is not Ring, FullyConnected or "
                            "Switch", path, d + 1, text_of(val[0][d]));
        else
            rc = dim_value(path, val[1][d], d, "npus_count", "an integer in 1..2^20", 1,
                           1 << 20, 1, &npus, e) ||
                 dim_value(path, val[2][d], d, "bandwidth", "a number of GB/s in "
                           "0.001..100000", SB_MIN_GBPS, SB_MAX_GBPS, 0, &c->bw_gbps[d], e) ||
                 dim_value(path, val[3][d], d, "latency", "a number of ns in 0..10^15", 0,
                           SB_MAX_TIME_US * 1e3, 0, &c->latency_ns[d], e);
        if (!rc) /* a refused count is never converted */
            c->npus[d] = (uint32_t)npus;
    }
    if (!rc)
        c->n_dims = cnt[0];
    yaml_document_delete(&doc);
    return rc;
}

/* ---- defaults, names and chunking: shared by every part of the model ---- */

void sb_astra_defaults(struct sb_astra_config *c)
{
    /* ASTRA-sim's tests/rt_template: Ring 8, 50 GB/s, 500 ns; LIFO,
     * endpoint-delay 10, one active chunk, 4 splits, ring, localBWAware, 50 */
    memset(c, 0, sizeof *c);
    c->n_dims = 1;
    c->topo[0] = SB_TOPO_RING;
    c->npus[0] = 8;
    c->bw_gbps[0] = 50;
    c->latency_ns[0] = 500;
    c->lifo = 1;
    c->endpoint_delay = 10;
    c->active_chunks = 1;
    c->splits = 4;
    c->local_bw_aware = 1;
    c->local_mem_bw = 50;
}

int sb_astra_parse_op(const char *s, enum sb_astra_op *out)
{
    static const char *const n[] = {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"};
    static const char *const u[] = {"ALL_REDUCE", "ALL_GATHER", "REDUCE_SCATTER", "ALL_TO_ALL"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, n[i]) || !strcmp(s, u[i]))
            return *out = (enum sb_astra_op)i, 0;
    return -1;
}

int sb_astra_parse_algo(const char *s, uint8_t *out)
{
    static const char *const n[] = {"ring", "direct", "halvingDoubling", "doubleBinaryTree"};
    for (int i = 0; i < 4; i++)
        if (!strcmp(s, n[i]))
            return *out = (uint8_t)i, 0;
    return -1;
}

int sb_astra_parse_topo(const char *s, uint8_t *out)
{
    static const char *const n[] = {"Ring", "FullyConnected", "Switch"};
    for (int i = 0; i < 3; i++)
        if (!strcmp(s, n[i]))
            return *out = (uint8_t)i, 0;
    return -1;
}

int sb_astra_chunking(const struct sb_astra_config *c, enum sb_astra_op op, uint64_t bytes,
                      uint64_t *chunk, uint64_t *chunks, struct sb_err *e)
{
    uint64_t N = 1;
    for (uint32_t i = 0; i < c->n_dims; i++)
        N *= c->npus[i];
    /* Sys::determine_chunk_size: every chunk has the full size */
    uint64_t size = bytes;
    *chunk = size / c->splits;
    if (op != SB_OP_ALL_GATHER && *chunk < N) {
        *chunk = N;
        size = (uint64_t)c->splits * N;
    }
    if (!*chunk)
        return sb_errf(e, "an all-gather of 0 bytes has no chunks: ASTRA-sim never completes it");
    *chunks = (size + *chunk - 1) / *chunk;
    if (*chunks > 1u << 20)
        return sb_errf(e, "%llu chunks: more than this model simulates",
                       (unsigned long long)*chunks);
    return 0;
}
