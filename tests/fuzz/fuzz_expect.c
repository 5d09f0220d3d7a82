/* The conformance `.expect` reader: a fixed, valid HLO test beside the fuzzed
 * expectations, run through `schedbench conform`. */
#include "fuzz.h"
#include "cmd/conform.h"

#include <sys/stat.h>

static const char hlo[] =
    "HloModule t\n\nENTRY main {\n  p = f32[16] parameter(0)\n"
    "  s = (f32[16], f32[32]) all-gather-start(p), dimensions={0}, replica_groups={{0,1}}\n"
    "  d = f32[32] all-gather-done(s)\n  ROOT r = f32[32] add(d, d)\n}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    fuzz_quiet();
    char dir[128], path[192];
    snprintf(dir, sizeof dir, "/tmp/sbfuzz.%ld.conform", (long)getpid());
    mkdir(dir, 0777);
    snprintf(path, sizeof path, "%s/t.hlo", dir);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fputs(hlo, f);
    fclose(f);
    snprintf(path, sizeof path, "%s/t.expect", dir);
    if (!(f = fopen(path, "wb")))
        abort();
    fwrite(data, 1, n, f);
    fclose(f);
    char *argv[] = {"conform", dir, NULL};
    sb_cmd_conform(2, argv);
    return 0;
}
