/* Chakra execution traces (.et): length-delimited protobuf messages, a
 * GlobalMetadata then one Node each (workloads/importers/chakra.md).
 *
 * Node types map onto ours: COMP, MEM_LOAD and MEM_STORE are compute nodes;
 * COMM_COLL, COMM_SEND and COMM_RECV become a start and a done, consumers
 * reading the done; METADATA and INVALID are nops.  Data and control
 * dependencies are both inputs.  A trace may list dependencies on later ids
 * and on nodes it does not contain: the graph is ordered topologically here,
 * dependencies on absent nodes are dropped with a warning that counts them,
 * and a cycle is refused.  Several rank files read as one job are at the
 * end of this file (sb_chakra_load_ranks).  --import astra=1 reads a trace
 * as ASTRA-sim c459ab6 does instead (the section "ASTRA-sim's reading"). */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

#include "core/builder.h"
#include "et_def.pb-c.h"

#include <jansson.h>

#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef ChakraProtoMsg__Node Node;

struct trace {
    const char *path;
    json_t *groups;    /* the group file's process groups, {"pg": [ranks]} (checked
                          by load_groups; not owned), NULL without one */
    const struct sb_import_opts *o;
    Node **node;
    uint32_t n, cap;
    uint32_t *order;   /* topological, preferring file order */
    uint64_t dropped;  /* dependencies on absent nodes */
    uint32_t ranks;    /* ranks of a collective that names no process group */
    uint32_t *stream;  /* [n] each node's stream (streams_of) */
    /* GPU storages from the tensor lists (storages_of), by trace node */
    struct use *use;   /* [n_use] sorted by (node, storage) */
    uint32_t n_use, *use_off; /* [n + 1] each trace node's uses */
    uint32_t *st_node; /* [n_st] graph node holding a storage's buffer, SB_NONE */
    uint64_t *st_bytes; /* [n_st] its size */
    uint32_t n_st;
    uint32_t n_no_group; /* such collectives */
    uint32_t n_no_group_untimed; /* of them, those without a recorded duration: only
                                  * their price depends on the ranks */
    int have_sizes;    /* some node carries tensor_size */
    /* several ranks (sb_chakra_load_ranks): node names start with pfx
     * ("r1/"), every node is pre-assigned to device (-1 and "" for one) */
    const char *pfx;
    int32_t device;
    uint32_t *last;    /* [n] the node consumers of trace node i read */
    uint32_t *stamp;   /* [n_st] storage_inputs' marks */
    const uint32_t *join_with; /* a joined collective's start joins this
                                  member's start (sb_builder_join), NULL none */
    const uint32_t *join_after; /* a joined collective's start waits for its
                                   rank's arrive nop (an after edge), NULL none */
    uint32_t last_start;       /* the start the last collective added */
    /* a job's rank whose file has the same bytes as an earlier rank's: that
     * rank, whose decoded nodes, order, dependencies and streams this one
     * reads and does not own (sb_chakra_load_ranks_mem); NULL for others */
    const struct trace *same;
    uint32_t n_streams; /* streams_of's count, for the ranks that share it */
};

/* One mention of a GPU storage in a node's tensor lists. */
struct use {
    uint32_t node;    /* trace node index */
    uint32_t st;      /* dense storage index (storage ids first, then this) */
    uint64_t id;      /* the storage id of the trace */
    uint64_t bytes;   /* (offset + num_elem) * elem_bytes: what it needs at least */
    uint8_t write;    /* in outputs */
    uint32_t k;       /* the node's position in the graph order */
};

/* ---- the job's files: rank numbers and the group file ---------------------
 *
 * A rank file is <head><rank><tail>: "dir/denseA." 0 ".et".  The rank is a
 * plain decimal, as ASTRA-sim prints it when it opens <prefix>.<rank>.et, so
 * "t.01.et" names no rank: a file spelled so beside a job is refused (it
 * would be read as no rank, or as the rank of another file), naming it and
 * the file of the same rank when there is one.  The group file is
 * <name>.json in the folder of the rank files, <name> the workload's name:
 * the file name without ".<rank>.et" (or without ".et" when it has no rank),
 * "my.model" for my.model.0.et. */

#define RANK_MAX_DIGITS 7 /* ranks below 2^20 (npus's ceiling) */

/* The rank of digits [s, s + n): 1 and *rank for a plain decimal, -1 for
 * digits with a leading zero ("01", "00"), 0 for anything else. */
static int rank_digits(const char *s, size_t n, uint32_t *rank)
{
    if (!n || n > RANK_MAX_DIGITS)
        return 0;
    uint32_t r = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        r = r * 10 + (uint32_t)(s[i] - '0');
    }
    if (n > 1 && s[0] == '0')
        return -1;
    *rank = r;
    return 1;
}

int sb_chakra_rank_name(const char *name, size_t *stem_len, uint32_t *rank)
{
    size_t n = strlen(name), d;
    if (n < 6 || strcmp(name + n - 3, ".et"))
        return 0;
    for (d = n - 3; d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9';) /* the rank's digits */
        d--;
    if (d < 2 || name[d - 1] != '.')
        return 0;
    uint32_t r = 0;
    int k = rank_digits(name + d, n - 3 - d, &r);
    if (k) {
        *stem_len = d - 1;
        *rank = r;
    }
    return k;
}

/* Refuses a file of the folder of head that is <head><digits><tail> with
 * the digits spelled with a leading zero.  Of several, the first by name, so
 * the message does not depend on the folder's order. */
static int check_rank_spelling(const char *head, const char *tail, struct sb_err *e)
{
    const char *slash = strrchr(head, '/');
    const char *pre = slash ? slash + 1 : head;
    size_t n_pre = strlen(pre), n_tail = strlen(tail);
    if (strchr(tail, '/')) /* the rank is in a folder's name: nothing to list */
        return 0;
    char *dir = slash ? sb_strf("%.*s", (int)(slash - head + 1), head) : sb_xstrdup("./");
    DIR *d = opendir(dir);
    char *bad = NULL;
    uint32_t bad_rank = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        size_t n = strlen(de->d_name);
        uint32_t r = 0;
        if (n <= n_pre + n_tail || strncmp(de->d_name, pre, n_pre) ||
            strcmp(de->d_name + n - n_tail, tail))
            continue;
        const char *digits = de->d_name + n_pre;
        size_t n_digits = n - n_pre - n_tail;
        if (strspn(digits, "0123456789") < n_digits || n_digits < 2 || digits[0] != '0')
            continue;
        if (!bad || strcmp(de->d_name, bad) < 0) {
            free(bad);
            bad = sb_xstrdup(de->d_name);
            /* its value, for the file of the same rank; past 2^20 none exists */
            size_t z = 0;
            while (z + 1 < n_digits && digits[z] == '0')
                z++;
            bad_rank = rank_digits(digits + z, n_digits - z, &r) == 1 ? r : UINT32_MAX;
        }
    }
    if (d)
        closedir(d);
    int rc = 0;
    if (bad) {
        const char *dpath = slash ? dir : "";
        char *plain = bad_rank != UINT32_MAX ? sb_strf("%s%s%u%s", dpath, pre, bad_rank, tail)
                                             : NULL;
        if (plain && access(plain, F_OK) == 0) /* two files for one rank */
            rc = sb_errf(e, "%s%s: names rank %u, as %s beside it does: the job %s%%d%s reads "
                            "its ranks in plain decimal, so a rank written with a leading "
                            "zero is refused (rename or remove it)", dpath, bad, bad_rank,
                         plain + strlen(dpath), head, tail);
        else
            rc = sb_errf(e, "%s%s: the rank '%.*s' is written with a leading zero, but the "
                            "job %s%%d%s reads its ranks in plain decimal, so this file "
                            "would be no rank of it (rename it)", dpath, bad,
                         (int)(strlen(bad) - n_pre - n_tail), bad + n_pre, head, tail);
        free(plain);
        free(bad);
    }
    free(dir);
    return rc ? -1 : 0;
}

/* The line of "key" in a JSON text (its first mention), 1 when not found. */
static unsigned json_key_line(const char *text, const char *key)
{
    char *pat = sb_strf("\"%s\"", key);
    const char *at = strstr(text, pat);
    free(pat);
    unsigned line = 1;
    for (const char *c = text; at && c < at; c++)
        line += *c == '\n';
    return line;
}

/* The process groups of the group file at path, when there is one (else
 * *out = NULL): a JSON object of {"NAME": [RANK, ...]}, every list non-empty,
 * of distinct integer ranks below n_ranks (what names the bound in
 * messages).  Anything else is refused with the file and its line. */
static int load_groups(const char *path, uint32_t n_ranks, const char *what, json_t **out,
                       struct sb_err *e)
{
    *out = NULL;
    if (access(path, F_OK) != 0)
        return 0;
    size_t n;
    char *text = sb_read_file_limited(path, sb_max_input_bytes(), &n, e);
    if (!text || sb_check_nesting(path, text, n, 1, SB_MAX_NESTING, e)) {
        free(text);
        return -1;
    }
    json_error_t je;
    json_t *root = json_loadb(text, n, JSON_REJECT_DUPLICATES, &je);
    int rc = 0;
    if (!root)
        rc = sb_errf(e, "%s:%d:%d: %s (a group file is a JSON object of process groups, "
                        "{\"NAME\": [RANK, ...]})", path, je.line, je.column, je.text);
    else if (!json_is_object(root))
        rc = sb_errf(e, "%s:1: a group file is a JSON object of process groups, {\"NAME\": "
                        "[RANK, ...]}, not a JSON %s", path,
                     json_is_array(root) ? "array" : json_is_string(root) ? "string"
                                                                          : "number or literal");
    uint8_t *seen = root ? sb_xcalloc((size_t)n_ranks + 1, 1) : NULL;
    const char *key;
    json_t *list;
    if (!rc)
        json_object_foreach(root, key, list) {
            unsigned line = json_key_line(text, key);
            if (!json_is_array(list)) {
                rc = sb_errf(e, "%s:%u: process group '%s' is not a list of ranks", path, line,
                             key);
                break;
            }
            if (!json_array_size(list)) {
                rc = sb_errf(e, "%s:%u: process group '%s' is an empty list of ranks", path,
                             line, key);
                break;
            }
            for (size_t i = 0; i < json_array_size(list) && !rc; i++) {
                json_t *x = json_array_get(list, i);
                json_int_t r = json_is_integer(x) ? json_integer_value(x) : -1;
                if (!json_is_integer(x))
                    rc = sb_errf(e, "%s:%u: process group '%s': entry %zu is not a rank (an "
                                    "integer)", path, line, key, i + 1);
                else if (r < 0 || r >= (json_int_t)n_ranks)
                    rc = sb_errf(e, "%s:%u: process group '%s' lists rank %" JSON_INTEGER_FORMAT
                                    ", but %s", path, line, key, r, what);
                else if (seen[r])
                    rc = sb_errf(e, "%s:%u: process group '%s' lists rank %" JSON_INTEGER_FORMAT
                                    " twice", path, line, key, r);
                else
                    seen[r] = 1;
            }
            for (size_t i = 0; i < json_array_size(list); i++) { /* unmark */
                json_t *x = json_array_get(list, i);
                json_int_t r = json_is_integer(x) ? json_integer_value(x) : -1;
                if (r >= 0 && r < (json_int_t)n_ranks)
                    seen[r] = 0;
            }
            if (rc)
                break;
        }
    free(seen);
    free(text);
    if (rc) {
        json_decref(root);
        return -1;
    }
    *out = root;
    return 0;
}

