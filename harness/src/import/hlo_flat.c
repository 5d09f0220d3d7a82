/* Control flow as XLA runs it (workloads/importers/hlo.md, "Control flow"):
 * the ENTRY computation with every `while` expanded by its trip count and
 * every `call` inlined, into one flat computation (m->flat) the graph mapping
 * of hlo.c reads as if it were the text.
 *
 * pass 1 refuses recursive computations (XLA's verifier does too);
 * pass 2 walks the entry: parameters of an inlined computation become its
 * caller's operands, get-tuple-element of a tuple becomes the element
 * (XLA's tuple simplification, so iterations exchange tensors, not tuples),
 * a while body is emitted once per iteration under "while.1/iter17/", a call
 * under "call.3/".  A `conditional` stays one instruction (hlo_cost.c prices
 * it as its most expensive branch). */
#define _POSIX_C_SOURCE 200809L
#include "hlo_impl.h"

#include <math.h>
#include <string.h>

/* Ceilings, so a module cannot ask for unbounded memory. */
#define FLAT_MAX_TRIPS 1000000u     /* iterations of one loop */
#ifndef SB_FUZZING
#define FLAT_MAX_INSTRS (1u << 21)  /* instructions after expansion: 2M, some
                                       40 times a 70B step's 52k */
#else
/* The fuzz build looks for crashes, not for the time a legitimate expansion
 * of two million instructions takes under ASan, UBSan and -O0 (fuzz_hlo found
 * one: 14 s, past ci/fuzz.sh's 10 s timeout); a 32nd of the size reaches the
 * same code, refusals included. */
#define FLAT_MAX_INSTRS (1u << 16)
#endif
#define FLAT_MAX_DEPTH 64           /* nested calls and loops */
/* Steps of the expansion: every instruction visited (parameters and
 * get-tuple-elements too, which emit nothing) and every iteration begun,
 * nested loops multiplied.  The instruction cap alone never fires on loops
 * whose bodies emit nothing: two nested loops of 10^6 empty iterations ran
 * for hours.  2 steps per instruction the expansion may emit; half a second
 * at worst (RelWithDebInfo, 0.12 us a step), 5 s in the fuzz build
 * (ASan, UBSan, -O0), within ci/fuzz.sh's 10 s timeout. */
#ifndef SB_FUZZING
#define FLAT_MAX_WORK (1u << 22)
#else
#define FLAT_MAX_WORK (1u << 17) /* as FLAT_MAX_INSTRS: 2 steps an instruction */
#endif

/* Names of one computation's instructions, hashed once. */
struct ctab {
    uint32_t cap;
    uint32_t *tab; /* instruction index + 1 */
};

struct flat {
    const struct sb_hlo_module *m;
    struct comp *out;
    struct sb_err *e;
    struct ctab *ct;   /* [m->n] built on first use */
    uint32_t *op_off;  /* [out->n + 1] operands of flat instruction v, as flat */
    uint32_t *op_idx;  /* indices (SB_NONE: unresolved name) */
    uint32_t n_op, cap_op, cap_off;
    char *scope;       /* the iteration being expanded (core/scope.h), NULL: ENTRY */
    uint64_t work;     /* steps so far (FLAT_MAX_WORK) */
    const struct instr *loop, *top_loop; /* the innermost and outermost while
                                            being expanded, NULL: none */
    const struct sb_hlo_trips *trips;    /* the user's counts, NULL: none */
};

