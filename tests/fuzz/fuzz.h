/* Shared by the libFuzzer targets (docs/fuzzing.md): a per-process scratch
 * file for parsers that read paths, and the plugin registry set up once. */
#ifndef SB_FUZZ_H
#define SB_FUZZ_H

#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h"

/* Writes data to /tmp/sbfuzz.<pid>.<ext> and returns that path (static). */
static inline const char *fuzz_file(const uint8_t *data, size_t n, const char *ext)
{
    static char path[128];
    snprintf(path, sizeof path, "/tmp/sbfuzz.%ld.%s", (long)getpid(), ext);
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(data, 1, n, f);
    fclose(f);
    return path;
}

/* Commands print their results; the fuzzer only cares that they return. */
static inline void fuzz_quiet(void)
{
    static int done;
    if (!done && freopen("/dev/null", "w", stdout))
        done = 1;
}

#endif
