/* Machine descriptions (loader and its errors) and the multi-device simulator
 * on a graph small enough to work out on paper; each expected value is derived
 * in the comment above it. */
#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "core/machine.h"

#include <stdlib.h>

static const char *write_tmp(const char *name, const char *text)
{
    static char path[600];
    snprintf(path, sizeof path, "%s/%s", SB_TEST_TMP, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return NULL;
    fputs(text, f);
    fclose(f);
    return path;
}

/* Loads `text` as a machine; returns NULL and the message in e on error. */
static struct sb_machine *load_text(const char *text, struct sb_err *e)
{
    const char *p = write_tmp("machine.yaml", text);
    CHECK(p != NULL);
    return p ? sb_machine_load(p, e) : NULL;
}

static void test_good(void)
{
    struct sb_err e;
    struct sb_machine *m = load_text(
        "devices:\n"
        "  - {name: g0, kind: gpu, mem_bytes: 1000B, units: 4}\n"
        "  - name: c0\n"
        "    kind: cpu\n"
        "    speed: {default: 0.5, embed: 3}\n"
        "    ops: [embed, add]\n"
        "links:\n"
        "  default: {gbps: 10, latency_us: 5}\n"
        "  pairs:\n"
        "    - {from: g0, to: c0, gbps: 40, latency_us: 1, both: true}\n",
        &e);
    CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    const struct sb_machine_view *v = &m->v;
    CHECK_EQ_U(v->n_devices, 2);
    CHECK(!strcmp(v->dev_name[1], "c0"));
    CHECK_EQ_U(v->dev_kind[0], SB_DEV_GPU);
    CHECK_EQ_U(v->dev_kind[1], SB_DEV_CPU);
    CHECK_EQ_U(v->mem_cap_bytes[0], 1000);
    CHECK(v->mem_cap_bytes[1] == SB_MEM_UNLIMITED);
    CHECK_EQ_U(v->units[0], 4);
    CHECK_EQ_U(v->units[1], 1);
    /* the pair overrides the default both ways */
    CHECK_NEAR(v->link_gbps[0 * 2 + 1], 40);
    CHECK_NEAR(v->link_gbps[1 * 2 + 0], 40);
    CHECK_NEAR(v->link_lat_us[1 * 2 + 0], 1);
    CHECK_EQ_U(v->can_read[0], 1);
    CHECK_EQ_U(v->can_read[1], 0);
    sb_machine_free(m);
}

/* Each bad input names the line and column (1-based, counted by hand) of the
 * offending node. */
static void test_bad(void)
{
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"devices:\n  - {name: a, colour: red}\n", ":2:15: unknown device key 'colour'"},
        {"devices:\n  - {name: a, kind: tpu}\n", ":2:21: kind 'tpu' is not gpu"},
        {"devices:\n  - {name: a}\n  - {name: a}\n", ":3:12: device 'a' is named twice"},
        {"devices:\n  - {name: a, speed: -1}\n", ":2:22: speed must be a finite number"},
        {"devices:\n  - {name: a}\n  - {name: b}\n", ":1:1: no link a->b"},
        {"devices:\n  - {name: a}\n  - {name: b}\nlinks:\n  pairs:\n"
         "    - {from: a, to: z, gbps: 1}\n",
         ":6:21: 'z' is not a device of this machine"},
        {"devices: [\n", ":2:1: "},
        {"devices: []\n", ":1:10: devices: between 1 and 1024"},
        {"devs: []\n", ":1:1: unknown key 'devs'"},
        {"devices:\n  - {name: a, units: 1.5}\n", ":2:22: units must be an integer"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct sb_err e;
        struct sb_machine *m = load_text(cases[i].text, &e);
        CHECK(m == NULL);
        sb_machine_free(m);
        if (!m && !strstr(e.msg, cases[i].want)) {
            CHECK(0);
            fprintf(stderr, "case %zu: got '%s', want '...%s'\n", i, e.msg, cases[i].want);
        }
    }
}