static int ffail(struct flat *F, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int ffail(struct flat *F, uint32_t line, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sb_errf(F->e, "%s:%u: %s", F->m->path, line, msg);
    return -1;
}


static const struct ctab *table(struct flat *F, uint32_t k)
{
    struct ctab *t = &F->ct[k];
    const struct comp *c = &F->m->c[k];
    if (t->tab)
        return t;
    t->cap = 16;
    while (t->cap < 2 * c->n)
        t->cap *= 2;
    t->tab = sb_xcalloc(t->cap, sizeof *t->tab);
    for (uint32_t i = 0; i < c->n; i++) {
        uint32_t h = hlo_hash_name(c->in[i].name) & (t->cap - 1);
        while (t->tab[h] && strcmp(c->in[t->tab[h] - 1].name, c->in[i].name))
            h = (h + 1) & (t->cap - 1);
        if (!t->tab[h])
            t->tab[h] = i + 1;
    }
    return t;
}

/* Index in computation k of the instruction called name, if before `before`. */
static int lookup(struct flat *F, uint32_t k, const char *name, uint32_t before)
{
    const struct ctab *t = table(F, k);
    const struct comp *c = &F->m->c[k];
    for (uint32_t h = hlo_hash_name(name) & (t->cap - 1); t->tab[h]; h = (h + 1) & (t->cap - 1))
        if (!strcmp(c->in[t->tab[h] - 1].name, name))
            return t->tab[h] - 1 < before ? (int)t->tab[h] - 1 : -1;
    return -1;
}

/* ---- pass 1: recursion ---------------------------------------------------- */

/* state: 0 unseen, 1 on the path, 2 done.  Returns the computation that
 * closes a cycle, or -1. */
static int cycle_from(const struct sb_hlo_module *m, int k, uint8_t *state, int depth)
{
    if (k < 0 || state[k] == 2)
        return -1;
    if (state[k] == 1 || depth > 10000)
        return k;
    state[k] = 1;
    const struct comp *c = &m->c[k];
    for (uint32_t i = 0; i < c->n; i++) {
        const struct instr *in = &c->in[i];
        for (uint32_t j = 0; j <= in->n_calls; j++) {
            const char *callee = j < in->n_calls ? in->calls[j] : in->apply;
            if (!callee)
                continue;
            int r = cycle_from(m, hlo_find_comp(m, callee), state, depth + 1);
            if (r >= 0)
                return r;
        }
    }
    state[k] = 2;
    return -1;
}

static int check_recursion(struct flat *F)
{
    const struct sb_hlo_module *m = F->m;
    uint8_t *state = sb_xcalloc(m->n ? m->n : 1, 1);
    int r = -1;
    for (uint32_t k = 0; k < m->n && r < 0; k++)
        r = cycle_from(m, (int)k, state, 0);
    free(state);
    if (r >= 0)
        return ffail(F, m->c[r].line, "computation '%s' calls itself (directly or through "
                                      "the computations it calls); XLA refuses recursive "
                                      "computations", m->c[r].name);
    return 0;
}

/* ---- pass 2: emitting ------------------------------------------------------- */

static uint32_t emit(struct flat *F, const struct instr *src, const char *prefix,
                     const uint32_t *ops, int root, uint32_t k, const uint32_t *map)
{
    struct comp *o = F->out;
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 256;
        o->in = sb_xrealloc(o->in, o->cap * sizeof *o->in);
    }
    if (o->n + 2 > F->cap_off) {
        F->cap_off = F->cap_off ? F->cap_off * 2 : 256;
        F->op_off = sb_xrealloc(F->op_off, F->cap_off * sizeof *F->op_off);
    }
    if (F->n_op + src->n_ops > F->cap_op) {
        while (F->n_op + src->n_ops > F->cap_op)
            F->cap_op = F->cap_op ? F->cap_op * 2 : 1024;
        F->op_idx = sb_xrealloc(F->op_idx, F->cap_op * sizeof *F->op_idx);
    }
    struct instr in = *src;
    in.name = sb_strf("%s%s", prefix, src->name);
    in.root = root;
    in.borrowed = 1;
    in.scope = F->scope ? sb_xstrdup(F->scope) : NULL;
    in.ops = in.n_ops ? sb_xmalloc(in.n_ops * sizeof *in.ops) : NULL;
    in.op_line = in.n_ops ? sb_xmalloc(in.n_ops * sizeof *in.op_line) : NULL;
    for (uint32_t j = 0; j < in.n_ops; j++) {
        /* an operand the walk could not resolve keeps its text name, so the
         * graph mapping reports it as the text has it */
        in.ops[j] = sb_xstrdup(ops[j] != SB_NONE ? o->in[ops[j]].name : src->ops[j]);
        in.op_line[j] = src->op_line[j];
        F->op_idx[F->n_op++] = ops[j];
    }
    in.n_ctrl = 0;
    in.ctrl = NULL;
    for (uint32_t j = 0; j < src->n_ctrl; j++) {
        /* a control predecessor that resolved to no instruction of its own
         * (a parameter, an element of a tuple) orders nothing and is left out */
        int p = lookup(F, k, src->ctrl[j], (uint32_t)(src - F->m->c[k].in));
        if (p >= 0 && map[p] == SB_NONE)
            continue;
        in.ctrl = sb_xrealloc(in.ctrl, (in.n_ctrl + 1) * sizeof *in.ctrl);
        in.ctrl[in.n_ctrl++] = sb_xstrdup(p >= 0 ? o->in[map[p]].name : src->ctrl[j]);
    }
    F->op_off[o->n + 1] = F->n_op;
    o->in[o->n] = in;
    return o->n++;
}

