/* Machine descriptions in YAML (docs/machines.md), read with libyaml's
 * document API: the whole file becomes a node tree whose nodes keep their
 * line and column, so every problem is reported as file:line:col. */
#define _POSIX_C_SOURCE 200809L
#include "machine.h"
#include "builder.h"
#include "num.h"
#include "size.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

struct mload {
    yaml_document_t doc;
    const char *path;
    struct sb_machine *m;
    struct sb_err *e;
};

static int failn(struct mload *L, const yaml_node_t *n, const char *fmt, const char *a)
{
    char msg[400];
    snprintf(msg, sizeof msg, fmt, a);
    return sb_errf(L->e, "%s:%zu:%zu: %s", L->path, n->start_mark.line + 1,
                   n->start_mark.column + 1, msg);
}

static const char *scalar(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static yaml_node_t *get(struct mload *L, yaml_node_pair_t *p, int key)
{
    return yaml_document_get_node(&L->doc, key ? p->key : p->value);
}

/* YAML forbids a key twice in one map; reading it twice would also mean
 * filling a table twice (a second `speed:` overran the first's). */
static int dup_key(struct mload *L, yaml_node_t *map, yaml_node_pair_t *p)
{
    const char *k = scalar(get(L, p, 1));
    for (yaml_node_pair_t *q = map->data.mapping.pairs.start; k && q < p; q++) {
        const char *j = scalar(get(L, q, 1));
        if (j && !strcmp(j, k)) {
            char msg[300];
            snprintf(msg, sizeof msg, "key '%.200s' given twice (first on line %lu)", k,
                     (unsigned long)get(L, q, 1)->start_mark.line + 1);
            return failn(L, get(L, p, 1), "%s", msg);
        }
    }
    return 0;
}

/* A real number in lo..hi (num.h's grammar: decimal notation, no hex, inf or
 * nan); the ranges are the ceilings of num.h, so that every time derived
 * from a machine is finite (docs/machines.md, "Ranges"). */
static int num(struct mload *L, yaml_node_t *n, const char *what, double lo, double hi,
               double *out)
{
    const char *s = scalar(n), *why;
    char msg[300];
    if (!s)
        return failn(L, n, "%s must be a number", what);
    if (sb_num_real(s, lo, hi, out, &why)) {
        snprintf(msg, sizeof msg, "%s must be a finite number in %g..%g, not '%.40s%s' (%s)",
                 what, lo, hi, s, strlen(s) > 40 ? "..." : "", why);
        return failn(L, n, "%s", msg);
    }
    return 0;
}

/* A whole number in lo..hi, digits only ("1e3" and "4.0" are refused, as
 * every integer option is: num.h); "what must be an integer in range"
 * otherwise. */
static int whole(struct mload *L, yaml_node_t *n, const char *what, const char *range,
                 uint64_t lo, uint64_t hi, uint32_t *out)
{
    const char *s = scalar(n), *why;
    uint64_t v;
    char msg[300];
    if (!s || sb_num_u64(s, lo, hi, &v, &why)) {
        snprintf(msg, sizeof msg, "%s must be an integer in %s, not '%.40s%s'%s%s%s", what,
                 range, s ? s : "(not a scalar)", s && strlen(s) > 40 ? "..." : "",
                 s ? " (" : "", s ? why : "", s ? ")" : "");
        return failn(L, n, "%s", msg);
    }
    *out = (uint32_t)v;
    return 0;
}

/* mem_bytes: bytes, or a number with a unit as a person writes it (80GB,
 * 80GiB, 512MiB, any case): the one size parser and its rule for
 * capacities (size.h: sb_size_capacity), which plot --mem-cap shares.  A
 * bare number under 1 MiB is most likely gigabytes written without a unit
 * ("mem_bytes: 40"): refused; "2500B" says bytes were meant. */
static int mem_bytes(struct mload *L, yaml_node_t *n, uint64_t *out)
{
    const char *s = scalar(n), *why = "not a scalar";
    char msg[400];
    if (s && !sb_size_capacity(s, out, &why))
        return 0;
    snprintf(msg, sizeof msg, "mem_bytes '%.40s%s' is not a capacity (1 B .. 1 PiB: bytes, or "
                              "with a unit: 80GB, 80GiB): %s", s ? s : "?",
             s && strlen(s) > 40 ? "..." : "", why);
    return failn(L, n, "%s", msg);
}

static int dev_index(const struct sb_machine *m, const char *name)
{
    for (uint32_t d = 0; d < m->v.n_devices; d++)
        if (!strcmp(m->name[d], name))
            return (int)d;
    return -1;
}

static int str_list(struct mload *L, yaml_node_t *n, const char *what, uint32_t *cnt,
                    char ***out)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return failn(L, n, "%s must be a list of names", what);
    size_t k = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    *out = sb_xcalloc(k + 1, sizeof **out);
    *cnt = 0;
    for (yaml_node_item_t *it = n->data.sequence.items.start;
         it < n->data.sequence.items.top; it++) {
        yaml_node_t *x = yaml_document_get_node(&L->doc, *it);
        if (!scalar(x))
            return failn(L, x, "%s must be a list of names", what);
        (*out)[(*cnt)++] = sb_xstrdup(scalar(x));
    }
    return 0;
}

