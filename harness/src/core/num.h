/* Numbers as options and description files write them, read whole and
 * strictly (issue 42), and the ceilings of every machine and cost value.
 *
 * One grammar for every number the user types (command-line options, --cost,
 * --sim, scheduler parameters, machine descriptions), so that a value means
 * the same everywhere and a slip is refused instead of read as something
 * else:
 *   integer  decimal digits only: no sign, no blank, no fraction, no exponent,
 *            no hexadecimal ("4294967297" is refused above its range, never
 *            taken modulo 2^32; "1e3" and "4.0" are not integers)
 *   real     digits with an optional fraction and an optional exponent
 *            (12, 1.5, .5, 2e-3); a leading '-' only where the range is
 *            negative; no '+', no blank, no hexadecimal float (0x1p3), no inf
 *            or nan
 * Sizes in bytes have their own parser (size.h), with units. */
#ifndef SB_NUM_H
#define SB_NUM_H

#include <stdint.h>

/* 0 and the value in *out, or -1 (*out untouched) and, in *why, a static
 * phrase saying what is wrong ("not an integer", "above the maximum", ...)
 * for the caller to put after its own message, which names the option or
 * file:line:col and the range. */
int sb_num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, const char **why);
int sb_num_real(const char *s, double lo, double hi, double *out, const char **why);

/* "K/N", a slice of a sweep: two integers with 1 <= K <= N <= max_n. */
int sb_num_shard(const char *s, uint32_t max_n, uint32_t *k, uint32_t *n, const char **why);

/* ---- ceilings of machine and cost values (docs/machines.md, "Ranges";
 * docs/cost-model.md) ----------------------------------------------------
 * Every value a machine file, --cost or an import option can set has a
 * range, so that every time the simulator derives from them is finite: the
 * largest is a ring collective's, 2 (p - 1) steps of SB_MAX_TIME_US plus its
 * bytes (at most 2^50) over SB_MIN_GBPS, for p < 2^32 ranks: below 10^23 us,
 * far from a double's 10^308.  A sum over a whole sweep can still pass what
 * a results file holds (SB_RESULTS_MAX_US, cmd/table.h); `run` then writes
 * the cell as an error naming the figure instead of a number no reader
 * takes back. */
#define SB_MAX_TIME_US 1e12 /* a latency or launch time; the same ceiling as
                               a node's cost_us (builder.h): 11.6 days */
#define SB_MIN_GBPS 1e-3    /* a bandwidth: 1 MB/s .. 100 TB/s, in GB/s */
#define SB_MAX_GBPS 1e5
#define SB_MIN_SPEED 1e-6   /* a device's speed factor */
#define SB_MAX_SPEED 1e6
#define SB_MIN_TFLOPS 1e-6  /* a peak rate: 1 MFLOP/s .. 1 EFLOP/s, in TFLOP/s */
#define SB_MAX_TFLOPS 1e6
/* A device's memory is a size with its own rule: size.h, sb_size_capacity. */

#endif