static const struct instr *flat_op(const struct flat *F, uint32_t v, uint32_t j)
{
    uint32_t p = F->op_idx[F->op_off[v] + j];
    return p == SB_NONE ? NULL : &F->out->in[p];
}

static int expand_comp(struct flat *F, uint32_t k, const char *prefix, const uint32_t *args,
                       uint32_t n_args, int is_entry, int depth, uint32_t *root_out);

/* known_trip_count in a while's backend_config, read whole (XLA's
 * WhileLoopBackendConfig prints {"known_trip_count":{"n":"N"}}): N is a
 * decimal count, nothing else ("1e6" and "-1" were read as 1); 1 when
 * found, 0 when absent, -1 refused. */
static int known_trip_count(struct flat *F, const struct instr *w, uint64_t *n)
{
    const char *kt = w->backend ? strstr(w->backend, "known_trip_count") : NULL;
    if (!kt)
        return 0;
    const char *p = hlo_config_gap(kt + strlen("known_trip_count"));
    int ok = *p == ':';
    if (ok)
        p = hlo_config_gap(p + 1);
    ok = ok && *p == '{';
    if (ok)
        p = hlo_config_gap(p + 1);
    ok = ok && *p == 'n';
    if (ok)
        p = hlo_config_gap(p + 1);
    ok = ok && *p == ':';
    if (ok)
        p = hlo_config_gap(p + 1);
    const char *digits = p;
    while (ok && *p >= '0' && *p <= '9')
        p++;
    size_t n_digits = (size_t)(p - digits);
    ok = ok && n_digits && *hlo_config_gap(p) == '}';
    if (!ok)
        return ffail(F, w->line, "while '%s': known_trip_count is not {\"n\":\"N\"} with N a "
                                 "decimal count: '%.40s'", w->name, kt);
    /* past 10^6 refused: seven digits decide, without a wrap */
    uint64_t v = 0;
    for (size_t i = 0; i < n_digits && v <= FLAT_MAX_TRIPS; i++)
        v = v * 10 + (uint64_t)(digits[i] - '0');
    if (v > FLAT_MAX_TRIPS)
        return ffail(F, w->line, "while '%s': known_trip_count %.*s is above 10^6", w->name,
                     (int)(n_digits < 40 ? n_digits : 40), digits);
    *n = v;
    return 1;
}

/* The user's count for loop w by its name; 1 when given. */
static int named_trip_count(const struct flat *F, const struct instr *w, uint64_t *n)
{
    for (uint32_t k = 0; F->trips && k < F->trips->n; k++)
        if (!strcmp(F->trips->name[k], w->name)) {
            *n = F->trips->count[k];
            return 1;
        }
    return 0;
}

/* The trip count of while instruction w, whose operand is flat instruction
 * init: the user's for its name, else known_trip_count in its backend
 * config, else the induction variable pattern of XLA's
 * ComputeWhileLoopTripCount. */