/* peak_tflops: {bf16: 989.4, fp32: 67, ...}: dense TFLOP/s per dtype. */
static int read_peaks(struct mload *L, yaml_node_t *n, uint32_t d)
{
    if (n->type != YAML_MAPPING_NODE)
        return failn(L, n, "%s", "peak_tflops must be a map dtype: TFLOP/s");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
         p++) {
        if (dup_key(L, n, p))
            return -1;
        const char *key = scalar(get(L, p, 1));
        enum sb_dtype t;
        if (!key || sb_dtype_parse(key, &t))
            return failn(L, get(L, p, 1), "%s", "peak_tflops keys are fp32, tf32, bf16, "
                                                "fp16, fp8, int8, fp64");
        if (num(L, get(L, p, 0), "peak_tflops", SB_MIN_TFLOPS, SB_MAX_TFLOPS,
                &L->m->roof[d].peak_tflops[t]))
            return -1;
    }
    L->m->has_roof[d] = 1;
    return 0;
}

static int read_speed(struct mload *L, yaml_node_t *n, uint32_t d)
{
    struct sb_machine *m = L->m;
    if (n->type == YAML_SCALAR_NODE)
        return num(L, n, "speed", SB_MIN_SPEED, SB_MAX_SPEED, &m->speed[d]);
    if (n->type != YAML_MAPPING_NODE)
        return failn(L, n, "%s", "speed must be a number or a map op: factor");
    size_t k = (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
    m->op_speed_name[d] = sb_xcalloc(k + 1, sizeof *m->op_speed_name[d]);
    m->op_speed[d] = sb_xcalloc(k + 1, sizeof *m->op_speed[d]);
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
         p++) {
        if (dup_key(L, n, p))
            return -1;
        const char *key = scalar(get(L, p, 1));
        double f = 0;
        if (!key)
            return failn(L, get(L, p, 1), "%s", "speed keys must be op names");
        if (num(L, get(L, p, 0), "speed factor", SB_MIN_SPEED, SB_MAX_SPEED, &f))
            return -1;
        if (!strcmp(key, "default")) {
            m->speed[d] = f;
            continue;
        }
        uint32_t i = m->n_op_speed[d]++;
        m->op_speed_name[d][i] = sb_xstrdup(key);
        m->op_speed[d][i] = f;
    }
    return 0;
}

/* A resource's index by name, added when new; -1 past SB_MAX_RES. */
static int res_index(struct sb_machine *m, const char *name)
{
    for (uint32_t k = 0; k < m->n_res; k++)
        if (!strcmp(m->res_name[k], name))
            return (int)k;
    if (m->n_res == SB_MAX_RES)
        return -1;
    m->res_name[m->n_res] = sb_xstrdup(name);
    return (int)m->n_res++;
}

/* One resource limit (an integer count in 1..10^6: SMs, cores, streams). */
static int read_limit(struct mload *L, yaml_node_t *val, const char *name, uint32_t d)
{
    uint32_t x = 0;
    int k;
    char what[300];
    snprintf(what, sizeof what, "resource '%.200s'", name);
    if (whole(L, val, what, "1..10^6", 1, 1000000, &x))
        return -1;
    if ((k = res_index(L->m, name)) < 0)
        return failn(L, val, "more than %s resource names in one machine", "16");
    L->m->res_decl[(size_t)d * SB_MAX_RES + (uint32_t)k] = x;
    return 0;
}

/* resources: {sms: 132, cores: 64}: named limits M_k(a), one unit each. */
static int read_resources(struct mload *L, yaml_node_t *n, uint32_t d)
{
    if (n->type != YAML_MAPPING_NODE)
        return failn(L, n, "%s", "resources must be a map name: limit (sms: 132)");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
         p++) {
        if (dup_key(L, n, p))
            return -1;
        const char *key = scalar(get(L, p, 1));
        if (!key || !*key || strchr(key, ',') || strchr(key, '"'))
            return failn(L, get(L, p, 1), "%s", "resource names must be non-empty names "
                                                "without commas or quotes");
        if (!strcmp(key, "units"))
            return failn(L, get(L, p, 1), "%s", "units is the device's units key, not a "
                                                "resource name here");
        if (read_limit(L, get(L, p, 0), key, d))
            return -1;
    }
    return 0;
}

static int read_kind(struct mload *L, yaml_node_t *n, uint32_t d)
{
    static const char *const names[SB_DEV_COUNT] = {"gpu", "cpu", "other"};
    const char *s = scalar(n);
    for (int k = 0; s && k < SB_DEV_COUNT; k++)
        if (!strcmp(s, names[k])) {
            L->m->kind[d] = (uint8_t)k;
            return 0;
        }
    return failn(L, n, "kind '%s' is not gpu, cpu or other", s ? s : "?");
}

