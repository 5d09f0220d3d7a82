/* The Inductor conformance case reader, a case's graph and the policy it
 * names, through `schedbench conform DIR` on a folder holding one case: the
 * bytes before a "\n#graph\n" line are NAME.icase, those after it NAME.csv
 * (without the marker, the graph of a small fixed case). */
#include "fuzz.h"
#include "cmd/conform.h"

#include <sys/stat.h>

static const char fixed_csv[] =
    "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group,comm_us,flags\n"
    "0,a,input,,,,64,,,,,\n"
    "1,ar,start,0,all_reduce,,64,all_reduce,64,2,1,\n"
    "2,w,done,1,,,,,,,,\n"
    "3,mm,compute,0 0,mm,1,64,,,,,\n"
    "4,out,compute,2 3,mm,1,64,,,,,output\n";

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    fwrite(p, 1, n, f);
    fclose(f);
}

/* Only the policies the cases exercise: another policy's search (dp with a
 * large budget) would be fuzz_workload's business and could time out here. */
static int policy_allowed(const uint8_t *data, size_t n)
{
    static const char *const ok[] = {"reorder_compute_and_comm_for_overlap",
                                     "reorder_communication_preserving_peak_memory",
                                     "sink_waits_iterative", "overlap_scheduling",
                                     "reorder_for_peak_memory", "simple_overlap", "original"};
    for (size_t i = 0; i + 7 <= n; i++) {
        if ((i && data[i - 1] != '\n') || memcmp(data + i, "policy ", 7))
            continue;
        size_t a = i + 7, b = a;
        while (a < n && (data[a] == ' ' || data[a] == '\t'))
            a++;
        for (b = a; b < n && data[b] != ':' && data[b] != '\n' && data[b] != ' ' &&
                    data[b] != '\t' && data[b] != '\r' && data[b] != '#';
             b++)
            ;
        int found = 0;
        for (size_t k = 0; k < sizeof ok / sizeof ok[0]; k++)
            found |= strlen(ok[k]) == b - a && !memcmp(ok[k], data + a, b - a);
        if (!found)
            return 0;
    }
    return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static int init;
    fuzz_quiet();
    if (!init)
        sb_registry_add_builtins(), init = 1;
    if (!policy_allowed(data, n))
        return 0;
    char dir[128], path[192];
    snprintf(dir, sizeof dir, "/tmp/sbfuzz.%ld.icase", (long)getpid());
    mkdir(dir, 0777);
    static const char mark[] = "\n#graph\n";
    const uint8_t *cut = NULL;
    for (size_t i = 0; i + sizeof mark - 1 <= n && !cut; i++)
        if (!memcmp(data + i, mark, sizeof mark - 1))
            cut = data + i;
    size_t n_case = cut ? (size_t)(cut - data) : n;
    snprintf(path, sizeof path, "%s/f.icase", dir);
    write_file(path, data, n_case);
    snprintf(path, sizeof path, "%s/f.csv", dir);
    if (cut)
        write_file(path, cut + sizeof mark - 1, n - n_case - (sizeof mark - 1));
    else
        write_file(path, fixed_csv, sizeof fixed_csv - 1);
    sb_conform_inductor(dir, NULL, NULL, NULL);
    return 0;
}
