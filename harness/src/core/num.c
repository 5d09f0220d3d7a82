/* Numbers read whole and strictly (num.h has the grammar).
 *
 * The C library's readers are too lenient for values a user types: strtoul
 * takes a sign and blanks ("-1" is 2^64 - 1), sscanf's %u wraps
 * ("4294967297" is 1), strtod takes hexadecimal floats, inf and nan, and
 * every one of them stops at the first character it does not know.  Here the
 * text is checked against the grammar first; only then does strtod round it
 * (it rounds decimal text correctly) or the integer get summed digit by digit
 * with an overflow check. */
#define _POSIX_C_SOURCE 200809L
#include "core/num.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int sb_num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, const char **why)
{
    uint64_t v = 0;
    const char *c = s;
    if (*c == '-')
        return *why = "negative", -1;
    if (!is_digit(*c))
        return *why = "not a number", -1;
    if (c[0] == '0' && (c[1] == 'x' || c[1] == 'X'))
        return *why = "hexadecimal", -1;
    for (; is_digit(*c); c++) {
        if (v > (UINT64_MAX - (uint64_t)(*c - '0')) / 10)
            return *why = "above the maximum", -1;
        v = v * 10 + (uint64_t)(*c - '0');
    }
    if (*c == '.' || *c == 'e' || *c == 'E')
        return *why = "not an integer", -1;
    if (*c)
        return *why = "not a number", -1;
    if (v < lo)
        return *why = "below the minimum", -1;
    if (v > hi)
        return *why = "above the maximum", -1;
    *out = v;
    return 0;
}

/* Whether s is a decimal number: [-]digits[.digits][e[+-]digits], with at
 * least one digit before the exponent. */
static const char *decimal_syntax(const char *s)
{
    const char *c = s;
    int digits = 0;
    if (*c == '-')
        c++;
    if (c[0] == '0' && (c[1] == 'x' || c[1] == 'X'))
        return "hexadecimal";
    for (; is_digit(*c); c++)
        digits++;
    if (*c == '.')
        for (c++; is_digit(*c); c++)
            digits++;
    if (!digits)
        return "not a number";
    if (*c == 'e' || *c == 'E') {
        c += 1 + (c[1] == '+' || c[1] == '-');
        if (!is_digit(*c))
            return "an exponent without digits";
        while (is_digit(*c))
            c++;
    }
    return *c ? "not a number" : NULL;
}

int sb_num_real(const char *s, double lo, double hi, double *out, const char **why)
{
    const char *w = decimal_syntax(s);
    if (w)
        return *why = w, -1;
    if (s[0] == '-' && lo >= 0)
        return *why = "negative", -1;
    errno = 0;
    double v = strtod(s, NULL) + 0.0; /* + 0.0: "-0" is 0 */
    /* ERANGE on underflow gives a tiny number or 0, which the range judges;
     * on overflow HUGE_VAL, which is above any range */
    if (!isfinite(v) || v > hi)
        return *why = "above the maximum", -1;
    if (v < lo)
        return *why = "below the minimum", -1;
    *out = v;
    return 0;
}

int sb_num_shard(const char *s, uint32_t max_n, uint32_t *k, uint32_t *n, const char **why)
{
    const char *slash = strchr(s, '/');
    uint64_t a, b;
    if (!slash)
        return *why = "not K/N", -1;
    size_t len = (size_t)(slash - s);
    char head[24];
    if (len == 0 || len >= sizeof head)
        return *why = len ? "K above N" : "not K/N", -1;
    memcpy(head, s, len);
    head[len] = 0;
    if (sb_num_u64(slash + 1, 1, max_n, &b, why))
        return -1;
    if (sb_num_u64(head, 1, b, &a, why))
        return *why = !strcmp(*why, "above the maximum") ? "K above N" : *why, -1;
    *k = (uint32_t)a;
    *n = (uint32_t)b;
    return 0;
}
