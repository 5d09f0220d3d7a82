/* The machine description reader (libyaml). */
#include "fuzz.h"
#include "core/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    struct sb_err e;
    sb_machine_free(sb_machine_load(fuzz_file(data, n, "yaml"), &e));
    return 0;
}