static int read_device(struct mload *L, yaml_node_t *n, uint32_t d)
{
    struct sb_machine *m = L->m;
    if (n->type != YAML_MAPPING_NODE)
        return failn(L, n, "%s", "a device must be a map (name, kind, speed, ...)");
    m->speed[d] = 1;
    m->cap[d] = SB_MEM_UNLIMITED;
    m->units[d] = 1;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
         p++) {
        if (dup_key(L, n, p))
            return -1;
        const char *key = scalar(get(L, p, 1));
        yaml_node_t *val = get(L, p, 0);
        double x = 0;
        int rc = 0;
        if (!key)
            return failn(L, get(L, p, 1), "%s", "device keys must be names");
        if (!strcmp(key, "name")) {
            if (!scalar(val) || !*scalar(val))
                return failn(L, val, "%s", "name must be a non-empty string");
            if (dev_index(m, scalar(val)) >= 0)
                return failn(L, val, "device '%s' is named twice", scalar(val));
            free(m->name[d]);
            m->name[d] = sb_xstrdup(scalar(val));
        } else if (!strcmp(key, "kind")) {
            rc = read_kind(L, val, d);
        } else if (!strcmp(key, "speed")) {
            rc = read_speed(L, val, d);
        } else if (!strcmp(key, "mem_bytes")) {
            rc = mem_bytes(L, val, &m->cap[d]);
        } else if (!strcmp(key, "units")) {
            rc = whole(L, val, "units", "1..10^6", 1, 1000000, &m->units[d]);
            /* the one-resource case: units is also the resource "units" */
            if (!rc)
                rc = read_limit(L, val, "units", d);
        } else if (!strcmp(key, "resources")) {
            rc = read_resources(L, val, d);
        } else if (!strcmp(key, "streams")) {
            rc = whole(L, val, "streams", "1..1024", 1, SB_MAX_STREAMS, &m->streams[d]);
        } else if (!strcmp(key, "ops")) {
            rc = str_list(L, val, "ops", &m->n_ops[d], &m->ops[d]);
        } else if (!strcmp(key, "peak_tflops")) {
            rc = read_peaks(L, val, d);
        } else if (!strcmp(key, "mem_compute_overlap")) {
            if (!(rc = num(L, val, key, 0, 1, &x))) {
                m->roof[d].serial_frac = 1 - x;
                m->has_roof[d] = 1;
            }
        } else if (!strcmp(key, "hbm_gbps") || !strcmp(key, "launch_us")) {
            if (!(rc = key[0] == 'h' ? num(L, val, key, SB_MIN_GBPS, SB_MAX_GBPS, &x)
                                     : num(L, val, key, 0, SB_MAX_TIME_US, &x))) {
                *(key[0] == 'h' ? &m->roof[d].hbm_gbps : &m->roof[d].launch_us) = x;
                m->has_roof[d] = 1;
            }
        } else {
            rc = failn(L, get(L, p, 1),
                       "unknown device key '%s' (name, kind, speed, mem_bytes, units, "
                       "resources, streams, ops, peak_tflops, hbm_gbps, launch_us, "
                       "mem_compute_overlap)", key);
        }
        if (rc)
            return -1;
    }
    if (!m->name[d])
        return failn(L, n, "%s", "device has no name");
    return 0;
}

static void alloc_devices(struct sb_machine *m, uint32_t nd)
{
    m->n_alloc = nd;
    m->name = sb_xcalloc(nd, sizeof *m->name);
    m->kind = sb_xcalloc(nd, sizeof *m->kind);
    m->cap = sb_xcalloc(nd, sizeof *m->cap);
    m->units = sb_xcalloc(nd, sizeof *m->units);
    m->streams = sb_xcalloc(nd, sizeof *m->streams);
    m->speed = sb_xcalloc(nd, sizeof *m->speed);
    m->n_op_speed = sb_xcalloc(nd, sizeof *m->n_op_speed);
    m->op_speed_name = sb_xcalloc(nd, sizeof *m->op_speed_name);
    m->op_speed = sb_xcalloc(nd, sizeof *m->op_speed);
    m->n_ops = sb_xcalloc(nd, sizeof *m->n_ops);
    m->ops = sb_xcalloc(nd, sizeof *m->ops);
    m->gbps = sb_xcalloc((size_t)nd * nd, sizeof *m->gbps);
    m->lat_us = sb_xcalloc((size_t)nd * nd, sizeof *m->lat_us);
    m->can_read = sb_xcalloc((size_t)nd * nd, sizeof *m->can_read);
    m->roof = sb_xcalloc(nd, sizeof *m->roof);
    m->has_roof = sb_xcalloc(nd, 1);
    m->res_decl = sb_xcalloc((size_t)nd * SB_MAX_RES, sizeof *m->res_decl);
}