static int trip_count(struct flat *F, const struct instr *w, uint32_t init, uint64_t *n)
{
    if (named_trip_count(F, w, n))
        return 0; /* the user's word for this loop, over XLA's */
    int kt = known_trip_count(F, w, n);
    if (kt)
        return kt < 0 ? -1 : 0;
    int ck = w->cond_k >= 0 ? hlo_find_comp(F->m, w->calls[w->cond_k]) : -1;
    int bk = w->body_k >= 0 ? hlo_find_comp(F->m, w->calls[w->body_k]) : -1;
    if (ck < 0 || bk < 0)
        return ffail(F, w->line, "while '%s' needs body= and condition= computations",
                     w->name);
    const struct comp *cc = &F->m->c[ck], *bc = &F->m->c[bk];
    const struct instr *cr = NULL, *br = NULL;
    for (uint32_t i = 0; i < cc->n; i++)
        if (cc->in[i].root || (!cr && i + 1 == cc->n))
            cr = &cc->in[i];
    for (uint32_t i = 0; i < bc->n; i++)
        if (bc->in[i].root || (!br && i + 1 == bc->n))
            br = &bc->in[i];
    /* condition: compare(get-tuple-element(param, k), constant) or mirrored */
    const char *why = "its condition is not compare(counter, constant)";
    int64_t idx = -1;
    double limit = 0, init_v = 0, step = 0;
    char dir[3] = "";
    if (cr && !strcmp(cr->opcode, "compare") && cr->n_ops == 2 && cr->direction &&
        strlen(cr->direction) == 2) {
        memcpy(dir, cr->direction, 3);
        int a = lookup(F, (uint32_t)ck, cr->ops[0], cc->n);
        int b = lookup(F, (uint32_t)ck, cr->ops[1], cc->n);
        if (a >= 0 && b >= 0) {
            const struct instr *A = &cc->in[a], *B = &cc->in[b];
            if (!strcmp(B->opcode, "get-tuple-element") && A->has_lit) {
                const struct instr *t = A;
                A = B;
                B = t; /* counter on the left: mirror the direction */
                dir[0] = dir[0] == 'L' ? 'G' : dir[0] == 'G' ? 'L' : dir[0];
            }
            if (!strcmp(A->opcode, "get-tuple-element") && B->has_lit) {
                idx = A->index;
                limit = B->lit;
            }
        }
    }
    /* init: element idx of the operand tuple, a constant */
    const struct instr *t = &F->out->in[init];
    if (idx >= 0) {
        why = "its counter does not start from a constant";
        const struct instr *ie = !strcmp(t->opcode, "tuple") && (uint64_t)idx < t->n_ops
                                     ? flat_op(F, init, (uint32_t)idx) : NULL;
        if (ie && (!strcmp(ie->opcode, "copy") || !strcmp(ie->opcode, "convert")) &&
            ie->n_ops == 1)
            ie = flat_op(F, (uint32_t)(ie - F->out->in), 0);
        if (ie && ie->has_lit) {
            init_v = ie->lit;
            /* step: body root element idx = add(gte(param, idx), constant) */
            why = "its body does not add a constant to the counter";
            if (br && !strcmp(br->opcode, "tuple") && (uint64_t)idx < br->n_ops) {
                int s = lookup(F, (uint32_t)bk, br->ops[idx], bc->n);
                const struct instr *S = s >= 0 ? &bc->in[s] : NULL;
                if (S && (!strcmp(S->opcode, "add") || !strcmp(S->opcode, "subtract")) &&
                    S->n_ops == 2) {
                    int x = lookup(F, (uint32_t)bk, S->ops[0], (uint32_t)s);
                    int y = lookup(F, (uint32_t)bk, S->ops[1], (uint32_t)s);
                    const struct instr *X = x >= 0 ? &bc->in[x] : NULL;
                    const struct instr *Y = y >= 0 ? &bc->in[y] : NULL;
                    if (X && Y && X->has_lit && S->opcode[0] == 'a') {
                        const struct instr *tmp = X;
                        X = Y;
                        Y = tmp;
                    }
                    if (X && Y && !strcmp(X->opcode, "get-tuple-element") &&
                        X->index == idx && Y->has_lit)
                        step = S->opcode[0] == 'a' ? Y->lit : -Y->lit;
                }
            }
        }
    }
    if (step != 0) {
        double cnt = -1;
        if (!strcmp(dir, "LT") && step > 0)
            cnt = init_v < limit ? ceil((limit - init_v) / step) : 0;
        else if (!strcmp(dir, "LE") && step > 0)
            cnt = init_v <= limit ? floor((limit - init_v) / step) + 1 : 0;
        else if (!strcmp(dir, "GT") && step < 0)
            cnt = init_v > limit ? ceil((init_v - limit) / -step) : 0;
        else if (!strcmp(dir, "GE") && step < 0)
            cnt = init_v >= limit ? floor((init_v - limit) / -step) + 1 : 0;
        if (cnt >= 0 && cnt <= FLAT_MAX_TRIPS) {
            *n = (uint64_t)cnt;
            return 0;
        }
        why = cnt > FLAT_MAX_TRIPS ? "its trip count is above 10^6"
                                   : "its counter moves away from the limit";
    }
    if (F->trips && F->trips->has_all) {
        *n = F->trips->all;
        return 0;
    }
    return ffail(F, w->line, "while '%s': cannot find its trip count (no known_trip_count "
                             "in backend_config, and %s); give it with --import "
                             "trip_count.%s=N (this loop) or trip_count=N (every such loop)",
                 w->name, why, w->name);
}

