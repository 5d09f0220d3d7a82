/* The parsed HLO module's shared pieces (hlo_impl.h): freeing instructions
 * and expansions, and finding computations by name.  Below hlo.c, hlo_flat.c
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