/* A single trace's job: the head of its rank files, "dir/t." when its name
 * is dir/t.<rank>.et (NULL when it is no rank file), and its group file.  A
 * rank written with a leading zero is refused. */
struct single_names {
    char *head, *group;
    uint32_t rank;
};

static int single_names(const char *path, struct single_names *s, struct sb_err *e)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t dir = (size_t)(base - path), stem = 0, n = strlen(base);
    int k = sb_chakra_rank_name(base, &stem, &s->rank);
    s->head = NULL;
    if (k < 0) { /* stem, digits with a leading zero */
        size_t d = n - 3;
        while (d > 0 && base[d - 1] >= '0' && base[d - 1] <= '9')
            d--;
        char *head = sb_strf("%.*s", (int)(dir + d), path);
        int rc = check_rank_spelling(head, ".et", e);
        free(head);
        SB_ASSERT(rc); /* the file itself is one */
        return -1;
    }
    if (k > 0) {
        s->head = sb_strf("%.*s", (int)(dir + stem + 1), path);
        if (check_rank_spelling(s->head, ".et", e)) {
            free(s->head);
            s->head = NULL;
            return -1;
        }
    } else {
        stem = n > 3 && !strcmp(base + n - 3, ".et") ? n - 3 : n;
    }
    s->group = sb_strf("%.*s.json", (int)(dir + stem), path);
    return 0;
}

/* "Every rank" of the job: --import npus=N, else the rank files beside the
 * trace (ASTRA-sim reads <prefix>.<rank>.et for rank 0, 1, ...), else 1. */
static uint32_t job_ranks(const struct trace *T, const char *head)
{
    if (T->o->npus_set)
        return T->o->npus;
    if (!head)
        return 1;
    uint32_t r = 0;
    for (; r < (1u << 20); r++) {
        char *f = sb_strf("%s%u.et", head, r);
        int there = access(f, F_OK) == 0;
        free(f);
        if (!there)
            break;
    }
    return r > 1 ? r : 1;
}

/* Ranks in the node's process group (pg_name); 0 when unknown.  Lists were
 * checked when the group file was read: distinct ranks, at least one. */
static int64_t group_size(const struct trace *T, const Node *x)
{
    const ChakraProtoMsg__AttributeProto *a = NULL;
    for (size_t i = 0; i < x->n_attr && !a; i++)
        if (!strcmp(x->attr[i]->name, "pg_name"))
            a = x->attr[i];
    if (!T->groups || !a || a->value_case != CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL ||
        !a->string_val)
        return 0;
    json_t *ranks = json_object_get(T->groups, a->string_val);
    return json_is_array(ranks) ? (int64_t)json_array_size(ranks) : 0;
}

/* ---- reading -------------------------------------------------------------- */