/* The flat operands of instruction i of computation k.  Every name was
 * found to be an earlier instruction of k when the module was parsed
 * (hlo.c, check_names_resolve), so none binds outside its computation. */
static uint32_t *map_ops(struct flat *F, uint32_t k, uint32_t i, const uint32_t *map)
{
    const struct instr *in = &F->m->c[k].in[i];
    uint32_t *ops = sb_xmalloc((in->n_ops ? in->n_ops : 1) * sizeof *ops);
    for (uint32_t j = 0; j < in->n_ops; j++) {
        int p = lookup(F, k, in->ops[j], i);
        SB_ASSERT(p >= 0);
        ops[j] = map[p];
    }
    return ops;
}

/* One more step of the expansion; past FLAT_MAX_WORK refused at the while
 * being expanded (else at in, the instruction visited). */
static int step(struct flat *F, const struct instr *in)
{
    if (++F->work <= FLAT_MAX_WORK)
        return 0;
    const struct instr *w = F->loop ? F->loop : in;
    if (F->top_loop && F->top_loop != F->loop)
        return ffail(F, w->line, "while '%s' (inside while '%s' of line %u): expanding the "
                                 "loops takes more than %u steps (instructions visited and "
                                 "iterations begun, nested loops multiplied, a body that emits "
                                 "nothing included), beyond what a step build expands",
                     w->name, F->top_loop->name, F->top_loop->line, FLAT_MAX_WORK);
    return ffail(F, w->line, "%s '%s': expanding the module takes more than %u steps "
                             "(instructions visited and iterations begun, nested loops "
                             "multiplied, a body that emits nothing included), beyond what a "
                             "step build expands", w->opcode, w->name, FLAT_MAX_WORK);
}

/* Whether async-done i of computation k ends an async-start that was
 * inlined (hlo_async_compute). */
static int wraps_compute(struct flat *F, uint32_t k, uint32_t i)
{
    const struct instr *in = &F->m->c[k].in[i];
    int s = lookup(F, k, in->ops[0], i);
    return s >= 0 && hlo_async_compute(F->m, &F->m->c[k].in[s]) >= 0;
}

