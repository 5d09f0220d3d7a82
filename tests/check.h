/* A tiny assertion helper in the spirit of Redis's testhelp.h: count, report,
 * keep going, and finish with the "N passed, N failed" line CTest logs show. */
#ifndef SB_CHECK_H
#define SB_CHECK_H

#include <math.h>
#include <stdio.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (cond)                                                              \
            check_passed++;                                                    \
        else {                                                                 \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
        }                                                                      \
    } while (0)

#define CHECK_EQ_U(a, b)                                                       \
    do {                                                                       \
        unsigned long long a_ = (a), b_ = (b);                                 \
        if (a_ == b_)                                                          \
            check_passed++;                                                    \
        else {                                                                 \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: %s == %llu, expected %llu\n", __FILE__,    \
                    __LINE__, #a, a_, b_);                                     \
        }                                                                      \
    } while (0)

#define CHECK_NEAR(a, b)                                                       \
    do {                                                                       \
        double a_ = (a), b_ = (b);                                             \
        if (fabs(a_ - b_) <= 1e-9 * (1 + fabs(b_)))                            \
            check_passed++;                                                    \
        else {                                                                 \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: %s == %.9g, expected %.9g\n", __FILE__,    \
                    __LINE__, #a, a_, b_);                                     \
        }                                                                      \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                            \
    do {                                                                       \
        const char *h_ = (hay), *n_ = (needle);                                \
        if (h_ && strstr(h_, n_))                                              \
            check_passed++;                                                    \
        else {                                                                 \
            check_failed++;                                                    \
            fprintf(stderr, "%s:%d: '%s' does not contain '%s'\n", __FILE__,   \
                    __LINE__, h_ ? h_ : "(null)", n_);                         \
        }                                                                      \
    } while (0)

static inline int check_report(void)
{
    printf("%d passed, %d failed\n", check_passed, check_failed);
    return check_failed ? 1 : 0;
}

#endif
