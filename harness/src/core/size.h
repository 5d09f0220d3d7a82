/* Sizes as a person writes them ("80GB", "80GiB", "1.5TB", "80e9"), read
 * exactly into a byte count.  One parser, so that every size a user types
 * means the same thing wherever it is typed (scheduler parameters of type
 * SB_PARAM_BYTES; docs/plugins.md, "Sizes").
 *
 * Grammar: a decimal number (digits, an optional fraction, an optional
 * exponent e+N / e-N), optional spaces, an optional unit.  Units, with the
 * letters in any case ("b" is a byte, never a bit):
 *   B                      1
 *   KB  MB  GB  TB  PB     10^3 steps (SI)
 *   KiB MiB GiB TiB PiB    2^10 steps (IEC)
 * A bare number is bytes.  A letter alone (K, M, G, ...) is refused: 80G
 * could be 80GB or 80GiB, a 7% difference at that size.  Refused too: signs,
 * hexadecimal, inf and nan, more than SB_SIZE_MAX_DIGITS significant digits,
 * and counts above UINT64_MAX.  The arithmetic is exact decimal, not a
 * double, so "18446744073709551615" is accepted and one more is refused; a
 * fraction of a byte left by a unit ("1.1GiB" = 1181116006.4 bytes) is
 * dropped, but a number written in bytes (no unit, or B) must be whole:
 * "1.5B" is refused, not read as 1 byte. */
#ifndef SB_SIZE_H
#define SB_SIZE_H

#include <stdint.h>

#define SB_SIZE_MAX_DIGITS 40 /* significant digits of the number; more: refused */

/* 0 and the count in *out; or -1 and, in *why, a static phrase saying what
 * is wrong ("unknown unit", ...) for the caller to put after the text. */
int sb_size_parse(const char *s, uint64_t *out, const char **why);

/* A memory capacity (a machine's mem_bytes, plot --mem-cap): a size in
 * 1 B .. 1 PiB, where a bare number below 1 MiB is refused as a likely
 * missing unit ("80" meant 80 GB; older --mem-cap read a bare number as GB,
 * and every value it took is below 1 MiB, so none is now read as bytes
 * silently).  Returns as sb_size_parse. */
#define SB_MAX_CAPACITY_BYTES (1ull << 50)
#define SB_MIN_BARE_CAPACITY_BYTES (1ull << 20)
int sb_size_capacity(const char *s, uint64_t *out, const char **why);

/* The units the parser knows, as a phrase for error messages. */
#define SB_SIZE_UNITS "B, KB, MB, GB, TB, PB (10^3 steps) or KiB, MiB, GiB, TiB, PiB (2^10 steps)"

#endif
