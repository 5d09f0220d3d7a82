/* The schedule validator on hand-made invalid schedules of overlap.csv:
 *   0 w (input), 1 ag (start), 2 x, 3 ag.done (done of 1), 4 y (reads 3 and 2). */
#include "check.h"
#include "core/core.h"
#include "import/import.h"

static struct sb_graph *g;

static const char *validate(const uint32_t *order, int32_t dev4, uint32_t n_devices)
{
    static struct sb_err e;
    struct sb_schedule s;
    sb_schedule_init(&s, g, n_devices);
    for (uint32_t i = 0; i < 5; i++)
        s.order[i] = order[i];
    s.device[4] = dev4;
    int rc = sb_schedule_validate(&g->v, &s, &e);
    sb_schedule_free(&s);
    return rc ? e.msg : NULL;
}

int main(void)
{
    struct sb_err e;
    g = sb_graph_load(SB_TEST_DATA "/overlap.csv", &e);
    if (!g) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    static const uint32_t ok[] = {0, 1, 2, 3, 4};
    static const uint32_t ok2[] = {2, 0, 1, 3, 4};
    static const uint32_t twice[] = {0, 1, 2, 3, 3};
    static const uint32_t range[] = {0, 1, 2, 3, 7};
    static const uint32_t unfilled[] = {0, 1, 2, 3, SB_NONE};
    static const uint32_t early[] = {0, 1, 3, 4, 2};
    static const uint32_t done_first[] = {0, 3, 1, 2, 4};
    CHECK(validate(ok, 0, 1) == NULL);
    CHECK(validate(ok2, 0, 1) == NULL);
    CHECK_CONTAINS(validate(twice, 0, 1), "node 3 (ag.done) scheduled twice, at 3 and 4");
    CHECK_CONTAINS(validate(range, 0, 1), "position 4 holds 7, not a node id");
    CHECK_CONTAINS(validate(unfilled, 0, 1), "position 4 left unfilled");
    CHECK_CONTAINS(validate(early, 0, 1), "node 4 (y) at 3 before its input 2 (x) at 4");
    CHECK_CONTAINS(validate(done_first, 0, 1), "done 3 (ag.done) at 1 before its start 1 (ag) at 2");
    CHECK_CONTAINS(validate(ok, 1, 1), "node 4 (y) on device 1, outside 0..0");
    CHECK(validate(ok, 1, 2) == NULL);
    /* an untouched schedule (a plugin that wrote nothing) is caught */
    struct sb_schedule s;
    sb_schedule_init(&s, g, 1);
    CHECK(sb_schedule_validate(&g->v, &s, &e) != 0);
    CHECK_CONTAINS(e.msg, "position 0 left unfilled");
    sb_schedule_free(&s);
    sb_graph_free(g);
    return check_report();
}