static int expand_instr(struct flat *F, uint32_t k, uint32_t i, const char *prefix,
                        const uint32_t *args, uint32_t n_args, int is_entry, int depth,
                        uint32_t *map)
{
    const struct instr *in = &F->m->c[k].in[i];
    const char *op = in->opcode;
    if (F->out->n >= FLAT_MAX_INSTRS)
        return ffail(F, in->line, "the expanded module exceeds %u instructions",
                     FLAT_MAX_INSTRS);
    if (step(F, in))
        return -1;
    if (!strcmp(op, "parameter") && !is_entry) {
        if (in->index < 0 || (uint64_t)in->index >= n_args)
            return ffail(F, in->line, "parameter '%s': number %lld, but the caller passes "
                                      "%u operands", in->name, (long long)in->index, n_args);
        map[i] = args[in->index];
        return 0;
    }
    uint32_t *ops = map_ops(F, k, i, map);
    int rc = 0;
    if (!strcmp(op, "get-tuple-element") && in->n_ops == 1 && ops[0] != SB_NONE &&
        !strcmp(F->out->in[ops[0]].opcode, "tuple") && in->index >= 0 &&
        (uint64_t)in->index < F->out->in[ops[0]].n_ops &&
        F->op_idx[F->op_off[ops[0]] + in->index] != SB_NONE) {
        map[i] = F->op_idx[F->op_off[ops[0]] + in->index];
    } else if (!strcmp(op, "while") && in->n_ops == 1 && ops[0] != SB_NONE) {
        uint64_t n = 0;
        int bk = in->body_k >= 0 ? hlo_find_comp(F->m, in->calls[in->body_k]) : -1;
        rc = trip_count(F, in, ops[0], &n);
        if (!rc && bk < 0)
            rc = ffail(F, in->line, "while '%s' has no body computation", in->name);
        uint32_t carried = ops[0];
        /* each iteration is a computation of its own, as XLA schedules the
         * body apart from its caller: its scope (core/scope.h) says which */
        char *outer = F->scope;
        const struct instr *outer_loop = F->loop;
        F->loop = in;
        if (!F->top_loop)
            F->top_loop = in;
        for (uint64_t it = 0; it < n && !rc; it++) {
            if ((rc = step(F, in)))
                break;
            char *pre = sb_strf("%s%s/iter%llu/", prefix, in->name, (unsigned long long)it);
            F->scope = sb_strf("%s%s%s#%llu", outer ? outer : "", outer ? "/" : "",
                               in->name, (unsigned long long)it);
            rc = expand_comp(F, (uint32_t)bk, pre, &carried, 1, 0, depth + 1, &carried);
            free(pre);
            free(F->scope);
        }
        F->scope = outer;
        F->loop = outer_loop;
        if (F->top_loop == in)
            F->top_loop = NULL;
        map[i] = carried;
    } else if (!strcmp(op, "call") && (in->apply || in->n_calls)) {
        int ck = hlo_find_comp(F->m, in->apply ? in->apply : in->calls[0]);
        if (ck < 0) {
            rc = ffail(F, in->line, "call '%s' calls unknown computation '%s'", in->name,
                       in->apply ? in->apply : in->calls[0]);
        } else {
            char *pre = sb_strf("%s%s/", prefix, in->name);
            rc = expand_comp(F, (uint32_t)ck, pre, ops, in->n_ops, 0, depth + 1, &map[i]);
            free(pre);
        }
    } else if (hlo_async_compute(F->m, in) >= 0) {
        /* work XLA GPU runs on another stream, wrapped in async-start
         * (StreamAttributeAsyncWrapper): inlined where the start is, as a
         * call; its operation_queue_id is on the wrapped root, so the
         * step build puts it on that stream */
        char *pre = sb_strf("%s%s/", prefix, in->name);
        rc = expand_comp(F, (uint32_t)hlo_async_compute(F->m, in), pre, ops, in->n_ops, 0,
                         depth + 1, &map[i]);
        free(pre);
    } else if (!strcmp(op, "async-done") && in->n_ops && ops[0] != SB_NONE &&
               wraps_compute(F, k, i)) {
        map[i] = ops[0]; /* the value of the inlined work */
    } else {
        map[i] = emit(F, in, prefix, ops, is_entry && in->root, k, map);
    }
    free(ops);
    return rc;
}

static int expand_comp(struct flat *F, uint32_t k, const char *prefix, const uint32_t *args,
                       uint32_t n_args, int is_entry, int depth, uint32_t *root_out)
{
    const struct comp *c = &F->m->c[k];
    if (depth > FLAT_MAX_DEPTH)
        return ffail(F, c->line, "computation '%s': calls and loops nested deeper than %d",
                     c->name, FLAT_MAX_DEPTH);
    uint32_t *map = sb_xmalloc((c->n ? c->n : 1) * sizeof *map);
    uint32_t root = c->n - 1;
    int rc = 0;
    for (uint32_t i = 0; i < c->n && !rc; i++) {
        map[i] = SB_NONE;
        if (c->in[i].root)
            root = i;
        rc = expand_instr(F, k, i, prefix, args, n_args, is_entry, depth, map);
    }
    if (!rc)
        *root_out = map[root];
    if (!rc && map[root] == SB_NONE)
        rc = ffail(F, c->in[root].line, "computation '%s': its root '%s' has no value",
                   c->name, c->in[root].name);
    free(map);
    return rc;
}

