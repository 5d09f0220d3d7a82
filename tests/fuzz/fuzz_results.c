/* The results reader behind compare and merge, through the commands. */
#include "fuzz.h"
#include "cmd/commands.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_quiet();
    const char *path = fuzz_file(data, n, "csv");
    char out[160];
    snprintf(out, sizeof out, "/tmp/sbfuzz.%ld.merged.csv", (long)getpid());
    char *cmp[] = {"compare", (char *)path, (char *)path, NULL};
    char *mrg[] = {"merge", (char *)path, "-o", out, NULL};
    sb_cmd_compare(3, cmp);
    sb_cmd_merge(4, mrg);
    return 0;
}