static int varint(const uint8_t *b, size_t n, size_t *at, uint64_t *out)
{
    uint64_t v = 0;
    for (int shift = 0; shift < 64 && *at < n; shift += 7) {
        uint8_t c = b[(*at)++];
        v |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int read_nodes(struct trace *T, const uint8_t *b, size_t n, struct sb_err *e)
{
    size_t at = 0;
    for (uint64_t k = 0; at < n; k++) {
        uint64_t len;
        size_t start = at;
        if (varint(b, n, &at, &len) || len > n - at)
            return sb_errf(e, "%s: message %" PRIu64 " at byte %zu: truncated length-delimited "
                              "record", T->path, k, start);
        if (k == 0) { /* the GlobalMetadata: only its presence matters */
            ChakraProtoMsg__GlobalMetadata *m =
                chakra_proto_msg__global_metadata__unpack(NULL, (size_t)len, b + at);
            if (!m)
                return sb_errf(e, "%s: message 0 at byte %zu: not a Chakra GlobalMetadata",
                               T->path, start);
            chakra_proto_msg__global_metadata__free_unpacked(m, NULL);
        } else {
            Node *x = chakra_proto_msg__node__unpack(NULL, (size_t)len, b + at);
            if (!x)
                return sb_errf(e, "%s: message %" PRIu64 " at byte %zu: not a Chakra Node",
                               T->path, k, start);
            if (T->n == T->cap) {
                T->cap = T->cap ? 2 * T->cap : 256;
                T->node = sb_xrealloc(T->node, T->cap * sizeof *T->node);
            }
            T->node[T->n++] = x;
        }
        at += (size_t)len;
    }
    if (!T->n)
        return sb_errf(e, "%s: no nodes after the metadata", T->path);
    return 0;
}

static const ChakraProtoMsg__AttributeProto *attr(const Node *x, const char *name)
{
    for (size_t i = 0; i < x->n_attr; i++)
        if (!strcmp(x->attr[i]->name, name))
            return x->attr[i];
    return NULL;
}

/* An integer attribute of any integer encoding; def when absent. */
static int64_t iattr(const Node *x, const char *name, int64_t def)
{
    const ChakraProtoMsg__AttributeProto *a = attr(x, name);
    if (!a)
        return def;
    switch (a->value_case) {
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT32_VAL: return a->int32_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_INT64_VAL: return a->int64_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT32_VAL: return a->uint32_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_UINT64_VAL:
        return a->uint64_val > INT64_MAX ? INT64_MAX : (int64_t)a->uint64_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT32_VAL: return a->sint32_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_SINT64_VAL: return a->sint64_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_BOOL_VAL: return a->bool_val;
    case CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_DOUBLE_VAL:
        return isfinite(a->double_val) && fabs(a->double_val) < 9e18 ? (int64_t)a->double_val : def;
    default: return def;
    }
}

/* ---- ordering ----------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_id(const void *a, const void *b)
{
    uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
    return x < y ? -1 : x > y;
}

/* Index of id among the nodes, by binary search over (id, index) pairs. */
static int64_t find(const uint64_t *pairs, uint32_t n, uint64_t id)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (pairs[2 * mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && pairs[2 * lo] == id ? (int64_t)pairs[2 * lo + 1] : -1;
}

/* deps[i]: resolved predecessor indices of node i (CSR). */
struct deps {
    uint32_t *off, *to;
};

static int resolve(struct trace *T, struct deps *D, struct sb_err *e)
{
    uint64_t *pairs = sb_xmalloc(((size_t)T->n * 2 + 1) * sizeof *pairs);
    for (uint32_t i = 0; i < T->n; i++)
        pairs[2 * i] = T->node[i]->id, pairs[2 * i + 1] = i;
    qsort(pairs, T->n, 2 * sizeof *pairs, cmp_id);
    for (uint32_t i = 1; i < T->n; i++)
        if (pairs[2 * i] == pairs[2 * i - 2]) {
            uint64_t id = pairs[2 * i];
            free(pairs);
            return sb_errf(e, "%s: node id %" PRIu64 " appears twice", T->path, id);
        }
    int ctrl = T->o->ctrl_deps;
    if (ctrl && T->o->astra) {
        free(pairs);
        return sb_errf(e, "%s: --import astra=1 follows data_deps only, as ASTRA-sim's Chakra "
                          "feeder does, so it does not go with ctrl_deps=1", T->path);
    }
    size_t total = 0;
    for (uint32_t i = 0; i < T->n; i++)
        total += T->node[i]->n_data_deps + (ctrl ? T->node[i]->n_ctrl_deps : 0);
    D->off = sb_xmalloc(((size_t)T->n + 1) * sizeof *D->off);
    D->to = sb_xmalloc((total + 1) * sizeof *D->to);
    /* seen[p] == i + 1: p is already an input of node i (a dependency listed
     * twice, or as data and control, counts once) */
    uint32_t *seen = sb_xcalloc((size_t)T->n + 1, sizeof *seen);
    uint32_t k = 0;
    int rc = 0;
    for (uint32_t i = 0; i < T->n && !rc; i++) {
        const Node *x = T->node[i];
        D->off[i] = k;
        size_t n_deps = x->n_data_deps + (ctrl ? x->n_ctrl_deps : 0);
        for (size_t j = 0; j < n_deps && !rc; j++) {
            int is_data = j < x->n_data_deps;
            uint64_t id = is_data ? x->data_deps[j] : x->ctrl_deps[j - x->n_data_deps];
            int64_t p = find(pairs, T->n, id);
            if ((uint32_t)p == i)
                rc = sb_errf(e, "%s: node id %" PRIu64 " '%s' depends on itself (%s_deps): a "
                                "cycle", T->path, x->id, x->name, is_data ? "data" : "ctrl");
            else if (p < 0 && !is_data)
                rc = sb_errf(e, "%s: node id %" PRIu64 " '%s': ctrl_deps names node id %" PRIu64
                                ", which the trace does not contain (Chakra's converters of "
                                "2023 wrote call-tree parents there; without --import "
                                "ctrl_deps=1 they are ignored)", T->path, x->id, x->name, id);
            else if (!is_data && (uint32_t)p > i)
                rc = sb_errf(e, "%s: node id %" PRIu64 " '%s': ctrl_deps names node id %" PRIu64
                                ", a later node of the trace (Chakra's converters of 2023 "
                                "wrote call-tree parents there; without --import ctrl_deps=1 "
                                "they are ignored)", T->path, x->id, x->name, id);
            else if (p < 0)
                T->dropped++;
            else if (seen[p] != i + 1) {
                seen[p] = i + 1;
                D->to[k++] = (uint32_t)p;
            }
        }
    }
    free(seen);
    if (rc) {
        D->off[T->n] = 0;
        free(pairs);
        return rc;
    }
    D->off[T->n] = k;
    free(pairs);
    return 0;
}

/* Kahn's algorithm, always taking the ready node earliest in the file, so a
 * trace already in order keeps it. */
static int topo(struct trace *T, const struct deps *D, struct sb_err *e)
{
    uint32_t n = T->n;
    T->order = sb_xmalloc((n + 1) * sizeof *T->order);
    uint32_t done = sb_topo_order(n, D->off, D->to, T->order);
    if (done == n)
        return 0;
    /* the first node left out is on or behind the cycle */
    uint8_t *placed = sb_xcalloc((size_t)n + 1, 1);
    for (uint32_t k = 0; k < done; k++)
        placed[T->order[k]] = 1;
    uint32_t stuck = 0;
    while (stuck < n && placed[stuck])
        stuck++;
    free(placed);
    return sb_errf(e, "%s: the dependencies form a cycle (node id %" PRIu64 " '%s' is on or "
                      "behind it; %u of %u nodes cannot be ordered)", T->path,
                   T->node[stuck]->id, T->node[stuck]->name, n - done, n);
}

/* ---- writing CSV v1 -------------------------------------------------------- */

static const char *coll_of(int64_t t)
{
    switch (t) {
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE:
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BARRIER: return "all_reduce";
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER:
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__GATHER:
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST: return "all_gather";
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER:
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER_BLOCK:
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE:
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__SCATTER: return "reduce_scatter";
    case CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL: return "all_to_all";
    default: return NULL;
    }
}

/* A compute node's time: its recorded duration, else a roofline of its
 * operations and bytes (symbolic traces carry no durations). */
static double compute_us(const struct trace *T, const Node *x)
{
    if (x->duration_micros)
        return (double)x->duration_micros;
    double ops = (double)iattr(x, "num_ops", 0), bytes = (double)iattr(x, "tensor_size", 0);
    double t_ops = ops > 0 ? ops / (T->o->peak_tflops * 1e6) : 0;
    double t_mem = bytes > 0 ? bytes / (T->o->mem_gbps * 1e3) : 0;
    return t_ops > t_mem ? t_ops : t_mem;
}

/* ---- ASTRA-sim's reading (--import astra=1; docs/ready.md) -----------------
 *
 * How ASTRA-sim c459ab6 (astra-sim/workload/Workload.cc, HardwareResource.cc)
 * with Chakra's ETFeeder at 214f2c5 (src/feeder/et_feeder.cpp) treats each
 * node: the feeder frees a node when its data_deps are done (ctrl_deps and
 * the tensor lists are not read); a rank runs one CPU op, one GPU kernel and
 * one GPU collective at a time, each in its own slot; Workload::issue sends
 * every is_cpu_op node, whatever its type, to issue_comp, as it does GPU
 * COMP nodes; a node of no duration and no num_ops is skipped (done at once,
 * no slot); one of no duration but num_ops takes 1 ns (issue_replay's floor,
 * roofline off as in the goldens' system.json); ALL_REDUCE, ALL_TO_ALL,
 * ALL_GATHER and REDUCE_SCATTER are priced by the network (generate_*),
 * BROADCAST keeps its recorded duration (1 ns when none), and no other
 * collective type is issued at all, so its rank would never finish: those
 * are refused, as is a GPU METADATA node, which issue() drops unfinished,
 * and MEM_LOAD/MEM_STORE, which go to a remote-memory backend not modelled
 * here. */

enum astra_role {
    ASTRA_SKIP,    /* done when ready, takes no slot */
    ASTRA_HOST,    /* CPU op: the rank's CPU slot */
    ASTRA_KERNEL,  /* GPU compute: the rank's GPU slot */
    ASTRA_COMM,    /* GPU collective or send/recv: the collective slot */
    ASTRA_REFUSED
};

static enum astra_role astra_role(const Node *x)
{
    int cpu = iattr(x, "is_cpu_op", 0) != 0, timed = x->duration_micros || iattr(x, "num_ops", 0);
    switch (x->type) {
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE: /* the remote-memory backend's */
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE: return ASTRA_REFUSED;
    case CHAKRA_PROTO_MSG__NODE_TYPE__INVALID_NODE: return cpu && timed ? ASTRA_HOST : ASTRA_SKIP;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE:
        return !timed ? ASTRA_SKIP : cpu ? ASTRA_HOST : ASTRA_KERNEL;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE:
        return !cpu ? ASTRA_COMM : timed ? ASTRA_HOST : ASTRA_SKIP;
    case CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE:
        return !cpu ? ASTRA_REFUSED : timed ? ASTRA_HOST : ASTRA_SKIP;
    default: return ASTRA_REFUSED;
    }
}

/* The collective types ASTRA-sim's system layer prices (Workload.cc,
 * issue_comm: generate_all_reduce, _all_to_all, _all_gather,
 * _reduce_scatter); BROADCAST is the one it times by the trace. */
static int astra_priced(int64_t t)
{
    return t == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_REDUCE ||
           t == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_TO_ALL ||
           t == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER ||
           t == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__REDUCE_SCATTER;
}

#define ASTRA_FLOOR_US 0.001 /* issue_replay: a node of no runtime takes 1 ns */

/* A refusal of node x under astra=1, naming why ASTRA-sim cannot run it;
 * 0 when it can. */
static int astra_check(const struct trace *T, const Node *x, struct sb_err *e)
{
    enum astra_role r = astra_role(x);
    int mem = x->type == CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE ||
              x->type == CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE;
    if (r == ASTRA_REFUSED && mem)
        return sb_errf(e, "%s: node id %" PRIu64 " '%s': under --import astra=1, a memory "
                          "load or store goes to ASTRA-sim's remote-memory backend "
                          "(Workload::issue_remote_mem), which this reading does not model",
                       T->path, x->id, x->name);
    if (r == ASTRA_REFUSED)
        return sb_errf(e, "%s: node id %" PRIu64 " '%s': under --import astra=1, a node of "
                          "type %d (METADATA or unknown) on the GPU is never issued by "
                          "ASTRA-sim's workload layer (Workload::issue has no case for it), "
                          "so its rank would not finish", T->path, x->id, x->name,
                       (int)x->type);
    int64_t t = iattr(x, "comm_type", -1);
    if (r == ASTRA_COMM && x->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE &&
        attr(x, "comm_type") && !astra_priced(t) &&
        t != CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST) {
        const ProtobufCEnumValue *v =
            t >= INT32_MIN && t <= INT32_MAX
                ? protobuf_c_enum_descriptor_get_value(
                      &chakra_proto_msg__collective_comm_type__descriptor, (int)t)
                : NULL;
        return sb_errf(e, "%s: node id %" PRIu64 " '%s': under --import astra=1, a %s "
                          "collective is never issued by ASTRA-sim c459ab6 (Workload::"
                          "issue_comm prices ALL_REDUCE, ALL_TO_ALL, ALL_GATHER and "
                          "REDUCE_SCATTER and times BROADCAST; nothing else), so its rank "
                          "would not finish", T->path, x->id, x->name,
                       v ? v->name : "an unknown");
    }
    return 0;
}

/* Streams under astra=1: the CPU slot, the GPU slot and the collective slot,
 * numbered densely in that order among those the trace uses. */
static uint32_t streams_astra(struct trace *T)
{
    uint32_t used[3] = {0}, id[3], m = 0;
    uint8_t *slot = sb_xmalloc((size_t)T->n + 1);
    for (uint32_t i = 0; i < T->n; i++) {
        enum astra_role r = astra_role(T->node[i]);
        slot[i] = r == ASTRA_HOST ? 0 : r == ASTRA_COMM ? 2 : 1;
        used[slot[i]] |= r != ASTRA_SKIP;
    }
    for (uint32_t k = 0; k < 3; k++)
        id[k] = used[k] ? m++ : (m ? m - 1 : 0);
    for (uint32_t i = 0; i < T->n; i++)
        T->stream[i] = id[slot[i]];
    free(slot);
    return m > 1 ? m : 1;
}

/* Times kept to the picosecond (10^-6 us), as the format v1 files this
 * importer once wrote carried them, so results do not move with the path. */
static double us_to_ps(double us) { return nearbyint(us * 1e6) / 1e6; }

static int add_inputs(struct sb_builder *b, const struct deps *D, uint32_t i,
                      const uint32_t *last)
{
    for (uint32_t q = D->off[i]; q < D->off[i + 1]; q++)
        if (sb_builder_input(b, last[D->to[q]]))
            return -1;
    return 0;
}

/* A collective or point-to-point node: a start reading its dependencies and
 * a done its consumers read.  Returns the done, SB_NONE on error. */
static int storage_inputs(struct trace *T, struct sb_builder *b, uint32_t k, uint32_t *stamp,
                          uint32_t stamp_v);

static uint32_t add_comm(struct trace *T, struct sb_builder *b, const struct deps *D,
                         uint32_t i, const uint32_t *last, uint32_t k, uint32_t *stamp,
                         struct sb_err *e)
{
    const Node *x = T->node[i];
    const char *coll = x->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE ? "send"
                       : x->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE
                           ? "recv" : coll_of(iattr(x, "comm_type", -1));
    if (!coll) {
        sb_errf(e, "%s: node id %" PRIu64 " '%s': comm_type %" PRId64 " is not a Chakra "
                   "collective", T->path, x->id, x->name, iattr(x, "comm_type", -1));
        return SB_NONE;
    }
    int64_t size = iattr(x, "comm_size", -1), group = group_size(T, x);
    if (size < 0) {
        sb_errf(e, "%s: node id %" PRIu64 " '%s': a communication node without a comm_size",
                T->path, x->id, x->name);
        return SB_NONE;
    }
    if (group <= 0 && x->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE) {
        group = T->ranks; /* no process group: ASTRA-sim runs it over every rank */
        T->n_no_group++;
        /* astra=1 prices from bytes all but a BROADCAST (astra_priced) */
        T->n_no_group_untimed +=
            !x->duration_micros ||
            (T->o->astra && astra_priced(iattr(x, "comm_type", -1)));
    }
    if (group >= UINT32_MAX)
        group = 0;
    /* ASTRA-sim reads an all-gather's comm_size as each rank's input; ours
     * is the gathered result (docs/workload-format.md) */
    if (iattr(x, "comm_type", -1) == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__ALL_GATHER &&
        group > 1) {
        if ((uint64_t)size > SB_MAX_BYTES / (uint64_t)group) {
            sb_errf(e, "%s: node id %" PRIu64 " '%s': an all-gather of %" PRId64 " bytes per "
                       "rank over %" PRId64 " ranks is above 2^50 bytes", T->path, x->id,
                    x->name, size, group);
            return SB_NONE;
        }
        size *= group;
    }
    int64_t bytes = iattr(x, "tensor_size", 0);
    char *name = sb_strf("%s%s#%" PRIu64, T->pfx, x->name, x->id); /* names repeat; ids do not */
    struct sb_node_in n = SB_NODE_IN_INIT;
    n.device = T->device;
    n.name = name;
    n.kind = SB_KIND_START;
    SB_ASSERT(sb_coll_parse(coll, &n.coll) == 0);
    n.out_bytes = bytes > 0 && !T->n_st ? (uint64_t)bytes : 0;
    n.comm_bytes = (uint64_t)size;
    n.group_size = group > 1 ? (uint32_t)group : 0;
    n.comm_us = x->duration_micros ? (double)x->duration_micros : -1;
    int bcast = x->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE &&
                iattr(x, "comm_type", -1) == CHAKRA_PROTO_MSG__COLLECTIVE_COMM_TYPE__BROADCAST;
    if (T->o->astra) /* the network prices all but a BROADCAST (astra_priced) */
        n.comm_us = !bcast ? -1 : x->duration_micros ? (double)x->duration_micros : ASTRA_FLOOR_US;
    n.loc = x->id;
    n.stream = T->stream[i];
    uint32_t s = sb_builder_node(b, &n);
    free(name);
    if (s == SB_NONE || add_inputs(b, D, i, last) || storage_inputs(T, b, k, stamp, s + 1))
        return SB_NONE;
    if (T->join_with && sb_builder_join(b, *T->join_with))
        return SB_NONE;
    if (T->join_after && sb_builder_after(b, *T->join_after))
        return SB_NONE;
    T->last_start = s;
    name = sb_strf("%s%s#%" PRIu64 ".done", T->pfx, x->name, x->id);
    struct sb_node_in d = SB_NODE_IN_INIT;
    d.device = T->device;
    d.name = name;
    d.kind = SB_KIND_DONE;
    d.coll = n.coll;
    d.loc = x->id;
    d.stream = T->stream[i];
    uint32_t id = sb_builder_node(b, &d);
    free(name);
    if (id == SB_NONE || sb_builder_input(b, s))
        return SB_NONE;
    return id;
}

/* A compute or order-only node; SB_NONE on error. */
static uint32_t add_plain(struct trace *T, struct sb_builder *b, const struct deps *D,
                          uint32_t i, const uint32_t *last, enum sb_kind kind)
{
    const Node *x = T->node[i];
    int64_t bytes = iattr(x, "tensor_size", 0);
    char *name = sb_strf("%s%s#%" PRIu64, T->pfx, x->name, x->id);
    struct sb_node_in n = SB_NODE_IN_INIT;
    n.device = T->device;
    n.name = name;
    n.kind = kind;
    n.loc = x->id;
    n.stream = T->stream[i];
    if (kind == SB_KIND_COMPUTE) {
        /* a CPU op is "host": not device compute (astra_exposed_us) */
        int cpu = iattr(x, "is_cpu_op", 0) != 0;
        n.op = x->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE   ? (cpu ? "host" : "comp")
               : x->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE ? "comm_host"
                                                                          : "mem";
        n.cost_us = us_to_ps(compute_us(T, x));
        if (T->o->astra) { /* recorded, else issue_replay's 1 ns */
            n.op = astra_role(x) == ASTRA_HOST ? "host" : n.op;
            n.cost_us = x->duration_micros ? (double)x->duration_micros : ASTRA_FLOOR_US;
        }
        n.out_bytes = bytes > 0 && !T->n_st ? (uint64_t)bytes : 0;
    }
    uint32_t id = sb_builder_node(b, &n);
    free(name);
    return id == SB_NONE || add_inputs(b, D, i, last) ? SB_NONE : id;
}

/* Each "[tensor_id, storage_id, offset, num_elem, elem_bytes, 'device']" of
 * an IOInfo values string (a Python literal of nested lists) on a GPU
 * ('cuda...'), appended to *u.  Anything else in the string is skipped. */
static void scan_tensors(const char *s, uint32_t node, uint8_t write, struct use **u,
                         uint32_t *n, uint32_t *cap)
{
    for (; s && (s = strchr(s, '[')); s++) {
        uint64_t f[5];
        const char *p = s + 1;
        int ok = 1;
        for (int i = 0; i < 5 && ok; i++) {
            while (*p == ' ')
                p++;
            if (*p < '0' || *p > '9')
                ok = 0;
            for (f[i] = 0; ok && *p >= '0' && *p <= '9'; p++)
                f[i] = f[i] > UINT64_MAX / 16 ? UINT64_MAX / 16 : f[i] * 10 + (uint64_t)(*p - '0');
            while (ok && *p == ' ')
                p++;
            ok = ok && *p++ == ',';
        }
        while (ok && *p == ' ')
            p++;
        if (!ok || (*p != '\'' && *p != '"') || strncmp(p + 1, "cuda", 4))
            continue;
        /* sizes past 2^50 are refused by the builder: saturate, do not wrap */
        uint64_t el = f[2] + f[3] < f[2] ? UINT64_MAX : f[2] + f[3];
        uint64_t bytes = f[4] && el > (1ull << 52) / f[4] ? (1ull << 52) : el * f[4];
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 256;
            *u = sb_xrealloc(*u, *cap * sizeof **u);
        }
        (*u)[(*n)++] = (struct use){node, 0, f[1], bytes, write, 0};
    }
}

static int cmp_use_id(const void *a, const void *b)
{
    const struct use *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    return (int)x->write - (int)y->write; /* a node's read before its write */
}

static int cmp_use_node(const void *a, const void *b)
{
    const struct use *x = a, *y = b;
    if (x->k != y->k)
        return x->k < y->k ? -1 : 1;
    if (x->st != y->st)
        return x->st < y->st ? -1 : 1;
    return (int)x->write - (int)y->write; /* a node's read before its write */
}

/* Memory from the tensor lists (storage level, so views of one storage do
 * not count twice): pass 1 collects each node's GPU storages; pass 2 numbers
 * the storages, each sized by the largest extent any mention needs; pass 3
 * orders the mentions by graph position.  Returns the storage count. */
static uint32_t storages_of(struct trace *T)
{
    uint32_t cap = 0, *pos = sb_xmalloc(((size_t)T->n + 1) * sizeof *pos);
    for (uint32_t k = 0; k < T->n; k++)
        pos[T->order[k]] = k;
    for (uint32_t i = 0; i < T->n; i++) { /* pass 1 */
        const Node *x = T->node[i];
        scan_tensors(x->inputs ? x->inputs->values : NULL, i, 0, &T->use, &T->n_use, &cap);
        scan_tensors(x->outputs ? x->outputs->values : NULL, i, 1, &T->use, &T->n_use, &cap);
    }
    for (uint32_t u = 0; u < T->n_use; u++)
        T->use[u].k = pos[T->use[u].node];
    if (T->n_use) /* qsort takes no NULL, even for nothing */
        qsort(T->use, T->n_use, sizeof *T->use, cmp_use_id); /* pass 2 */
    T->st_bytes = sb_xmalloc(((size_t)T->n_use + 1) * sizeof *T->st_bytes);
    for (uint32_t u = 0; u < T->n_use; u++) {
        if (!u || T->use[u].id != T->use[u - 1].id)
            T->st_bytes[T->n_st++] = 0;
        T->use[u].st = T->n_st - 1;
        if (T->use[u].bytes > T->st_bytes[T->n_st - 1])
            T->st_bytes[T->n_st - 1] = T->use[u].bytes;
    }
    T->st_node = sb_xmalloc(((size_t)T->n_st + 1) * sizeof *T->st_node);
    for (uint32_t s = 0; s < T->n_st; s++)
        T->st_node[s] = SB_NONE;
    if (T->n_use)
        qsort(T->use, T->n_use, sizeof *T->use, cmp_use_node); /* pass 3 */
    T->use_off = sb_xcalloc((size_t)T->n + 2, sizeof *T->use_off);
    for (uint32_t u = 0; u < T->n_use; u++)
        T->use_off[T->use[u].k + 1]++;
    for (uint32_t k = 0; k < T->n; k++)
        T->use_off[k + 1] += T->use_off[k];
    free(pos);
    return T->n_st;
}

/* The storages graph node `at` (trace node at order position k) reads or
 * writes become its inputs: a storage first met here and only written gets
 * its buffer now, a nop right after the node (the writer allocates it); one
 * first met as a read existed before the step and is an input node pinned
 * for the whole step (parameters, optimizer state) -- made up front by
 * add_preexisting.  Called once the node's own inputs are in. */
static int storage_inputs(struct trace *T, struct sb_builder *b, uint32_t k, uint32_t *stamp,
                          uint32_t stamp_v)
{
    if (!T->use_off) /* astra=1 reads no tensor lists */
        return 0;
    for (uint32_t u = T->use_off[k]; u < T->use_off[k + 1]; u++) {
        uint32_t s = T->use[u].st;
        if (T->st_node[s] == SB_NONE || stamp[s] == stamp_v)
            continue;
        stamp[s] = stamp_v;
        if (sb_builder_input(b, T->st_node[s]))
            return -1;
    }
    return 0;
}

static int storage_alloc(struct trace *T, struct sb_builder *b, uint32_t k, uint32_t writer)
{
    for (uint32_t u = T->use_off[k]; u < T->use_off[k + 1]; u++) {
        uint32_t s = T->use[u].st;
        if (T->st_node[s] != SB_NONE || !T->use[u].write)
            continue;
        char *name = sb_strf("%sstorage#%" PRIu64, T->pfx, T->use[u].id);
        struct sb_node_in n = SB_NODE_IN_INIT;
        n.device = T->device;
        n.name = name;
        n.kind = SB_KIND_NOP;
        n.op = "alloc";
        n.out_bytes = T->st_bytes[s];
        n.loc = T->node[T->use[u].node]->id;
        n.stream = T->stream[T->use[u].node];
        T->st_node[s] = sb_builder_node(b, &n);
        free(name);
        if (T->st_node[s] == SB_NONE || sb_builder_input(b, writer))
            return -1;
    }
    return 0;
}

/* Storages read before any node writes them: inputs, pinned. */
static int add_preexisting(struct trace *T, struct sb_builder *b)
{
    uint8_t *seen = sb_xcalloc((size_t)T->n_st + 1, 1);
    int rc = 0;
    for (uint32_t u = 0; u < T->n_use && !rc; u++) {
        uint32_t s = T->use[u].st;
        if (seen[s])
            continue;
        seen[s] = 1;
        /* the first mention (mentions are by position, a node's read first) */
        if (T->use[u].write)
            continue;
        char *name = sb_strf("%sstorage#%" PRIu64, T->pfx, T->use[u].id);
        struct sb_node_in n = SB_NODE_IN_INIT;
        n.device = T->device;
        n.name = name;
        n.kind = SB_KIND_INPUT;
        n.op = "storage";
        n.out_bytes = T->st_bytes[s];
        n.flags = SB_FLAG_WEIGHT;
        n.loc = T->node[T->use[u].node]->id;
        T->st_node[s] = sb_builder_node(b, &n);
        free(name);
        rc = T->st_node[s] == SB_NONE;
    }
    free(seen);
    return rc ? -1 : 0;
}

/* Where each node ran, as the trace says (is_cpu_op, tid): a stream per CPU
 * thread, then a stream per GPU stream, in increasing tid.  A GPU
 * collective is issued and waited on the GPU compute stream that runs the
 * most kernels (PyTorch waits on an NCCL kernel's event there); the NCCL
 * stream itself is the run's collective resource.  Without tids, or with
 * --import streams=0, everything is stream 0.  Returns the stream count. */
static uint32_t streams_of(struct trace *T)
{
    uint32_t n = T->n, n_keys = 0;
    T->stream = sb_xcalloc((size_t)n + 1, sizeof *T->stream);
    if (T->o->astra)
        return streams_astra(T);
    if (!T->o->streams)
        return 1;
    int64_t *key = sb_xmalloc(((size_t)n + 1) * sizeof *key);
    /* key: CPU tids as -1 - tid (sorted first), GPU tids as tid */
    for (uint32_t i = 0; i < n; i++) {
        const Node *x = T->node[i];
        int64_t tid = iattr(x, "tid", -1);
        key[i] = tid < 0 ? INT64_MIN : iattr(x, "is_cpu_op", 0) ? -1 - tid : tid;
    }
    /* the GPU stream with the most kernels: sort the kernels' keys, count runs */
    int64_t *sorted = sb_xmalloc(((size_t)n + 1) * sizeof *sorted), main_gpu = INT64_MIN;
    for (uint32_t i = 0; i < n; i++)
        if (T->node[i]->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE && key[i] >= 0)
            sorted[n_keys++] = key[i];
    if (n_keys)
        qsort(sorted, n_keys, sizeof *sorted, cmp_i64);
    for (uint32_t i = 0, best = 0, run = 0; i < n_keys; i++) {
        run = i && sorted[i] == sorted[i - 1] ? run + 1 : 1;
        if (run > best) /* ties keep the smaller tid: sorted ascending */
            best = run, main_gpu = sorted[i];
    }
    n_keys = 0;
    for (uint32_t i = 0; i < n; i++)
        if (T->node[i]->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE && key[i] >= 0 &&
            main_gpu != INT64_MIN)
            key[i] = main_gpu;
    /* dense ids in key order */
    for (uint32_t i = 0; i < n; i++)
        if (key[i] != INT64_MIN)
            sorted[n_keys++] = key[i];
    if (n_keys)
        qsort(sorted, n_keys, sizeof *sorted, cmp_i64);
    uint32_t m = 0;
    for (uint32_t i = 0; i < n_keys; i++)
        if (!m || sorted[i] != sorted[m - 1])
            sorted[m++] = sorted[i];
    for (uint32_t i = 0; i < n && m; i++) {
        if (key[i] == INT64_MIN)
            continue;
        uint32_t lo = 0, hi = m;
        while (lo + 1 < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (sorted[mid] <= key[i])
                lo = mid;
            else
                hi = mid;
        }
        T->stream[i] = lo;
    }
    free(key);
    free(sorted);
    return m > 1 ? m : 1;
}

/* What building needs of a trace once its order is final: its storages,
 * whether it has sizes, its streams (returned), the last[] and stamp[]
 * arrays. */
static uint32_t prepare(struct trace *T)
{
    /* memory: the tensor lists' GPU storages when the trace has them, else
     * each node's tensor_size (the storages' buffer nodes are each rank's
     * own, so a rank that shares its nodes still numbers its storages) */
    T->have_sizes = !T->o->astra && storages_of(T) > 0; /* astra=1: no tensor lists */
    if (T->same) { /* the same bytes: the same sizes and streams */
        T->have_sizes |= T->same->have_sizes;
        T->stream = T->same->stream;
        T->n_streams = T->same->n_streams;
    } else {
        for (uint32_t i = 0; i < T->n && !T->have_sizes; i++)
            T->have_sizes |= attr(T->node[i], "tensor_size") != NULL;
        T->n_streams = streams_of(T);
    }
    T->last = sb_xmalloc((T->n + 1) * sizeof *T->last);
    T->stamp = sb_xcalloc((size_t)T->n_st + 1, sizeof *T->stamp);
    return T->n_streams;
}

static void meta_u32(struct sb_builder *b, const char *key, uint32_t v)
{
    char s[16];
    snprintf(s, sizeof s, "%u", v);
    sb_builder_meta(b, key, s);
}

/* The graph nodes of trace node T->order[k]; -1 on error. */
static int node_at(struct trace *T, struct sb_builder *b, const struct deps *D, uint32_t k,
                   struct sb_err *e)
{
    uint32_t i = T->order[k], *last = T->last;
    const Node *x = T->node[i];
    int comm = 0;
    if (T->o->astra) {
        enum astra_role r = astra_role(x);
        if (astra_check(T, x, e))
            return -1;
        if (r == ASTRA_COMM)
            last[i] = add_comm(T, b, D, i, last, k, T->stamp, e);
        else
            last[i] = add_plain(T, b, D, i, last, r == ASTRA_SKIP ? SB_KIND_NOP : SB_KIND_COMPUTE);
        return last[i] == SB_NONE ? -1 : 0;
    }
    switch (x->type) {
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE:
        /* the host side of a collective (c10d::allreduce_ on a CPU thread)
         * carries no comm_type: ASTRA-sim replays it as host compute for
         * its duration */
        if (iattr(x, "is_cpu_op", 0) && !attr(x, "comm_type"))
            last[i] = add_plain(T, b, D, i, last, SB_KIND_COMPUTE);
        else
            last[i] = add_comm(T, b, D, i, last, k, T->stamp, e), comm = 1;
        break;
    case CHAKRA_PROTO_MSG__NODE_TYPE__COMP_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_LOAD_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__MEM_STORE_NODE:
        last[i] = add_plain(T, b, D, i, last, SB_KIND_COMPUTE);
        break;
    case CHAKRA_PROTO_MSG__NODE_TYPE__METADATA_NODE:
    case CHAKRA_PROTO_MSG__NODE_TYPE__INVALID_NODE: /* order only */
        last[i] = add_plain(T, b, D, i, last, SB_KIND_NOP);
        break;
    default:
        sb_errf(e, "%s: node id %" PRIu64 " '%s': unknown node type %d", T->path, x->id,
                x->name, (int)x->type);
        last[i] = SB_NONE;
    }
    if (last[i] == SB_NONE)
        return -1;
    /* a collective reads its storages on its start (add_comm); every
     * other node here, then the storages it is first to write */
    if (T->n_st && ((!comm && storage_inputs(T, b, k, T->stamp, last[i] + 1)) ||
                    storage_alloc(T, b, k, last[i])))
        return -1;
    return 0;
}

static struct sb_graph *build(struct trace *T, const struct deps *D, struct sb_err *e)
{
    struct sb_builder *b = sb_builder_new(T->path, SB_LOC_NODE_ID, e);
    sb_builder_reserve(b, T->n + T->n / 4 + 16, D->off[T->n], 0);
    uint32_t n_streams = prepare(T);
    sb_builder_meta(b, "source", "chakra");
    if (n_streams > 1)
        meta_u32(b, "streams", n_streams);
    if (!T->have_sizes)
        sb_builder_meta(b, "tensor_sizes", "none");
    int rc = add_preexisting(T, b);
    for (uint32_t k = 0; k < T->n && !rc; k++)
        rc = node_at(T, b, D, k, e);
    if (rc) {
        sb_builder_free(b);
        return NULL;
    }
    return sb_builder_finish(b);
}

static void trace_free(struct trace *T, struct deps *D)
{
    free(T->last), free(T->stamp);
    free(T->use), free(T->use_off), free(T->st_node), free(T->st_bytes);
    if (T->same) /* its nodes, order, dependencies and streams are T->same's */
        return;
    free(D->off), free(D->to);
    for (uint32_t i = 0; i < T->n; i++)
        chakra_proto_msg__node__free_unpacked(T->node[i], NULL);
    free(T->node), free(T->order), free(T->stream);
}

struct sb_graph *sb_chakra_load_mem(const char *path, const uint8_t *buf, size_t n,
                                    const struct sb_import_opts *o, struct sb_err *e)
{
    struct trace T = {.path = path, .o = o, .pfx = "", .device = -1};
    struct deps D = {0};
    struct sb_graph *g = NULL;
    struct single_names names = {0};
    if (single_names(path, &names, e))
        return NULL;
    T.ranks = job_ranks(&T, names.head);
    /* the group file's ranks: the job's when known, else below npus's ceiling */
    uint32_t n_ranks = o->npus_set || T.ranks > 1 ? T.ranks : 1u << 20;
    char *what = o->npus_set ? sb_strf("--import npus=%u makes the ranks 0..%u", T.ranks,
                                       T.ranks - 1)
                 : T.ranks > 1 ? sb_strf("the job has the %u ranks %s0.et .. %s%u.et", T.ranks,
                                         names.head, names.head, T.ranks - 1)
                               : sb_strf("a rank is below 2^20");
    if (!read_nodes(&T, buf, n, e) && !resolve(&T, &D, e) && !topo(&T, &D, e) &&
        !load_groups(names.group, n_ranks, what, &T.groups, e)) {
        g = build(&T, &D, e);
        /* a recorded duration is the collective's time whatever its ranks, so
         * npus would change nothing: warn only about those priced from bytes */
        if (g && T.n_no_group_untimed && T.ranks == 1)
            fprintf(stderr, "schedbench: warning: %s: %u collectives have no process group "
                            "(no pg_name, or no <name>.json beside the trace) and no recorded "
                            "duration (or, under --import astra=1, are priced by the network "
                            "whatever they record), so they are priced over every rank; no "
                            "other rank files are beside it, so that is 1 rank (give --import "
                            "npus=N)\n",
                    path, T.n_no_group_untimed);
        if (g && T.dropped)
            fprintf(stderr, "schedbench: warning: %s: dropped %" PRIu64 " dependencies on nodes "
                            "the trace does not contain\n", path, T.dropped);
    }
    trace_free(&T, &D);
    if (T.groups)
        json_decref(T.groups);
    free(names.head), free(names.group), free(what);
    return g;
}

/* ---- several ranks (workloads/importers/chakra.md, "Several ranks") --------
 *
 * `-w trace.%d.et` loads trace.0.et, trace.1.et, ... (every file present from
 * 0 upward) as one job: rank r's nodes on device r, named "r<r>/...".  The
 * k-th collective of process group G on every rank of G is one collective:
 * on each rank an arrive nop waits (after edges) for the collective's
 * dependencies, the rank's start waits for its own arrive and joins the
 * other ranks' starts (sb_builder_join: the simulator begins it once every
 * member has issued), and a leave nop (an alias of the done, which
 * consumers read) waits for the rank's done.  The ranks' traces are merged
 * in one topological order that keeps each rank's own order and puts every
 * start after every member's arrive, by the units below. */

enum unit_part { UNIT_PLAIN, UNIT_ARRIVE, UNIT_COLL, UNIT_LEAVE };

struct job {
    uint32_t n;        /* ranks */
    struct trace *T;   /* [n] */
    struct deps *D;    /* [n] */
    char **path;       /* [n] the rank files */
    /* process groups: names (owned by the nodes), members, and each member's
     * collectives of the group in its trace order */
    uint32_t n_grp;
    const char **grp;
    uint8_t *member;   /* [n_grp * n] */
    uint32_t **seq;    /* [n_grp * n] trace node indices */
    uint32_t *n_seq;   /* [n_grp * n] */
    uint32_t **grp_of, **k_of; /* [n][T.n] a joined collective's group and place */
    uint32_t *grp_first; /* [n_grp] the group's lowest rank (merge_ranks) */
    /* units: a node is one unit, a joined collective three (arrive, the
     * start and done, leave) */
    uint32_t **unit;   /* [n][T.n] the node's first unit */
    uint32_t n_units, *u_rank, *u_node;
    uint8_t *u_part;
    uint32_t **arrive, **done; /* [n][T.n] graph nodes of a joined collective */
    uint32_t **start;          /* [n][T.n] its start, SB_NONE until added */
    /* send and recv matched across ranks (match_p2p): the peer's rank and
     * trace node of each, SB_NONE for any other node */
    uint32_t **p2p_rank, **p2p_node; /* [n][T.n] */
    json_t *groups;    /* the group file's process groups (load_groups), or NULL */
};

/* A collective the ranks join by process group: a GPU-side COMM_COLL (a
 * host-side one is compute; send and recv are matched by peer and tag,
 * match_p2p). */
static int joins(const Node *x, int astra)
{
    if (astra) /* every CPU op is compute there (astra_role) */
        return x->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE &&
               astra_role(x) == ASTRA_COMM;
    return x->type == CHAKRA_PROTO_MSG__NODE_TYPE__COMM_COLL_NODE &&
           !(iattr(x, "is_cpu_op", 0) && !attr(x, "comm_type"));
}

static const char *pg_of(const Node *x)
{
    const ChakraProtoMsg__AttributeProto *a = attr(x, "pg_name");
    return a && a->value_case == CHAKRA_PROTO_MSG__ATTRIBUTE_PROTO__VALUE_STRING_VAL &&
                   a->string_val ? a->string_val : "";
}

/* "trace.%d.et" with rank r: the pattern's one %d replaced. */
static char *rank_path(const char *pattern, uint32_t r)
{
    const char *d = strstr(pattern, "%d");
    return sb_strf("%.*s%u%s", (int)(d - pattern), pattern, r, d + 2);
}

/* The ranks of group g: its list in the group file, else every rank. */
static void group_members(struct job *J, uint32_t g)
{
    json_t *list = *J->grp[g] && J->groups ? json_object_get(J->groups, J->grp[g]) : NULL;
    uint8_t *m = J->member + (size_t)g * J->n;
    if (!json_is_array(list)) {
        memset(m, 1, J->n);
        return;
    }
    /* load_groups checked the list: distinct ranks of the job, at least one */
    for (size_t i = 0; i < json_array_size(list); i++) {
        json_int_t r = json_integer_value(json_array_get(list, i));
        SB_ASSERT(r >= 0 && r < (json_int_t)J->n);
        m[r] = 1;
    }
}

/* "ALL_REDUCE": a Chakra comm_type by its name in et_def.proto. */
static const char *comm_type_name(int64_t t)
{
    const ProtobufCEnumValue *v =
        t >= INT32_MIN && t <= INT32_MAX
            ? protobuf_c_enum_descriptor_get_value(
                  &chakra_proto_msg__collective_comm_type__descriptor, (int)t)
            : NULL;
    return v ? v->name : "an unknown comm_type";
}

static const char *ordinal_sfx(uint32_t k)
{
    return k % 100 / 10 == 1 ? "th" : k % 10 == 1 ? "st" : k % 10 == 2 ? "nd" : k % 10 == 3 ? "rd" : "th";
}

/* pass 1: each rank's collectives by group, in trace order; pass 2: each
 * group's members and their counts; pass 3: the k-th collectives agree in
 * type and size. */
static int match_collectives(struct job *J, struct sb_err *e)
{
    uint32_t N = J->n;
    for (uint32_t r = 0; r < N; r++) { /* pass 1 */
        struct trace *T = &J->T[r];
        J->grp_of[r] = sb_xmalloc(((size_t)T->n + 1) * sizeof **J->grp_of);
        J->k_of[r] = sb_xmalloc(((size_t)T->n + 1) * sizeof **J->k_of);
        for (uint32_t k = 0; k < T->n; k++) {
            uint32_t i = T->order[k];
            J->grp_of[r][i] = J->k_of[r][i] = SB_NONE;
            if (!joins(T->node[i], T->o->astra))
                continue;
            const char *pg = pg_of(T->node[i]);
            uint32_t g = 0;
            while (g < J->n_grp && strcmp(J->grp[g], pg))
                g++;
            if (g == J->n_grp) {
                J->grp = sb_xrealloc(J->grp, (g + 1) * sizeof *J->grp);
                J->seq = sb_xrealloc(J->seq, (size_t)(g + 1) * N * sizeof *J->seq);
                J->n_seq = sb_xrealloc(J->n_seq, (size_t)(g + 1) * N * sizeof *J->n_seq);
                J->member = sb_xrealloc(J->member, (size_t)(g + 1) * N);
                J->grp[g] = pg;
                memset(J->member + (size_t)g * N, 0, N);
                for (uint32_t q = 0; q < N; q++)
                    J->seq[(size_t)g * N + q] = NULL, J->n_seq[(size_t)g * N + q] = 0;
                J->n_grp++;
            }
            size_t s = (size_t)g * N + r;
            J->seq[s] = sb_xrealloc(J->seq[s], (J->n_seq[s] + 1) * sizeof **J->seq);
            J->grp_of[r][i] = g;
            J->k_of[r][i] = J->n_seq[s];
            J->seq[s][J->n_seq[s]++] = i;
        }
    }
    J->grp_first = sb_xmalloc(((size_t)J->n_grp + 1) * sizeof *J->grp_first);
    for (uint32_t g = 0; g < J->n_grp; g++) { /* pass 2 */
        const uint8_t *m = J->member + (size_t)g * N;
        const uint32_t *cnt = J->n_seq + (size_t)g * N;
        group_members(J, g);
        uint32_t first = 0;
        while (first < N && !m[first])
            first++;
        SB_ASSERT(first < N); /* a group has a member (load_groups) */
        J->grp_first[g] = first;
        for (uint32_t r = 0; r < N; r++) {
            if (!m[r] && cnt[r]) {
                const Node *x = J->T[r].node[J->seq[(size_t)g * N + r][0]];
                return sb_errf(e, "%s: node id %" PRIu64 " '%s': a collective of process "
                                  "group '%s', which does not list rank %u", J->path[r], x->id,
                               x->name, J->grp[g], r);
            }
            if (m[r] && cnt[r] != cnt[first]) {
                uint32_t a = cnt[r] > cnt[first] ? r : first, b = a == r ? first : r;
                const Node *x = J->T[a].node[J->seq[(size_t)g * N + a][cnt[b]]];
                return sb_errf(e, "%s: node id %" PRIu64 " '%s': collective %u of process group "
                                  "'%s' on this rank, but %s has only %u of that group: the "
                                  "ranks' collectives do not match", J->path[a], x->id, x->name,
                               cnt[b] + 1, *J->grp[g] ? J->grp[g] : "(none: every rank)",
                               J->path[b], cnt[b]);
            }
        }
        for (uint32_t k = 0; k < cnt[first]; k++) /* pass 3 */
            for (uint32_t r = first + 1; r < N; r++) {
                if (!m[r])
                    continue;
                const Node *x = J->T[first].node[J->seq[(size_t)g * N + first][k]];
                const Node *y = J->T[r].node[J->seq[(size_t)g * N + r][k]];
                int64_t tx = iattr(x, "comm_type", -1), ty = iattr(y, "comm_type", -1);
                int64_t sx = iattr(x, "comm_size", -1), sy = iattr(y, "comm_size", -1);
                if (tx != ty || sx != sy)
                    return sb_errf(e, "%s: node id %" PRIu64 " '%s': the %u%s collective of "
                                      "process group '%s' is %s of %" PRId64 " bytes here, but "
                                      "%s of %" PRId64 " bytes in %s (node id %" PRIu64 "): "
                                      "the ranks' collectives do not match", J->path[r], y->id,
                                   y->name, k + 1, ordinal_sfx(k + 1),
                                   *J->grp[g] ? J->grp[g] : "(none: every rank)",
                                   comm_type_name(ty), sy, comm_type_name(tx), sx,
                                   J->path[first], x->id);
            }
    }
    return 0;
}

/* ---- send and recv across ranks -----------------------------------------
 *
 * ASTRA-sim's workload layer (astra-sim/workload/Workload.cc,
 * issue_send_comm and issue_recv_comm, commit 0383c203) posts a send to
 * rank comm_dst and a recv from rank comm_src, each with comm_tag; the
 * network pairs them.  Here the k-th send from rank a to rank b with tag t
 * of process group p (in a's trace order) is the k-th such recv on b (in
 * b's), and the two starts are joined: the transfer begins when both are
 * issued (docs/machines.md, "Joined collectives"). */
struct p2p {
    uint32_t src, dst, rank, node, pos;
    int64_t tag;
    const char *pg;
};

static int p2p_cmp(const void *pa, const void *pb)
{
    const struct p2p *a = pa, *b = pb;
    if (a->src != b->src)
        return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst)
        return a->dst < b->dst ? -1 : 1;
    if (a->tag != b->tag)
        return a->tag < b->tag ? -1 : 1;
    int c = strcmp(a->pg, b->pg);
    if (c)
        return c;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Rank r's sends (send = 1) or recvs, appended to *out. */
static int collect_p2p(struct job *J, uint32_t r, int send, struct p2p **out, uint32_t *n,
                       struct sb_err *e)
{
    const struct trace *T = &J->T[r];
    int want = send ? CHAKRA_PROTO_MSG__NODE_TYPE__COMM_SEND_NODE
                    : CHAKRA_PROTO_MSG__NODE_TYPE__COMM_RECV_NODE;
    for (uint32_t k = 0; k < T->n; k++) {
        uint32_t i = T->order[k];
        const Node *x = T->node[i];
        if ((int)x->type != want)
            continue;
        const char *key = send ? "comm_dst" : "comm_src";
        int64_t peer = iattr(x, key, -1), self = iattr(x, send ? "comm_src" : "comm_dst", r);
        if (peer < 0 || peer >= J->n || peer == r || self != r)
            return sb_errf(e, "%s: node id %" PRIu64 " '%s': a %s of rank %u %s %s %" PRId64
                              ", not another rank of the job (0..%u)%s", J->path[r], x->id,
                           x->name, send ? "send" : "recv", r, send ? "to" : "from", key, peer,
                           J->n - 1, self != r ? "; or its own rank is not this file's" : "");
        *out = sb_xrealloc(*out, (*n + 1) * sizeof **out);
        (*out)[(*n)++] = (struct p2p){send ? r : (uint32_t)peer, send ? (uint32_t)peer : r, r,
                                      i, k, iattr(x, "comm_tag", 0), pg_of(x)};
    }
    return 0;
}

static int p2p_unmatched(const struct job *J, const struct p2p *x, int send, struct sb_err *e)
{
    const Node *y = J->T[x->rank].node[x->node];
    uint32_t other = send ? x->dst : x->src;
    return sb_errf(e, "%s: node id %" PRIu64 " '%s': a %s %s rank %u (tag %" PRId64 ", process "
                      "group '%s') that %s has no %s for: a send and a recv are matched by "
                      "peer, tag and process group, the k-th of each in trace order", J->path[x->rank],
                   y->id, y->name, send ? "send" : "recv", send ? "to" : "from", other, x->tag,
                   x->pg, J->path[other], send ? "recv" : "send");
}

static int match_p2p(struct job *J, struct sb_err *e)
{
    struct p2p *s = NULL, *v = NULL;
    uint32_t ns = 0, nv = 0, a = 0, b = 0;
    int rc = 0;
    for (uint32_t r = 0; r < J->n; r++) {
        J->p2p_rank[r] = sb_xmalloc(((size_t)J->T[r].n + 1) * sizeof **J->p2p_rank);
        J->p2p_node[r] = sb_xmalloc(((size_t)J->T[r].n + 1) * sizeof **J->p2p_node);
        memset(J->p2p_rank[r], 0xff, ((size_t)J->T[r].n + 1) * sizeof **J->p2p_rank);
        memset(J->p2p_node[r], 0xff, ((size_t)J->T[r].n + 1) * sizeof **J->p2p_node);
        if (!rc)
            rc = collect_p2p(J, r, 1, &s, &ns, e) || collect_p2p(J, r, 0, &v, &nv, e);
    }
    if (!rc && ns) /* qsort takes no NULL, even for no elements */
        qsort(s, ns, sizeof *s, p2p_cmp);
    if (!rc && nv)
        qsort(v, nv, sizeof *v, p2p_cmp);
    while (!rc && (a < ns || b < nv)) { /* merge: equal keys pair up in order */
        struct p2p key_s = a < ns ? s[a] : v[b], key_v = b < nv ? v[b] : s[a];
        key_s.pos = key_v.pos = 0;
        int c = a >= ns ? 1 : b >= nv ? -1 : p2p_cmp(&key_s, &key_v);
        if (c < 0)
            rc = p2p_unmatched(J, &s[a], 1, e);
        else if (c > 0)
            rc = p2p_unmatched(J, &v[b], 0, e);
        else {
            J->p2p_rank[s[a].rank][s[a].node] = v[b].rank;
            J->p2p_node[s[a].rank][s[a].node] = v[b].node;
            J->p2p_rank[v[b].rank][v[b].node] = s[a].rank;
            J->p2p_node[v[b].rank][v[b].node] = s[a].node;
            a++, b++;
        }
    }
    free(s), free(v);
    return rc;
}

/* The unit consumers of trace node p of rank r wait for. */
static uint32_t out_unit(const struct job *J, uint32_t r, uint32_t p)
{
    return J->unit[r][p] + (J->grp_of[r][p] != SB_NONE ? 2 : 0);
}

/* The matching collective of rank q for rank r's joined collective i. */
static uint32_t peer(const struct job *J, uint32_t r, uint32_t i, uint32_t q)
{
    return J->seq[(size_t)J->grp_of[r][i] * J->n + q][J->k_of[r][i]];
}

/* Numbers the units (rank-major, each rank in its trace order) and orders
 * them topologically, each rank's nodes in its trace order, lowest rank
 * first where several can go on.  Returns the units' order, NULL on a
 * deadlock. */
static uint32_t *merge_ranks(struct job *J, struct sb_err *e)
{
    uint32_t N = J->n, n = 0;
    for (uint32_t r = 0; r < N; r++) {
        struct trace *T = &J->T[r];
        J->unit[r] = sb_xmalloc(((size_t)T->n + 1) * sizeof **J->unit);
        for (uint32_t k = 0; k < T->n; k++) {
            J->unit[r][T->order[k]] = n;
            n += J->grp_of[r][T->order[k]] != SB_NONE ? 3 : 1;
        }
    }
    J->n_units = n;
    J->u_rank = sb_xmalloc(((size_t)n + 1) * sizeof *J->u_rank);
    J->u_node = sb_xmalloc(((size_t)n + 1) * sizeof *J->u_node);
    J->u_part = sb_xmalloc((size_t)n + 1);
    uint32_t *off = sb_xcalloc((size_t)n + 2, sizeof *off), *in = NULL;
    for (int pass = 0; pass < 2; pass++) { /* count, then fill */
        uint32_t m = 0;
        for (uint32_t r = 0; r < N; r++) {
            const struct trace *T = &J->T[r];
            uint32_t prev = SB_NONE; /* the rank's previous unit in its own order */
            for (uint32_t k = 0; k < T->n; k++) {
                uint32_t i = T->order[k], u = J->unit[r][i], g = J->grp_of[r][i];
                const uint8_t *mem = g != SB_NONE ? J->member + (size_t)g * N : NULL;
                for (uint32_t part = 0; part < (mem ? 3u : 1u); part++, u++) {
                    J->u_rank[u] = r, J->u_node[u] = i;
                    J->u_part[u] = (uint8_t)(mem ? UNIT_ARRIVE + part : UNIT_PLAIN);
                    if (pass)
                        off[u] = m;
                    /* a rank keeps its trace's order: each node, arrive,
                     * start and leave after the one before it (the leave
                     * waits for its own copy only, so identical ranks get
                     * identical orders) */
                    if (prev != SB_NONE) {
                        if (pass)
                            in[m] = prev;
                        m++;
                    }
                    prev = u;
                    if (part == 0)
                        for (uint32_t q = J->D[r].off[i]; q < J->D[r].off[i + 1]; q++, m++)
                            if (pass)
                                in[m] = out_unit(J, r, J->D[r].to[q]);
                    /* the starts: after every member's arrive.  The lowest
                     * rank's start waits for the arrives and the others for
                     * it: 2 edges a member, not one per pair (1,024 ranks
                     * made 10^6 a collective).  It adds no cycle and keeps
                     * the order: that start has the smallest unit of the
                     * starts, so it went first where all could. */
                    uint32_t q0 = mem ? J->grp_first[g] : 0;
                    for (uint32_t q = 0; part == 1 && r == q0 && q < N; q++)
                        if (mem[q]) {
                            if (pass)
                                in[m] = J->unit[q][peer(J, r, i, q)];
                            m++;
                        }
                    if (part == 1 && r != q0) {
                        if (pass)
                            in[m] = J->unit[q0][peer(J, r, i, q0)] + 1;
                        m++;
                    }
                }
            }
        }
        if (!pass)
            in = sb_xmalloc(((size_t)m + 1) * sizeof *in);
        off[n] = m;
    }
    uint32_t *order = sb_xmalloc(((size_t)n + 1) * sizeof *order);
    uint32_t placed = sb_topo_order(n, off, in, order);
    free(off), free(in);
    if (placed < n) {
        uint8_t *seen = sb_xcalloc((size_t)n + 1, 1);
        for (uint32_t k = 0; k < placed; k++)
            seen[order[k]] = 1;
        uint32_t u = 0;
        while (seen[u])
            u++;
        free(seen);
        const Node *x = J->T[J->u_rank[u]].node[J->u_node[u]];
        sb_errf(e, "%s: node id %" PRIu64 " '%s': the ranks deadlock here: joining each "
                   "process group's k-th collectives across the ranks, with each rank in its "
                   "trace order, makes them wait for each other in a cycle (they issue their "
                   "groups' collectives in different orders; %u of %u nodes and joins cannot "
                   "be ordered)", J->path[J->u_rank[u]], x->id, x->name, n - placed, n);
        free(order);
        return NULL;
    }
    /* each rank's nodes come in its trace order, so T->order holds */
    return order;
}

/* An arrive or leave nop of rank r's joined collective i. */
static uint32_t add_join_nop(struct job *J, struct sb_builder *b, uint32_t r, uint32_t i,
                             int leave)
{
    struct trace *T = &J->T[r];
    const Node *x = T->node[i];
    char *name = sb_strf("%s%s#%" PRIu64 ".%s", T->pfx, x->name, x->id,
                         leave ? "leave" : "arrive");
    struct sb_node_in n = SB_NODE_IN_INIT;
    n.name = name;
    n.kind = SB_KIND_NOP;
    n.op = leave ? "leave" : "arrive";
    n.device = T->device;
    n.stream = T->stream[i];
    n.loc = x->id;
    n.flags = leave ? SB_FLAG_ALIAS : 0; /* consumers read the done through it */
    uint32_t id = sb_builder_node(b, &n);
    free(name);
    if (id == SB_NONE)
        return SB_NONE;
    if (!leave) {
        for (uint32_t q = J->D[r].off[i]; q < J->D[r].off[i + 1]; q++)
            if (sb_builder_after(b, T->last[J->D[r].to[q]]))
                return SB_NONE;
        return id;
    }
    /* the members' dones end together as the collective's model says
     * (core/sim.c); a rank's leave waits for its own only */
    if (sb_builder_input(b, J->done[r][i]))
        return SB_NONE;
    return id;
}

/* The workload's name: the pattern's file name without its rank, the
 * separator before it and the extension ("dir/denseA.%d.et" is denseA). */
static char *pattern_name(const char *pattern)
{
    const char *base = strrchr(pattern, '/') ? strrchr(pattern, '/') + 1 : pattern;
    size_t n = strlen(base) - 3; /* without ".et" */
    const char *d = strstr(base, "%d");
    if (!d || (size_t)(d - base) > n) /* the %d is in a folder's name */
        return n ? sb_strf("%.*s", (int)n, base) : sb_xstrdup("ranks");
    size_t head = (size_t)(d - base), tail = n - head - 2;
    const char *rest = d + 2;
    if (head && strchr("._-", base[head - 1]))
        head--;
    else if (!head && tail && strchr("._-", *rest))
        rest++, tail--;
    return head + tail ? sb_strf("%.*s%.*s", (int)head, base, (int)tail, rest)
                       : sb_xstrdup("ranks");
}

/* The group file of the job of pattern: <name>.json in rank 0's folder,
 * <name> the workload's (pattern_name): dir/denseA.json for
 * dir/denseA.%d.et. */
static char *group_file(const char *pattern)
{
    char *r0 = rank_path(pattern, 0), *name = pattern_name(pattern);
    const char *slash = strrchr(r0, '/');
    char *f = sb_strf("%.*s%s.json", slash ? (int)(slash - r0 + 1) : 0, r0, name);
    free(r0), free(name);
    return f;
}

static struct sb_graph *build_ranks(struct job *J, const char *pattern, const uint32_t *order,
                                    struct sb_err *e)
{
    uint32_t N = J->n, n_streams = 1, sizes = 0, total = 0;
    uint64_t edges = 0;
    for (uint32_t r = 0; r < N; r++) {
        uint32_t s = prepare(&J->T[r]);
        n_streams = s > n_streams ? s : n_streams;
        sizes |= (uint32_t)J->T[r].have_sizes;
        total += J->T[r].n;
        edges += J->D[r].off[J->T[r].n];
        J->arrive[r] = sb_xmalloc(((size_t)J->T[r].n + 1) * sizeof **J->arrive);
        J->done[r] = sb_xmalloc(((size_t)J->T[r].n + 1) * sizeof **J->done);
        J->start[r] = sb_xmalloc(((size_t)J->T[r].n + 1) * sizeof **J->start);
        memset(J->start[r], 0xff, ((size_t)J->T[r].n + 1) * sizeof **J->start);
    }
    struct sb_builder *b = sb_builder_new(pattern, SB_LOC_NODE_ID, e);
    sb_builder_reserve(b, total + total / 4 + 16, edges, 0);
    char *name = pattern_name(pattern);
    sb_builder_meta(b, "name", name);
    free(name);
    sb_builder_meta(b, "source", "chakra");
    meta_u32(b, "devices", N);
    if (n_streams > 1)
        meta_u32(b, "streams", n_streams);
    if (!sizes)
        sb_builder_meta(b, "tensor_sizes", "none");
    int rc = 0;
    for (uint32_t r = 0; r < N && !rc; r++)
        rc = add_preexisting(&J->T[r], b);
    uint32_t *k_next = sb_xcalloc(N, sizeof *k_next);
    for (uint32_t k = 0; k < J->n_units && !rc; k++) {
        uint32_t u = order[k], r = J->u_rank[u], i = J->u_node[u];
        struct trace *T = &J->T[r];
        switch (J->u_part[u]) {
        case UNIT_PLAIN: { /* a matched send or recv joins its peer's, once it is built */
            uint32_t q = J->p2p_rank[r][i], j = J->p2p_node[r][i];
            T->join_with = q != SB_NONE && J->start[q][j] != SB_NONE ? &J->start[q][j] : NULL;
            rc = node_at(T, b, &J->D[r], k_next[r]++, e);
            T->join_with = NULL;
            if (q != SB_NONE)
                J->start[r][i] = T->last_start;
            break;
        }
        case UNIT_ARRIVE:
            rc = (J->arrive[r][i] = add_join_nop(J, b, r, i, 0)) == SB_NONE;
            break;
        case UNIT_COLL: { /* joins the members' collective (core/sim.c meets them) */
            T->join_after = &J->arrive[r][i];
            /* the lowest rank's start comes first (merge_ranks) */
            uint32_t q0 = J->grp_first[J->grp_of[r][i]];
            T->join_with = q0 == r ? NULL : &J->start[q0][peer(J, r, i, q0)];
            rc = node_at(T, b, &J->D[r], k_next[r]++, e);
            T->join_with = NULL;
            T->join_after = NULL;
            J->done[r][i] = T->last[i];
            J->start[r][i] = T->last_start;
            break;
        }
        default: /* UNIT_LEAVE */
            rc = (T->last[i] = add_join_nop(J, b, r, i, 1)) == SB_NONE;
        }
    }
    free(k_next);
    if (rc) {
        sb_builder_free(b);
        return NULL;
    }
    return sb_builder_finish(b);
}

static void job_free(struct job *J)
{
    for (uint32_t r = 0; r < J->n; r++) {
        trace_free(&J->T[r], &J->D[r]);
        free(J->path[r]);
        free((char *)J->T[r].pfx);
        free(J->grp_of[r]), free(J->k_of[r]), free(J->unit[r]);
        free(J->arrive[r]), free(J->done[r]), free(J->start[r]);
        free(J->p2p_rank[r]), free(J->p2p_node[r]);
    }
    for (size_t s = 0; s < (size_t)J->n_grp * J->n; s++)
        free(J->seq[s]);
    free(J->seq), free(J->n_seq), free(J->member), free(J->grp), free(J->grp_first);
    free(J->T), free(J->D), free(J->path), free(J->grp_of), free(J->k_of), free(J->unit);
    free(J->arrive), free(J->done), free(J->start), free(J->p2p_rank), free(J->p2p_node);
    free(J->u_rank), free(J->u_node), free(J->u_part);
    if (J->groups)
        json_decref(J->groups);
}

/* The rank pattern's one %d, and nothing else a printf would read. */
static int check_pattern(const char *pattern, struct sb_err *e)
{
    const char *d = strstr(pattern, "%d");
    if (!d || strchr(d + 2, '%') || strchr(pattern, '%') != d)
        return sb_errf(e, "%s: a rank pattern has one %%d and no other %%", pattern);
    return 0;
}

struct sb_graph *sb_chakra_load_ranks_mem(const char *pattern, uint32_t n,
                                          const uint8_t *const *buf, const size_t *len,
                                          const struct sb_import_opts *o, struct sb_err *e)
{
    if (check_pattern(pattern, e))
        return NULL;
    if (n < 1 || n > SB_MAX_DEVICES)
        return sb_errf(e, "%s: %u ranks: a job has 1..%d (a device each)", pattern, n,
                       SB_MAX_DEVICES), NULL;
    struct job J = {0};
    J.n = n;
    J.T = sb_xcalloc(n, sizeof *J.T);
    J.D = sb_xcalloc(n, sizeof *J.D);
    J.path = sb_xcalloc(n, sizeof *J.path);
    J.grp_of = sb_xcalloc(n, sizeof *J.grp_of);
    J.k_of = sb_xcalloc(n, sizeof *J.k_of);
    J.unit = sb_xcalloc(n, sizeof *J.unit);
    J.arrive = sb_xcalloc(n, sizeof *J.arrive);
    J.done = sb_xcalloc(n, sizeof *J.done);
    J.start = sb_xcalloc(n, sizeof *J.start);
    J.p2p_rank = sb_xcalloc(n, sizeof *J.p2p_rank);
    J.p2p_node = sb_xcalloc(n, sizeof *J.p2p_node);
    int rc = 0;
    uint32_t *distinct = sb_xmalloc(((size_t)n + 1) * sizeof *distinct), n_distinct = 0;
    for (uint32_t r = 0; r < n && !rc; r++) {
        struct trace *T = &J.T[r];
        J.path[r] = rank_path(pattern, r);
        *T = (struct trace){.path = J.path[r], .o = o, .device = (int32_t)r,
                            .pfx = sb_strf("r%u/", r)};
        T->ranks = o->npus_set ? o->npus : n;
        /* ranks of one program (a data-parallel job) are decoded once: a
         * file of the same bytes as an earlier rank's shares its nodes */
        uint32_t q = 0;
        while (q < n_distinct && buf[distinct[q]] != buf[r] &&
               (len[distinct[q]] != len[r] || memcmp(buf[distinct[q]], buf[r], len[r])))
            q++;
        if (q < n_distinct) {
            const struct trace *S = &J.T[distinct[q]];
            T->same = S;
            T->node = S->node, T->n = S->n, T->cap = S->cap, T->order = S->order;
            J.D[r] = J.D[distinct[q]];
            continue;
        }
        distinct[n_distinct++] = r;
        rc = read_nodes(T, buf[r], len[r], e) || resolve(T, &J.D[r], e) || topo(T, &J.D[r], e);
        if (!rc && T->dropped)
            fprintf(stderr, "schedbench: warning: %s: dropped %" PRIu64 " dependencies on nodes "
                            "the trace does not contain\n", T->path, T->dropped);
    }
    free(distinct);
    if (!rc) { /* the job's group file, beside rank 0 (chakra.md, "Several ranks") */
        char *gf = group_file(pattern), *what = sb_strf("the job has the ranks 0..%u", n - 1);
        rc = load_groups(gf, n, what, &J.groups, e);
        for (uint32_t r = 0; r < n; r++)
            J.T[r].groups = J.groups;
        free(gf), free(what);
    }
    struct sb_graph *g = NULL;
    uint32_t *order = NULL;
    if (!rc && !match_collectives(&J, e) && !match_p2p(&J, e) &&
        (order = merge_ranks(&J, e)))
        g = build_ranks(&J, pattern, order, e);
    free(order);
    job_free(&J);
    return g;
}

/* Rank r's bytes.  Ranks of one program are mostly the same file (links to
 * one trace): a file that is rank r - 1's (the same device and inode), or has
 * its bytes, shares its buffer, so 1,024 ranks of a 3 MB trace hold 3 MB,
 * not 3 GB.  The run's digest still takes every rank's bytes. */
static int read_rank(const char *pattern, uint32_t r, uint8_t **buf, size_t *len,
                     struct stat *id, struct sb_err *e)
{
    char *f = rank_path(pattern, r);
    if (stat(f, &id[r]) != 0)
        memset(&id[r], 0, sizeof id[r]); /* the read below says why */
    if (r && id[r].st_ino && id[r].st_ino == id[r - 1].st_ino &&
        id[r].st_dev == id[r - 1].st_dev && id[r].st_size == id[r - 1].st_size) {
        buf[r] = buf[r - 1], len[r] = len[r - 1];
        sb_digest_add(buf[r], len[r]);
        free(f);
        return 0;
    }
    buf[r] = (uint8_t *)sb_read_file_limited(f, sb_max_input_bytes(), &len[r], e);
    free(f);
    if (!buf[r])
        return -1;
    if (r && len[r] == len[r - 1] && !memcmp(buf[r], buf[r - 1], len[r])) {
        free(buf[r]);
        buf[r] = buf[r - 1];
    }
    return 0;
}

struct sb_graph *sb_chakra_load_ranks(const char *pattern, const struct sb_import_opts *o,
                                      struct sb_err *e)
{
    if (check_pattern(pattern, e))
        return NULL;
    const char *d = strstr(pattern, "%d");
    char *head = sb_strf("%.*s", (int)(d - pattern), pattern);
    int bad = check_rank_spelling(head, d + 2, e);
    free(head);
    if (bad)
        return NULL;
    uint32_t n = 0;
    for (; n <= SB_MAX_DEVICES; n++) {
        char *f = rank_path(pattern, n);
        int there = access(f, F_OK) == 0;
        free(f);
        if (!there)
            break;
    }
    if (!n) {
        char *f = rank_path(pattern, 0);
        sb_errf(e, "%s: no rank files (%s does not exist)", pattern, f);
        free(f);
        return NULL;
    }
    if (n > SB_MAX_DEVICES)
        return sb_errf(e, "%s: more than %d rank files (a device each)", pattern,
                       SB_MAX_DEVICES), NULL;
    uint8_t **buf = sb_xcalloc(n, sizeof *buf);
    size_t *len = sb_xcalloc(n, sizeof *len);
    struct stat *id = sb_xcalloc(n, sizeof *id);
    int rc = 0;
    for (uint32_t r = 0; r < n && !rc; r++)
        rc = read_rank(pattern, r, buf, len, id, e);
    free(id);
    struct sb_graph *g =
        rc ? NULL : sb_chakra_load_ranks_mem(pattern, n, (const uint8_t *const *)buf, len, o, e);
    for (uint32_t r = 0; r < n; r++)
        if (!r || buf[r] != buf[r - 1]) /* shared bytes are freed once */
            free(buf[r]);
    free(buf), free(len);
    return g;
}
