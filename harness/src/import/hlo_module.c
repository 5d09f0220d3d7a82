/* The parsed HLO module's shared pieces (hlo_impl.h): freeing instructions
 * and expansions, finding computations by name, what an async-start wraps.  Below hlo.c, hlo_flat.c
 * and hlo_cost.c, which all use them. */
#define _POSIX_C_SOURCE 200809L
#include "hlo_impl.h"

#include <string.h>

uint32_t hlo_hash_name(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Modules call thousands of computations (a reducer per all-reduce): their
 * names are hashed once, after parsing. */
void hlo_index_comps(struct sb_hlo_module *m)
{
    m->ctab_cap = 16;
    while (m->ctab_cap < 2 * m->n)
        m->ctab_cap *= 2;
    m->ctab = sb_xcalloc(m->ctab_cap, sizeof *m->ctab);
    for (uint32_t k = 0; k < m->n; k++) {
        uint32_t h = hlo_hash_name(m->c[k].name) & (m->ctab_cap - 1);
        while (m->ctab[h] && strcmp(m->c[m->ctab[h] - 1].name, m->c[k].name))
            h = (h + 1) & (m->ctab_cap - 1);
        if (!m->ctab[h])
            m->ctab[h] = k + 1;
    }
}

const char *hlo_config_gap(const char *p)
{
    while (*p == ' ' || *p == '"' || *p == '\\')
        p++;
    return p;
}

int hlo_find_comp(const struct sb_hlo_module *m, const char *name)
{
    if (!m->ctab) { /* during parsing */
        for (uint32_t k = 0; k < m->n; k++)
            if (!strcmp(m->c[k].name, name))
                return (int)k;
        return -1;
    }
    for (uint32_t h = hlo_hash_name(name) & (m->ctab_cap - 1); m->ctab[h];
         h = (h + 1) & (m->ctab_cap - 1))
        if (!strcmp(m->c[m->ctab[h] - 1].name, name))
            return (int)m->ctab[h] - 1;
    return -1;
}

void hlo_instr_free(struct instr *in)
{
    free(in->name);
    for (uint32_t i = 0; i < in->n_ops; i++)
        free(in->ops[i]);
    free(in->ops);
    free(in->op_line);
    for (uint32_t i = 0; i < in->n_ctrl; i++)
        free(in->ctrl[i]);
    free(in->ctrl);
    free(in->scope);
    if (in->borrowed)
        return;
    free(in->opcode);
    free(in->apply);
    free(in->target);
    free(in->backend);
    free(in->dnums);
    free(in->dim_labels);
    free(in->window);
    free(in->direction);
    free(in->precision);
    for (uint32_t i = 0; i < in->n_calls; i++)
        free(in->calls[i]);
    free(in->calls);
    free(in->fusion_kind);
    free(in->frontend);
    free(in->op_name);
}

void hlo_flat_free(struct comp *c)
{
    if (!c)
        return;
    for (uint32_t i = 0; i < c->n; i++)
        hlo_instr_free(&c->in[i]);
    free(c->in);
    free(c->name);
    free(c);
}

/* The collective an async-start wraps, from its computation's root. */
enum sb_coll hlo_wrapped_coll(const char *op)
{
    static const struct {
        const char *op;
        enum sb_coll coll;
    } map[] = {
        {"all-gather", SB_COLL_ALL_GATHER},   {"all-reduce", SB_COLL_ALL_REDUCE},
        {"reduce-scatter", SB_COLL_REDUCE_SCATTER}, {"all-to-all", SB_COLL_ALL_TO_ALL},
        {"collective-permute", SB_COLL_COLLECTIVE_PERMUTE}, {"copy", SB_COLL_COPY},
        {"ragged-all-to-all", SB_COLL_RAGGED_ALL_TO_ALL},
        {"collective-broadcast", SB_COLL_COLLECTIVE_BROADCAST},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(op, map[i].op))
            return map[i].coll;
    return SB_COLL_NONE;
}

/* The instruction an async-start runs: the root of the computation it
 * calls (calls=), NULL when it names none. */
const struct instr *hlo_async_root(const struct sb_hlo_module *m, const struct instr *in)
{
    int k = in->n_calls ? hlo_find_comp(m, in->calls[0]) : -1;
    const struct comp *w = k >= 0 ? &m->c[k] : NULL;
    const struct instr *root = NULL;
    for (uint32_t j = 0; w && j < w->n; j++)
        if (w->in[j].root || (!root && j + 1 == w->n))
            root = &w->in[j];
    return root;
}

int hlo_async_compute(const struct sb_hlo_module *m, const struct instr *in)
{
    if (strcmp(in->opcode, "async-start") != 0 || !in->n_calls)
        return -1;
    const struct instr *root = hlo_async_root(m, in);
    if (!root || hlo_wrapped_coll(root->opcode) != SB_COLL_NONE)
        return -1;
    return hlo_find_comp(m, in->calls[0]);
}