static int read_devices(struct mload *L, yaml_node_t *n)
{
    if (n->type != YAML_SEQUENCE_NODE)
        return failn(L, n, "%s", "devices must be a list");
    size_t nd = (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
    if (nd < 1 || nd > SB_MAX_DEVICES) {
        char most[16];
        snprintf(most, sizeof most, "%d", SB_MAX_DEVICES);
        return failn(L, n, "devices: between 1 and %s devices", most);
    }
    alloc_devices(L->m, (uint32_t)nd);
    L->m->v.n_devices = 0; /* dev_index sees only the devices read so far */
    for (size_t d = 0; d < nd; d++) {
        yaml_node_t *x = yaml_document_get_node(&L->doc, n->data.sequence.items.start[d]);
        if (read_device(L, x, (uint32_t)d))
            return -1;
        L->m->v.n_devices = (uint32_t)d + 1;
    }
    return 0;
}

/* One link: {gbps, latency_us} plus from/to for a pair; `both` also sets b->a. */
static int read_link(struct mload *L, yaml_node_t *n, int pair, double *gbps, double *lat,
                     int *from, int *to, int *both)
{
    if (n->type != YAML_MAPPING_NODE)
        return failn(L, n, "%s", "a link must be a map (gbps, latency_us)");
    *from = *to = -1;
    *both = 0;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
         p++) {
        if (dup_key(L, n, p))
            return -1;
        const char *key = scalar(get(L, p, 1));
        yaml_node_t *val = get(L, p, 0);
        int rc = 0;
        if (key && !strcmp(key, "gbps"))
            rc = num(L, val, "gbps", SB_MIN_GBPS, SB_MAX_GBPS, gbps);
        else if (key && !strcmp(key, "latency_us"))
            rc = num(L, val, "latency_us", 0, SB_MAX_TIME_US, lat);
        else if (key && pair && (!strcmp(key, "from") || !strcmp(key, "to"))) {
            int d = scalar(val) ? dev_index(L->m, scalar(val)) : -1;
            if (d < 0)
                return failn(L, val, "'%s' is not a device of this machine",
                             scalar(val) ? scalar(val) : "?");
            *(key[0] == 'f' ? from : to) = d;
        } else if (key && pair && !strcmp(key, "both")) {
            const char *s = scalar(val);
            if (!s || (strcmp(s, "true") && strcmp(s, "false")))
                return failn(L, val, "%s", "both must be true or false");
            *both = !strcmp(s, "true");
        } else
            return failn(L, get(L, p, 1), "unknown link key '%s'", key ? key : "?");
        if (rc)
            return -1;
    }
    if (pair && (*from < 0 || *to < 0 || *from == *to))
        return failn(L, n, "%s", "a pair needs from and to, two different devices");
    return 0;
}

static void set_link(struct sb_machine *m, int a, int b, double gbps, double lat)
{
    size_t i = (size_t)a * m->v.n_devices + (size_t)b;
    m->gbps[i] = gbps;
    m->lat_us[i] = lat;
}

static int read_links(struct mload *L, yaml_node_t *n)
{
    struct sb_machine *m = L->m;
    uint32_t nd = m->v.n_devices;
    if (n->type != YAML_MAPPING_NODE)
        return failn(L, n, "%s", "links must be a map (default, pairs)");
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top;
         p++) {
        if (dup_key(L, n, p))
            return -1;
        const char *key = scalar(get(L, p, 1));
        yaml_node_t *val = get(L, p, 0);
        int from, to, both;
        double gbps = 0, lat = 0;
        if (key && !strcmp(key, "default")) {
            if (read_link(L, val, 0, &gbps, &lat, &from, &to, &both))
                return -1;
            for (uint32_t a = 0; a < nd; a++)
                for (uint32_t b = 0; b < nd; b++)
                    if (a != b)
                        set_link(m, (int)a, (int)b, gbps, lat);
        } else if (key && !strcmp(key, "pairs")) {
            if (val->type != YAML_SEQUENCE_NODE)
                return failn(L, val, "%s", "pairs must be a list of links");
            for (yaml_node_item_t *it = val->data.sequence.items.start;
                 it < val->data.sequence.items.top; it++) {
                if (read_link(L, yaml_document_get_node(&L->doc, *it), 1, &gbps, &lat,
                              &from, &to, &both))
                    return -1;
                set_link(m, from, to, gbps, lat);
                if (both)
                    set_link(m, to, from, gbps, lat);
            }
        } else
            return failn(L, get(L, p, 1), "unknown links key '%s' (default, pairs)",
                         key ? key : "?");
    }
    return 0;
}

/* Every pair of distinct devices needs a usable link. */
static int check_links(struct mload *L, yaml_node_t *root)
{
    struct sb_machine *m = L->m;
    uint32_t nd = m->v.n_devices;
    for (uint32_t a = 0; a < nd; a++) {
        m->can_read[(size_t)a * nd + a] = 1;
        for (uint32_t b = 0; b < nd; b++)
            if (a != b && !(m->gbps[(size_t)a * nd + b] > 0)) {
                char pair[300];
                snprintf(pair, sizeof pair, "%s->%s", m->name[a], m->name[b]);
                return failn(L, root, "no link %s: give links.default or a pair", pair);
            }
    }
    return 0;
}

