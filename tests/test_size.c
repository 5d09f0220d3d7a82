/* The size parser (core/size.c): a table of sizes as users write them and the
 * byte counts they mean, each worked out by hand in its comment, then texts
 * that must be refused and why. */
#include "check.h"
#include "core/size.h"

static const struct {
    const char *text;
    uint64_t bytes;
} good[] = {
    {"80GB", 80000000000ull},          /* 80 * 10^9 */
    {"80e9", 80000000000ull},          /* 80 * 10^9, no unit: bytes */
    {"80000000000", 80000000000ull},   /* plain bytes */
    {"80GiB", 85899345920ull},         /* 80 * 2^30 = 80 * 1073741824 */
    {"512MiB", 536870912ull},          /* 2^9 * 2^20 = 2^29 */
    {"1.5TB", 1500000000000ull},       /* 1.5 * 10^12 */
    {"1.5TiB", 1649267441664ull},      /* 1.5 * 2^40 = 1.5 * 1099511627776 */
    {"1PB", 1000000000000000ull},      /* 10^15 */
    {"1PiB", 1125899906842624ull},     /* 2^50 */
    {"1KB", 1000},                     /* 10^3 */
    {"1kib", 1024},                    /* 2^10; unit letters in any case */
    {"80gb", 80000000000ull},          /* "b" is bytes, not bits */
    {"80 GB", 80000000000ull},         /* spaces before the unit */
    {"0.5KiB", 512},                   /* 2^10 / 2 */
    {"2.5e-1KiB", 256},                /* 0.25 * 1024 */
    {"1e-3KB", 1},                     /* 10^-3 * 10^3 */
    {".5KB", 500},                     /* no digit before the point */
    {"1.1GiB", 1181116006ull},         /* 1.1 * 1073741824 = 1181116006.4, fraction dropped */
    {"7B", 7},                         /* the unit B alone */
    {"0", 0},                          /* zero is a size; a parameter's range decides */
    {"0e999999", 0},                   /* zero, however large the exponent */
    {"2.0B", 2},                       /* whole, written with a point */
    {"2.50e1", 25},                    /* 2.5 * 10 bytes, whole */
    {"18446744073709551615", 18446744073709551615ull}, /* 2^64 - 1, the largest */
    {"18446744.073709551615e12", 18446744073709551615ull}, /* the same, point moved 12 */
    {"16383PiB", 18445618173802708992ull}, /* 2^64 - 2^50 = 18446744073709551616 -
                                              1125899906842624 */
};

static const struct {
    const char *text;
    const char *why; /* a part of the reason */
} bad[] = {
    {"", "not a number"},
    {"GB", "not a number"},
    {"-1GB", "negative"},
    {"-0", "negative"},
    {"+1GB", "not a number"},
    {"0x10", "hexadecimal"},
    {"0x1p3", "hexadecimal"},
    {"inf", "not a number"},
    {"nan", "not a number"},
    {"1e", "exponent without digits"},
    {"1e+", "exponent without digits"},
    {"80G", "ambiguous"},
    {"80k", "ambiguous"},
    {"80XB", "unknown unit"},
    {"80GBs", "unknown unit"},
    {"1.2.3", "unknown unit"},
    {"80GB!", "unknown unit"},
    {"18446744073709551616", "above 18446744073709551615"}, /* 2^64 */
    {"16384PiB", "above 18446744073709551615"},             /* 2^14 * 2^50 = 2^64 */
    {"18446744073709551615.9e1", "above 18446744073709551615"},
    {"1e20", "above 18446744073709551615"},
    {"1e999999", "above 18446744073709551615"},
    /* a number in bytes must be whole: "1.5B" was read as 1 byte */
    {"1.5B", "a fraction of a byte"},
    {"0.5", "a fraction of a byte"},
    {"1e-999999", "a fraction of a byte"},
    /* 41 significant digits */
    {"12345678901234567890123456789012345678901", "more than 40 significant digits"},
};

static void test_good(void)
{
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        uint64_t v = 12345;
        const char *why = NULL;
        int rc = sb_size_parse(good[i].text, &v, &why);
        if (rc)
            fprintf(stderr, "'%s' refused: %s\n", good[i].text, why);
        CHECK(rc == 0);
        CHECK_EQ_U(v, good[i].bytes);
    }
}

static void test_bad(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t v = 12345;
        const char *why = NULL;
        int rc = sb_size_parse(bad[i].text, &v, &why);
        if (rc == 0)
            fprintf(stderr, "'%s' accepted as %llu\n", bad[i].text, (unsigned long long)v);
        CHECK(rc != 0);
        CHECK_CONTAINS(why, bad[i].why);
        CHECK_EQ_U(v, 12345); /* untouched */
    }
}

/* Capacities (a machine's mem_bytes, plot --mem-cap): 1 B .. 1 PiB, and a
 * bare number below 1 MiB (2^20 = 1048576) refused as a missing unit. */
static void test_capacity(void)
{
    static const struct {
        const char *text;
        uint64_t bytes; /* 0: refused, with why containing the phrase */
        const char *why;
    } cases[] = {
        {"80GB", 80000000000ull, NULL},
        {"80gb", 80000000000ull, NULL},       /* the case of the unit does not matter */
        {"80 GiB", 85899345920ull, NULL},     /* 80 * 2^30 */
        {"80e9", 80000000000ull, NULL},       /* a bare number is bytes */
        {"1048576", 1048576, NULL},           /* 2^20: the least bare number */
        {"2500B", 2500, NULL},                /* with its unit, so few bytes are meant */
        {"1B", 1, NULL},
        {"1PiB", 1125899906842624ull, NULL},  /* 2^50: the most */
        {"1048575", 0, "below 1 MiB without a unit"},
        {"80", 0, "below 1 MiB without a unit"}, /* --mem-cap 80 was 80 GB */
        {"0B", 0, "zero bytes"},
        {"1025TiB", 0, "above 1 PiB"},         /* 1025 * 2^40 > 2^50 */
        {"1.5B", 0, "a fraction of a byte"},
        {"80G", 0, "ambiguous"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint64_t v = 12345;
        const char *why = NULL;
        int rc = sb_size_capacity(cases[i].text, &v, &why);
        if (cases[i].bytes) {
            CHECK(rc == 0);
            CHECK_EQ_U(v, cases[i].bytes);
        } else {
            CHECK(rc != 0);
            CHECK_CONTAINS(why, cases[i].why);
            CHECK_EQ_U(v, 12345);
        }
    }
}

int main(void)
{
    test_good();
    test_bad();
    test_capacity();
    return check_report();
}
