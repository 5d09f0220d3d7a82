/* Sizes as a person writes them, read exactly (size.h has the grammar).
 *
 * The number is kept as its decimal digits, not as a double: a double holds
 * integers exactly only up to 2^53, so "18446744073709551616" (2^64) and
 * "18446744073709551615" would both round to 2^64 and the overflow check
 * could not tell them apart.  A binary unit multiplies the digits by 1024 per
 * step, a decimal unit and the exponent only move the decimal point, and the
 * digits left of the point are the count. */
#include "core/size.h"

#include <ctype.h>
#include <string.h>

/* pass 3 multiplies by 1024 up to five times (PiB), 4 more digits each */
#define SIZE_ROOM (SB_SIZE_MAX_DIGITS + 5 * 4)
/* |exponent| past which the answer is decided anyway: 0, or above 2^64 */
#define SIZE_EXP_LIMIT 100000

struct size_dec {
    uint8_t digit[SIZE_ROOM]; /* [n] significant digits, least significant first */
    int n;                    /* 0: the number is zero */
    long exp10;               /* value = digits * 10^exp10 */
};

static const struct {
    const char *name;
    int binary; /* 0: steps of 10^3, 1: steps of 2^10 */
    int steps;
} units[] = {
    {"B", 0, 0},   {"KB", 0, 1},  {"MB", 0, 2},  {"GB", 0, 3},  {"TB", 0, 4},  {"PB", 0, 5},
    {"KiB", 1, 1}, {"MiB", 1, 2}, {"GiB", 1, 3}, {"TiB", 1, 4}, {"PiB", 1, 5},
};

static int same_letters(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return 0;
    return *a == *b;
}

/* pass 1: digits, fraction and exponent of the number at *s; *s moves past it */
static const char *read_number(const char **s, struct size_dec *d)
{
    const char *c = *s;
    uint8_t msd[SB_SIZE_MAX_DIGITS]; /* most significant first */
    int n = 0, n_frac = 0, any = 0, point = 0;
    if (*c == '-')
        return "negative";
    for (;; c++) {
        if (*c == '.' && !point) {
            point = 1;
            continue;
        }
        if (*c < '0' || *c > '9')
            break;
        any = 1;
        n_frac += point;
        if (n == 0 && *c == '0')
            continue; /* a leading zero, not significant */
        if (n == SB_SIZE_MAX_DIGITS)
            return "more than 40 significant digits";
        msd[n++] = (uint8_t)(*c - '0');
    }
    if (!any)
        return "not a number";
    if ((*c == 'x' || *c == 'X') && c - *s == 1)
        return "hexadecimal";
    long exp = 0;
    if (*c == 'e' || *c == 'E') {
        int neg = c[1] == '-';
        c += 1 + (c[1] == '-' || c[1] == '+');
        if (*c < '0' || *c > '9')
            return "an exponent without digits (write 80e9)";
        for (; *c >= '0' && *c <= '9'; c++)
            if (exp < SIZE_EXP_LIMIT)
                exp = exp * 10 + (*c - '0');
        exp = neg ? -exp : exp;
    }
    for (int i = 0; i < n; i++)
        d->digit[i] = msd[n - 1 - i];
    d->n = n;
    d->exp10 = exp - n_frac;
    *s = c;
    return NULL;
}

/* pass 3 for a binary unit: digits times 1024, in place */
static void times_1024(struct size_dec *d)
{
    unsigned carry = 0;
    for (int i = 0; i < d->n; i++) {
        unsigned x = d->digit[i] * 1024u + carry;
        d->digit[i] = (uint8_t)(x % 10);
        carry = x / 10;
    }
    for (; carry; carry /= 10)
        d->digit[d->n++] = (uint8_t)(carry % 10);
}

/* pass 4: the whole bytes, dropping any fraction of a byte left by a unit
 * ("1.1GiB"); a number written in bytes (no unit, or B) must be whole: "1.5B"
 * is no count of bytes (1.5 billion was meant).  NULL, or why not. */
static const char *to_count(const struct size_dec *d, int in_bytes, uint64_t *out)
{
    /* the lowest digit left of the point; digits below it are a fraction */
    long lo = d->exp10 < 0 ? -d->exp10 : 0;
    long zeros = d->exp10 > 0 ? d->exp10 : 0;
    uint64_t v = 0;
    for (long i = 0; in_bytes && i < lo && i < d->n; i++)
        if (d->digit[i])
            return "a fraction of a byte (a count of bytes is whole; 1.5GB is 1.5 * 10^9)";
    for (long i = (long)d->n - 1; i >= lo; i--) {
        if (v > (UINT64_MAX - d->digit[i]) / 10)
            return "above 18446744073709551615 bytes (2^64 - 1)";
        v = v * 10 + d->digit[i];
    }
    for (long i = 0; i < zeros && v; i++) { /* at most 20 steps before it overflows */
        if (v > UINT64_MAX / 10)
            return "above 18446744073709551615 bytes (2^64 - 1)";
        v *= 10;
    }
    *out = v;
    return NULL;
}

int sb_size_parse(const char *s, uint64_t *out, const char **why)
{
    struct size_dec d;
    const char *c = s, *w = read_number(&c, &d);
    if (w)
        return *why = w, -1;
    while (*c == ' ')
        c++;
    /* pass 2: the unit, the whole rest of the text */
    size_t k = 0;
    if (*c) {
        while (k < sizeof units / sizeof units[0] && !same_letters(c, units[k].name))
            k++;
        if (k == sizeof units / sizeof units[0])
            return *why = c[1] == 0 && strchr("KMGTPkmgtp", c[0])
                              ? "a unit letter alone is ambiguous: 80GB is 80 * 10^9 bytes, "
                                "80GiB 80 * 2^30"
                              : "unknown unit",
                   -1;
    }
    /* pass 3: the unit's factor */
    if (*c && units[k].binary)
        for (int i = 0; i < units[k].steps && d.n; i++)
            times_1024(&d);
    else if (*c)
        d.exp10 += 3 * units[k].steps;
    w = to_count(&d, !*c || units[k].steps == 0, out);
    return w ? (*why = w, -1) : 0;
}

int sb_size_capacity(const char *s, uint64_t *out, const char **why)
{
    uint64_t v;
    if (sb_size_parse(s, &v, why))
        return -1;
    /* every unit ends in B (any case), and a number that parsed has no B */
    if (!strpbrk(s, "bB") && v < SB_MIN_BARE_CAPACITY_BYTES)
        return *why = "below 1 MiB without a unit: a bare number is bytes (write 80GB for "
                      "80 * 10^9 bytes, or 2500B for so few)", -1;
    if (v < 1)
        return *why = "zero bytes", -1;
    if (v > SB_MAX_CAPACITY_BYTES)
        return *why = "above 1 PiB (2^50 bytes)", -1;
    *out = v;
    return 0;
}
