/* The strict number readers (core/num.c): texts and the values they mean,
 * each worked out by hand, then texts that must be refused and why, in the
 * spirit of test_size. */
#include "check.h"
#include "core/num.h"

#include <stdint.h>

static const struct {
    const char *text;
    uint64_t lo, hi, value;
} good_u[] = {
    {"0", 0, 10, 0},
    {"7", 1, 256, 7},
    {"007", 1, 256, 7},                  /* leading zeros are still decimal */
    {"256", 1, 256, 256},                /* the range is inclusive */
    {"4294967295", 1, 4294967295u, 4294967295u},             /* 2^32 - 1 */
    {"18446744073709551615", 0, UINT64_MAX, UINT64_MAX},     /* 2^64 - 1 */
};

static const struct {
    const char *text;
    uint64_t lo, hi;
    const char *why;
} bad_u[] = {
    {"", 0, 10, "not a number"},
    {" 5", 0, 10, "not a number"},        /* strtoul skips the blank */
    {"+5", 0, 10, "not a number"},        /* and takes the sign */
    {"-1", 0, 10, "negative"},            /* strtoul: 2^64 - 1 */
    {"5 ", 0, 10, "not a number"},
    {"5x", 0, 10, "not a number"},
    {"0x10", 0, 100, "hexadecimal"},
    {"1e3", 0, 10000, "not an integer"},  /* a real, not an integer */
    {"4.0", 0, 10, "not an integer"},
    {"0", 1, 10, "below the minimum"},
    {"257", 1, 256, "above the maximum"},
    {"4294967297", 1, 4294967295u, "above the maximum"}, /* sscanf %u: 1 */
    {"18446744073709551616", 0, UINT64_MAX, "above the maximum"}, /* 2^64 */
    {"99999999999999999999999", 0, UINT64_MAX, "above the maximum"},
};

static const struct {
    const char *text;
    double lo, hi, value;
} good_r[] = {
    {"12", 0, 100, 12},
    {"1.5", 0, 100, 1.5},
    {".5", 0, 100, 0.5},
    {"5.", 0, 100, 5},
    {"2e-3", 0, 1, 0.002},
    {"2E+3", 0, 1e4, 2000},
    {"-0", -1, 1, 0},                     /* zero, +0 whatever its sign */
    {"-2.5", -10, 10, -2.5},              /* a sign where the range is negative */
    {"1e-400", 0, 1, 0},                  /* underflows to 0, which is in range */
    {"1e12", 0, 1e12, 1e12},
};

static const struct {
    const char *text;
    double lo, hi;
    const char *why;
} bad_r[] = {
    {"", 0, 1, "not a number"},
    {".", 0, 1, "not a number"},
    {"+1", 0, 10, "not a number"},
    {" 1", 0, 10, "not a number"},
    {"1 ", 0, 10, "not a number"},
    {"-1", 0, 10, "negative"},
    {"-0", 0, 10, "negative"},            /* no sign where none is meant (as size.h) */
    {"0x10", 0, 100, "hexadecimal"},
    {"0x1p3", 0, 100, "hexadecimal"},     /* strtod: 8 */
    {"inf", 0, 1e300, "not a number"},
    {"nan", 0, 1, "not a number"},
    {"infinity", 0, 1e300, "not a number"},
    {"1e", 0, 10, "an exponent without digits"},
    {"1e+", 0, 10, "an exponent without digits"},
    {"1.2.3", 0, 10, "not a number"},
    {"1e400", 0, 1e300, "above the maximum"},   /* strtod: HUGE_VAL */
    {"1e300", 0, 1e12, "above the maximum"},
    {"1e-10", 1e-9, 1, "below the minimum"},
};

