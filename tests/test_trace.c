#define _POSIX_C_SOURCE 200809L
/* Chrome trace output: valid JSON (checked by a small recursive-descent
 * parser here, independent of the writer), events in time order, and the
 * slices of overlap.csv where they were derived by hand in test_sim.c. */
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "core/core.h"
#include "import/import.h"
#include "cmd/trace.h"

/* ---- a minimal JSON checker ----------------------------------------------- */

struct js {
    const char *p;
    int ok;
};

static void ws(struct js *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t')
        j->p++;
}

static void value(struct js *j);

static void string(struct js *j)
{
    if (*j->p != '"') {
        j->ok = 0;
        return;
    }
    for (j->p++; *j->p && *j->p != '"'; j->p++) {
        if ((unsigned char)*j->p < 0x20)
            j->ok = 0;
        if (*j->p == '\\' && j->p[1])
            j->p++;
    }
    if (*j->p != '"')
        j->ok = 0;
    else
        j->p++;
}

static void number(struct js *j)
{
    char *end;
    strtod(j->p, &end);
    if (end == j->p)
        j->ok = 0;
    j->p = end;
}

static void members(struct js *j, char open, char close, int keyed)
{
    j->p++;
    ws(j);
    if (*j->p == close) {
        j->p++;
        return;
    }
    while (j->ok) {
        ws(j);
        if (keyed) {
            string(j);
            ws(j);
            if (*j->p != ':') {
                j->ok = 0;
                return;
            }
            j->p++;
        }
        value(j);
        ws(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p != close)
            j->ok = 0;
        else
            j->p++;
        return;
    }
    (void)open;
}

static void value(struct js *j)
{
    ws(j);
    if (!j->ok)
        return;
    if (*j->p == '{')
        members(j, '{', '}', 1);
    else if (*j->p == '[')
        members(j, '[', ']', 0);
    else if (*j->p == '"')
        string(j);
    else if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "null", 4))
        j->p += 4;
    else if (!strncmp(j->p, "false", 5))
        j->p += 5;
    else
        number(j);
}

static int json_valid(const char *s)
{
    struct js j = {s, 1};
    value(&j);
    ws(&j);
    return j.ok && *j.p == 0;
}

/* ---- the test --------------------------------------------------------------- */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    if (s)
        s[n] = 0;
    fclose(f);
    return s;
}

/* Every "ts" after the metadata events, in file order, must not decrease. */
static int ts_in_order(const char *s)
{
    double last = -1;
    for (const char *p = strstr(s, "\"ts\":"); p; p = strstr(p + 1, "\"ts\":")) {
        double t = strtod(p + 5, NULL);
        if (t < last)
            return 0;
        last = t;
    }
    return last >= 0;
}

int main(void)
{
    struct sb_err e;
    struct sb_graph *g = sb_graph_load(SB_TEST_DATA "/overlap.csv", &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    struct sb_cost_params cp;
    struct sb_sim_config c;
    struct sb_schedule s;
    struct sb_sim_result r;
    sb_cost_defaults(&cp);
    sb_cost_apply(&cp, g);
    sb_sim_defaults(&c);
    c.record = 1;
    sb_schedule_init(&s, g, 1);
    for (uint32_t i = 0; i < 5; i++)
        s.order[i] = i;
    sb_sim_run(g, &s, &c, &r);
    /* from test_sim.c: ag runs 0..30, x 0..20, the done waits 20..30, y 30..40 */
    CHECK_NEAR(r.coll_begin_us[1], 0);
    CHECK_NEAR(r.coll_end_us[1], 30);
    CHECK_NEAR(r.begin_us[3], 20);
    CHECK_NEAR(r.end_us[3], 30);
    CHECK_NEAR(r.begin_us[4], 30);
    char path[] = "/tmp/sb_trace_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0)
        close(fd);
    CHECK(sb_trace_write(path, g, "original", &s, &r, 1, &e) == 0);
    char *json = slurp(path);
    CHECK(json != NULL);
    if (json) {
        CHECK(json_valid(json));
        CHECK(ts_in_order(json));
        CHECK_CONTAINS(json, "\"name\":\"x\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":1,"
                             "\"tid\":1,\"ts\":0.000,\"dur\":20.000");
        CHECK_CONTAINS(json, "\"name\":\"ag.done\",\"cat\":\"exposed\",\"ph\":\"X\",\"pid\":1,"
                             "\"tid\":1,\"ts\":20.000,\"dur\":10.000");
        CHECK_CONTAINS(json, "\"name\":\"ag\",\"cat\":\"all_gather\",\"ph\":\"X\",\"pid\":1,"
                             "\"tid\":100,\"ts\":0.000,\"dur\":30.000");
        CHECK_CONTAINS(json, "\"name\":\"y\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":1,"
                             "\"tid\":1,\"ts\":30.000,\"dur\":10.000");
        /* memory 5020 at y (position 4, which starts at 30 us) */
        CHECK_CONTAINS(json, "\"ts\":30.000,\"args\":{\"bytes\":5020}");
        CHECK_CONTAINS(json, "comm shared slot 0");
        /* the checker itself must reject broken JSON */
        CHECK(!json_valid("{\"a\":[1,2,}"));
        CHECK(!json_valid("{\"a\":\"unterminated}"));
        CHECK(!json_valid("[1] 2"));
        CHECK(!ts_in_order("{\"ts\":5},{\"ts\":3}"));
    }
    free(json);
    unlink(path);
    sb_sim_result_free(&r);
    sb_schedule_free(&s);
    sb_graph_free(g);
    return check_report();
}