/* `xla_sol:`, a map of SolGPUCostModel::Config keys to scalars, kept as the
 * text `--cost sol_<key>=<value>` would give: the collective model that
 * owns the keys (net/xla_sol.c) checks them, the machine only carries them. */
static int read_sol(struct mload *L, yaml_node_t *n)
{
    if (n->type != YAML_MAPPING_NODE)
        return failn(L, n, "%s", "xla_sol is a map (nic_speed_gbps: 50, ...)");
    size_t cap = 1, len = 0;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++)
        cap += 8 + strlen(scalar(get(L, p, 1)) ? scalar(get(L, p, 1)) : "") +
               strlen(scalar(get(L, p, 0)) ? scalar(get(L, p, 0)) : "");
    char *spec = sb_xmalloc(cap);
    spec[0] = 0;
    for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
        const char *k = scalar(get(L, p, 1)), *v = scalar(get(L, p, 0));
        if (dup_key(L, n, p) || !k || !v || strpbrk(k, ",=") || strpbrk(v, ",=")) {
            free(spec);
            return dup_key(L, n, p) ? -1 : failn(L, get(L, p, !k || strpbrk(k, ",=")),
                                                 "%s", "xla_sol: a key and a plain value");
        }
        len += (size_t)snprintf(spec + len, cap - len, "%ssol_%s=%s", len ? "," : "", k, v);
    }
    free(L->m->xla_sol);
    L->m->xla_sol = spec;
    return 0;
}

static int read_root(struct mload *L, yaml_node_t *root)
{
    yaml_node_t *devs = NULL, *links = NULL;
    if (!root || root->type != YAML_MAPPING_NODE)
        return sb_errf(L->e, "%s:1:1: a machine is a map with devices and links", L->path);
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
         p < root->data.mapping.pairs.top; p++) {
        const char *key = scalar(get(L, p, 1));
        if (key && !strcmp(key, "devices"))
            devs = get(L, p, 0);
        else if (key && !strcmp(key, "links"))
            links = get(L, p, 0);
        else if (key && !strcmp(key, "xla_sol")) {
            if (read_sol(L, get(L, p, 0)))
                return -1;
        } else if (!key || strcmp(key, "name"))
            return failn(L, get(L, p, 1), "unknown key '%s' (name, devices, links, xla_sol)",
                         key ? key : "?");
    }
    if (!devs)
        return failn(L, root, "%s", "no devices");
    if (read_devices(L, devs) || (links && read_links(L, links)))
        return -1;
    return check_links(L, root);
}

static void fill_machine_view(struct sb_machine *m)
{
    struct sb_machine_view *v = &m->v;
    v->size = sizeof *v;
    v->dev_name = (const char *const *)m->name;
    v->dev_kind = m->kind;
    v->mem_cap_bytes = m->cap;
    v->units = m->units;
    v->link_gbps = m->gbps;
    v->link_lat_us = m->lat_us;
    v->can_read = m->can_read;
    v->dev_streams = m->streams;
    uint32_t nd = v->n_devices, K = m->n_res;
    m->res_limit = sb_xcalloc((size_t)nd * K + 1, sizeof *m->res_limit);
    for (uint32_t a = 0; a < nd; a++)
        for (uint32_t k = 0; k < K; k++)
            m->res_limit[(size_t)a * K + k] = m->res_decl[(size_t)a * SB_MAX_RES + k];
    v->n_res = K;
    v->res_name = (const char *const *)m->res_name;
    v->res_limit = m->res_limit;
}

struct sb_machine *sb_machine_load(const char *path, struct sb_err *e)
{
    /* bounded and checked before libyaml sees it (sb_read_file_limited,
     * sb_check_nesting: util.h) */
    size_t n;
    char *text = sb_read_file_limited(path, sb_max_input_bytes(), &n, e);
    if (!text)
        return NULL;
    if (sb_check_nesting(path, text, n, 0, SB_MAX_NESTING, e)) {
        free(text);
        return NULL;
    }
    yaml_parser_t parser;
    struct mload L = {.path = path, .e = e};
    yaml_parser_initialize(&parser);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, n);
    int ok = yaml_parser_load(&parser, &L.doc);
    free(text);
    if (!ok) {
        sb_errf(e, "%s:%zu:%zu: %s", path, parser.problem_mark.line + 1,
                parser.problem_mark.column + 1,
                parser.problem ? parser.problem : "not valid YAML");
        yaml_parser_delete(&parser);
        return NULL;
    }
    yaml_parser_delete(&parser);
    L.m = sb_xcalloc(1, sizeof *L.m);
    L.m->path = sb_xstrdup(path);
    int rc = read_root(&L, yaml_document_get_root_node(&L.doc));
    yaml_document_delete(&L.doc);
    if (rc) {
        sb_machine_free(L.m);
        return NULL;
    }
    fill_machine_view(L.m);
    return L.m;
}

