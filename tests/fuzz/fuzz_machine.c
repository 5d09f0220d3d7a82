/* The machine description reader (libyaml).  A machine it accepts keeps
 * every value within core/num.h's ceilings (issue 42): an accepted value
 * beyond one is a crash here. */
#include "fuzz.h"
#include "core/machine.h"
#include "core/num.h"
#include "core/size.h"

static void check(const struct sb_machine *m)
{
    uint32_t nd = m->v.n_devices;
    for (uint32_t a = 0; a < nd; a++) {
        if (!(m->speed[a] >= SB_MIN_SPEED && m->speed[a] <= SB_MAX_SPEED))
            abort();
        for (uint32_t i = 0; i < m->n_op_speed[a]; i++)
            if (!(m->op_speed[a][i] >= SB_MIN_SPEED && m->op_speed[a][i] <= SB_MAX_SPEED))
                abort();
        if (m->cap[a] != SB_MEM_UNLIMITED && (m->cap[a] < 1 || m->cap[a] > SB_MAX_CAPACITY_BYTES))
            abort();
        if (m->has_roof[a] && !(m->roof[a].launch_us >= 0 && m->roof[a].launch_us <= SB_MAX_TIME_US))
            abort();
        for (uint32_t b = 0; b < nd; b++) {
            size_t i = (size_t)a * nd + b;
            if (a != b && !(m->gbps[i] >= SB_MIN_GBPS && m->gbps[i] <= SB_MAX_GBPS))
                abort();
            if (!(m->lat_us[i] >= 0 && m->lat_us[i] <= SB_MAX_TIME_US))
                abort();
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    struct sb_err e;
    struct sb_machine *m = sb_machine_load(fuzz_file(data, n, "yaml"), &e);
    if (m)
        check(m);
    sb_machine_free(m);
    return 0;
}
