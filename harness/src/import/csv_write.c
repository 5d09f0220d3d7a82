/* Writes a graph back as format v1, so that an imported graph (HLO, ...) can be
 * inspected, edited and re-run as CSV. */
#define _POSIX_C_SOURCE 200809L
#include "core/core.h"
#include "core/scope.h"
#include "core/escape.h"

#include <string.h>

/* The inputs (after = 0) or after edges (1) of v as a space-separated list. */
static void write_edges(FILE *f, const struct sb_graph_view *g, uint32_t v, int after)
{
    char buf[32];
    if (g->pred_off[v] == g->pred_off[v + 1]) {
        sb_csv_field(f, "", 0);
        return;
    }
    /* inputs are a space-separated list: build it, then quote it if needed */
    size_t n = 0, cap = 64;
    char *s = sb_xmalloc(cap);
    s[0] = 0;
    for (uint32_t e = g->pred_off[v]; e < g->pred_off[v + 1]; e++) {
        if (sb_edge_after(g, e) != after)
            continue;
        int k = snprintf(buf, sizeof buf, "%s%u", n ? " " : "", g->pred[e]);
        if (n + (size_t)k + 1 > cap) {
            cap = (n + (size_t)k + 1) * 2;
            s = sb_xrealloc(s, cap);
        }
        memcpy(s + n, buf, (size_t)k + 1);
        n += (size_t)k;
    }
    sb_csv_field(f, s, 0);
    free(s);
}

static void write_inputs(FILE *f, const struct sb_graph_view *g, uint32_t v)
{
    write_edges(f, g, v, 0);
}

static void write_flags(FILE *f, uint32_t flags)
{
    char buf[32] = "";
    if (flags & SB_FLAG_WEIGHT)
        strcat(buf, "weight");
    if (flags & SB_FLAG_OUTPUT)
        strcat(buf, buf[0] ? "|output" : "output");
    if (flags & SB_FLAG_ALIAS)
        strcat(buf, buf[0] ? "|alias" : "alias");
    sb_csv_field(f, buf, 0);
}

/* units and cost_us.<device> (docs/machines.md), only when the graph has them */
static int has_units(const struct sb_graph *G)
{
    for (uint32_t v = 0; v < G->v.n_nodes; v++)
        if (G->units_used[v] != 1)
            return 1;
    return 0;
}

/* units: whether the graph has the column, decided once per file by
 * sb_graph_write (asked per node, it made convert quadratic: 200,000 nodes
 * took 12.6 s) */
static void write_placement(FILE *f, const struct sb_graph *G, uint32_t v, int units)
{
    if (units)
        sb_csv_fieldf(f, 0, "%u", G->units_used[v]);
    if (G->n_streams > 1)
        sb_csv_fieldf(f, 0, "%u", G->stream[v]);
    if (G->dtype) { /* the roofline's work, only when the graph has it */
        if (G->dtype[v]) {
            sb_csv_fieldf(f, 0, "%.17g", G->flops[v]);
            sb_csv_fieldf(f, 0, "%.17g", G->bytes_accessed[v]);
            sb_csv_field(f, sb_dtype_name((enum sb_dtype)G->dtype[v]), 0);
        } else {
            sb_csv_field(f, "", 0);
            sb_csv_field(f, "", 0);
            sb_csv_field(f, "", 0);
        }
    }
    if (G->sched_group) { /* XLA's annotations, only when the graph has them */
        if (G->sched_group[v] >= 0 && G->sched_iter[v] != SB_NO_ITER)
            sb_csv_fieldf(f, 0, "%d:%d", G->sched_group[v], G->sched_iter[v]);
        else if (G->sched_group[v] >= 0)
            sb_csv_fieldf(f, 0, "%d", G->sched_group[v]);
        else
            sb_csv_field(f, "", 0);
        char hint[80] = "";
        static const char *const names[] = {"force_delay", "force_delay_async", "force_early",
                                            "keep_order"};
        for (int k = 0; k < 4; k++)
            if (G->sched_hint[v] & (1u << k)) {
                strcat(hint, hint[0] ? "|" : "");
                strcat(hint, names[k]);
            }
        sb_csv_field(f, hint, 0);
        if (G->sched_priority[v])
            sb_csv_fieldf(f, 0, "%d", G->sched_priority[v]);
        else
            sb_csv_field(f, "", 0);
    }
    if (G->holds) { /* collectives held by called computations */
        char buf[400] = "";
        for (int k = 1; k < SB_COLL_COUNT; k++) {
            uint32_t c = G->holds[(size_t)v * SB_COLL_COUNT + k];
            size_t len = strlen(buf);
            if (c)
                snprintf(buf + len, sizeof buf - len, "%s%s:%u", len ? "|" : "",
                         sb_coll_name((enum sb_coll)k), c);
        }
        sb_csv_field(f, buf, 0);
    }
    for (uint32_t k = 0; k < G->n_dev_cost; k++) {
        double c = G->dev_cost_us[(size_t)v * G->n_dev_cost + k];
        if (c >= 0)
            sb_csv_fieldf(f, 0, "%.17g", c);
        else
            sb_csv_field(f, "", 0);
    }
    for (uint32_t k = 0; k < G->n_res_col; k++) { /* res.<name>: empty = whole device */
        uint32_t u = G->res_col_use[(size_t)v * G->n_res_col + k];
        if (u != SB_RES_ALL)
            sb_csv_fieldf(f, 0, "%u", u);
        else
            sb_csv_field(f, "", 0);
    }
    if (G->pred_after) /* order-only edges, only when the graph has them */
        write_edges(f, &G->v, v, 1);
    if (G->scopes) /* computation instances, only when the graph has them */
        sb_csv_field(f, G->scopes->paths.key[G->scope[v]], 0);
    if (G->join) { /* a joined start names the collective's first start */
        uint32_t first = v;
        for (uint32_t m = G->join[v]; m != v; m = G->join[m])
            first = m < first ? m : first;
        if (first != v)
            sb_csv_fieldf(f, 0, "%u", first);
        else
            sb_csv_field(f, "", 0);
    }
}

