/* run --resume's journal reader (issue 42): the input is a journal, OUT.partial,
 * that the resumed sweep reads back.  The sweep is fixed: a four-node
 * workload under original and heft, in a folder of this process's own.  In
 * the input, "@ID@" stands for the sweep's id (it hashes the workload's path,
 * which holds the pid) and "@IN@" for the digest of the workload's inputs
 * (the "inputs" column), which the first call learns from a journal the
 * sweep itself leaves: its trace output is made to fail (the trace's path is
 * a folder), so run ends with exit 2 and keeps its rows.  Seeds in
 * tests/fuzz/seeds/resume use them.
 *
 * Whatever the journal, the run must refuse it (exit 2) or write a results
 * file that compare reads (a journal's extra column or garbled cell once gave
 * a file compare refused): the target aborts otherwise. */
#include "fuzz.h"
#include "cmd/commands.h"
#include "cmd/run.h"

#include <sys/stat.h>

static const char workload[] = "id,name,kind,inputs,cost_us,out_bytes\n"
                               "0,x,input,,,100\n"
                               "1,a,compute,0,10,200\n"
                               "2,b,compute,1,5,50\n"
                               "3,c,compute,1 2,7,10\n";
static char sweep_id[32], inputs[32];
static char dir[128], w_csv[160], r_csv[160], partial[180], trace_dir[160];

static int run(int resume, const char *trace_dir)
{
    char *av[16];
    int ac = 0;
    av[ac++] = "run";
    av[ac++] = "-q";
    av[ac++] = "-w";
    av[ac++] = w_csv;
    av[ac++] = "-s";
    av[ac++] = "original,heft";
    if (trace_dir)
        av[ac++] = "--trace-dir", av[ac++] = (char *)trace_dir;
    if (resume)
        av[ac++] = "--resume";
    av[ac++] = "-o";
    av[ac++] = r_csv;
    av[ac] = NULL;
    return sb_cmd_run(ac, av);
}

/* The sweep's id and its workload's digest, from the last two fields of the
 * journal's first row. */
static void learn(void)
{
    snprintf(dir, sizeof dir, "/tmp/sbfuzz.%ld.resume", (long)getpid());
    snprintf(w_csv, sizeof w_csv, "%s/w.csv", dir);
    snprintf(r_csv, sizeof r_csv, "%s/r.csv", dir);
    snprintf(partial, sizeof partial, "%s/r.csv.partial", dir);
    snprintf(trace_dir, sizeof trace_dir, "%s/t", dir);
    mkdir(dir, 0777);
    FILE *f = fopen(w_csv, "wb");
    if (!f)
        abort();
    fputs(workload, f);
    fclose(f);
    mkdir(trace_dir, 0777);
    char *blocked = sb_strf("%s/w__original.json", trace_dir);
    mkdir(blocked, 0777); /* the trace cannot be written there */
    free(blocked);
    remove(partial);
    if (run(0, trace_dir) != 2)
        abort();
    size_t n;
    char *j = sb_read_file(partial, &n);
    char *row = j ? strchr(j, '\n') : NULL;
    char *end = row ? strchr(row + 1, '\n') : NULL;
    if (!end)
        abort();
    *end = 0;
    char *last = strrchr(row, ','); /* inputs */
    *last = 0;
    char *cells = strrchr(row, ','); /* sweep_cells */
    *cells = 0;
    char *id = strrchr(row, ',');
    snprintf(inputs, sizeof inputs, "%s", last + 1);
    snprintf(sweep_id, sizeof sweep_id, "%s", id + 1);
    free(j);
}

/* data with @ID@ and @IN@ replaced, written as the journal */
static void write_journal(const uint8_t *data, size_t n)
{
    FILE *f = fopen(partial, "wb");
    if (!f)
        abort();
    for (size_t i = 0; i < n;) {
        if (n - i >= 4 && !memcmp(data + i, "@ID@", 4)) {
            fputs(sweep_id, f);
            i += 4;
        } else if (n - i >= 4 && !memcmp(data + i, "@IN@", 4)) {
            fputs(inputs, f);
            i += 4;
        } else
            fputc(data[i++], f);
    }
    fclose(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
    static int init;
    if (!init) {
        fuzz_quiet();
        sb_registry_add_builtins();
        learn();
        init = 1;
    }
    remove(r_csv);
    write_journal(data, n);
    int rc = run(1, NULL);
    if (rc != 2) {
        char *cmp[] = {"compare", r_csv, r_csv, NULL};
        if (sb_cmd_compare(3, cmp) == 2)
            abort(); /* run wrote a file compare refuses */
    }
    return 0;
}