static struct sb_graph *load_two(const struct sb_machine **mp)
{
    struct sb_err e;
    struct sb_cost_params c;
    static struct sb_machine *m;
    m = sb_machine_load(SB_TEST_DATA "/two_dev.yaml", &e);
    struct sb_graph *g = m ? sb_graph_load(SB_TEST_DATA "/two_dev.csv", &e) : NULL;
    if (g) {
        sb_cost_defaults(&c);
        sb_cost_apply(&c, g);
    }
    if (!g || sb_machine_apply(m, g, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        sb_graph_free(g);
        sb_machine_free(m);
        *mp = NULL;
        return NULL;
    }
    *mp = m;
    return g;
}

/* x, a on gpu0; b on gpu1; c on gpu0; order x a b c; `bar` sets a barrier
 * after position `bar` (-1: none). */
static void sim_two(const struct sb_graph *g, int bar, struct sb_sim_result *r)
{
    static const int32_t dev[4] = {0, 0, 1, 0};
    struct sb_schedule s;
    struct sb_sim_config c;
    struct sb_err e;
    sb_sim_defaults(&c);
    sb_schedule_init(&s, g, 2);
    for (uint32_t i = 0; i < 4; i++) {
        s.order[i] = i;
        s.device[i] = dev[i];
    }
    if (bar >= 0)
        s.barrier[bar] = 1;
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    sb_sim_run(g, &s, &c, r);
    sb_schedule_free(&s);
}

static void test_two_devices(void)
{
    const struct sb_machine *m;
    struct sb_graph *g = load_two(&m);
    struct sb_sim_result r;
    CHECK(g != NULL);
    if (!g)
        return;
    sim_two(g, -1, &r);
    /* a on gpu0 0..10.  b on gpu1 needs x: link 0->1 (1 GB/s = 1000 B/us,
     * 2 us latency) copies 1000 B in 0..3; b takes 20/2 = 10: 3..13.  c on
     * gpu0 needs b: link 1->0 (2 GB/s, 1 us) copies 2000 B in 13..15; c
     * 15..20. */
    CHECK_NEAR(r.makespan_us, 20);
    CHECK_EQ_U(r.transfer_bytes, 3000);
    CHECK_EQ_U(r.n_transfers, 2);
    CHECK_EQ_U(r.devices_used, 2);
    CHECK_EQ_U(r.barriers, 0);
    /* fastest times a 5, b 10, c 2.5: critical path max(5, 10) + 2.5 = 12.5
     * beats the spread (5 + 10 + 2.5) / 2 = 8.75 */
    CHECK_NEAR(r.makespan_lb_us, 12.5);
    /* gpu0 by position: x 1000 (0..2: read by the copy at b's position 2),
     * a 4000 (1..3), b's copy 2000 (3), c 100 (3, output): 1000, 5000, 5000,
     * 6100.  gpu1: x's copy 1000 (2), b 2000 (2..3, read by the copy at c's
     * position): 0, 0, 3000, 2000. */
    CHECK_EQ_U(r.dev_peak_bytes[0], 6100);
    CHECK_EQ_U(r.dev_peak_bytes[1], 3000);
    CHECK_EQ_U(r.peak_mem_bytes, 6100);
    CHECK_EQ_U(r.peak_pos, 3);
    CHECK_EQ_U(r.mem_bytes[1], 5000);
    /* x stays on gpu0 until b (position 2) triggers its copy: a 4000 + x
     * 1000 (freeing x after a, its last local reader, gave 4000) */
    CHECK_EQ_U(r.mem_bytes[2], 5000);
    /* gpu1 holds 2500 bytes: 3000 is over */
    CHECK_EQ_U(r.over_capacity, 1);
    sb_sim_result_free(&r);

    /* barrier after a (position 1): b cannot start before 10 although x's
     * copy is there at 3 (copies run ahead of barriers); b 10..20, its copy
     * 20..22, c 22..27 */
    sim_two(g, 1, &r);
    CHECK_NEAR(r.makespan_us, 27);
    CHECK_EQ_U(r.barriers, 1);
    sb_sim_result_free(&r);
    /* a barrier at x's position (0) counts and waits for nothing: 20 as
     * without one */
    sim_two(g, 0, &r);
    CHECK_NEAR(r.makespan_us, 20);
    CHECK_EQ_U(r.barriers, 1);
    sb_sim_result_free(&r);
    sb_graph_free(g);
    sb_machine_free((struct sb_machine *)m);
}

/* Recording (run --mem-dir, plot --gantt) on the schedule of
 * test_two_devices: each copy with its link and times, every device's memory
 * by position, and every figure the same as without recording. */
static void test_record(void)
{
    static const int32_t dev[4] = {0, 0, 1, 0};
    const struct sb_machine *m;
    struct sb_graph *g = load_two(&m);
    struct sb_schedule s;
    struct sb_sim_config c;
    struct sb_sim_result plain, rec;
    struct sb_err e;
    CHECK(g != NULL);
    if (!g)
        return;
    sb_sim_defaults(&c);
    sb_schedule_init(&s, g, 2);
    for (uint32_t i = 0; i < 4; i++) {
        s.order[i] = i;
        s.device[i] = dev[i];
    }
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    sb_sim_run(g, &s, &c, &plain);
    c.record = 1;
    sb_sim_run(g, &s, &c, &rec);
    /* not recorded unless asked */
    CHECK(plain.copies == NULL && plain.dev_mem_bytes == NULL && plain.n_copies == 0);
    /* docs/machines.md: a copy starts when its producer has finished and the
     * link is free and takes latency_us + bytes / bandwidth.  x (an input,
     * finished at 0, 1000 B) goes gpu0 -> gpu1 for b: link 1 GB/s = 1000 B/us
     * and 2 us latency, 0 .. 2 + 1000/1000 = 3.  b (gpu1, 3 .. 3 + 20/2 = 13,
     * 2000 B) goes gpu1 -> gpu0 for c: 2 GB/s and 1 us, 13 .. 13 + 1 +
     * 2000/2000 = 15.  In the order the simulator reaches b, then c. */
    CHECK_EQ_U(rec.n_copies, 2);
    if (rec.n_copies == 2) {
        CHECK_EQ_U(rec.copies[0].producer, 0);
        CHECK_EQ_U(rec.copies[0].from_dev, 0);
        CHECK_EQ_U(rec.copies[0].to_dev, 1);
        CHECK_NEAR(rec.copies[0].begin_us, 0);
        CHECK_NEAR(rec.copies[0].end_us, 3);
        CHECK_EQ_U(rec.copies[0].bytes, 1000);
        CHECK_EQ_U(rec.copies[1].producer, 2);
        CHECK_EQ_U(rec.copies[1].from_dev, 1);
        CHECK_EQ_U(rec.copies[1].to_dev, 0);
        CHECK_NEAR(rec.copies[1].begin_us, 13);
        CHECK_NEAR(rec.copies[1].end_us, 15);
        CHECK_EQ_U(rec.copies[1].bytes, 2000);
    }
    /* every device by position (test_two_devices): gpu0 1000, 5000, 5000,
     * 6100; gpu1 0, 0, 3000 (x's copy 1000 + b 2000), 2000 (x's copy freed
     * after b, its last use on gpu1) */
    static const uint64_t want[4][2] = {{1000, 0}, {5000, 0}, {5000, 3000}, {6100, 2000}};
    for (uint32_t i = 0; i < 4 && rec.dev_mem_bytes; i++)
        for (uint32_t d = 0; d < 2; d++)
            CHECK_EQ_U(rec.dev_mem_bytes[i * 2 + d], want[i][d]);
    CHECK(rec.dev_mem_bytes != NULL);
    /* recording moves no figure */
    CHECK(plain.makespan_us == rec.makespan_us);
    CHECK_EQ_U(plain.transfer_bytes, rec.transfer_bytes);
    CHECK_EQ_U(plain.peak_mem_bytes, rec.peak_mem_bytes);
    CHECK_EQ_U(plain.peak_pos, rec.peak_pos);
    for (uint32_t i = 0; i < 4; i++)
        CHECK_EQ_U(plain.mem_bytes[i], rec.mem_bytes[i]);
    for (uint32_t d = 0; d < 2; d++)
        CHECK_EQ_U(plain.dev_peak_bytes[d], rec.dev_peak_bytes[d]);
    sb_sim_result_free(&plain);
    sb_sim_result_free(&rec);
    sb_schedule_free(&s);
    sb_graph_free(g);
    sb_machine_free((struct sb_machine *)m);
}

/* A device whose op list leaves an op out cannot run it; a pre-assigned
 * device the machine lacks is refused when the machine is applied. */
static void test_ops(void)
{
    struct sb_err e;
    struct sb_machine *m = load_text("devices:\n  - {name: g0}\n  - {name: g1, ops: [mm]}\n"
                                     "links: {default: {gbps: 1}}\n", &e);
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/two_dev.csv", &e);
    struct sb_cost_params c;
    CHECK(m && g);
    if (!m || !g)
        goto out;
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    CHECK(sb_machine_apply(m, g, &e) == 0);
    /* b (conv) is 20 us on g0 and impossible on g1; a (mm) 10 on both */
    CHECK_NEAR(g->v.dev_dur_us[2 * 2 + 0], 20);
    CHECK(isinf(g->v.dev_dur_us[2 * 2 + 1]));
    CHECK_NEAR(g->v.dev_dur_us[1 * 2 + 1], 10);
    struct sb_schedule s;
    sb_schedule_init(&s, g, 2);
    for (uint32_t i = 0; i < 4; i++)
        s.order[i] = i;
    s.device[2] = 1;
    CHECK(sb_schedule_validate(&g->v, &s, &e) != 0);
    CHECK(strstr(e.msg, "does not support op conv") != NULL);
    sb_schedule_free(&s);
    g->device[3] = 5;
    CHECK(sb_machine_apply(m, g, &e) != 0);
    CHECK(strstr(e.msg, "pre-assigned to device 5") != NULL);
out:
    sb_graph_free(g);
    sb_machine_free(m);
}

/* One link direction carries one copy at a time: x and y both go gpu0 -> gpu1
 * (1000 B at 1 GB/s + 2 us = 3 us each): x 0..3, y queued 3..6.  a (2 us, 1
 * on the twice-as-fast gpu1) 3..4; b waits for y: 6..7.  Copies in parallel
 * would give b 4..5. */
static void test_fifo_link(void)
{
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_sim_config sc;
    struct sb_sim_result r;
    const struct sb_machine *m;
    struct sb_graph *two = load_two(&m);
    sb_graph_free(two);
    static const char csv[] = "id,name,kind,inputs,op,cost_us,out_bytes,device\n"
                              "0,x,input,,,,1000,0\n"
                              "1,y,input,,,,1000,0\n"
                              "2,a,compute,0,mm,2,0,1\n"
                              "3,b,compute,1,mm,2,0,1\n";
    struct sb_graph *g = m ? sb_csv_load_mem("fifo.csv", csv, sizeof csv - 1, &e) : NULL;
    CHECK(g != NULL);
    if (g) {
        sb_cost_defaults(&c);
        sb_cost_apply(&c, g);
        CHECK(sb_machine_apply(m, g, &e) == 0);
        struct sb_schedule s;
        sb_schedule_init(&s, g, 2);
        for (uint32_t i = 0; i < 4; i++)
            s.order[i] = i;
        CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
        sb_sim_defaults(&sc);
        sb_sim_run(g, &s, &sc, &r);
        CHECK_NEAR(r.makespan_us, 7);
        CHECK_EQ_U(r.n_transfers, 2);
        sb_sim_result_free(&r);
        sb_schedule_free(&s);
    }
    sb_graph_free(g);
    sb_machine_free((struct sb_machine *)m);
}

/* Loads `csv` with the analytical defaults and puts it on `m` (NULL: one
 * device). */
static struct sb_graph *load_on(const char *name, const char *csv, size_t n,
                                const struct sb_machine *m)
{
    struct sb_err e;
    struct sb_cost_params c;
    struct sb_graph *g = sb_csv_load_mem(name, csv, n, &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return NULL;
    }
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    if (m && sb_machine_apply(m, g, &e)) {
        fprintf(stderr, "%s\n", e.msg);
        sb_graph_free(g);
        return NULL;
    }
    return g;
}

/* Runs g in file order on the devices `dev` (NULL: all on device 0). */
static void run_file_order(const struct sb_graph *g, const int32_t *dev,
                           struct sb_sim_result *r)
{
    struct sb_schedule s;
    struct sb_sim_config c;
    struct sb_err e;
    sb_sim_defaults(&c);
    sb_schedule_init(&s, g, g->v.machine->n_devices);
    for (uint32_t i = 0; i < g->v.n_nodes; i++) {
        s.order[i] = i;
        s.device[i] = dev ? dev[i] : 0;
    }
    CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
    sb_sim_run(g, &s, &c, r);
    sb_schedule_free(&s);
}

/* Issue 23, 1: a buffer stays on its device until the consumer that triggers
 * its copy, even when its last local reader came earlier. */
static void test_copy_source_lives(void)
{
    const struct sb_machine *m;
    struct sb_graph *two = load_two(&m);
    sb_graph_free(two);
    static const char csv[] = "id,name,kind,inputs,op,cost_us,out_bytes\n"
                              "0,x,input,,,,1000\n"
                              "1,a,compute,0,mm,1,100\n"
                              "2,b,compute,,mm,1,3000\n"
                              "3,c,compute,0,mm,1,10\n";
    static const int32_t dev[4] = {0, 0, 0, 1};
    struct sb_graph *g = m ? load_on("src.csv", csv, sizeof csv - 1, m) : NULL;
    CHECK(g != NULL);
    if (g) {
        struct sb_sim_result r;
        run_file_order(g, dev, &r);
        /* gpu0 by position: x 1000 from 0 through 3 (c on gpu1 triggers its
         * copy there); a 100 at 1 only, b 3000 at 2 only (no readers):
         * 1000, 1100, 4000, 1000.  Freeing x after a gave a peak of 3000.
         * gpu1: x's copy 1000 and c 10 at 3: 1010. */
        CHECK_EQ_U(r.dev_peak_bytes[0], 4000);
        CHECK_EQ_U(r.peak_pos, 2);
        CHECK_EQ_U(r.mem_bytes[3], 1000);
        CHECK_EQ_U(r.dev_peak_bytes[1], 1010);
        CHECK_EQ_U(r.transfer_bytes, 1000);
        sb_sim_result_free(&r);
    }
    sb_graph_free(g);
    sb_machine_free((struct sb_machine *)m);
}

/* Issue 23, 4: a barrier at an input's position is a barrier like any other:
 * it counts, and what follows waits for everything before it. */
static void test_barrier_at_input(void)
{
    const struct sb_machine *m;
    struct sb_graph *two = load_two(&m);
    sb_graph_free(two);
    static const char csv[] = "id,name,kind,inputs,op,cost_us,out_bytes\n"
                              "0,y,compute,,mm,10,0\n"
                              "1,x,input,,,,1000\n"
                              "2,c,compute,1,mm,2,0\n";
    static const int32_t dev[3] = {0, 0, 1};
    struct sb_graph *g = m ? load_on("bar.csv", csv, sizeof csv - 1, m) : NULL;
    CHECK(g != NULL);
    if (g) {
        struct sb_schedule s;
        struct sb_sim_config c;
        struct sb_sim_result r;
        struct sb_err e;
        sb_sim_defaults(&c);
        sb_schedule_init(&s, g, 2);
        for (uint32_t i = 0; i < 3; i++) {
            s.order[i] = i;
            s.device[i] = dev[i];
        }
        s.barrier[1] = 1;
        CHECK(sb_schedule_validate(&g->v, &s, &e) == 0);
        sb_sim_run(g, &s, &c, &r);
        /* y 0..10 on gpu0; the barrier at x (position 1) waits for it; x's
         * copy to gpu1 0..3 (1000 B at 1 GB/s + 2 us); c (2 / speed 2)
         * 10..11.  Ignoring the barrier gave c 3..4 and a makespan of 10. */
        CHECK_NEAR(r.makespan_us, 11);
        CHECK_EQ_U(r.barriers, 1);
        sb_sim_result_free(&r);
        sb_schedule_free(&s);
    }
    sb_graph_free(g);
    sb_machine_free((struct sb_machine *)m);
}

/* Issue 23, 2: `output` on a view (a done of a start's buffer, an alias)
 * pins the buffer it views, with one device or several. */
static void test_output_view(void)
{
    const struct sb_machine *m;
    struct sb_graph *two = load_two(&m);
    sb_graph_free(two);
    static const char csv[] =
        "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,comm_us,flags\n"
        "0,x,input,,,,1000,,,,\n"
        "1,s,start,0,all_gather,,2000,all_gather,1000,5,\n"
        "2,d,done,1,all_gather,,,,,,output\n"
        "3,a,compute,0,mm,1,400,,,,\n"
        "4,v,compute,3,mm,1,0,,,,alias|output\n"
        "5,y,compute,,mm,1,5000,,,,\n";
    for (int k = 0; k < 2 && m; k++) {
        struct sb_graph *g = load_on("view.csv", csv, sizeof csv - 1, k ? m : NULL);
        CHECK(g != NULL);
        if (!g)
            continue;
        struct sb_sim_result r;
        run_file_order(g, NULL, &r);
        /* all on device 0.  x 1000 from 0, read by s and until its done (2)
         * and by a (3): 0..3.  s's buffer 2000 from 1, viewed by d (output):
         * never freed.  a 400 from 3, viewed by v (output): never freed.  y
         * 5000 at 5.  By position: 1000, 3000, 3000, 3400, 2400, 7400.
         * Dropping the flags on the views freed s after 2 and a after 4:
         * 5000 at the end, peak 3400. */
        CHECK_EQ_U(r.peak_mem_bytes, 7400);
        CHECK_EQ_U(r.dev_peak_bytes[0], 7400);
        CHECK_EQ_U(r.peak_pos, 5);
        CHECK_EQ_U(r.mem_bytes[4], 2400);
        sb_sim_result_free(&r);
        sb_graph_free(g);
    }
    sb_machine_free((struct sb_machine *)m);
}

/* The optional columns units and cost_us.<device>. */
static void test_columns(void)
{
    struct sb_err e;
    struct sb_cost_params c;
    const struct sb_machine *m;
    struct sb_graph *two = load_two(&m); /* for the machine only */
    sb_graph_free(two);
    if (!m) {
        CHECK(0);
        return;
    }
    static const char csv[] =
        "id,name,kind,inputs,op,cost_us,units,cost_us.gpu1\n"
        "0,x,input,,,,,\n"
        "1,a,compute,0,mm,10,2,3\n"
        "2,b,compute,1,mm,8,,\n";
    struct sb_graph *g = sb_csv_load_mem("cols.csv", csv, sizeof csv - 1, &e);
    CHECK(g != NULL);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        sb_machine_free((struct sb_machine *)m);
        return;
    }
    sb_cost_defaults(&c);
    sb_cost_apply(&c, g);
    CHECK(sb_machine_apply(m, g, &e) == 0);
    /* a: 10 on gpu0, 3 as given on gpu1 (not 10 / speed 2); b: 8 and 8 / 2 */
    CHECK_NEAR(g->v.dev_dur_us[1 * 2 + 0], 10);
    CHECK_NEAR(g->v.dev_dur_us[1 * 2 + 1], 3);
    CHECK_NEAR(g->v.dev_dur_us[2 * 2 + 1], 4);
    CHECK_EQ_U(g->v.units_used[1], 2);
    CHECK_EQ_U(g->v.units_used[2], 1);
    /* written back and read again: the same columns */
    char path[600];
    snprintf(path, sizeof path, "%s/cols_out.csv", SB_TEST_TMP);
    CHECK(sb_graph_write(g, path, &e) == 0);
    struct sb_graph *h = sb_graph_load(path, &e);
    CHECK(h && h->n_dev_cost == 1 && h->units_used[1] == 2 &&
          h->dev_cost_us[1] == 3 && h->dev_cost_us[2] == -1);
    sb_graph_free(h);
    sb_graph_free(g);
    /* a column naming a device the machine lacks, and bad values */
    static const char no_dev[] = "id,name,kind,inputs,cost_us.tpu0\n0,a,compute,,1\n";
    g = sb_csv_load_mem("nodev.csv", no_dev, sizeof no_dev - 1, &e);
    CHECK(g && sb_machine_apply(m, g, &e) != 0 && strstr(e.msg, "no device 'tpu0'"));
    sb_graph_free(g);
    static const char bad_units[] = "id,name,kind,inputs,units\n0,a,compute,,0\n";
    CHECK(sb_csv_load_mem("u.csv", bad_units, sizeof bad_units - 1, &e) == NULL);
    CHECK(strstr(e.msg, "u.csv:2:5: units '0' is not an integer in 1..10^6") != NULL);
    static const char bad_cost[] = "id,name,kind,inputs,cost_us.g\n0,a,compute,,-2\n";
    CHECK(sb_csv_load_mem("c.csv", bad_cost, sizeof bad_cost - 1, &e) == NULL);
    CHECK(strstr(e.msg, "c.csv:2:5: cost_us.g '-2' is negative") != NULL);
    sb_machine_free((struct sb_machine *)m);
}