void sb_machine_free(struct sb_machine *m)
{
    if (!m)
        return;
    for (uint32_t d = 0; d < m->n_alloc; d++) {
        free(m->name[d]);
        for (uint32_t i = 0; i < m->n_op_speed[d]; i++)
            free(m->op_speed_name[d][i]);
        free(m->op_speed_name[d]);
        free(m->op_speed[d]);
        for (uint32_t i = 0; i < m->n_ops[d]; i++)
            free(m->ops[d][i]);
        free(m->ops[d]);
    }
    free(m->name);
    free(m->kind);
    free(m->cap);
    free(m->units);
    free(m->streams);
    free(m->roof);
    free(m->has_roof);
    free(m->speed);
    free(m->n_op_speed);
    free(m->op_speed_name);
    free(m->op_speed);
    free(m->n_ops);
    free(m->ops);
    free(m->gbps);
    free(m->lat_us);
    free(m->can_read);
    for (uint32_t k = 0; k < m->n_res; k++)
        free(m->res_name[k]);
    free(m->res_decl);
    free(m->res_limit);
    free(m->xla_sol);
    free(m->path);
    free(m);
}

/* ---- applying a machine to a graph -------------------------------------- */

static int supports(const struct sb_machine *m, uint32_t d, const char *op)
{
    if (!m->ops[d])
        return 1;
    for (uint32_t i = 0; i < m->n_ops[d]; i++)
        if (!strcmp(m->ops[d][i], op))
            return 1;
    return 0;
}

static double speed_of(const struct sb_machine *m, uint32_t d, const char *op)
{
    for (uint32_t i = 0; i < m->n_op_speed[d]; i++)
        if (!strcmp(m->op_speed_name[d][i], op))
            return m->op_speed[d][i];
    return m->speed[d];
}

/* Device index of each cost_us.<device> column; -1 with a message when the
 * machine has no such device. */
static int match_cost_columns(const struct sb_machine *m, const struct sb_graph *g,
                              int *dev, struct sb_err *e)
{
    for (uint32_t k = 0; k < g->n_dev_cost; k++) {
        dev[k] = -1;
        for (uint32_t d = 0; d < m->v.n_devices; d++)
            if (!strcmp(m->name[d], g->dev_cost_name[k]))
                dev[k] = (int)d;
        if (dev[k] < 0)
            return sb_errf(e, "%s: column cost_us.%s: the machine (%s) has no device '%s'",
                           g->path, g->dev_cost_name[k], m->path, g->dev_cost_name[k]);
    }
    return 0;
}

/* r_k(v) for the machine's resources (docs/machines.md, "Resources"): the
 * resource `units` reads the units column (default 1), every other one its
 * res.<name> column, SB_RES_ALL (the whole device) where empty or absent.  A
 * res.<name> column the machine has no resource for is refused. */
static int resolve_res(const struct sb_machine *m, struct sb_graph *g, struct sb_err *e)
{
    uint32_t n = g->v.n_nodes, K = m->n_res;
    int col[SB_MAX_RES];
    for (uint32_t c = 0; c < g->n_res_col; c++) {
        int found = 0;
        for (uint32_t k = 0; k < K; k++)
            found |= !strcmp(m->res_name[k], g->res_col_name[c]);
        if (!found)
            return sb_errf(e, "%s: column res.%s: no device of the machine (%s) declares "
                              "resource '%s'", g->path, g->res_col_name[c], m->path,
                           g->res_col_name[c]);
    }
    free(g->res_use);
    g->res_use = NULL;
    g->v.res_use = NULL;
    if (!K)
        return 0;
    for (uint32_t k = 0; k < K; k++) {
        col[k] = -1;
        for (uint32_t c = 0; c < g->n_res_col; c++)
            if (!strcmp(m->res_name[k], g->res_col_name[c]))
                col[k] = (int)c;
    }
    g->res_use = sb_xmalloc(((size_t)n * K + 1) * sizeof *g->res_use);
    for (uint32_t v = 0; v < n; v++)
        for (uint32_t k = 0; k < K; k++) {
            uint32_t u = SB_RES_ALL;
            if (!strcmp(m->res_name[k], "units"))
                u = g->units_used[v];
            else if (col[k] >= 0)
                u = g->res_col_use[(size_t)v * g->n_res_col + (uint32_t)col[k]];
            g->res_use[(size_t)v * K + k] = u;
        }
    g->v.res_use = g->res_use;
    return 0;
}

/* The first resource of which v needs more than device d offers, or -1. */
static int res_over(const struct sb_machine *m, const struct sb_graph *g, uint32_t v,
                    uint32_t d)
{
    for (uint32_t k = 0; k < m->n_res; k++) {
        uint32_t lim = m->res_limit[(size_t)d * m->n_res + k];
        uint32_t u = g->res_use[(size_t)v * m->n_res + k];
        if (lim && u != SB_RES_ALL && u > lim)
            return (int)k;
    }
    return -1;
}

