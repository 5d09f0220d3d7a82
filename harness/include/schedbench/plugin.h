/* schedbench: the scheduler plugin ABI.
 *
 * One versioned descriptor, one symbol (the pattern of ggml backends and SQLite
 * extensions).  A policy defines a uniquely named function returning its static
 * descriptor, so every policy links into the schedbench binary as a built-in; the
 * same source compiled with -DSB_BUILD_MODULE also exports SB_PLUGIN_ENTRY for
 * dlopen.  A plugin reaches the host only through what it is passed. */
#ifndef SCHEDBENCH_PLUGIN_H
#define SCHEDBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#include "schedbench/graph.h"

/* ABI 2 (issue 39): SB_COLL_COUNT grew from 11 to 13, and it is the stride of
 * the view's `holds`.  The host still loads ABI 1 plugins (SB_PLUGIN_ABI_MIN)
 * and hands them a view whose `holds` has ABI 1's stride, SB_COLL_COUNT_ABI1,
 * without the two types they cannot name; nothing else differs. */
#define SB_PLUGIN_ABI 2
#define SB_PLUGIN_ABI_MIN 1
#define SB_PLUGIN_ENTRY "sb_plugin_entry"

/* Parameters are declared, not parsed by the plugin: the host splits
 * "name:key=value,key=value", refuses unknown keys and values of the wrong type,
 * fills in defaults and hands init one double per declared parameter, in
 * declaration order.  That keeps error messages uniform and lets `schedbench
 * list` print every parameter with its default.  (STYLE.md's init takes the raw
 * string; declaring the schema is clearer for users and plugin authors alike.) */
enum sb_param_type {
    SB_PARAM_DOUBLE = 0,
    SB_PARAM_INT = 1,  /* value is integral; still passed as a double */
    SB_PARAM_BOOL = 2, /* accepts 0/1/true/false/on/off; passed as 0 or 1 */
    SB_PARAM_ENUM = 3, /* one of `choices` ("a|b|c"); passed as its index */
    /* Appended: a byte count, written as bytes or with a unit ("80GB",
     * "80GiB", "1.5TB", "80e9"; docs/plugins.md, "Sizes"), passed as a
     * double of whole bytes, exact up to 2^53 (8 PiB).  A host older than
     * the type refuses the plugin at load ("has a bad type"). */
    SB_PARAM_BYTES = 4, /* with max = INFINITY it also takes "none", passed as
                           INFINITY: a limit switched off */
};

/* A default of NAN means "no default": the plugin is passed NAN when the user
 * leaves the key out, so it can tell an explicit value from an omitted one
 * (membound's cap and max_increase).  Users cannot pass NAN themselves. */
struct sb_param {
    const char *key;     /* [a-z0-9_] */
    uint32_t type;       /* enum sb_param_type */
    double def;          /* default (for ENUM: index into choices), or NAN: none */
    double min, max;     /* inclusive range for DOUBLE, INT and BYTES */
    const char *choices; /* ENUM only */
    const char *doc;     /* one line, with unit and source of the default */
};

/* The schedule a plugin returns.  The host allocates both arrays with n_nodes
 * entries and pre-fills device[] with the graph's assignment (0 where none). */
struct sb_schedule {
    uint32_t n_nodes;
    uint32_t n_devices; /* devices the plugin may use: 0..n_devices-1 */
    uint32_t *order;    /* [n_nodes] every node once; a device runs its nodes in this order */
    int32_t *device;    /* [n_nodes] device of each node */
    char *err;          /* the plugin writes a message here when run fails */
    size_t n_err;
    /* Appended: [n_nodes], host-zeroed.  barrier[i] = 1: every device
     * synchronises after position i (nothing later in the order starts before
     * everything up to i has finished). */
    uint8_t *barrier;
    /* Appended, host-zeroed: the memory limit the policy scheduled under, in
     * the bytes the harness reports (peak_mem_bytes), 0 for none.  The row
     * records it (mem_limit_bytes), so a schedule that ended above the limit
     * it was given says so. */
    uint64_t mem_limit_bytes;
    /* Appended: [n_nodes], host-zeroed.  Bucketing (Inductor's bucketed
     * all-gathers and reduce-scatters, docs/plugins.md "Buckets"): bucket[v]
     * = k > 0 on a start puts its collective in bucket k, and the starts of
     * one bucket go out as one collective of their summed bytes, with the
     * copy-in and copy-out a bucket needs.  0 (every plugin that does not
     * bucket): the collective alone.  Members share the collective type,
     * group size and device, and every member's done follows every member's
     * start in the order (the validator says which node breaks it).  In a
     * job of ranks, a bucket of joined collectives is one fused collective
     * every rank launches: each other rank must bucket its members' partners
     * alike, one bucket per rank. */
    uint32_t *bucket;
};

struct sb_plugin {
    uint32_t abi;  /* = SB_PLUGIN_ABI; checked first (SB_PLUGIN_ABI_MIN.. accepted) */
    uint32_t size; /* = sizeof(struct sb_plugin); fields are only appended */
    const char *name;    /* unique, [a-z0-9_-] */
    const char *summary; /* one line */
    const struct sb_param *params;
    uint32_t n_params;
    /* Returns 0 on success; otherwise writes a message to err. */
    int (*init)(const double *param, void **state, char *err, size_t n_err);
    /* Returns 0 on success; otherwise writes a message to out->err. */
    int (*run)(void *state, const struct sb_graph_view *g, struct sb_schedule *out);
    void (*free)(void *state);
    /* Appended: enum sb_plugin_flag bits.  A descriptor that ends before
     * this field (size = SB_PLUGIN_SIZE_V1) has none. */
    uint32_t flags;
};

/* The descriptor's size before `flags`: the least a host accepts. */
#define SB_PLUGIN_SIZE_V1 offsetof(struct sb_plugin, flags)

/* Bits of sb_plugin.flags. */
enum sb_plugin_flag {
    /* The policy places nodes onto the machine's devices (heft, dp, ggml)
     * and is handed a job of ranks whole.  Every other policy schedules one
     * device's program: on a job of ranks (graph.h, `join`), each rank's
     * program alone, the host joining the orders at the collectives
     * (docs/plugins.md, "Jobs of ranks"). */
    SB_PLUGIN_PLACER = 1u << 0,
};

typedef const struct sb_plugin *(*sb_plugin_entry_fn)(void);

/* In a policy file: SB_PLUGIN_EXPORT(sb_plugin_original) after defining it. */
#ifdef SB_BUILD_MODULE
#define SB_PLUGIN_EXPORT(fn)                                                   \
    __attribute__((visibility("default"))) const struct sb_plugin *           \
    sb_plugin_entry(void) { return fn(); }
#else
#define SB_PLUGIN_EXPORT(fn)
#endif

/* Writes a formatted message into a plugin's error buffer; header-only so that a
 * plugin needs no host symbol. */
#include <stdarg.h>
#include <stdio.h>
static inline int sb_plugin_fail(char *err, size_t n_err, const char *fmt, ...)
{
    if (err && n_err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, n_err, fmt, ap);
        va_end(ap);
    }
    return -1;
}

#endif