/* The machine of a run without --machine is workloads/machines/h100-sxm.yaml:
 * one GPU of 80e9 bytes with the same roofline.  The two are written apart
 * (a C table and a YAML file), so this keeps them from drifting: each figure
 * of the file against the built-in, and 80 GB against the datasheet. */
static void test_builtin_is_h100(void)
{
    struct sb_err e;
    struct sb_machine *m = sb_machine_load(SB_TEST_DATA "/../../workloads/machines/h100-sxm.yaml", &e);
    CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "%s\n", e.msg);
        return;
    }
    CHECK_EQ_U(m->v.n_devices, 1);
    CHECK_EQ_U(sb_machine_one.n_devices, 1);
    CHECK_EQ_U(sb_machine_one.mem_cap_bytes[0], 80000000000ull);
    CHECK_EQ_U(m->v.mem_cap_bytes[0], sb_machine_one.mem_cap_bytes[0]);
    CHECK(!strcmp(m->v.dev_name[0], sb_machine_one.dev_name[0]));
    struct sb_roofline r;
    sb_roofline_h100(&r);
    CHECK(m->has_roof[0]);
    for (int t = 1; t < SB_DTYPE_COUNT; t++)
        CHECK_NEAR(m->roof[0].peak_tflops[t], r.peak_tflops[t]);
    CHECK_NEAR(m->roof[0].hbm_gbps, r.hbm_gbps);
    CHECK_NEAR(m->roof[0].launch_us, r.launch_us);
    sb_machine_free(m);
}

int main(void)
{
    test_builtin_is_h100();
    test_good();
    test_bad();
    test_two_devices();
    test_record();
    test_ops();
    test_columns();
    test_fifo_link();
    test_copy_source_lives();
    test_output_view();
    test_barrier_at_input();
    return check_report();
}
