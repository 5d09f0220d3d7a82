/* The ggml scheduler case reader and the scheduler itself, through
 * `schedbench conform DIR` on a folder holding the fuzzed case. */
#include "fuzz.h"
#include "cmd/conform.h"

#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_quiet();
    char dir[128], path[192];
    snprintf(dir, sizeof dir, "/tmp/sbfuzz.%ld.ggml", (long)getpid());
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/f.case", dir);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, n, f);
    fclose(f);
    sb_conform_ggml(dir);
    return 0;
}