/* Only compute nodes scale with a device's speed and are restricted by its op
 * list: inputs and nops are free, and a collective's duration is the network's.
 * A cost_us.<device> value replaces the scaled time on that device. */
int sb_machine_apply(const struct sb_machine *m, struct sb_graph *g, struct sb_err *e)
{
    uint32_t nd = m->v.n_devices, n = g->v.n_nodes, K = g->n_dev_cost;
    int col_dev[SB_MAX_DEVICES];
    if (match_cost_columns(m, g, col_dev, e) || resolve_res(m, g, e))
        return -1;
    /* identical devices and no per-device cost: one column serves them all
     * (a job of 1,024 ranks would need 30 GB for the full table) */
    uint32_t cols = m->identical && !K && !m->n_res ? 1 : nd;
    double *t = sb_xmalloc(((size_t)n * cols + 1) * sizeof *t);
    for (uint32_t v = 0; v < n; v++) {
        const char *op = g->op_names[g->op[v]];
        for (uint32_t d = 0; d < cols; d++) {
            double x = g->dur_us[v];
            /* a device with a roofline prices nodes that carry their work */
            if (m->has_roof[d] && g->kind[v] == SB_KIND_COMPUTE && g->dtype && g->dtype[v] &&
                g->cost_us[v] == 0)
                x = sb_roofline_us(&m->roof[d], g, v);
            if (g->kind[v] == SB_KIND_COMPUTE)
                x = supports(m, d, op) ? x / speed_of(m, d, op) : INFINITY;
            t[(size_t)v * cols + d] = x;
        }
        for (uint32_t k = 0; k < K && g->kind[v] == SB_KIND_COMPUTE; k++) {
            double given = g->dev_cost_us[(size_t)v * K + k];
            size_t i = (size_t)v * nd + (uint32_t)col_dev[k];
            if (given >= 0 && isfinite(t[i]))
                t[i] = given;
        }
        /* a compute node needing more of a resource than a device offers
         * cannot run there; refused outright when it fits no device that
         * could otherwise run it */
        int fits_some = 0, runs_some = 0, over = -1;
        uint32_t over_dev = 0;
        for (uint32_t d = 0; m->n_res && g->kind[v] == SB_KIND_COMPUTE && d < nd; d++) {
            size_t i = (size_t)v * nd + d;
            int k = isinf(t[i]) ? -1 : res_over(m, g, v, d);
            runs_some |= !isinf(t[i]);
            if (k >= 0 && (over < 0 || (g->device[v] >= 0 && d == (uint32_t)g->device[v])))
                over = k, over_dev = d;
            if (k >= 0)
                t[i] = INFINITY;
            fits_some |= !isinf(t[i]);
        }
        if (over >= 0 && runs_some && (!fits_some || (g->device[v] >= 0 &&
                                                      over_dev == (uint32_t)g->device[v]))) {
            char msg[600], line[32] = "";
            if (g->res_line) /* file:line: where the row is */
                snprintf(line, sizeof line, ":%llu", (unsigned long long)g->res_line[v]);
            snprintf(msg, sizeof msg, "%s%s: node %u (%s) uses %u of resource '%s' on device %s "
                                      "(limit %u)%s", g->path, line, v, g->names + g->name_off[v],
                     g->res_use[(size_t)v * m->n_res + (uint32_t)over], m->res_name[over],
                     m->name[over_dev], m->res_limit[(size_t)over_dev * m->n_res + (uint32_t)over],
                     fits_some ? ", the device it is pre-assigned to" : ", more than any device "
                                                                        "that runs its op offers");
            free(t);
            return sb_errf(e, "%s", msg);
        }
        int32_t pre = g->device[v];
        if (pre >= 0 && ((uint32_t)pre >= nd ||
                         isinf(t[(size_t)v * cols + (cols == 1 ? 0 : (uint32_t)pre)]))) {
            free(t);
            return sb_errf(e, "%s: node %u (%s) is pre-assigned to device %d, which %s",
                           g->path, v, g->names + g->name_off[v], pre,
                           (uint32_t)pre >= nd ? "the machine does not have"
                                               : "does not support its op");
        }
    }
    free(g->dev_dur_us);
    g->dev_dur_us = t;
    g->v.dev_dur_us = t;
    g->v.dev_dur_cols = cols;
    for (uint32_t v = 0; m->has_roof[0] && v < n; v++) /* dur_us[v] is t(v, 0) */
        if (g->kind[v] == SB_KIND_COMPUTE && g->dtype && g->dtype[v] && g->cost_us[v] == 0)
            g->dur_us[v] = t[(size_t)v * cols];
    g->v.machine = &m->v;
    return 0;
}

/* A '# machine=' that does not resolve beside the workload (a generated file
 * written outside workloads/corpus keeps "../machines/NAME.yaml"; a bare
 * NAME) is looked for by name among the shipped machines, in the source tree
 * and the installed share folder. */