static void write_node(FILE *f, const struct sb_graph *G, uint32_t v, int units)
{
    const struct sb_graph_view *g = &G->v;
    sb_csv_fieldf(f, 1, "%u", v);
    sb_csv_field(f, g->names + g->name_off[v], 0);
    sb_csv_field(f, sb_kind_name((enum sb_kind)g->kind[v]), 0);
    write_inputs(f, g, v);
    sb_csv_field(f, g->op_names[g->op[v]], 0);
    if (g->cost_us[v] > 0)
        sb_csv_fieldf(f, 0, "%.17g", g->cost_us[v]);
    else
        sb_csv_field(f, "", 0);
    if (g->out_bytes[v])
        sb_csv_fieldf(f, 0, "%llu", (unsigned long long)g->out_bytes[v]);
    else
        sb_csv_field(f, "", 0);
    int start = g->kind[v] == SB_KIND_START;
    sb_csv_field(f, start ? sb_coll_name((enum sb_coll)g->coll[v]) : "", 0);
    if (start && g->comm_bytes[v])
        sb_csv_fieldf(f, 0, "%llu", (unsigned long long)g->comm_bytes[v]);
    else
        sb_csv_field(f, "", 0);
    if (start && g->group_size[v])
        sb_csv_fieldf(f, 0, "%u", g->group_size[v]);
    else
        sb_csv_field(f, "", 0);
    if (start && g->comm_us[v] >= 0)
        sb_csv_fieldf(f, 0, "%.17g", g->comm_us[v]);
    else
        sb_csv_field(f, "", 0);
    if (g->device[v] >= 0)
        sb_csv_fieldf(f, 0, "%d", g->device[v]);
    else
        sb_csv_field(f, "", 0);
    write_flags(f, g->flags[v]);
    write_placement(f, G, v, units);
    sb_csv_end(f);
}

/* The '# key=value' lines: the reader takes a key to the first '=' and a value
 * to the end of its line, with no escape, so a control byte (a newline above
 * all) in either, or an '=' or a blank in a key, cannot be written: the value
 * would end early and the rest be read as a line of its own.  Refused with
 * the key and the byte, rather than written as something else. */
static unsigned control_byte(const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return c;
    }
    return 0;
}

static int check_meta(const struct sb_graph *g, struct sb_err *e)
{
    if (!sb_meta_text_ok(g->name))
        return sb_errf(e, "%s: the graph's name holds a control character (0x%02x): it "
                          "cannot be written as a '# name=' line", g->path, control_byte(g->name));
    for (uint32_t i = 0; i < g->n_meta; i++) {
        const char *k = g->meta_key[i];
        if (!*k || !sb_meta_text_ok(k) || strpbrk(k, "= \t"))
            return sb_errf(e, "%s: metadata key '%.60s' cannot be written as a '# key=value' "
                              "line (empty, or an '=', a blank or a control character in it)",
                           g->path, k);
        if (!sb_meta_text_ok(g->meta_val[i]))
            return sb_errf(e, "%s: metadata '%s' holds a control character (0x%02x): it cannot "
                              "be written as a '# %s=value' line", g->path, k,
                           control_byte(g->meta_val[i]), k);
    }
    return 0;
}

int sb_graph_write(const struct sb_graph *g, const char *path, struct sb_err *e)
{
    struct sb_atomic out;
    if (check_meta(g, e) || sb_atomic_open(&out, path, e))
        return -1;
    fprintf(out.f, "# name=%s\n", g->name);
    for (uint32_t i = 0; i < g->n_meta; i++)
        if (strcmp(g->meta_key[i], "name") != 0)
            fprintf(out.f, "# %s=%s\n", g->meta_key[i], g->meta_val[i]);
    fprintf(out.f, "id,name,kind,inputs,op,cost_us,out_bytes,coll,comm_bytes,group,"
                   "comm_us,device,flags");
    int units = has_units(g);
    if (units)
        fprintf(out.f, ",units");
    if (g->n_streams > 1)
        fprintf(out.f, ",stream");
    if (g->dtype)
        fprintf(out.f, ",flops,bytes_accessed,dtype");
    if (g->sched_group)
        fprintf(out.f, ",sched_group,sched_hint,sched_priority");
    if (g->holds)
        fprintf(out.f, ",holds");
    for (uint32_t k = 0; k < g->n_dev_cost; k++) {
        fprintf(out.f, ",");
        char col[300];
        snprintf(col, sizeof col, "cost_us.%s", g->dev_cost_name[k]);
        sb_csv_field(out.f, col, 1);
    }
    for (uint32_t k = 0; k < g->n_res_col; k++) {
        fprintf(out.f, ",");
        char col[300];
        snprintf(col, sizeof col, "res.%s", g->res_col_name[k]);
        sb_csv_field(out.f, col, 1);
    }
    if (g->pred_after)
        fprintf(out.f, ",after");
    if (g->scopes)
        fprintf(out.f, ",scope");
    if (g->join)
        fprintf(out.f, ",join");
    fprintf(out.f, "\n");
    for (uint32_t v = 0; v < g->v.n_nodes; v++)
        write_node(out.f, g, v, units);
    return sb_atomic_commit(&out, e);
}
