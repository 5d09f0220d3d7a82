/* schedbench: the machine a placement policy places onto.
 *
 * A machine is a set of devices (each with one compute stream and one memory
 * account) and directed links between them.  Without `run --machine` the host
 * builds a one-device machine, so every plugin can rely on g->machine being
 * set.  The description format and how it maps onto these arrays is
 * docs/machines.md; the host owns the storage. */
#ifndef SCHEDBENCH_MACHINE_H
#define SCHEDBENCH_MACHINE_H

#include <stdint.h>

/* Keeps [n_devices^2] link tables small (17 MB at 1,024); a job of ranks takes
 * a device each.  It was 256 until issue 37: a plugin built then with arrays
 * of SB_MAX_DEVICES must be rebuilt before it is handed more devices. */
#define SB_MAX_DEVICES 1024
#define SB_MEM_UNLIMITED UINT64_MAX

enum sb_dev_kind {
    SB_DEV_GPU = 0,
    SB_DEV_CPU = 1,
    SB_DEV_OTHER = 2,
    SB_DEV_COUNT
};

struct sb_machine_view {
    uint32_t size;      /* = sizeof(struct sb_machine_view); fields are only appended */
    uint32_t n_devices; /* >= 1 */
    const char *const *dev_name;   /* [n_devices] */
    const uint8_t *dev_kind;       /* [n_devices] enum sb_dev_kind */
    const uint64_t *mem_cap_bytes; /* [n_devices]; SB_MEM_UNLIMITED when not given */
    const uint32_t *units;         /* [n_devices] resource limit M(a): units the
                                      device's tasks may hold at one time */
    /* Directed links, [n_devices * n_devices], a->b at a * n_devices + b;
     * the diagonal is unused (a device reads its own memory for free). */
    const double *link_gbps;   /* GB/s (10^9 bytes per second) */
    const double *link_lat_us; /* per transfer */
    /* [n_devices * n_devices], a * n_devices + b: 1 when device a's kernels
     * read b's memory in place (ggml's supports_buft); 1 on the diagonal.  A
     * consumer that cannot read its producer's device needs a copy. */
    const uint8_t *can_read;
    /* Resources (appended; docs/machines.md, "Resources"): the names any
     * device declares (`resources:` or `units:` in the machine file), and
     * each device's limit M_k(a) in that resource's own unit (SMs, cores,
     * streams, ...), [n_devices * n_res] at a * n_res + k; 0 where device a
     * does not declare resource k (not limited there).  n_res = 0: no device
     * declares any, and devices run one node per stream at a time with no
     * other limit. */
    uint32_t n_res;
    const char *const *res_name; /* [n_res] */
    const uint32_t *res_limit;   /* [n_devices * n_res] */
    /* Streams (appended; docs/machines.md, `streams`): [n_devices], how many
     * streams device a has, 0 where the machine does not say (each stream
     * the graph names is one).  A node on stream s of a device with N > 0
     * streams runs on stream s mod N.  NULL on hosts older than the field. */
    const uint32_t *dev_streams;
};

#define SB_MAX_RES 16          /* resource names of one machine */
#define SB_RES_ALL UINT32_MAX  /* a node's use: the device's whole limit */

#endif