/* Instructions computation k inlines to, counting calls (not loops, whose
 * trip counts depend on their operands), saturating at the ceiling: a call
 * tree that doubles at every level is refused before anything is copied. */
static uint64_t inlined_size(const struct sb_hlo_module *m, uint32_t k, uint64_t *memo)
{
    if (memo[k])
        return memo[k];
    memo[k] = FLAT_MAX_INSTRS; /* recursion was refused before: a guard only */
    uint64_t n = 0;
    const struct comp *c = &m->c[k];
    for (uint32_t i = 0; i < c->n && n < FLAT_MAX_INSTRS; i++) {
        const struct instr *in = &c->in[i];
        int callee = !strcmp(in->opcode, "call")
                         ? hlo_find_comp(m, in->apply ? in->apply
                                                      : in->n_calls ? in->calls[0] : "")
                         : hlo_async_compute(m, in);
        n += callee >= 0 ? inlined_size(m, (uint32_t)callee, memo) : 1;
    }
    memo[k] = n < FLAT_MAX_INSTRS ? (n ? n : 1) : FLAT_MAX_INSTRS;
    return memo[k];
}

static int needs_expansion(const struct sb_hlo_module *m, const struct comp *c)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (!strcmp(c->in[i].opcode, "while") || !strcmp(c->in[i].opcode, "call") ||
            hlo_async_compute(m, &c->in[i]) >= 0)
            return 1;
    return 0;
}


/* A trip count named for a loop the module does not have is a typo the user
 * should hear of, not an option silently unused. */
static int check_trip_names(struct flat *F)
{
    const struct sb_hlo_module *m = F->m;
    for (uint32_t t = 0; F->trips && t < F->trips->n; t++) {
        int found = 0;
        for (uint32_t k = 0; k < m->n && !found; k++)
            for (uint32_t i = 0; i < m->c[k].n && !found; i++)
                found = !strcmp(m->c[k].in[i].opcode, "while") &&
                        !strcmp(m->c[k].in[i].name, F->trips->name[t]);
        if (!found)
            return sb_errf(F->e, "%s: import option trip_count.%s: the module has no while "
                                 "loop of that name", m->path, F->trips->name[t]);
    }
    return 0;
}

int hlo_expand(struct sb_hlo_module *m, const struct sb_hlo_trips *t, struct sb_err *e)
{
    struct flat F = {.m = m, .e = e, .trips = t};
    if (m->flat || m->entry < 0)
        return 0;
    if (check_trip_names(&F))
        return -1;
    if (check_recursion(&F))
        return -1;
    const struct comp *ent = &m->c[m->entry];
    if (!needs_expansion(m, ent))
        return 0;
    uint64_t *memo = sb_xcalloc(m->n, sizeof *memo);
    uint64_t size = inlined_size(m, (uint32_t)m->entry, memo);
    free(memo);
    if (size >= FLAT_MAX_INSTRS)
        return ffail(&F, ent->line, "computation '%s': its calls inline to %u instructions "
                                    "or more, beyond what a step build expands",
                     ent->name, FLAT_MAX_INSTRS);
    F.out = sb_xcalloc(1, sizeof *F.out);
    F.out->name = sb_xstrdup(ent->name);
    F.out->line = ent->line;
    F.out->entry = 1;
    F.ct = sb_xcalloc(m->n, sizeof *F.ct);
    F.cap_off = 256;
    F.op_off = sb_xcalloc(F.cap_off, sizeof *F.op_off);
    uint32_t root = SB_NONE;
    int rc = expand_comp(&F, (uint32_t)m->entry, "", NULL, 0, 1, 0, &root);
    for (uint32_t k = 0; k < m->n; k++)
        free(F.ct[k].tab);
    free(F.ct);
    free(F.op_off);
    free(F.op_idx);
    if (!rc && root != SB_NONE && !F.out->in[root].root) {
        /* the entry's root was a call or a while: its value is the flat
         * instruction it resolved to */
        F.out->in[root].root = 1;
    }
    if (rc) {
        hlo_flat_free(F.out);
        return -1;
    }
    m->flat = F.out;
    return 0;
}
