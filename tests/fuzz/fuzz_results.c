/* The results reader behind compare, merge and summary, through the
 * commands.  A form feed splits the input into two files, so that compare
 * pairs rows of two different files (by name, then by policy name) and not
 * only a file with itself. */
#include "fuzz.h"
#include "cmd/commands.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_quiet();
    const uint8_t *ff = memchr(data, '\f', n);
    size_t n_base = ff ? (size_t)(ff - data) : n;
    char base[160], next[160], out[160];
    snprintf(base, sizeof base, "%s", fuzz_file(data, n_base, "csv"));
    snprintf(next, sizeof next, "%s",
             ff ? fuzz_file(ff + 1, n - n_base - 1, "next.csv") : base);
    snprintf(out, sizeof out, "/tmp/sbfuzz.%ld.merged.csv", (long)getpid());
    char *cmp[] = {"compare", base, next, NULL};
    char *mrg[] = {"merge", base, "-o", out, NULL};
    char *sum[] = {"summary", base, NULL};
    char *sum_json[] = {"summary", base, "--format", "json", NULL};
    sb_cmd_compare(3, cmp);
    sb_cmd_merge(4, mrg);
    sb_cmd_summary(2, sum);
    sb_cmd_summary(4, sum_json);
    return 0;
}
