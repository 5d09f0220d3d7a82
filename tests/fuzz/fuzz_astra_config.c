/* ASTRA-sim's system JSON and network YAML readers, then one collective on
 * what they accept: the first byte picks the reader. */
#include "fuzz.h"
#include "net/astra.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    if (n < 1)
        return 0;
    struct sb_astra_config c;
    struct sb_err e;
    sb_astra_defaults(&c);
    int json = data[0] & 1;
    const char *path = fuzz_file(data + 1, n - 1, json ? "json" : "yml");
    int rc = json ? sb_astra_load_system(path, &c, &e) : sb_astra_load_network(path, &c, &e);
    if (!rc && c.npus[0] <= 64 && c.splits <= 64)
        sb_astra_collective(&c, SB_OP_ALL_REDUCE, 1 << 16, &e);
    return 0;
}