static void test_u64(void)
{
    for (size_t i = 0; i < sizeof good_u / sizeof good_u[0]; i++) {
        uint64_t v = 12345;
        const char *why = NULL;
        int rc = sb_num_u64(good_u[i].text, good_u[i].lo, good_u[i].hi, &v, &why);
        if (rc)
            fprintf(stderr, "'%s' refused: %s\n", good_u[i].text, why);
        CHECK(rc == 0);
        CHECK_EQ_U(v, good_u[i].value);
    }
    for (size_t i = 0; i < sizeof bad_u / sizeof bad_u[0]; i++) {
        uint64_t v = 12345;
        const char *why = NULL;
        int rc = sb_num_u64(bad_u[i].text, bad_u[i].lo, bad_u[i].hi, &v, &why);
        if (rc == 0)
            fprintf(stderr, "'%s' accepted as %llu\n", bad_u[i].text, (unsigned long long)v);
        CHECK(rc != 0);
        CHECK_CONTAINS(why, bad_u[i].why);
        CHECK_EQ_U(v, 12345);
    }
}

static void test_real(void)
{
    for (size_t i = 0; i < sizeof good_r / sizeof good_r[0]; i++) {
        double v = 12345;
        const char *why = NULL;
        int rc = sb_num_real(good_r[i].text, good_r[i].lo, good_r[i].hi, &v, &why);
        if (rc)
            fprintf(stderr, "'%s' refused: %s\n", good_r[i].text, why);
        CHECK(rc == 0);
        CHECK(v == good_r[i].value);
        CHECK(!signbit(v) || good_r[i].value < 0); /* "-0" is +0 */
    }
    for (size_t i = 0; i < sizeof bad_r / sizeof bad_r[0]; i++) {
        double v = 12345;
        const char *why = NULL;
        int rc = sb_num_real(bad_r[i].text, bad_r[i].lo, bad_r[i].hi, &v, &why);
        if (rc == 0)
            fprintf(stderr, "'%s' accepted as %g\n", bad_r[i].text, v);
        CHECK(rc != 0);
        CHECK_CONTAINS(why, bad_r[i].why);
        CHECK(v == 12345);
    }
}

static void test_shard(void)
{
    uint32_t k = 0, n = 0;
    const char *why = NULL;
    CHECK(sb_num_shard("1/4", 4294967295u, &k, &n, &why) == 0);
    CHECK_EQ_U(k, 1);
    CHECK_EQ_U(n, 4);
    CHECK(sb_num_shard("4/4", 4294967295u, &k, &n, &why) == 0);
    CHECK_EQ_U(k, 4);
    /* 2^32 + 1: sscanf("%u") read it as 1, and the run as 1/1 */
    CHECK(sb_num_shard("1/4294967297", 4294967295u, &k, &n, &why) != 0);
    CHECK_CONTAINS(why, "above the maximum");
    CHECK(sb_num_shard("5/4", 4294967295u, &k, &n, &why) != 0);
    CHECK_CONTAINS(why, "K above N");
    CHECK(sb_num_shard("123456789012345678901234567/4", 4294967295u, &k, &n, &why) != 0);
    CHECK_CONTAINS(why, "K above N");
    CHECK(sb_num_shard("0/4", 4294967295u, &k, &n, &why) != 0);
    CHECK_CONTAINS(why, "below the minimum");
    CHECK(sb_num_shard("1/0", 4294967295u, &k, &n, &why) != 0);
    CHECK(sb_num_shard("1/4x", 4294967295u, &k, &n, &why) != 0);
    CHECK(sb_num_shard("1 /4", 4294967295u, &k, &n, &why) != 0);
    CHECK(sb_num_shard("/4", 4294967295u, &k, &n, &why) != 0);
    CHECK(sb_num_shard("14", 4294967295u, &k, &n, &why) != 0);
    CHECK_CONTAINS(why, "not K/N");
    CHECK(sb_num_shard("1/2/3", 4294967295u, &k, &n, &why) != 0);
    CHECK(sb_num_shard("1/5", 4, &k, &n, &why) != 0); /* N past the caller's limit */
    CHECK_EQ_U(k, 4);                                  /* untouched since 4/4 */
}

int main(void)
{
    test_u64();
    test_real();
    test_shard();
    return check_report();
}