static void machine_fallback(char *path, size_t n, const char *rel)
{
    struct stat st;
    if (stat(path, &st) == 0)
        return;
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    size_t len = strlen(base);
    int ext = len > 5 && !strcmp(base + len - 5, ".yaml");
    static const char *const dirs[] = {SB_SOURCE_CORPUS "/../machines",
                                       SB_INSTALL_CORPUS "/../machines"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        char *cand = sb_strf("%s/%s%s", dirs[i], base, ext ? "" : ".yaml");
        int found = stat(cand, &st) == 0 && S_ISREG(st.st_mode);
        if (found)
            snprintf(path, n, "%s", cand);
        free(cand);
        if (found)
            return;
    }
}

/* A '# devices=N' line without a machine (a multi-rank trace, chakra.md):
 * N copies of the built-in device (an H100 with its 80 GB), each with
 * its own memory, joined by links that take no time (infinite bandwidth, no
 * latency): a job of ranks has no data edges between them, and an edge that
 * does cross costs nothing.  Rank r runs on device r. */
static struct sb_machine *identical_machine(uint32_t nd)
{
    struct sb_machine *m = sb_xcalloc(1, sizeof *m);
    alloc_devices(m, nd);
    m->v.n_devices = nd;
    m->path = sb_strf("devices=%u", nd); /* the workload's metadata, for messages */
    m->identical = 1;
    for (uint32_t d = 0; d < nd; d++) {
        m->name[d] = sb_strf("gpu%u", d);
        m->kind[d] = SB_DEV_GPU;
        m->cap[d] = SB_H100_MEM_BYTES;
        m->units[d] = 1;
        m->speed[d] = 1;
        m->can_read[(size_t)d * nd + d] = 1;
        for (uint32_t b = 0; b < nd; b++)
            m->gbps[(size_t)d * nd + b] = d == b ? 0 : INFINITY;
    }
    fill_machine_view(m);
    return m;
}

static int devices_meta(struct sb_graph *g, const char *s, struct sb_machine **out,
                        struct sb_err *e)
{
    uint64_t nd;
    const char *why;
    if (sb_num_u64(s, 1, SB_MAX_DEVICES, &nd, &why))
        return sb_errf(e, "%s: metadata devices '%s' is not a device count in 1..%d (%s)",
                       g->path, s, SB_MAX_DEVICES, why);
    struct sb_machine *m = identical_machine((uint32_t)nd);
    if (sb_machine_apply(m, g, e)) {
        sb_machine_free(m);
        return -1;
    }
    *out = m;
    return 0;
}

int sb_machine_of_graph(struct sb_graph *g, struct sb_machine **out, struct sb_err *e)
{
    const char *rel = sb_graph_meta(g, "machine");
    const char *devices = sb_graph_meta(g, "devices");
    char path[4096];
    *out = NULL;
    if (!rel && devices)
        return devices_meta(g, devices, out, e);
    /* one device, the built-in one, which declares no resources: a res.<name>
     * column is refused as under a machine whose devices declare none
     * (resolve_res), not ignored; its figures would change nothing, and a
     * workload written for a machine with SMs or cores would run as if it
     * held none (docs/machines.md, "Resources") */
    if (!rel && g->n_res_col)
        return sb_errf(e, "%s: column res.%s: the run has no machine (no --machine, no '# "
                          "machine=' line), and the built-in device declares no resource "
                          "'%s': pass the --machine the workload was written for", g->path,
                       g->res_col_name[0], g->res_col_name[0]);
    /* the same for a cost_us.<device> column: refused under a machine that
     * lacks the device (match_cost_columns), so refused without one, not
     * ignored */
    if (!rel && g->n_dev_cost)
        return sb_errf(e, "%s: column cost_us.%s: the run has no machine (no --machine, no "
                          "'# machine=' line) with a device '%s': pass the --machine the "
                          "workload was written for", g->path, g->dev_cost_name[0],
                       g->dev_cost_name[0]);
    if (!rel) /* one device: a pre-assigned device beyond 0 is bad input, not a cell failure */
        for (uint32_t v = 0; v < g->v.n_nodes; v++)
            if (g->device[v] > 0)
                return sb_errf(e, "%s: node %u (%s) is pre-assigned to device %d, but with no "
                                  "--machine and no '# machine=' line the run has one device "
                                  "(0)", g->path, v, g->names + g->name_off[v], g->device[v]);
    if (!rel)
        return 0;
    const char *slash = strrchr(g->path, '/');
    if (rel[0] == '/' || !slash)
        snprintf(path, sizeof path, "%s", rel);
    else
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - g->path), g->path, rel);
    machine_fallback(path, sizeof path, rel);
    struct sb_machine *m = sb_machine_load(path, e);
    if (!m) {
        char msg[sizeof e->msg];
        snprintf(msg, sizeof msg, "%s", e->msg);
        return sb_errf(e, "%s: machine=%s: %s", g->path, rel, msg);
    }
    if (sb_machine_apply(m, g, e)) {
        sb_machine_free(m);
        return -1;
    }
    *out = m;
    return 0;
}
