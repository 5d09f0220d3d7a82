/* HLO text importer: XLA's HLO text (the subset single-computation modules and
 * XLA's scheduler tests use) to a format-v1 graph.  The mapping is documented in
 * workloads/importers/hlo.md.
 *
 * pass 1 (sb_hlo_parse) reads the text into computations and instructions with
 * their line numbers: shapes are reduced to the byte counts the memory model
 * needs, attributes are skipped generically (balanced brackets, quoted
 * strings) except the few the mapping reads;
 * pass 2 (sb_hlo_build) checks the computation the way the graph format needs it
 * (operands defined before use, each async start with one done) so that errors
 * cite HLO lines, writes format-v1 CSV into memory and hands it to the CSV
 * loader. */
#define _POSIX_C_SOURCE 200809L
#include "hlo.h"
#include "hlo_impl.h"

#include "core/builder.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>


/* ---- lexer --------------------------------------------------------------- */

struct lex {
    const char *p, *end;
    const char *begin; /* the whole text: offsets into it outlive the parse */
    const char *path;
    uint32_t line;
    struct sb_err *e;
    int failed;
    int depth; /* tuple shapes being parsed, bounded so the stack is */
};

static int lfail(struct lex *L, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int lfail(struct lex *L, uint32_t line, const char *fmt, ...)
{
    if (L->failed)
        return -1;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sb_errf(L->e, "%s:%u: %s", L->path, line, msg);
    L->failed = 1;
    return -1;
}

/* How much of the text after L->p a message may quote: at most n bytes and
 * never past the end, since the buffer need not end in a NUL. */
static int ahead(const struct lex *L, int n)
{
    return L->end - L->p < n ? (int)(L->end - L->p) : n;
}

/* Spaces, newlines and comments (block and line). */
static void ws(struct lex *L)
{
    while (L->p < L->end) {
        char c = *L->p;
        if (c == '\n') {
            L->line++;
            L->p++;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            L->p++;
        } else if (c == '/' && L->p + 1 < L->end && L->p[1] == '*') {
            L->p += 2;
            while (L->p + 1 < L->end && !(L->p[0] == '*' && L->p[1] == '/'))
                L->line += *L->p++ == '\n';
            L->p = L->p + 1 < L->end ? L->p + 2 : L->end;
        } else if (c == '/' && L->p + 1 < L->end && L->p[1] == '/') {
            while (L->p < L->end && *L->p != '\n')
                L->p++;
        } else {
            return;
        }
    }
}

static int peek(struct lex *L)
{
    ws(L);
    return L->p < L->end ? (unsigned char)*L->p : -1;
}

static int accept(struct lex *L, char c)
{
    if (peek(L) != c)
        return 0;
    L->p++;
    return 1;
}

static int expect(struct lex *L, char c, const char *what)
{
    if (accept(L, c))
        return 0;
    if (L->p >= L->end)
        return lfail(L, L->line, "expected '%c' %s, found the end of the file", c, what);
    return lfail(L, L->line, "expected '%c' %s, found '%.*s'", c, what, ahead(L, 20), L->p);
}

static int name_char(int c)
{
    return isalnum(c) || c == '_' || c == '.' || c == '-';
}

/* A name or word: [%]?[A-Za-z0-9_.-]+, returned without the '%'. */
static char *word(struct lex *L)
{
    ws(L);
    if (L->p < L->end && *L->p == '%')
        L->p++;
    const char *s = L->p;
    while (L->p < L->end && name_char((unsigned char)*L->p))
        L->p++;
    if (L->p == s)
        return NULL;
    size_t n = (size_t)(L->p - s);
    char *w = sb_xmalloc(n + 1);
    memcpy(w, s, n);
    w[n] = 0;
    return w;
}

static int skip_string(struct lex *L)
{
    uint32_t line = L->line;
    L->p++; /* opening quote */
    while (L->p < L->end && *L->p != '"') {
        if (*L->p == '\\' && L->p + 1 < L->end)
            L->p++;
        L->line += *L->p++ == '\n';
    }
    if (L->p >= L->end)
        return lfail(L, line, "unterminated string");
    L->p++;
    return 0;
}

/* Skips one bracketed group ({...}, [...], (...)) with nested groups and
 * strings inside. */
static int skip_group(struct lex *L)
{
    char stack[256];
    int depth = 0;
    uint32_t line = L->line;
    do {
        if (L->p >= L->end)
            return lfail(L, line, "unbalanced '%c'", stack[0]);
        char c = *L->p;
        if (c == '"') {
            if (skip_string(L))
                return -1;
            continue;
        }
        if (c == '{' || c == '[' || c == '(') {
            if (depth == (int)sizeof stack)
                return lfail(L, L->line, "brackets nested too deeply");
            stack[depth++] = c;
        } else if (c == '}' || c == ']' || c == ')') {
            char open = c == '}' ? '{' : c == ']' ? '[' : '(';
            if (!depth || stack[depth - 1] != open)
                return lfail(L, L->line, "unbalanced '%c'", c);
            depth--;
        }
        L->line += c == '\n';
        L->p++;
    } while (depth);
    return 0;
}

/* ---- shapes -------------------------------------------------------------- */

static int elem_bytes(const char *t, uint64_t *out, uint8_t *dt)
{
    static const struct {
        const char *name;
        uint8_t bytes, dt;
    } types[] = {
        {"pred", 1, HLO_DT_OTHER}, {"s2", 1, HLO_DT_OTHER}, {"u2", 1, HLO_DT_OTHER},
        {"s4", 1, HLO_DT_OTHER}, {"u4", 1, HLO_DT_OTHER}, {"s8", 1, HLO_DT_S8},
        {"u8", 1, HLO_DT_U8}, {"s16", 2, HLO_DT_OTHER}, {"u16", 2, HLO_DT_OTHER},
        {"s32", 4, HLO_DT_S32}, {"u32", 4, HLO_DT_OTHER}, {"s64", 8, HLO_DT_OTHER},
        {"u64", 8, HLO_DT_OTHER}, {"f16", 2, HLO_DT_F16}, {"bf16", 2, HLO_DT_BF16},
        {"f32", 4, HLO_DT_F32}, {"f64", 8, HLO_DT_F64}, {"c64", 8, HLO_DT_C64},
        {"c128", 16, HLO_DT_C128}, {"token", 0, HLO_DT_OTHER}, {"opaque", 0, HLO_DT_OTHER},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(t, types[i].name) == 0) {
            *out = types[i].bytes;
            *dt = types[i].dt;
            return 0;
        }
    if (strncmp(t, "f8", 2) == 0 || strncmp(t, "f4", 2) == 0 || strncmp(t, "f6", 2) == 0) {
        *out = 1; /* sub-byte and 8-bit floats take a byte each unpacked */
        *dt = HLO_DT_F8;
        return 0;
    }
    return -1;
}

/* A decimal in [s, e) (spaces around it allowed), at most max: 0 and *out,
 * else -1.  The whole value is read ("1e6", "-1" and "4x" are refused, not
 * taken for their first digits). */
static int decimal(const char *s, const char *e, uint64_t max, uint64_t *out)
{
    while (s < e && *s == ' ')
        s++;
    while (e > s && e[-1] == ' ')
        e--;
    uint64_t v = 0;
    if (s == e)
        return -1;
    for (; s < e; s++) {
        if (*s < '0' || *s > '9' || v > (max - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static uint64_t sat_mul(uint64_t a, uint64_t b)
{
    return b && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* The element size in bits a layout gives, E(n) in "{1,0:T(8,128)E(4)}", or
 * 0 when it gives none.  Layout::Print writes the items after ':' as
 * juxtaposed X(...) groups; only that level is read, so that the layout of a
 * physical shape inside P(...) is not.  The group [s, e) is balanced (it was
 * skipped), so strtoull stops at its ')'. */
static uint64_t layout_elem_bits(const char *s, const char *e)
{
    int depth = 0, items = 0;
    for (const char *p = s + 1; p < e; p++) {
        if (*p == '(') {
            depth++;
        } else if (*p == ')') {
            depth--;
        } else if (!depth && *p == ':') {
            items = 1;
        } else if (!depth && items && *p == 'E' && p + 1 < e && p[1] == '(' &&
                   (p[-1] == ':' || p[-1] == ')')) {
            return strtoull(p + 2, NULL, 10);
        }
    }
    return 0;
}

/* XLA's GetSizeOfShape of an array: ShapeUtil::ByteSizeOfElements (elements
 * times the type's byte width, which is one byte for pred and sub-byte types,
 * or ceil(elements * bits / 8) when the layout packs them to `bits`), plus
 * an s32 per dimension when any dimension is dynamic (a "<=" bound). */
static uint64_t array_size_bytes(uint64_t elems, uint64_t width, uint64_t bits,
                                 uint64_t n_dims, int dynamic)
{
    uint64_t n = bits ? sat_add(sat_mul(elems / 8, bits),
                                sat_add(sat_mul(elems % 8, bits), 7) / 8)
                      : sat_mul(elems, width);
    return dynamic ? sat_add(n, sat_mul(4, n_dims)) : n;
}

static int parse_shape(struct lex *L, struct shape *s);
static int tuple_elements(struct lex *L, struct shape *s);

#define MAX_TUPLE_DEPTH 64

static int parse_tuple_shape(struct lex *L, struct shape *s)
{
    memset(s, 0, sizeof *s);
    s->tuple = 1;
    if (L->depth >= MAX_TUPLE_DEPTH)
        return lfail(L, L->line, "tuple shapes nested deeper than %d", MAX_TUPLE_DEPTH);
    L->depth++;
    int rc = tuple_elements(L, s);
    L->depth--;
    return rc;
}

static int tuple_elements(struct lex *L, struct shape *s)
{
    uint32_t line = L->line;
    L->p++; /* '(' */
    if (accept(L, ')'))
        return 0;
    do {
        struct shape c;
        if (parse_shape(L, &c))
            return -1;
        if (s->n_top < 2) {
            s->top_all[s->n_top] = c.all_bytes;
            s->top_bytes[s->n_top] = c.bytes;
        }
        if (!s->n_top) { /* leaf 0's type and dimensions */
            s->dtype = c.dtype;
            s->rank = c.rank;
            memcpy(s->dims, c.dims, sizeof s->dims);
        }
        /* sums saturate (a 16 EiB tuple once counted 2 MB), then are refused */
        s->leaf_elems = sat_add(s->leaf_elems, c.leaf_elems);
        s->n_top = s->n_top < UINT32_MAX ? s->n_top + 1 : UINT32_MAX;
        s->bytes = sat_add(s->bytes, c.bytes);
        s->all_bytes = sat_add(s->all_bytes, c.all_bytes);
        s->sub_size_bytes = sat_add(s->sub_size_bytes, c.sub_size_bytes);
    } while (accept(L, ','));
    s->all_bytes = sat_add(s->all_bytes, s->bytes); /* the tuple's own top-level buffer */
    if (s->all_bytes > HLO_MAX_SHAPE_BYTES)
        return lfail(L, line, "tuple shape is too large: its buffers hold more than 2^62 bytes");
    /* XLA: ByteSizeOfTupleIndexTable, a pointer per element */
    s->size_bytes = sat_mul(HLO_POINTER_BYTES, s->n_top);
    s->sub_size_bytes = sat_add(s->sub_size_bytes, s->size_bytes);
    return expect(L, ')', "closing a tuple shape");
}

/* The dimensions of an array: their product in s->elems, and how many there
 * are (s->rank stops at HLO_MAX_RANK) and whether one is dynamic, for XLA's
 * size of a dynamic shape. */
static int parse_dims(struct lex *L, struct shape *s, uint64_t *n_dims, int *dynamic)
{
    uint64_t *elems = &s->elems;
    *elems = 1;
    *n_dims = 0;
    *dynamic = 0;
    if (accept(L, ']'))
        return 0;
    do {
        ws(L);
        if (L->p + 1 < L->end && L->p[0] == '<' && L->p[1] == '=') {
            L->p += 2; /* a dynamic dimension's bound */
            *dynamic = 1;
        }
        (*n_dims)++;
        ws(L);
        char *end;
        errno = 0;
        unsigned long long d = strtoull(L->p, &end, 10);
        if (end == L->p || errno)
            return lfail(L, L->line, "bad dimension '%.*s' in a shape", ahead(L, 10), L->p);
        L->p = end;
        if (d && *elems > UINT64_MAX / d)
            return lfail(L, L->line, "shape has too many elements");
        *elems *= d;
        if (s->rank < HLO_MAX_RANK)
            s->dims[s->rank++] = d;
        else /* fold the rest into the last dimension */
            s->dims[HLO_MAX_RANK - 1] *= d;
    } while (accept(L, ','));
    return expect(L, ']', "closing the dimensions of a shape");
}

static int parse_shape(struct lex *L, struct shape *s)
{
    if (peek(L) == '(')
        return parse_tuple_shape(L, s);
    memset(s, 0, sizeof *s);
    uint32_t line = L->line;
    char *t = word(L);
    uint64_t width;
    if (!t)
        return lfail(L, line, "expected a shape, found '%.*s'", ahead(L, 20), L->p);
    int bad = elem_bytes(t, &width, &s->dtype);
    if (bad) {
        lfail(L, line, "unknown element type '%s' in a shape", t);
        free(t);
        return -1;
    }
    int opaque = !strcmp(t, "opaque");
    free(t);
    uint64_t n_dims, bits = 0;
    int dynamic;
    if (expect(L, '[', "after an element type") || parse_dims(L, s, &n_dims, &dynamic))
        return -1;
    /* a layout follows the dimensions without a space; a '{' after a space
     * opens a computation body (ENTRY e () -> f32[4] {) */
    if (L->p < L->end && *L->p == '{') {
        const char *layout = L->p;
        if (skip_group(L))
            return -1;
        bits = layout_elem_bits(layout, L->p);
    }
    if (width && s->elems > HLO_MAX_SHAPE_BYTES / width)
        return lfail(L, line, "shape is too large: %" PRIu64 " elements of %" PRIu64 " bytes "
                              "are more than 2^62 bytes", s->elems, width);
    s->bytes = s->all_bytes = s->elems * width;
    s->leaf_elems = s->elems;
    /* XLA's ByteSizeOf: a token is 0 bytes, an opaque value a pointer */
    s->size_bytes = opaque ? HLO_POINTER_BYTES
                           : array_size_bytes(s->elems, width, bits, n_dims, dynamic);
    s->sub_size_bytes = s->size_bytes;
    return 0;
}

/* ---- instructions -------------------------------------------------------- */

static void push_str(char ***v, uint32_t *n, char *s)
{
    *v = sb_xrealloc(*v, (*n + 1) * sizeof **v);
    (*v)[(*n)++] = s;
}

/* Operands: "[shape] [%]name" separated by commas; parameter and constant
 * hold a literal instead. */
static int parse_operands(struct lex *L, struct instr *in)
{
    if (!strcmp(in->opcode, "parameter") || !strcmp(in->opcode, "constant")) {
        L->p--; /* back onto '(' */
        const char *s = L->p;
        if (skip_group(L))
            return -1;
        if (in->opcode[0] == 'p') { /* parameter(N) */
            uint64_t v;
            if (decimal(s + 1, L->p - 1, INT64_MAX, &v))
                return lfail(L, in->line, "parameter '%s': its number '%.*s' is not a decimal",
                             in->name, (int)(L->p - s - 2 < 20 ? L->p - s - 2 : 20), s + 1);
            in->index = (int64_t)v;
            return 0;
        }
        if (!in->sh.tuple && in->sh.elems == 1) { /* a scalar's value (trip counts) */
            char *end;
            const char *v = s + 1;
            while (v < L->p && isspace((unsigned char)*v))
                v++;
            double x = strtod(v, &end);
            if (end > v && end < L->p) {
                in->lit = x;
                in->has_lit = 1;
            } else if (L->p - v >= 4 && !strncmp(v, "true", 4)) {
                in->lit = 1;
                in->has_lit = 1;
            } else if (L->p - v >= 5 && !strncmp(v, "false", 5)) {
                in->lit = 0;
                in->has_lit = 1;
            }
        }
        return 0;
    }
    if (accept(L, ')'))
        return 0;
    do {
        int c = peek(L);
        const char *save = L->p;
        uint32_t save_line = L->line;
        char *w = NULL;
        if (c == '(') {
            struct shape sh;
            if (parse_shape(L, &sh))
                return -1;
        } else {
            w = word(L);
            if (w && peek(L) == '[') { /* it was an element type */
                free(w);
                w = NULL;
                L->p = save;
                L->line = save_line;
                struct shape sh;
                if (parse_shape(L, &sh))
                    return -1;
            }
        }
        uint32_t line = L->line;
        if (!w)
            w = word(L);
        if (!w)
            return lfail(L, line, "expected an operand name in '%s', found '%.*s'",
                         in->opcode, ahead(L, 20), L->p);
        push_str(&in->ops, &in->n_ops, w);
        in->op_line = sb_xrealloc(in->op_line, in->n_ops * sizeof *in->op_line);
        in->op_line[in->n_ops - 1] = line;
    } while (accept(L, ','));
    return expect(L, ')', "closing the operand list");
}

/* An attribute value: bracketed groups, strings and bare characters up to a
 * top-level comma or space. */
static int skip_value(struct lex *L, const char **s, const char **e)
{
    ws(L);
    *s = L->p;
    while (L->p < L->end) {
        char c = *L->p;
        if (c == '{' || c == '[' || c == '(') {
            if (skip_group(L))
                return -1;
        } else if (c == '"') {
            if (skip_string(L))
                return -1;
        } else if (c == ',' || c == '}' || c == ')' || c == ']' || isspace((unsigned char)c)) {
            break;
        } else {
            L->p++;
        }
    }
    *e = L->p;
    if (*e == *s)
        return lfail(L, L->line, "attribute without a value");
    return 0;
}

static char *dup_range(const char *s, const char *e)
{
    char *d = sb_xmalloc((size_t)(e - s) + 1);
    memcpy(d, s, (size_t)(e - s));
    d[e - s] = 0;
    return d;
}

/* Names listed in a value: "%a" or "{%a, %b}". */
static void value_names(const char *s, const char *e, char ***v, uint32_t *n)
{
    while (s < e) {
        while (s < e && !name_char((unsigned char)*s))
            s++;
        const char *w = s;
        while (s < e && name_char((unsigned char)*s))
            s++;
        if (s > w)
            push_str(v, n, dup_range(w, s));
    }
}

#define HLO_MAX_REPLICAS ((1u << 31) - 1) /* a replica id or group size: an int32 */

/* Skips spaces in [p, e). */
static const char *rg_ws(const char *p, const char *e)
{
    while (p < e && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
        p++;
    return p;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* replica_groups as XLA prints it, checked whole; *size is the size of its
 * groups (0: "{}", every replica).  Explicit, {{0,1},{2,3}}: every group the
 * same size, every replica id a decimal below 2^31 and in one group once.
 * Iota, [G,S]<=[D1,...,Dk] with an optional T(P1,...,Pk) (XLA's
 * IotaReplicaGroupList): G groups of S replicas, both in 1..2^31-1, the
 * dimensions positive with product G * S, T a permutation of 0..k-1. */
static int replica_groups(struct lex *L, uint32_t line, const struct instr *in, const char *s,
                          const char *e, uint32_t *size)
{
    int n_text = e - s < 80 ? (int)(e - s) : 80;
    const char *p = rg_ws(s, e);
    *size = 0;
    if (p < e && *p == '[') { /* iota */
        uint64_t gs[2], prod = 1, dim[HLO_MAX_RANK];
        uint32_t k = 0;
        const char *why = NULL;
        for (int j = 0; j < 2 && !why; j++) {
            const char *a = ++p;
            while (p < e && *p != ',' && *p != ']')
                p++;
            if (p == e || *p != (j ? ']' : ',') || decimal(a, p, HLO_MAX_REPLICAS, &gs[j]) ||
                !gs[j])
                why = "its [GROUPS,SIZE] are not two integers in 1..2^31-1";
        }
        if (!why && (e - p < 4 || strncmp(p, "]<=[", 4)))
            why = "it is not [GROUPS,SIZE]<=[DIMS...]";
        p += 3;
        while (!why && p < e && *p != ']') {
            const char *a = ++p;
            while (p < e && *p != ',' && *p != ']')
                p++;
            if (k == HLO_MAX_RANK || p == e || decimal(a, p, HLO_MAX_REPLICAS, &dim[k]) ||
                !dim[k])
                why = "its dimensions are not positive integers (at most 12)";
            else
                prod = prod > ((uint64_t)1 << 62) / dim[k] ? (uint64_t)1 << 62 : prod * dim[k++];
        }
        if (!why && (p == e || !k))
            why = "it is not [GROUPS,SIZE]<=[DIMS...]";
        if (!why && ++p < e && *p == 'T') { /* T(perm) */
            uint8_t seen[HLO_MAX_RANK] = {0};
            uint32_t n_perm = 0;
            if (++p == e || *p != '(')
                why = "T is not T(PERMUTATION)";
            while (!why && p < e && *p != ')') {
                const char *a = ++p;
                uint64_t x;
                while (p < e && *p != ',' && *p != ')')
                    p++;
                if (p == e || decimal(a, p, k - 1, &x) || seen[x] || n_perm == k)
                    why = "T(...) is not a permutation of its dimensions";
                else
                    seen[x] = 1, n_perm++;
            }
            if (!why && (p == e || n_perm != k))
                why = "T(...) is not a permutation of its dimensions";
            p++;
        }
        if (!why && rg_ws(p, e) != e)
            why = "it has text after its form";
        if (why)
            return lfail(L, line, "'%s': replica_groups %.*s: %s", in->name, n_text, s, why);
        if (prod != gs[0] * gs[1])
            return lfail(L, line, "'%s': replica_groups %.*s: %" PRIu64 " groups of %" PRIu64
                                  " are %" PRIu64 " replicas, but its dimensions hold %" PRIu64,
                         in->name, n_text, s, gs[0], gs[1], gs[0] * gs[1], prod);
        *size = (uint32_t)gs[1];
        return 0;
    }
    /* explicit: {}, or {{a,b,...},...} */
    uint32_t n_ids = 0, cap = 0, *ids = NULL, n_groups = 0, first = 0;
    const char *why = NULL;
    if (p == e || *p != '{')
        why = "it is neither {{ID,...},...} nor [GROUPS,SIZE]<=[DIMS...]";
    else
        p = rg_ws(p + 1, e);
    while (!why && p < e && *p == '{') {
        uint32_t members = 0;
        p = rg_ws(p + 1, e);
        while (!why && p < e && *p != '}') {
            const char *a = p;
            uint64_t id;
            while (p < e && *p != ',' && *p != '}')
                p++;
            if (p == e || decimal(a, p, HLO_MAX_REPLICAS, &id)) {
                lfail(L, line, "'%s': replica_groups %.*s: '%.*s' is not a replica id (a "
                               "decimal below 2^31)", in->name, n_text, s,
                      (int)(p - a < 20 ? p - a : 20), a);
                free(ids);
                return -1;
            }
            if (n_ids == cap)
                ids = sb_xrealloc(ids, (cap = cap ? 2 * cap : 16) * sizeof *ids);
            ids[n_ids++] = (uint32_t)id;
            members++;
            if (*p == ',' && *(p = rg_ws(p + 1, e)) == '}')
                why = "a group ends in ','";
        }
        if (!why && p == e)
            why = "a group is not closed by '}'";
        if (!why && !members)
            why = "a group is empty";
        if (!why && n_groups && members != first) {
            lfail(L, line, "'%s': replica_groups %.*s: group %u has %u replica%s where group "
                           "1 has %u (the groups are all one size)", in->name, n_text, s,
                  n_groups + 1, members, members == 1 ? "" : "s", first);
            free(ids);
            return -1;
        }
        if (!why) {
            first = n_groups++ ? first : members;
            p = rg_ws(p + 1, e);
            if (p < e && *p == ',')
                p = rg_ws(p + 1, e);
        }
    }
    if (!why && (p == e || *p != '}' || rg_ws(p + 1, e) != e))
        why = "it is neither {{ID,...},...} nor [GROUPS,SIZE]<=[DIMS...]";
    if (!why && n_ids) {
        qsort(ids, n_ids, sizeof *ids, cmp_u32);
        for (uint32_t i = 1; i < n_ids && !why; i++)
            if (ids[i] == ids[i - 1]) {
                lfail(L, line, "'%s': replica_groups %.*s: replica %u is listed twice",
                      in->name, n_text, s, ids[i]);
                free(ids);
                return -1;
            }
    }
    free(ids);
    if (why)
        return lfail(L, line, "'%s': replica_groups %.*s: %s", in->name, n_text, s, why);
    *size = first;
    return 0;
}

/* One attribute into in; -1 (with the attribute's line) when a value it
 * reads is malformed. */
static int read_attr(struct lex *L, uint32_t line, struct instr *in, const char *key,
                     const char *s, const char *e)
{
    uint64_t v;
    /* an attribute given twice keeps its last value (and frees the first) */
    if (!strcmp(key, "kind")) {
        free(in->fusion_kind);
        in->fusion_kind = dup_range(s, e);
    } else if (!strcmp(key, "to_apply")) { /* reducers are not run on their own */
        char **v = NULL;
        uint32_t n = 0;
        value_names(s, e, &v, &n);
        free(in->apply);
        in->apply = n ? v[0] : NULL;
        for (uint32_t k = 1; k < n; k++)
            free(v[k]);
        free(v);
    } else if (!strcmp(key, "body") || !strcmp(key, "condition")) {
        *(key[0] == 'b' ? &in->body_k : &in->cond_k) = (int)in->n_calls;
        value_names(s, e, &in->calls, &in->n_calls);
    } else if (!strcmp(key, "calls") || !strcmp(key, "body") ||
               !strcmp(key, "condition") || !strcmp(key, "branch_computations") ||
               !strcmp(key, "true_computation") || !strcmp(key, "false_computation")) {
        value_names(s, e, &in->calls, &in->n_calls);
    } else if (!strcmp(key, "custom_call_target")) {
        free(in->target);
        in->target = e - s >= 2 && *s == '"' ? dup_range(s + 1, e - 1) : dup_range(s, e);
    } else if (!strcmp(key, "backend_config")) {
        free(in->backend);
        in->backend = dup_range(s, e);
    } else if (!strcmp(key, "lhs_contracting_dims")) {
        free(in->dnums);
        in->dnums = dup_range(s, e);
    } else if (!strcmp(key, "dim_labels")) {
        free(in->dim_labels);
        in->dim_labels = dup_range(s, e);
    } else if (!strcmp(key, "window")) {
        free(in->window);
        in->window = dup_range(s, e);
    } else if (!strcmp(key, "direction")) {
        free(in->direction);
        in->direction = dup_range(s, e);
    } else if (!strcmp(key, "operand_precision")) {
        free(in->precision);
        in->precision = dup_range(s, e);
    } else if (!strcmp(key, "feature_group_count") || !strcmp(key, "batch_group_count")) {
        if (decimal(s, e, UINT32_MAX, &v) || !v)
            return lfail(L, line, "'%s': %s '%.*s' is not a positive integer", in->name, key,
                         (int)(e - s < 20 ? e - s : 20), s);
        *(key[0] == 'f' ? &in->fgc : &in->bgc) = (uint32_t)v;
    } else if (!strcmp(key, "control-predecessors")) {
        value_names(s, e, &in->ctrl, &in->n_ctrl);
    } else if (!strcmp(key, "frontend_attributes")) {
        free(in->frontend);
        in->frontend = dup_range(s, e);
    } else if (!strcmp(key, "is_host_transfer")) {
        in->host_transfer = e - s == 4 && !strncmp(s, "true", 4);
    } else if (!strcmp(key, "index")) {
        if (decimal(s, e, INT64_MAX, &v))
            return lfail(L, line, "'%s': index '%.*s' is not a tuple index", in->name,
                         (int)(e - s < 20 ? e - s : 20), s);
        in->index = (int64_t)v;
    } else if (!strcmp(key, "replica_groups")) {
        return replica_groups(L, line, in, s, e, &in->group);
    } else if (!strcmp(key, "channel_id")) {
        if (decimal(s, e, INT64_MAX, &v))
            return lfail(L, line, "'%s': channel_id '%.*s' is not a non-negative integer",
                         in->name, (int)(e - s < 20 ? e - s : 20), s);
        in->channel = (int64_t)v;
    } else if (!strcmp(key, "use_global_device_ids")) {
        in->global_ids = e - s == 4 && !strncmp(s, "true", 4);
    } else if (!strcmp(key, "metadata")) {
        const char *p = s;
        for (; p + 9 < e; p++)
            if (!strncmp(p, "op_name=\"", 9)) {
                const char *q = memchr(p + 9, '"', (size_t)(e - p - 9));
                if (q) {
                    free(in->op_name);
                    in->op_name = dup_range(p + 9, q);
                }
                break;
            }
    }
    return 0;
}

static int parse_attrs(struct lex *L, struct instr *in)
{
    while (accept(L, ',')) {
        uint32_t line = L->line;
        char *key = word(L);
        const char *s, *e;
        if (!key)
            return lfail(L, line, "expected an attribute name after ',' in '%s'", in->name);
        if (expect(L, '=', "after an attribute name") || skip_value(L, &s, &e)) {
            free(key);
            return -1;
        }
        int rc = read_attr(L, line, in, key, s, e);
        free(key);
        if (rc)
            return -1;
    }
    return 0;
}


/* [ROOT] name = shape opcode(operands) [, attr=value]* */
static int parse_instr(struct lex *L, struct comp *c)
{
    struct instr in = {0};
    in.line = L->line;
    in.index = -1;
    in.channel = -1;
    in.fgc = in.bgc = 1;
    in.body_k = in.cond_k = -1;
    char *w = word(L);
    if (w && !strcmp(w, "ROOT")) {
        free(w);
        in.root = 1;
        w = word(L);
    }
    if (!w)
        return lfail(L, in.line, "expected an instruction, found '%.*s'", ahead(L, 20), L->p);
    in.name = w;
    int rc = expect(L, '=', "after an instruction name");
    size_t sh_at = (size_t)(L->p - L->begin);
    uint32_t sh_line = L->line;
    rc = rc || parse_shape(L, &in.sh);
    if (!rc) {
        uint32_t line = L->line;
        in.opcode = word(L);
        if (!in.opcode)
            rc = lfail(L, line, "instruction '%s' has no opcode", in.name);
    }
    rc = rc || expect(L, '(', "after the opcode") || parse_operands(L, &in) ||
         parse_attrs(L, &in);
    if (rc) {
        hlo_instr_free(&in);
        return -1;
    }
    if (!c->root_marked) { /* the first ROOT, else the last instruction */
        c->root_sh_at = sh_at;
        c->root_sh_line = sh_line;
        c->root_marked = in.root;
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        c->in = sb_xrealloc(c->in, c->cap * sizeof *c->in);
    }
    c->in[c->n++] = in;
    return 0;
}

/* [ENTRY] [%]name [(params) -> shape] { instructions } */
static int parse_computation(struct lex *L, struct sb_hlo_module *m)
{
    struct comp c = {0};
    c.line = L->line;
    char *w = word(L);
    if (w && !strcmp(w, "ENTRY")) {
        free(w);
        c.entry = 1;
        w = word(L);
    }
    if (!w)
        return lfail(L, c.line, "expected a computation, found '%.*s'", ahead(L, 20), L->p);
    c.name = w;
    int rc = 0;
    if (peek(L) == '(')
        rc = skip_group(L);
    ws(L);
    if (!rc && L->p + 1 < L->end && L->p[0] == '-' && L->p[1] == '>') {
        struct shape sh;
        L->p += 2;
        rc = parse_shape(L, &sh);
    }
    rc = rc || expect(L, '{', "opening a computation");
    while (!rc && peek(L) != '}' && L->p < L->end)
        rc = parse_instr(L, &c);
    if (!rc && L->p >= L->end)
        rc = lfail(L, L->line, "computation '%s' (line %u) is not closed by '}' before the "
                               "end of the file", c.name, c.line);
    rc = rc || expect(L, '}', "closing a computation");
    if (!rc && !c.n)
        rc = lfail(L, c.line, "computation '%s' has no instructions", c.name);
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 8;
        m->c = sb_xrealloc(m->c, m->cap * sizeof *m->c);
    }
    m->c[m->n++] = c; /* kept even on error, so that sb_hlo_free frees it */
    return rc;
}

/* ---- input_output_alias -------------------------------------------------- */

/* The text follows XLA's HloParserImpl::ParseAliasing:
 *   { {1, 2}: (4, {1}, must-alias), {0}: (3, {}) }
 * an output index, then the parameter number, the parameter's index and an
 * optional kind (may-alias when absent); a trailing comma is allowed in the
 * list and in an index, as there. */

/* Appends to a pool whose capacity is the next power of two of its size. */
static void *grow_pow2(void *v, uint32_t n, size_t size)
{
    return n && (n & (n - 1)) ? v : sb_xrealloc(v, (n ? 2 * (size_t)n : 8) * size);
}

/* A parameter number or a tuple index: a decimal below 2^32 - 1. */
static int alias_number(struct lex *A, const char *what, uint32_t *out)
{
    int c = peek(A);
    if (c < 0 || !isdigit(c))
        return lfail(A, A->line, "input_output_alias: expected %s, found '%.*s'", what,
                     ahead(A, 20), A->p);
    uint64_t v = 0;
    for (; A->p < A->end && isdigit((unsigned char)*A->p); A->p++) {
        v = v * 10 + (uint64_t)(*A->p - '0');
        if (v >= UINT32_MAX)
            return lfail(A, A->line, "input_output_alias: %s is too large", what);
    }
    *out = (uint32_t)v;
    return 0;
}

/* {i, j, ...} (XLA's ParseShapeIndex) into m->alias_idx. */
static int alias_index(struct lex *A, struct sb_hlo_module *m, const char *what,
                       uint32_t *at, uint32_t *n)
{
    if (expect(A, '{', what))
        return -1;
    *at = m->n_alias_idx;
    *n = 0;
    while (peek(A) != '}') {
        uint32_t v;
        if (alias_number(A, "a tuple index", &v))
            return -1;
        if (*n == MAX_TUPLE_DEPTH)
            return lfail(A, A->line, "input_output_alias: an index deeper than %d tuples",
                         MAX_TUPLE_DEPTH);
        m->alias_idx = grow_pow2(m->alias_idx, m->n_alias_idx, sizeof *m->alias_idx);
        m->alias_idx[m->n_alias_idx++] = v;
        (*n)++;
        if (!accept(A, ','))
            break;
    }
    return expect(A, '}', "closing an index in input_output_alias");
}

/* OUTPUT_INDEX: (PARAMETER, PARAMETER_INDEX[, may-alias|must-alias]) */
static int alias_entry(struct lex *A, struct sb_hlo_module *m)
{
    peek(A); /* the alias's own line, after any newline */
    struct hlo_alias a = {.line = A->line};
    if (alias_index(A, m, "opening an output index in input_output_alias", &a.out_at,
                    &a.n_out) ||
        expect(A, ':', "after an output index in input_output_alias") ||
        expect(A, '(', "before a parameter number in input_output_alias") ||
        alias_number(A, "a parameter number", &a.param) ||
        expect(A, ',', "after a parameter number in input_output_alias") ||
        alias_index(A, m, "opening a parameter index in input_output_alias", &a.param_at,
                    &a.n_param))
        return -1;
    if (accept(A, ',')) {
        uint32_t line = A->line;
        char *kind = word(A);
        int must = kind && !strcmp(kind, "must-alias");
        if (!must && (!kind || strcmp(kind, "may-alias") != 0)) {
            lfail(A, line, "input_output_alias: unknown alias kind '%s' (may-alias or "
                           "must-alias)", kind ? kind : "");
            free(kind);
            return -1;
        }
        a.must_alias = must;
        free(kind);
    }
    if (expect(A, ')', "closing an alias in input_output_alias"))
        return -1;
    m->alias = grow_pow2(m->alias, m->n_alias, sizeof *m->alias);
    m->alias[m->n_alias++] = a;
    return 0;
}

/* The header's value [s, e), which starts on `line`: every alias into m. */
static int parse_aliases(struct lex *L, struct sb_hlo_module *m, const char *s, const char *e,
                         uint32_t line)
{
    struct lex A = {.p = s, .end = e, .begin = L->begin, .path = L->path, .line = line,
                    .e = L->e};
    int rc = expect(&A, '{', "opening input_output_alias");
    while (!rc && peek(&A) >= 0 && peek(&A) != '}') {
        rc = alias_entry(&A, m);
        if (!rc && !accept(&A, ','))
            break;
    }
    rc = rc || expect(&A, '}', "closing input_output_alias");
    if (!rc && peek(&A) >= 0)
        rc = lfail(&A, A.line, "input_output_alias: unexpected '%.*s' after its closing '}'",
                   ahead(&A, 20), A.p);
    L->failed |= A.failed;
    return rc;
}

static int parse_header(struct lex *L, struct sb_hlo_module *m)
{
    uint32_t line = L->line;
    char *w = word(L);
    if (!w || strcmp(w, "HloModule") != 0) {
        free(w);
        return lfail(L, line, "expected 'HloModule NAME' at the start of the module");
    }
    free(w);
    m->name = word(L);
    if (!m->name)
        return lfail(L, line, "HloModule has no name");
    while (accept(L, ',')) {
        const char *s, *e;
        char *key = word(L);
        if (!key || expect(L, '=', "after a module attribute")) {
            free(key);
            return key ? -1 : lfail(L, L->line, "bad module attribute");
        }
        peek(L); /* the value's line, after any newline */
        uint32_t vline = L->line;
        int rc = skip_value(L, &s, &e);
        if (!rc && !strcmp(key, "is_scheduled"))
            m->scheduled = e - s == 4 && !strncmp(s, "true", 4);
        if (!rc && (!strcmp(key, "replica_count") || !strcmp(key, "num_partitions"))) {
            uint64_t v;
            if (decimal(s, e, HLO_MAX_REPLICAS, &v) || !v)
                rc = lfail(L, vline, "HloModule %s '%.*s' is not an integer in 1..2^31-1", key,
                           (int)(e - s < 20 ? e - s : 20), s);
            else
                *(key[0] == 'r' ? &m->replica_count : &m->num_partitions) = (uint32_t)v;
        }
        if (!rc && !strcmp(key, "input_output_alias"))
            rc = parse_aliases(L, m, s, e, vline); /* checked against the ENTRY later */
        free(key);
        if (rc)
            return -1;
    }
    return 0;
}

/* Operands and control predecessors name earlier instructions of their own
 * computation, in every computation (XLA's text is in post order), refused
 * with the operand's line otherwise: a name resolves nowhere else (a called
 * computation's unknown name once bound to the ENTRY instruction of that
 * name when the expansion inlined it).  The ENTRY's messages are the graph
 * mapping's (add_inputs). */
static int check_names_resolve(struct lex *L, const struct sb_hlo_module *m)
{
    uint32_t cap = 0, *tab = NULL;
    int rc = 0;
    for (uint32_t k = 0; k < m->n && !rc; k++) {
        const struct comp *c = &m->c[k];
        uint32_t need = 16;
        while (need < 2 * c->n)
            need *= 2;
        if (need > cap) {
            free(tab);
            tab = sb_xmalloc((cap = need) * sizeof *tab);
        }
        memset(tab, 0, need * sizeof *tab);
        for (uint32_t i = 0; i < c->n; i++) {
            uint32_t h = hlo_hash_name(c->in[i].name) & (need - 1);
            while (tab[h] && strcmp(c->in[tab[h] - 1].name, c->in[i].name))
                h = (h + 1) & (need - 1);
            if (!tab[h])
                tab[h] = i + 1; /* the first of duplicates: the builder reports them */
        }
        for (uint32_t i = 0; i < c->n && !rc; i++) {
            const struct instr *in = &c->in[i];
            for (uint32_t j = 0; j < in->n_ops + in->n_ctrl && !rc; j++) {
                const char *name = j < in->n_ops ? in->ops[j] : in->ctrl[j - in->n_ops];
                const char *what = j < in->n_ops ? "operand" : "control predecessor";
                uint32_t h = hlo_hash_name(name) & (need - 1);
                while (tab[h] && strcmp(c->in[tab[h] - 1].name, name))
                    h = (h + 1) & (need - 1);
                if (tab[h] && tab[h] - 1 < i)
                    continue;
                char where[160] = "";
                if ((int)k != m->entry)
                    snprintf(where, sizeof where, " in computation '%s'", c->name);
                uint32_t line = j < in->n_ops ? in->op_line[j] : in->line;
                rc = tab[h] ? lfail(L, line, "%s '%s'%s: %s '%s' is defined after its use "
                                             "(line %u); the text must be in schedule order",
                                    in->opcode, in->name, where, what, name,
                                    c->in[tab[h] - 1].line)
                            : lfail(L, line, "%s '%s'%s: unknown %s '%s'%s", in->opcode,
                                    in->name, where, what, name,
                                    *where ? " (a name resolves within its own computation)"
                                           : "");
            }
        }
    }
    free(tab);
    return rc;
}

/* Each name once per computation; the entry is the one marked ENTRY, else the
 * last computation (XLA's parser does the same). */
static int check_module(struct lex *L, struct sb_hlo_module *m)
{
    m->entry = -1;
    for (uint32_t k = 0; k < m->n; k++) {
        if (m->c[k].entry) {
            if (m->entry >= 0)
                return lfail(L, m->c[k].line, "second ENTRY computation '%s'", m->c[k].name);
            m->entry = (int)k;
        }
        for (uint32_t j = 0; j < k; j++)
            if (!strcmp(m->c[j].name, m->c[k].name))
                return lfail(L, m->c[k].line, "duplicate computation name '%s'",
                             m->c[k].name);
    }
    for (uint32_t k = 0; k < m->n; k++) /* scheduling annotations and hints */
        for (uint32_t i = 0; i < m->c[k].n; i++) {
            struct sb_node_in probe = SB_NODE_IN_INIT;
            char why[256];
            if (hlo_sched_read(&m->c[k].in[i], &probe, why, sizeof why))
                return lfail(L, m->c[k].in[i].line, "%s", why);
        }
    if (!m->n)
        return lfail(L, L->line, "module has no computation");
    if (m->entry < 0)
        m->entry = (int)m->n - 1;
    return check_names_resolve(L, m);
}

/* ---- the module's inputs and outputs -------------------------------------- */

/* XLA's GetSchedulerMemoryLimit (gpu_hlo_schedule.cc) subtracts from the
 * device's memory total_io_size: GetSizeOfShape of every subshape of every
 * ENTRY parameter and of the module's result (tuples' index tables
 * included), less that of the result subshape each input_output_alias entry
 * names, which is counted once as its parameter. */

static uint32_t root_of(const struct comp *c);

static int cmp_index(const uint32_t *a, uint32_t na, const uint32_t *b, uint32_t nb)
{
    for (uint32_t i = 0; i < na && i < nb; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return (na > nb) - (na < nb); /* a prefix first, as a preorder visits */
}

struct alias_key {
    const uint32_t *idx; /* output index */
    uint32_t n, k;       /* its length; the alias's number in m->alias */
};

static int by_output_index(const void *x, const void *y)
{
    const struct alias_key *a = x, *b = y;
    int c = cmp_index(a->idx, a->n, b->idx, b->n);
    return c ? c : (a->k > b->k) - (a->k < b->k);
}

/* The result shape's text read again in preorder, which visits its
 * subshapes in the order of their ShapeIndex, against the aliases sorted the
 * same way: one pass whatever the number of aliases. */
struct io_walk {
    struct lex *S;                    /* over the root's shape */
    const struct alias_key *key;      /* [n_key] by output index */
    uint32_t n_key, next;             /* the next alias to find */
    uint32_t path[MAX_TUPLE_DEPTH];   /* index of the subshape being read */
    int missed;                       /* key[next] names no subshape */
    uint64_t aliased_bytes;           /* size_bytes of those found */
};

static int io_walk_shape(struct io_walk *w, uint32_t depth)
{
    int hit = 0;
    if (w->next < w->n_key) {
        const struct alias_key *a = &w->key[w->next];
        int c = cmp_index(a->idx, a->n, w->path, depth);
        if (c < 0) { /* the walk has passed where it would be */
            w->missed = 1;
            return -1;
        }
        hit = c == 0;
        w->next += hit;
    }
    if (peek(w->S) != '(') {
        struct shape sh;
        if (parse_shape(w->S, &sh))
            return -1;
        if (hit)
            w->aliased_bytes = sat_add(w->aliased_bytes, sh.size_bytes);
        return 0;
    }
    w->S->p++; /* '(' */
    uint32_t n = 0;
    if (!accept(w->S, ')')) {
        do {
            SB_ASSERT(depth < MAX_TUPLE_DEPTH); /* the text was parsed with this bound */
            w->path[depth] = n++;
            if (io_walk_shape(w, depth + 1))
                return -1;
        } while (accept(w->S, ','));
        if (expect(w->S, ')', "closing a tuple shape"))
            return -1;
    }
    if (hit)
        w->aliased_bytes = sat_add(w->aliased_bytes, sat_mul(HLO_POINTER_BYTES, n));
    return 0;
}

/* "{1, 2}" for messages, cut short past the buffer. */
static const char *index_text(const uint32_t *idx, uint32_t n, char *buf, size_t size)
{
    size_t len = (size_t)snprintf(buf, size, "{");
    for (uint32_t i = 0; i < n && len < size; i++)
        len += (size_t)snprintf(buf + len, size - len, "%s%u", i ? ", " : "", idx[i]);
    if (len < size)
        snprintf(buf + len, size - len, "}");
    return buf;
}

/* Sorts the aliases by output index and refuses one given twice (XLA keeps
 * one alias per output). */
static struct alias_key *sorted_aliases(struct lex *L, const struct sb_hlo_module *m)
{
    struct alias_key *key = sb_xmalloc(m->n_alias * sizeof *key);
    for (uint32_t k = 0; k < m->n_alias; k++)
        key[k] = (struct alias_key){m->alias_idx + m->alias[k].out_at, m->alias[k].n_out, k};
    qsort(key, m->n_alias, sizeof *key, by_output_index);
    for (uint32_t j = 1; j < m->n_alias; j++)
        if (!cmp_index(key[j - 1].idx, key[j - 1].n, key[j].idx, key[j].n)) {
            char ix[96];
            const struct hlo_alias *a = &m->alias[key[j - 1].k], *b = &m->alias[key[j].k];
            lfail(L, b->line, "input_output_alias: output %s is aliased twice (parameters %u "
                              "and %u)", index_text(key[j].idx, key[j].n, ix, sizeof ix),
                  a->param, b->param);
            free(key);
            return NULL;
        }
    return key;
}

/* pass 3: m->io_bytes, and the parameters the aliases donate. */
static int module_io(struct lex *L, struct sb_hlo_module *m)
{
    const struct comp *c = &m->c[m->entry];
    const struct instr *root = &c->in[root_of(c)];
    uint32_t n_params = 0;
    uint64_t total = root->sh.sub_size_bytes;
    for (uint32_t i = 0; i < c->n; i++)
        if (!strcmp(c->in[i].opcode, "parameter")) {
            n_params++;
            total = sat_add(total, c->in[i].sh.sub_size_bytes);
        }
    if (total > HLO_MAX_IO_BYTES)
        return lfail(L, c->line, "ENTRY '%s': its parameters and result take more than 2^62 "
                                 "bytes", c->name);
    m->donated = sb_xcalloc(n_params ? n_params : 1, 1);
    m->n_donated = n_params;
    for (uint32_t k = 0; k < m->n_alias; k++) {
        const struct hlo_alias *a = &m->alias[k];
        char ix[96];
        if (a->param >= n_params)
            return lfail(L, a->line, "input_output_alias: output %s names parameter %u, but "
                                     "ENTRY '%s' has %u parameters",
                         index_text(m->alias_idx + a->out_at, a->n_out, ix, sizeof ix),
                         a->param, c->name, n_params);
        m->donated[a->param] = 1;
    }
    m->io_bytes = total;
    if (!m->n_alias)
        return 0;
    struct alias_key *key = sorted_aliases(L, m);
    if (!key)
        return -1;
    struct lex S = {.p = L->begin + c->root_sh_at, .end = L->end, .begin = L->begin,
                    .path = L->path, .line = c->root_sh_line, .e = L->e};
    struct io_walk w = {.S = &S, .key = key, .n_key = m->n_alias};
    int rc = io_walk_shape(&w, 0);
    if (!rc && w.next < w.n_key)
        w.missed = 1;
    if (w.missed) {
        char ix[96];
        const struct alias_key *a = &key[w.next];
        rc = lfail(L, m->alias[a->k].line, "input_output_alias: output %s is not in the "
                                           "result shape (ROOT '%s', line %u)",
                   index_text(a->idx, a->n, ix, sizeof ix), root->name, root->line);
    }
    free(key);
    L->failed |= S.failed;
    if (rc)
        return -1;
    /* each aliased subshape is a distinct part of the result, counted above */
    SB_ASSERT(w.aliased_bytes <= total);
    m->io_bytes = total - w.aliased_bytes;
    return 0;
}

struct sb_hlo_module *sb_hlo_parse(const char *path, const char *buf, size_t n,
                                   struct sb_err *e)
{
    struct lex L = {.p = buf, .end = buf + n, .begin = buf, .path = path, .line = 1, .e = e};
    struct sb_hlo_module *m = sb_xcalloc(1, sizeof *m);
    m->path = sb_xstrdup(path);
    int rc = parse_header(&L, m);
    while (!rc && peek(&L) >= 0)
        rc = parse_computation(&L, m);
    rc = rc || check_module(&L, m) || module_io(&L, m);
    if (!rc)
        hlo_index_comps(m);
    if (rc) {
        sb_hlo_free(m);
        return NULL;
    }
    return m;
}

void sb_hlo_free(struct sb_hlo_module *m)
{
    if (!m)
        return;
    for (uint32_t k = 0; k < m->n; k++) {
        for (uint32_t i = 0; i < m->c[k].n; i++)
            hlo_instr_free(&m->c[k].in[i]);
        free(m->c[k].in);
        free(m->c[k].name);
    }
    free(m->c);
    free(m->donated);
    free(m->alias);
    free(m->alias_idx);
    free(m->ctab);
    hlo_flat_free(m->flat);
    free(m->name);
    free(m->path);
    free(m);
}

/* ---- mapping to the graph format ----------------------------------------- */

/* How an opcode maps (workloads/importers/hlo.md, "Instructions"). */
enum role {
    ROLE_COMPUTE,
    ROLE_INPUT,   /* parameter */
    ROLE_NOP,     /* XLA's IsNopInstruction: free, scheduled as soon as ready */
    ROLE_VIEW,    /* nop that owns no buffer (get-tuple-element, bitcast) */
    ROLE_START,   /* async start already in the text */
    ROLE_DONE,
    ROLE_SPLIT,   /* synchronous collective that becomes start + done */
};

struct async_op {
    const char *start, *done; /* text opcodes */
    enum sb_coll coll;
    int aliased;              /* tuple element of the start that views an operand, -1 none */
};

static const struct async_op async_ops[] = {
    {"all-gather-start", "all-gather-done", SB_COLL_ALL_GATHER, 0},
    {"all-reduce-start", "all-reduce-done", SB_COLL_ALL_REDUCE, -1},
    {"collective-permute-start", "collective-permute-done", SB_COLL_COLLECTIVE_PERMUTE, 0},
    {"copy-start", "copy-done", SB_COLL_COPY, 1},
    {"send", "send-done", SB_COLL_SEND, 0},
    {"recv", "recv-done", SB_COLL_RECV, -1},
    {"async-start", "async-done", SB_COLL_NONE, 0}, /* coll from the wrapped op */
};

/* Synchronous collectives XLA's AsyncCollectiveCreator (as the scheduler tests
 * configure it) turns into a start/done pair. */
static const struct {
    const char *op;
    enum sb_coll coll;
} sync_ops[] = {
    {"all-gather", SB_COLL_ALL_GATHER},
    {"all-reduce", SB_COLL_ALL_REDUCE},
    {"collective-permute", SB_COLL_COLLECTIVE_PERMUTE},
    {"collective-broadcast", SB_COLL_COLLECTIVE_BROADCAST},
};

static const struct async_op *async_start_op(const char *op)
{
    for (size_t i = 0; i < sizeof async_ops / sizeof async_ops[0]; i++)
        if (!strcmp(op, async_ops[i].start))
            return &async_ops[i];
    return NULL;
}

static int is_async_done(const char *op)
{
    for (size_t i = 0; i < sizeof async_ops / sizeof async_ops[0]; i++)
        if (!strcmp(op, async_ops[i].done))
            return 1;
    return 0;
}

/* A step build splits every synchronous collective XLA's async conversion
 * makes asynchronous. */
static const struct {
    const char *op;
    enum sb_coll coll;
} step_sync_ops[] = {
    {"reduce-scatter", SB_COLL_REDUCE_SCATTER},
    {"all-to-all", SB_COLL_ALL_TO_ALL},
    {"ragged-all-to-all", SB_COLL_RAGGED_ALL_TO_ALL},
};

static enum sb_coll step_sync_coll(const char *op)
{
    for (size_t i = 0; i < sizeof step_sync_ops / sizeof step_sync_ops[0]; i++)
        if (!strcmp(op, step_sync_ops[i].op))
            return step_sync_ops[i].coll;
    return SB_COLL_NONE;
}

static enum sb_coll sync_coll(const char *op)
{
    for (size_t i = 0; i < sizeof sync_ops / sizeof sync_ops[0]; i++)
        if (!strcmp(op, sync_ops[i].op))
            return sync_ops[i].coll;
    return SB_COLL_NONE;
}


struct builder {
    const struct sb_hlo_module *m;
    const struct comp *c;
    const struct sb_hlo_opts *o;
    struct sb_err *e;
    uint32_t *node_of;  /* [instr] node holding its result (a split's done) */
    uint32_t *start_of; /* [instr] start node of a split, SB_NONE otherwise */
    uint32_t *n_dones;  /* [instr] dones naming this start */
    uint8_t *role;      /* [instr] enum role */
    uint8_t *coll;      /* [instr] enum sb_coll of starts, dones, splits */
    uint32_t n_nodes;
    uint32_t n_called_colls;
    uint32_t *coll_memo; /* [m->n] count_colls per computation, UINT32_MAX unknown */
    struct hlo_holds holds; /* what each computation holds (hlo_sched_holds) */
    uint32_t *tab;      /* open addressing: instruction index + 1 by name */
    uint32_t tab_cap;
    uint32_t n_alias;   /* extra edges (use, start) of a while body, see alias_edges */
    uint32_t (*alias)[2];
    struct sb_builder *gb; /* the graph being built */
    struct hlo_costs *hc;  /* step builds: the cost analysis of c */
    uint32_t *fused_into;  /* step builds: [instr] consumer it fuses into, or SB_NONE */
    uint32_t *group_root;  /* [instr] the instruction its fusion group ends in */
    uint32_t *next_member; /* [instr] next member of its group, SB_NONE at the end */
    uint32_t *first_member; /* [instr] of a group root: its first member */
    uint32_t n_groups;     /* groups of two or more */
    uint8_t *inl;          /* [instr] duplicated into every user's group, no node */
    uint8_t *grouped;      /* [instr] a root built as a group (members or inlined reads) */
    uint32_t *seen;        /* [instr] add_group's visit stamp */
    uint32_t stamp;
    uint8_t *is_out;       /* step builds: [instr] an element of the ROOT tuple */
    uint16_t *queue;       /* [instr] operation_queue_id of a scheduled module (the
                              node's stream), NULL: all 0 */
    uint32_t n_after, cap_after;
    uint32_t (*after)[3];  /* order-only edges {src, dst, enum after_kind}, by dst */
    uint32_t i_after;      /* the next one to add, as nodes are added in order */
    uint32_t n_edges_of[2]; /* after edges added, by kind */
    uint8_t *p2p_joined;   /* step builds: [instr] a send whose bytes its recv carries */
    uint32_t n_joined;     /* send/recv pairs joined */
    uint32_t n_queues;     /* queues with a node */
};

enum after_kind {
    AFTER_QUEUE = 0, /* wait_on_operation_queues */
    AFTER_P2P = 1,   /* a send/recv pair's rendezvous */
};

static int bfail(struct builder *B, uint32_t line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int bfail(struct builder *B, uint32_t line, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sb_errf(B->e, "%s:%u: %s", B->m->path, line, msg);
    return -1;
}



static int find_instr(const struct comp *c, const char *name, uint32_t before)
{
    for (uint32_t i = 0; i < before; i++)
        if (!strcmp(c->in[i].name, name))
            return (int)i;
    return -1;
}


/* Instruction names of the computation being built, hashed once: modules reach
 * tens of thousands of instructions. */
static void index_names(struct builder *B)
{
    B->tab_cap = 16;
    while (B->tab_cap < 2 * B->c->n)
        B->tab_cap *= 2;
    B->tab = sb_xcalloc(B->tab_cap, sizeof *B->tab);
    for (uint32_t i = 0; i < B->c->n; i++) {
        uint32_t h = hlo_hash_name(B->c->in[i].name) & (B->tab_cap - 1);
        while (B->tab[h] && strcmp(B->c->in[B->tab[h] - 1].name, B->c->in[i].name))
            h = (h + 1) & (B->tab_cap - 1);
        if (!B->tab[h])
            B->tab[h] = i + 1; /* the first of duplicates: check_names reports them */
    }
}

/* Index of the instruction called `name` if it comes before `before`, else -1. */
static int bfind(const struct builder *B, const char *name, uint32_t before)
{
    uint32_t h = hlo_hash_name(name) & (B->tab_cap - 1);
    for (; B->tab[h]; h = (h + 1) & (B->tab_cap - 1))
        if (!strcmp(B->c->in[B->tab[h] - 1].name, name))
            return B->tab[h] - 1 < before ? (int)B->tab[h] - 1 : -1;
    return -1;
}

static int check_names(struct builder *B)
{
    for (uint32_t i = 0; i < B->c->n; i++) {
        int first = bfind(B, B->c->in[i].name, B->c->n);
        if (first != (int)i)
            return bfail(B, B->c->in[i].line, "duplicate instruction name '%s' (first "
                                              "on line %u)", B->c->in[i].name,
                         B->c->in[first].line);
    }
    return 0;
}

/* Collectives (async or synchronous) in computation k and what it calls.
 * memo[k] holds k's count once known: a computation called from many places
 * (or twice at every level) is walked once, not once per path, which is
 * exponential; COUNTING marks one being walked, so a cycle counts 0. */
#define COUNTING (UINT32_MAX - 1)
static uint32_t count_colls(const struct sb_hlo_module *m, int k, uint32_t *memo)
{
    if (k < 0 || memo[k] == COUNTING)
        return 0;
    if (memo[k] != UINT32_MAX)
        return memo[k];
    memo[k] = COUNTING;
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->c[k].n; i++) {
        const struct instr *in = &m->c[k].in[i];
        n += async_start_op(in->opcode) != NULL || sync_coll(in->opcode) != SB_COLL_NONE ||
             step_sync_coll(in->opcode) != SB_COLL_NONE;
        if (strcmp(in->opcode, "fusion") != 0)
            for (uint32_t j = 0; j < in->n_calls; j++) {
                uint32_t c = count_colls(m, hlo_find_comp(m, in->calls[j]), memo);
                n = c > UINT32_MAX - 2 - n ? UINT32_MAX - 2 : n + c; /* saturate */
            }
    }
    memo[k] = n;
    return n;
}

/* Ranks in one group of collective x, as XLA's GetSubgroupSize
 * (collective_ops_utils.cc:674 at 183fa00) counts them in the group mode
 * GetCollectiveOpGroupMode gives (collective_op_group_mode.cc:71): without
 * channel_id the groups hold replicas; with one, partitions for the ops that
 * have no use_global_device_ids (all-to-all, ragged-all-to-all,
 * collective-broadcast); all-reduce, all-gather and
 * reduce-scatter with use_global_device_ids=false take their replica group
 * across every partition (replicas x partitions), with it true the groups
 * hold flattened device ids.  Empty groups ({}) are all replicas, all
 * partitions, or both.  The header's replica_count and num_partitions
 * default to 1, as in XLA's HloModuleConfig.  Ops of source-target pairs
 * (collective-permute, send, recv) keep the size of a replica_groups they
 * name, else none.  1 is returned as 0 (unknown: the file's `# ranks=` or
 * --cost ranks= decide), as before. */
static uint32_t group_size(const struct sb_hlo_module *m, const struct instr *x)
{
    uint64_t reps = m->replica_count ? m->replica_count : 1;
    uint64_t parts = m->num_partitions ? m->num_partitions : 1;
    const char *op = x->opcode;
    int has_global = !strncmp(op, "all-reduce", 10) || !strncmp(op, "all-gather", 10) ||
                     !strcmp(op, "reduce-scatter");
    int grouped = has_global || !strcmp(op, "all-to-all") || !strcmp(op, "ragged-all-to-all") ||
                  !strcmp(op, "collective-broadcast");
    uint64_t n;
    if (!grouped) /* pairs (collective-permute, send, recv): no replica groups */
        n = x->group;
    else if (x->channel < 0)
        n = x->group ? x->group : reps;
    else if (!has_global)
        n = x->group ? x->group : parts;
    else if (!x->global_ids)
        n = (x->group ? x->group : reps) * parts;
    else
        n = x->group ? x->group : reps * parts;
    return n > 1 ? (n < UINT32_MAX ? (uint32_t)n : UINT32_MAX) : 0;
}

static int classify_start(struct builder *B, uint32_t i)
{
    const struct instr *in = &B->c->in[i];
    const struct async_op *a = async_start_op(in->opcode);
    enum sb_coll coll = a->coll;
    if (!strcmp(in->opcode, "async-start")) {
        const struct instr *root = hlo_async_root(B->m, in);
        if (!root)
            return bfail(B, in->line, "async-start '%s' does not name its computation "
                                      "(calls=)", in->name);
        coll = hlo_wrapped_coll(root->opcode);
        if (coll == SB_COLL_NONE)
            return bfail(B, in->line, "async-start '%s' wraps '%s', which is not a "
                                      "collective (the graph format's `coll` types: "
                                      "docs/workload-format.md)", in->name, root->opcode);
    } else if ((coll == SB_COLL_SEND || coll == SB_COLL_RECV) && in->host_transfer) {
        coll = coll == SB_COLL_SEND ? SB_COLL_SEND_HOST : SB_COLL_RECV_HOST;
    }
    B->role[i] = ROLE_START;
    B->coll[i] = (uint8_t)coll;
    return 0;
}

/* A done's operand 0 is its start; each start has exactly one done. */
static int classify_done(struct builder *B, uint32_t i)
{
    const struct instr *in = &B->c->in[i];
    int s = in->n_ops ? bfind(B, in->ops[0], i) : -1;
    if (s < 0 || B->role[s] != ROLE_START)
        return bfail(B, in->line, "%s '%s': operand 0 must be an earlier async start",
                     in->opcode, in->name);
    if (B->n_dones[s]++)
        return bfail(B, in->line, "%s '%s': start '%s' already has a done", in->opcode,
                     in->name, B->c->in[s].name);
    B->role[i] = ROLE_DONE;
    B->coll[i] = B->coll[s];
    return 0;
}

static int is_nop(const struct comp *c, uint32_t i, const uint32_t *n_users,
                  const int *only_user, int step)
{
    const char *op = c->in[i].opcode;
    if (!strcmp(op, "constant") || !strcmp(op, "broadcast") || !strcmp(op, "iota"))
        return 1;
    if (step && !strcmp(op, "tuple"))
        return 1; /* a step build's tuple holds pointers, it runs no kernel */
    /* XLA: a tuple whose only user is a while is free too */
    return !strcmp(op, "tuple") && n_users[i] == 1 && only_user[i] >= 0 &&
           !strcmp(c->in[only_user[i]].opcode, "while");
}

static void count_users(const struct builder *B, uint32_t *n_users, int *only_user)
{
    const struct comp *c = B->c;
    for (uint32_t i = 0; i < c->n; i++)
        only_user[i] = -1;
    for (uint32_t i = 0; i < c->n; i++)
        for (uint32_t k = 0; k < c->in[i].n_ops; k++) {
            int p = bfind(B, c->in[i].ops[k], i);
            if (p >= 0 && only_user[p] != (int)i) {
                n_users[p]++;
                only_user[p] = (int)i;
            }
        }
}

static int classify(struct builder *B)
{
    const struct comp *c = B->c;
    uint32_t *n_users = sb_xcalloc(c->n, sizeof *n_users);
    int *only_user = sb_xmalloc(c->n * sizeof *only_user);
    int rc = 0;
    count_users(B, n_users, only_user);
    for (uint32_t i = 0; i < c->n && !rc; i++) {
        const struct instr *in = &c->in[i];
        const char *op = in->opcode;
        B->role[i] = ROLE_COMPUTE;
        if (!strcmp(op, "parameter"))
            B->role[i] = ROLE_INPUT;
        else if (!strcmp(op, "get-tuple-element") || !strcmp(op, "bitcast"))
            B->role[i] = ROLE_VIEW;
        else if (is_nop(c, i, n_users, only_user, B->o->step))
            B->role[i] = ROLE_NOP;
        else if (async_start_op(op))
            rc = classify_start(B, i);
        else if (is_async_done(op))
            rc = classify_done(B, i);
        else if (sync_coll(op) != SB_COLL_NONE && !B->o->keep_sync) {
            B->role[i] = ROLE_SPLIT;
            B->coll[i] = (uint8_t)sync_coll(op);
        } else if (B->o->step && step_sync_coll(op) != SB_COLL_NONE) {
            B->role[i] = ROLE_SPLIT;
            B->coll[i] = (uint8_t)step_sync_coll(op);
        } else if (!strcmp(op, "async-update"))
            rc = bfail(B, in->line, "async-update '%s' is not supported (an async "
                                    "chain must be one start and one done)", in->name);
        if (strcmp(op, "fusion") != 0)
            for (uint32_t j = 0; j < in->n_calls && !rc; j++) {
                int k = hlo_find_comp(B->m, in->calls[j]);
                if (k < 0)
                    rc = bfail(B, in->line, "%s '%s' calls unknown computation '%s'", op,
                               in->name, in->calls[j]);
                else if (strcmp(op, "async-start") != 0 && strcmp(op, "async-done") != 0)
                    B->n_called_colls += count_colls(B->m, k, B->coll_memo); /* wrapped: the pair */
            }
    }
    for (uint32_t i = 0; i < c->n && !rc; i++)
        if (B->role[i] == ROLE_START && B->n_dones[i] != 1)
            rc = bfail(B, c->in[i].line, "%s '%s' has no done in computation '%s'",
                       c->in[i].opcode, c->in[i].name, c->name);
    free(n_users);
    free(only_user);
    return rc;
}

/* ---- sizes --------------------------------------------------------------- */

/* Bytes of the buffers an instruction defines, as XLA's alias analysis splits
 * them and the scheduler tests' size function counts them: a tuple instruction
 * defines only its top-level buffer, views define nothing, an async start does
 * not define the operand it views. */
static uint64_t defined_bytes(struct builder *B, uint32_t i)
{
    const struct instr *in = &B->c->in[i];
    switch ((enum role)B->role[i]) {
    case ROLE_VIEW:
    case ROLE_DONE:
        return 0;
    case ROLE_START: {
        const struct async_op *a = async_start_op(in->opcode);
        if (!in->sh.tuple || a->aliased < 0 || (uint32_t)a->aliased >= in->sh.n_top ||
            a->aliased > 1)
            return in->sh.all_bytes;
        /* only the operands' own buffers (the element's leaves) are views; a
         * tuple of operands (async-start's element 0) is a new buffer */
        return in->sh.all_bytes - in->sh.top_bytes[a->aliased];
    }
    default:
        break;
    }
    if (B->o->step && (!strcmp(in->opcode, "tuple") ||
                       !strcmp(in->opcode, "dynamic-update-slice")))
        return 0; /* a tuple holds its elements' buffers; an update is in place */
    if (!strcmp(in->opcode, "tuple") || !strcmp(in->opcode, "copy"))
        return in->sh.bytes;
    if (!strcmp(in->opcode, "while"))
        return 0; /* its buffers are its operand's (XLA aliases them) */
    return in->sh.all_bytes;
}

/* What AsyncCollectiveCreator's start of a synchronous collective defines:
 * all-gather-start is (operand, result) and defines all but the operand;
 * collective-permute-start is (operand, result); all-reduce-start has the
 * all-reduce's own shape. */
static uint64_t split_start_bytes(struct builder *B, uint32_t i, uint64_t op0_all)
{
    const struct instr *in = &B->c->in[i];
    if (B->coll[i] == SB_COLL_ALL_REDUCE)
        return in->sh.all_bytes;
    /* {} = op + res, {1} = res; saturating: the builder refuses past 2^50 */
    return sat_add(op0_all, sat_mul(2, in->sh.all_bytes));
}

static uint64_t op0_all_bytes(struct builder *B, uint32_t i)
{
    const struct instr *in = &B->c->in[i];
    uint64_t sum = 0;
    for (uint32_t k = 0; k < in->n_ops; k++) {
        int p = bfind(B, in->ops[k], i);
        if (p >= 0)
            sum = sat_add(sum, B->c->in[p].sh.all_bytes);
    }
    return sum;
}

/* ---- while bodies: aliasing edges ---------------------------------------- */

/* A while body's root tuple element k becomes the next iteration's parameter
 * element k: the same buffer.  When that element is an async done, its buffer
 * is written while the collective runs, so XLA's HloScheduleGraph makes every
 * reader of parameter element k (through get-tuple-element and bitcast) come
 * before the collective's start.  Such a reader becomes an extra input of the
 * start; one that follows the start in the text cannot be an input in format
 * v1 and is left out (workloads/importers/hlo.md). */
static int is_while_body(const struct sb_hlo_module *m, const char *name)
{
    for (uint32_t k = 0; k < m->n; k++)
        for (uint32_t i = 0; i < m->c[k].n; i++) {
            const struct instr *in = &m->c[k].in[i];
            if (!strcmp(in->opcode, "while") && in->n_calls)
                for (uint32_t j = 0; j < in->n_calls; j++)
                    if (!strcmp(in->calls[j], name) && strcmp(name, "") != 0)
                        return 1;
        }
    return 0;
}

static uint32_t root_of(const struct comp *c)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (c->in[i].root)
            return i;
    return c->n - 1; /* XLA: the last instruction */
}

/* The instruction whose async start writes element k of the root, or -1. */
static int start_writing(struct builder *B, const struct instr *root, uint32_t k)
{
    if (k >= root->n_ops)
        return -1;
    int d = bfind(B, root->ops[k], B->c->n);
    if (d < 0)
        return -1;
    if (B->role[d] == ROLE_SPLIT)
        return d;
    if (B->role[d] == ROLE_DONE)
        return bfind(B, B->c->in[d].ops[0], (uint32_t)d);
    return -1;
}

/* Readers of instruction v's value, seen through bitcasts, added as (use,
 * start) pairs. */
static void add_readers(struct builder *B, uint32_t v, uint32_t start, int depth)
{
    for (uint32_t u = v + 1; u < B->c->n && depth < 16; u++) {
        const struct instr *in = &B->c->in[u];
        int reads = 0;
        for (uint32_t k = 0; k < in->n_ops && !reads; k++)
            reads = !strcmp(in->ops[k], B->c->in[v].name);
        if (!reads || !strcmp(in->opcode, "tuple"))
            continue;
        if (!strcmp(in->opcode, "bitcast")) {
            add_readers(B, u, start, depth + 1);
            continue;
        }
        if (u >= start) /* after the start: not expressible, or the start itself */
            continue;
        B->alias = sb_xrealloc(B->alias, (B->n_alias + 1) * sizeof *B->alias);
        B->alias[B->n_alias][0] = u;
        B->alias[B->n_alias++][1] = start;
    }
}

static void alias_edges(struct builder *B)
{
    const struct comp *c = B->c;
    if (!is_while_body(B->m, c->name))
        return;
    const struct instr *root = &c->in[root_of(c)];
    if (strcmp(root->opcode, "tuple") != 0)
        return;
    for (uint32_t k = 0; k < root->n_ops; k++) {
        int s = start_writing(B, root, k);
        if (s < 0)
            continue;
        for (uint32_t g = 0; g < c->n; g++) /* get-tuple-element(parameter, index=k) */
            if (!strcmp(c->in[g].opcode, "get-tuple-element") && c->in[g].index == (int64_t)k &&
                c->in[g].n_ops) {
                int p = bfind(B, c->in[g].ops[0], g);
                if (p >= 0 && !strcmp(c->in[p].opcode, "parameter"))
                    add_readers(B, g, (uint32_t)s, 0);
            }
    }
}

/* ---- order-only edges: XLA GPU's streams, send/recv pairs ----------------- */

static void push_after(struct builder *B, uint32_t src, uint32_t dst, enum after_kind k)
{
    if (B->n_after == B->cap_after) {
        B->cap_after = B->cap_after ? 2 * B->cap_after : 64;
        B->after = sb_xrealloc(B->after, (size_t)B->cap_after * sizeof *B->after);
    }
    B->after[B->n_after][0] = src;
    B->after[B->n_after][1] = dst;
    B->after[B->n_after++][2] = k;
}

static int by_dst(const void *x, const void *y)
{
    const uint32_t *a = x, *b = y;
    return a[1] != b[1] ? (a[1] > b[1]) - (a[1] < b[1]) : (a[0] > b[0]) - (a[0] < b[0]);
}

/* A scheduled module's streams (XLA GPU's operation queues): each
 * instruction runs on the stream its operation_queue_id names, and
 * wait_on_operation_queues makes it wait for the work issued on those
 * queues before it, i.e. for the last earlier instruction of each (a
 * stream runs its work in order).  Parameters run nowhere; nops and views
 * take no time, so they are nobody's last work. */
static int plan_queues(struct builder *B)
{
    const struct comp *c = B->c;
    struct hlo_queues *q = sb_xmalloc(sizeof *q);
    uint32_t *last = sb_xmalloc((HLO_MAX_QUEUE + 1) * sizeof *last);
    uint8_t *used = sb_xcalloc(HLO_MAX_QUEUE + 1, 1);
    char why[300];
    int rc = 0;
    for (uint32_t k = 0; k <= HLO_MAX_QUEUE; k++)
        last[k] = SB_NONE;
    B->queue = sb_xcalloc(c->n ? c->n : 1, sizeof *B->queue);
    for (uint32_t i = 0; i < c->n && !rc; i++) {
        enum role r = (enum role)B->role[i];
        if (hlo_queue_read(&c->in[i], q, why, sizeof why)) {
            rc = bfail(B, c->in[i].line, "%s", why);
            break;
        }
        if (r == ROLE_INPUT)
            continue;
        B->queue[i] = (uint16_t)q->queue;
        for (uint32_t k = 0; k < q->n_waits; k++)
            if (last[q->wait[k]] != SB_NONE)
                push_after(B, last[q->wait[k]], i, AFTER_QUEUE);
        if (r != ROLE_NOP && r != ROLE_VIEW) {
            last[q->queue] = i;
            B->n_queues += !used[q->queue];
            used[q->queue] = 1;
        }
    }
    free(q);
    free(last);
    free(used);
    return rc;
}

/* One send or recv start of a step build, by the keys that pair it. */
struct p2p_key {
    int64_t channel;
    const char *scope; /* its loop iteration, NULL: the top */
    uint32_t instr;
};

static int by_channel(const void *x, const void *y)
{
    const struct p2p_key *a = x, *b = y;
    if (a->channel != b->channel)
        return (a->channel > b->channel) - (a->channel < b->channel);
    int s = strcmp(a->scope ? a->scope : "", b->scope ? b->scope : "");
    return s ? s : (a->instr > b->instr) - (a->instr < b->instr);
}

static struct p2p_key *p2p_keys(const struct builder *B, enum sb_coll t, uint32_t *n)
{
    const struct comp *c = B->c;
    struct p2p_key *k = sb_xmalloc((c->n ? c->n : 1) * sizeof *k);
    *n = 0;
    for (uint32_t i = 0; i < c->n; i++)
        if (B->role[i] == ROLE_START && B->coll[i] == t && c->in[i].channel >= 0)
            k[(*n)++] = (struct p2p_key){c->in[i].channel, c->in[i].scope, i};
    qsort(k, *n, sizeof *k, by_channel);
    return k;
}

/* A send and a recv of one channel (in one loop iteration) are the two ends
 * of one transfer: every rank runs both, sending its tensor to one peer
 * while it receives the same-shaped tensor from another.  The recv carries
 * the transfer's bytes (its done is when the data is there); the send's
 * bytes are the recv's, so it moves none of its own.  Each end's done waits
 * for the other end to be posted (a rendezvous), when that start comes
 * before the done in the text. */
static void plan_p2p(struct builder *B)
{
    const struct comp *c = B->c;
    uint32_t n_s, n_r, *done_of = sb_xmalloc((c->n ? c->n : 1) * sizeof *done_of);
    for (uint32_t i = 0; i < c->n; i++)
        done_of[i] = SB_NONE;
    for (uint32_t i = 0; i < c->n; i++)
        if (B->role[i] == ROLE_DONE) {
            int s = bfind(B, c->in[i].ops[0], i);
            done_of[s] = i; /* classify_done checked it */
        }
    struct p2p_key *S = p2p_keys(B, SB_COLL_SEND, &n_s), *R = p2p_keys(B, SB_COLL_RECV, &n_r);
    B->p2p_joined = sb_xcalloc(c->n ? c->n : 1, 1);
    for (uint32_t a = 0, b = 0; a < n_s && b < n_r;) {
        struct p2p_key ka = S[a], kb = R[b];
        ka.instr = kb.instr = 0; /* compare (channel, scope) only */
        int d = by_channel(&ka, &kb);
        if (d) {
            a += d < 0;
            b += d > 0;
            continue;
        }
        uint32_t s = S[a++].instr, r = R[b++].instr;
        B->p2p_joined[s] = 1;
        B->n_joined++;
        if (r < done_of[s])
            push_after(B, r, done_of[s], AFTER_P2P);
        if (s < done_of[r])
            push_after(B, s, done_of[r], AFTER_P2P);
    }
    free(S);
    free(R);
    free(done_of);
}

/* The order-only edges of instruction i, on the node just added (the start
 * of a split collective: it begins there). */
static int add_afters(struct builder *B, uint32_t i)
{
    for (; B->i_after < B->n_after && B->after[B->i_after][1] < i; B->i_after++)
        ;
    for (; B->i_after < B->n_after && B->after[B->i_after][1] == i; B->i_after++) {
        uint32_t v = B->node_of[B->after[B->i_after][0]]; /* a split's: its done */
        if (v == SB_NONE || v == B->n_nodes - 1)
            continue; /* fused into a group: no node of its own, or this one */
        if (sb_builder_after(B->gb, v))
            return -1;
        B->n_edges_of[B->after[B->i_after][2]]++;
    }
    return 0;
}

/* ---- building the graph ---------------------------------------------------- */

static const char *fusion_op(const struct instr *in)
{
    const char *k = in->fusion_kind ? in->fusion_kind : "";
    if (!strcmp(k, "kLoop"))
        return "loop_fusion";
    if (!strcmp(k, "kOutput"))
        return "output_fusion";
    if (!strcmp(k, "kInput"))
        return "input_fusion";
    return "fusion";
}

/* The instruction's inputs on the node just added: operands (a split's
 * users read its done), then control predecessors, then alias edges. */
static int add_inputs(struct builder *B, uint32_t i)
{
    const struct instr *in = &B->c->in[i];
    for (uint32_t k = 0; k < in->n_ops + in->n_ctrl; k++) {
        const char *name = k < in->n_ops ? in->ops[k] : in->ctrl[k - in->n_ops];
        uint32_t line = k < in->n_ops ? in->op_line[k] : in->line;
        int p = bfind(B, name, i);
        if (p < 0) {
            int later = bfind(B, name, B->c->n);
            return later >= 0 ? bfail(B, line, "%s '%s': %s '%s' is defined after its use "
                                               "(line %u); the text must be in schedule order",
                                      in->opcode, in->name, k < in->n_ops ? "operand" :
                                      "control predecessor", name, B->c->in[later].line)
                              : bfail(B, line, "%s '%s': unknown %s '%s'", in->opcode, in->name,
                                      k < in->n_ops ? "operand" : "control predecessor", name);
        }
        if (sb_builder_input(B->gb, B->node_of[p]))
            return -1;
    }
    for (uint32_t k = 0; k < B->n_alias; k++)
        if (B->alias[k][1] == i && sb_builder_input(B->gb, B->node_of[B->alias[k][0]]))
            return -1;
    return 0;
}

/* Adds the node of flat instruction i (its scope: the loop iteration it
 * was expanded in). */
static uint32_t add_node(struct builder *B, struct sb_node_in *n, uint32_t i)
{
    n->scope = B->c->in[i].scope;
    uint32_t id = sb_builder_node(B->gb, n);
    if (id != SB_NONE)
        B->n_nodes++;
    return id;
}

/* The two nodes of a synchronous collective: start(X) reads X's operands,
 * done(X) reads the start and stands for X's result. */
static int add_split(struct builder *B, uint32_t i)
{
    const struct instr *in = &B->c->in[i];
    enum sb_coll coll = (enum sb_coll)B->coll[i];
    char *name = sb_strf("start(%s)", in->name), *op = sb_strf("%s-start", in->opcode);
    struct sb_node_in n = SB_NODE_IN_INIT;
    n.name = name;
    n.kind = SB_KIND_START;
    n.op = op;
    n.out_bytes = split_start_bytes(B, i, op0_all_bytes(B, i));
    n.coll = coll;
    /* the full tensor moved: reduce-scatter's input, the output otherwise */
    n.comm_bytes = coll == SB_COLL_REDUCE_SCATTER ? op0_all_bytes(B, i) : in->sh.bytes;

    n.group_size = group_size(B->m, in);
    n.loc = in->line;
    n.stream = B->queue ? B->queue[i] : 0;
    uint32_t s = add_node(B, &n, i);
    int rc = s == SB_NONE || add_inputs(B, i) || add_afters(B, i);
    free(name);
    free(op);
    if (rc)
        return -1;
    B->start_of[i] = s;
    name = sb_strf("done(%s)", in->name);
    op = sb_strf("%s-done", in->opcode);
    struct sb_node_in d = SB_NODE_IN_INIT;
    d.name = name;
    d.kind = SB_KIND_DONE;
    d.op = op;
    d.coll = coll;
    d.flags = in->root || (B->is_out && B->is_out[i]) ? SB_FLAG_OUTPUT : 0;
    d.loc = in->line;
    d.stream = n.stream;
    char why[256]; /* the done inherits X's frontend attributes, the start does not */
    hlo_sched_read(in, &d, why, sizeof why); /* checked when parsed */
    B->node_of[i] = add_node(B, &d, i);
    rc = B->node_of[i] == SB_NONE || sb_builder_input(B->gb, s);
    free(name);
    free(op);
    return rc ? -1 : 0;
}

/* The tensor a start moves: the result element of (operand, result) tuples,
 * the data element of send, recv and copy-start, else the whole shape. */
static uint64_t start_payload(const struct instr *in, enum sb_coll c)
{
    if (!in->sh.tuple)
        return in->sh.bytes;
    if (c == SB_COLL_SEND || c == SB_COLL_RECV || c == SB_COLL_SEND_HOST ||
        c == SB_COLL_RECV_HOST || c == SB_COLL_COPY || in->sh.n_top < 2)
        return in->sh.top_bytes[0];
    return in->sh.top_bytes[1];
}

static enum sb_kind kind_of(enum role r)
{
    switch (r) {
    case ROLE_INPUT:
        return SB_KIND_INPUT;
    case ROLE_NOP:
    case ROLE_VIEW:
        return SB_KIND_NOP;
    case ROLE_START:
        return SB_KIND_START;
    case ROLE_DONE:
        return SB_KIND_DONE;
    default:
        return SB_KIND_COMPUTE;
    }
}

/* A parameter of the ENTRY lives for the whole step unless the module
 * donates it to an output (input_output_alias). */
static int is_entry_param_kept(const struct builder *B, const struct instr *in)
{
    return !(in->index >= 0 && (uint64_t)in->index < B->m->n_donated &&
             B->m->donated[in->index]);
}

/* A step build's compute node: FLOPs and bytes from the cost analysis,
 * custom-calls named by target, in-place updates viewing their operand.
 * Returns the op name it allocated, if any. */
static char *step_node(struct builder *B, uint32_t i, struct sb_node_in *n, int *views)
{
    const struct instr *in = &B->c->in[i];
    char *op = NULL;
    if (!strcmp(in->opcode, "dynamic-update-slice") && in->n_ops)
        *views = 1;
    if (n->kind != SB_KIND_COMPUTE)
        return NULL;
    struct hlo_cost c;
    hlo_cost_of(B->hc, i, &c);
    n->flops = c.flops + c.transcendentals;
    n->bytes_accessed = c.bytes;
    n->dtype = c.dtype ? c.dtype : SB_DTYPE_FP32;
    if (!strcmp(in->opcode, "custom-call") && in->target) {
        op = sb_strf("custom-call:%s", in->target);
        n->op = op;
    }
    return op;
}

static int add_group(struct builder *B, uint32_t r, struct sb_node_in *n);

static int add_instr(struct builder *B, uint32_t i)
{
    const struct instr *in = &B->c->in[i];
    enum role r = (enum role)B->role[i];
    if (r == ROLE_SPLIT)
        return add_split(B, i);
    struct sb_node_in n = SB_NODE_IN_INIT;
    n.name = in->name;
    n.kind = kind_of(r);
    n.op = !strcmp(in->opcode, "fusion") ? fusion_op(in) : in->opcode;
    n.out_bytes = defined_bytes(B, i);
    n.loc = in->line;
    char why[256];
    hlo_sched_read(in, &n, why, sizeof why); /* checked when parsed */
    if (!B->o->step)
        hlo_sched_holds(B->m, &B->holds, in, &n);
    if (r == ROLE_START) {
        n.coll = (enum sb_coll)B->coll[i];
        n.comm_bytes = start_payload(in, n.coll);
        const struct instr *x = strcmp(in->opcode, "async-start") ? in : hlo_async_root(B->m, in);
        n.group_size = group_size(B->m, x);
        if (B->p2p_joined && B->p2p_joined[i])
            n.comm_bytes = 0; /* its recv carries the transfer (plan_p2p) */
    }
    if (B->queue && r != ROLE_INPUT)
        n.stream = B->queue[i];
    int views = r == ROLE_VIEW || (!strcmp(in->opcode, "while") && in->n_ops);
    char *op = NULL;
    if (B->inl && B->inl[i]) {
        B->node_of[i] = SB_NONE; /* duplicated into each user's group */
        return 0;
    }
    if (B->fused_into && B->fused_into[i] != SB_NONE)
        return 0; /* a member of a fusion group: its root's node stands for it */
    if (B->o->step)
        op = step_node(B, i, &n, &views);
    n.flags = (views ? SB_FLAG_ALIAS : 0) | (in->root ? SB_FLAG_OUTPUT : 0);
    if (B->is_out && B->is_out[i])
        n.flags |= SB_FLAG_OUTPUT;
    if (B->o->step && r == ROLE_INPUT && !in->root && is_entry_param_kept(B, in))
        n.flags |= SB_FLAG_WEIGHT;
    if (B->grouped && B->grouped[i]) {
        int rc = add_group(B, i, &n);
        free(op);
        return rc;
    }
    B->node_of[i] = add_node(B, &n, i);
    free(op);
    if (B->node_of[i] == SB_NONE)
        return -1;
    return r == ROLE_INPUT ? 0 : add_inputs(B, i) || add_afters(B, i) ? -1 : 0;
}

/* ---- fusion (issue 29) ---------------------------------------------------- */

/* What XLA's instruction fusion merges (instruction_fusion.cc: elementwise
 * ops, and the data movement that only reindexes, are fusible; a producer
 * fuses into its consumer when the consumer is its only user, so nothing is
 * computed twice).  Dots, convolutions, custom-calls and collectives stay
 * their own kernels; a reduction fuses its producers (an input fusion) but
 * is not fused into its consumers; broadcasts, constants and iotas are free
 * nops already.  Priority fusion's multi-output and sibling fusions are not
 * modelled (docs: workloads/importers/hlo.md). */
static int fusible_producer(const struct builder *B, uint32_t i)
{
    const char *op = B->c->in[i].opcode;
    if (B->role[i] != ROLE_COMPUTE)
        return 0;
    enum hlo_class k = hlo_class_of_op(op);
    return k == HLO_CLASS_ELEMENTWISE || !strcmp(op, "reshape") || !strcmp(op, "transpose") ||
           !strcmp(op, "slice") || !strcmp(op, "dynamic-slice") || !strcmp(op, "concatenate") ||
           !strcmp(op, "pad") || !strcmp(op, "copy") || !strcmp(op, "bitcast-convert") ||
           !strcmp(op, "reverse");
}

static int fusible_consumer(const struct builder *B, uint32_t i)
{
    const char *op = B->c->in[i].opcode;
    return fusible_producer(B, i) ||
           (B->role[i] == ROLE_COMPUTE &&
            (!strcmp(op, "reduce") || !strcmp(op, "reduce-window") ||
             !strcmp(op, "dynamic-update-slice")));
}

static int module_has_fusions(const struct comp *c)
{
    for (uint32_t i = 0; i < c->n; i++)
        if (!strcmp(c->in[i].opcode, "fusion"))
            return 1;
    return 0;
}

/* Bytes a group rooted at r reads from outside itself, each operand once. */
static double group_read_bytes(struct builder *B, uint32_t r)
{
    double bytes = 0;
    uint32_t stamp = ++B->stamp;
    for (uint32_t m = B->first_member[r];; m = B->next_member[m]) {
        uint32_t i = m == SB_NONE ? r : m;
        const struct instr *in = &B->c->in[i];
        for (uint32_t k = 0; k < in->n_ops; k++) {
            int p = bfind(B, in->ops[k], i);
            if (p < 0 || B->group_root[p] == r || B->seen[p] == stamp)
                continue;
            B->seen[p] = stamp;
            bytes += (double)B->c->in[p].sh.bytes;
        }
        if (m == SB_NONE)
            break;
    }
    return bytes;
}

/* Priority fusion also fuses a producer that has several users, into every
 * one of them, computing it again in each (priority_fusion.cc: a producer is
 * a candidate only when CanFuse holds for all its users, and it goes when
 * the cost model says the fused kernels are faster).  Broadcasts and iotas
 * always go: a fusion reading a broadcast reads its operand (constants stay
 * nops: a scalar's read is a few bytes either way).  A
 * computing group goes when the bytes the roofline charges do not grow: its
 * k users read its inputs I again instead of it writing its output O once
 * and them reading it k times, k*I <= I + O + k*O.  Roots, outputs, control
 * edges and the while-body alias edges keep a node. */
static int may_duplicate(struct builder *B, uint32_t i, const uint32_t *n_users,
                         const uint8_t *blocked)
{
    const struct instr *in = &B->c->in[i];
    if (blocked[i] || !n_users[i] || in->root || B->is_out[i] || in->n_ctrl ||
        B->fused_into[i] != SB_NONE)
        return 0;
    if (B->role[i] == ROLE_NOP)
        return !strcmp(in->opcode, "broadcast") || !strcmp(in->opcode, "iota");
    if (n_users[i] < 2 || !fusible_producer(B, i))
        return 0;
    for (uint32_t m = B->first_member[i]; m != SB_NONE; m = B->next_member[m])
        if (B->c->in[m].n_ctrl || blocked[m])
            return 0;
    double k = n_users[i], in_b = group_read_bytes(B, i), out_b = (double)in->sh.bytes;
    return k * in_b <= in_b + out_b + k * out_b;
}

/* Marks blocked[p] for every producer one of whose users cannot take it in
 * a fusion, or that something reaches by a control edge or an alias edge. */
static uint8_t *duplication_blockers(struct builder *B)
{
    const struct comp *c = B->c;
    uint8_t *blocked = sb_xcalloc(c->n ? c->n : 1, 1);
    for (uint32_t u = 0; u < c->n; u++) {
        int takes = fusible_consumer(B, u);
        for (uint32_t k = 0; k < c->in[u].n_ops + c->in[u].n_ctrl; k++) {
            const char *name = k < c->in[u].n_ops ? c->in[u].ops[k]
                                                  : c->in[u].ctrl[k - c->in[u].n_ops];
            int p = bfind(B, name, u);
            if (p >= 0 && (!takes || k >= c->in[u].n_ops))
                blocked[p] = 1;
        }
    }
    for (uint32_t k = 0; k < B->n_alias; k++)
        blocked[B->alias[k][0]] = 1;
    return blocked;
}

/* What a duplicated producer may compute again in each user, its own
 * duplicated producers included: 64 instructions.  Our budget, not XLA's
 * (priority fusion stops a fusion's growth through its cost model, which is
 * not modelled): the modules of ../shared/corpus duplicate at most 8, and a
 * chain whose every link has a second user (x_i = f(x_i-1), y_i = g(x_i))
 * duplicated every link into every y_i, i instructions each: quadratic in
 * time and FLOPs.  Past the budget the group keeps a node of its own, so a
 * fusion's work is bounded by 64 per duplicated group it reads. */
#define HLO_DUP_MAX_INSTRS 64

/* Instructions a group rooted at r computes when it is duplicated into a
 * user: r and its members, and again every duplicated group they read, each
 * counted once here (an upper bound when those overlap). */
static uint32_t dup_size(struct builder *B, uint32_t r, const uint32_t *size_of)
{
    uint64_t size = 0;
    uint32_t stamp = ++B->stamp;
    for (uint32_t m = B->first_member[r];; m = B->next_member[m]) {
        uint32_t i = m == SB_NONE ? r : m;
        const struct instr *in = &B->c->in[i];
        size++;
        for (uint32_t k = 0; k < in->n_ops; k++) {
            int p = bfind(B, in->ops[k], i);
            /* p is outside r: a group root, so decided already */
            if (p < 0 || B->group_root[p] == r || !B->inl[p] || B->seen[p] == stamp)
                continue;
            B->seen[p] = stamp;
            size += size_of[p];
        }
        if (m == SB_NONE)
            break;
    }
    return size < UINT32_MAX ? (uint32_t)size : UINT32_MAX;
}

static void plan_duplication(struct builder *B, const uint32_t *n_users)
{
    const struct comp *c = B->c;
    uint32_t n = c->n ? c->n : 1;
    uint8_t *blocked = duplication_blockers(B);
    B->seen = sb_xcalloc(n, sizeof *B->seen);
    B->inl = sb_xcalloc(n, 1);
    B->grouped = sb_xcalloc(n, 1);
    /* in text order, so a group's producers are decided before it: a group
     * is duplicated only while what it computes again, duplicated producers
     * included, stays within HLO_DUP_MAX_INSTRS */
    uint32_t *size_of = sb_xcalloc(n, sizeof *size_of); /* [instr] of duplicated roots */
    for (uint32_t i = 0; i < c->n; i++)
        if (B->group_root[i] == i && may_duplicate(B, i, n_users, blocked)) {
            uint32_t size = dup_size(B, i, size_of);
            if (size <= HLO_DUP_MAX_INSTRS) {
                size_of[i] = size;
                B->inl[i] = 1;
            }
        }
    free(size_of);
    for (uint32_t i = 0; i < c->n; i++) /* members go with their root */
        B->inl[i] = B->inl[B->group_root[i]];
    B->n_groups = 0;
    for (uint32_t u = 0; u < c->n; u++) {
        uint32_t r = B->group_root[u];
        if (B->inl[u])
            continue;
        int reads_inlined = 0;
        for (uint32_t k = 0; k < c->in[u].n_ops && !reads_inlined; k++) {
            int p = bfind(B, c->in[u].ops[k], u);
            reads_inlined = p >= 0 && B->inl[p];
        }
        if ((reads_inlined || B->first_member[r] != SB_NONE) && !B->grouped[r]) {
            B->grouped[r] = 1;
            B->n_groups++;
        }
    }
    free(blocked);
}

static void plan_fusion(struct builder *B)
{
    const struct comp *c = B->c;
    uint32_t n = c->n;
    uint32_t *n_users = sb_xcalloc(n ? n : 1, sizeof *n_users);
    int *only_user = sb_xmalloc((n ? n : 1) * sizeof *only_user);
    count_users(B, n_users, only_user);
    B->fused_into = sb_xmalloc((n ? n : 1) * sizeof *B->fused_into);
    B->group_root = sb_xmalloc((n ? n : 1) * sizeof *B->group_root);
    B->next_member = sb_xmalloc((n ? n : 1) * sizeof *B->next_member);
    B->first_member = sb_xmalloc((n ? n : 1) * sizeof *B->first_member);
    for (uint32_t i = 0; i < n; i++) {
        B->fused_into[i] = B->next_member[i] = B->first_member[i] = SB_NONE;
        if (n_users[i] == 1 && only_user[i] > (int)i && !c->in[i].root && !B->is_out[i] &&
            !c->in[i].n_ctrl && fusible_producer(B, i) &&
            fusible_consumer(B, (uint32_t)only_user[i]))
            B->fused_into[i] = (uint32_t)only_user[i];
    }
    for (uint32_t i = n; i-- > 0;) /* consumers come later: their roots are known */
        B->group_root[i] = B->fused_into[i] == SB_NONE ? i : B->group_root[B->fused_into[i]];
    uint32_t *tail = sb_xmalloc((n ? n : 1) * sizeof *tail);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t r = B->group_root[i];
        if (r == i)
            continue;
        if (B->first_member[r] == SB_NONE) {
            B->first_member[r] = i;
            B->n_groups++;
        } else {
            B->next_member[tail[r]] = i;
        }
        tail[r] = i;
    }
    free(tail);
    plan_duplication(B, n_users);
    free(n_users);
    free(only_user);
}

/* Appends the group rooted at g (its members, then g) to the visit list. */
static void push_group(struct builder *B, uint32_t g, uint32_t **list, uint32_t *n,
                       uint32_t *cap)
{
    for (uint32_t m = B->first_member[g];; m = B->next_member[m]) {
        if (*n == *cap)
            *list = sb_xrealloc(*list, (*cap *= 2) * sizeof **list);
        (*list)[(*n)++] = m == SB_NONE ? g : m;
        if (m == SB_NONE)
            break;
    }
}

/* A fusion group's work and inputs, replacing its root's: its members and
 * the producers duplicated into it (inl), FLOPs summed, bytes read at the
 * boundary (each outside operand once, or the slice a member takes of it)
 * and written once (the root's output, or the update of an in-place
 * dynamic-update-slice root). */
static int add_group(struct builder *B, uint32_t r, struct sb_node_in *n)
{
    const struct instr *root = &B->c->in[r];
    uint32_t cap = 16, n_ext = 0, cap_l = 16, n_l = 0;
    int *ext = sb_xmalloc(cap * sizeof *ext);
    uint32_t *list = sb_xmalloc(cap_l * sizeof *list);
    uint32_t stamp = ++B->stamp;
    double flops = 0, bytes = 0;
    if (!strcmp(root->opcode, "dynamic-update-slice") && root->n_ops) {
        int p0 = bfind(B, root->ops[0], r);
        if (p0 >= 0 && B->group_root[p0] != r && !B->inl[p0]) {
            ext[n_ext++] = p0; /* updated in place: the buffer it views, not read */
            B->seen[p0] = stamp;
        } else { /* the fusion writes a new buffer: the root's whole shape */
            n->flags &= ~(uint32_t)SB_FLAG_ALIAS;
            n->out_bytes = root->sh.bytes;
        }
    }
    push_group(B, r, &list, &n_l, &cap_l);
    for (uint32_t l = 0; l < n_l; l++) {
        uint32_t i = list[l];
        const struct instr *in = &B->c->in[i];
        struct hlo_cost c;
        hlo_cost_of(B->hc, i, &c);
        flops += c.flops + c.transcendentals;
        for (uint32_t k = 0; k < in->n_ops; k++) {
            int p = bfind(B, in->ops[k], i);
            if (p < 0 || B->group_root[p] == r)
                continue;
            if (i == r && k == 0 && !strcmp(in->opcode, "dynamic-update-slice"))
                continue; /* updated in place: not read */
            if (B->inl[p]) { /* computed again here */
                uint32_t g = B->group_root[p];
                if (B->seen[g] != stamp) {
                    B->seen[g] = stamp;
                    push_group(B, g, &list, &n_l, &cap_l);
                }
                continue;
            }
            if (B->seen[p] == stamp)
                continue;
            B->seen[p] = stamp;
            if (n_ext == cap)
                ext = sb_xrealloc(ext, (cap *= 2) * sizeof *ext);
            ext[n_ext++] = p;
            int sliced = k == 0 && (!strcmp(in->opcode, "slice") ||
                                    !strcmp(in->opcode, "dynamic-slice"));
            bytes += sliced ? (double)in->sh.bytes : (double)B->c->in[p].sh.bytes;
        }
    }
    free(list);
    if (!strcmp(root->opcode, "dynamic-update-slice") && root->n_ops > 1) {
        int u = bfind(B, root->ops[1], r);
        bytes += u >= 0 ? (double)B->c->in[u].sh.bytes : 0;
    } else {
        bytes += (double)root->sh.bytes;
    }
    n->flops = flops;
    n->bytes_accessed = bytes;
    n->dtype = SB_DTYPE_FP32;
    n->op = !strcmp(root->opcode, "reduce") || !strcmp(root->opcode, "reduce-window")
                ? "input_fusion" : "loop_fusion";
    B->node_of[r] = add_node(B, n, r);
    int rc = B->node_of[r] == SB_NONE;
    for (uint32_t j = 0; j < n_ext && !rc; j++)
        rc = sb_builder_input(B->gb, B->node_of[ext[j]]);
    for (uint32_t m = B->first_member[r]; m != SB_NONE && !rc; m = B->next_member[m]) {
        B->node_of[m] = B->node_of[r];
        for (uint32_t k = 0; k < B->c->in[m].n_ctrl && !rc; k++) {
            int p = bfind(B, B->c->in[m].ctrl[k], m);
            if (p >= 0 && B->group_root[p] != r)
                rc = sb_builder_input(B->gb, B->node_of[p]);
        }
    }
    for (uint32_t k = 0; k < root->n_ctrl && !rc; k++) {
        int p = bfind(B, root->ctrl[k], r);
        if (p >= 0 && B->group_root[p] != r)
            rc = sb_builder_input(B->gb, B->node_of[p]);
    }
    free(ext);
    return rc || add_afters(B, r) ? -1 : 0;
}

static void add_meta(struct builder *B)
{
    if (B->o->step && !B->m->scheduled) {
        /* every result row carries the workload name: say there that the
         * original order is the text's, not a compiler's schedule */
        const char *base = strrchr(B->m->path, '/');
        base = base ? base + 1 : B->m->path;
        const char *dot = strrchr(base, '.');
        char *name = sb_strf("%.*s@text-order", dot ? (int)(dot - base) : (int)strlen(base),
                             base);
        sb_builder_meta(B->gb, "name", name);
        free(name);
        sb_builder_meta(B->gb, "hlo_order", "text (the module is not is_scheduled=true: "
                                            "original is the text order, not XLA's schedule)");
    }
    sb_builder_meta(B->gb, "hlo_module", B->m->name);
    sb_builder_meta(B->gb, "hlo_computation", B->c->name);
    if (B->o->step) {
        /* the module's figure whichever computation is built: XLA schedules
         * every computation under the one memory limit it comes from */
        char n[24];
        snprintf(n, sizeof n, "%" PRIu64, B->m->io_bytes);
        sb_builder_meta(B->gb, "io_bytes", n);
    }
    if (B->n_groups) {
        char n[64];
        snprintf(n, sizeof n, "%u groups (--import fuse=none: every op alone)", B->n_groups);
        sb_builder_meta(B->gb, "hlo_fusion", n);
    }
    if (B->n_called_colls) {
        char n[16];
        snprintf(n, sizeof n, "%u", B->n_called_colls);
        sb_builder_meta(B->gb, "hlo_called_collectives", n);
    }
}

/* What the order-only edges came from, for validate's report. */
static void edge_meta(struct builder *B)
{
    char n[128];
    if (B->o->step && B->m->scheduled) {
        if (B->queue)
            snprintf(n, sizeof n, "%u queue%s (streams), %u wait_on_operation_queues edges",
                     B->n_queues, B->n_queues == 1 ? "" : "s", B->n_edges_of[AFTER_QUEUE]);
        else
            snprintf(n, sizeof n, "not read (--import queues=none): one stream");
        sb_builder_meta(B->gb, "hlo_queues", n);
    }
    if (B->n_joined) {
        snprintf(n, sizeof n, "%u send/recv pair%s, %u rendezvous edges", B->n_joined,
                 B->n_joined == 1 ? "" : "s", B->n_edges_of[AFTER_P2P]);
        sb_builder_meta(B->gb, "hlo_p2p_joined", n);
    }
}

static struct sb_graph *build_graph(struct builder *B)
{
    B->gb = sb_builder_new(B->m->path, SB_LOC_LINE, B->e);
    sb_builder_reserve(B->gb, B->c->n + 16, (uint64_t)B->c->n * 2, 0);
    add_meta(B);
    int rc = 0;
    for (uint32_t i = 0; i < B->c->n && !rc; i++)
        rc = add_instr(B, i);
    if (!rc && B->hc && hlo_costs_n_unknown(B->hc)) {
        /* unknown custom-calls cost 0: say which, once per target */
        char *list = sb_xstrdup("");
        for (uint32_t k = 0; k < hlo_costs_n_unknown(B->hc); k++) {
            uint32_t cnt;
            const char *t = hlo_costs_unknown(B->hc, k, &cnt);
            char *next = sb_strf("%s%s%s x%u", list, k ? ", " : "", t, cnt);
            free(list);
            list = next;
        }
        sb_builder_meta(B->gb, "hlo_unknown_custom_calls", list);
        free(list);
    }
    if (!rc)
        edge_meta(B);
    if (rc || sb_builder_failed(B->gb)) {
        sb_builder_free(B->gb);
        return NULL;
    }
    return sb_builder_finish(B->gb);
}

static void fill_nodes(struct builder *B, struct sb_hlo_graph *out)
{
    out->node = sb_xcalloc(B->n_nodes, sizeof *out->node);
    for (uint32_t i = 0; i < B->c->n; i++) {
        if (B->node_of[i] == SB_NONE)
            continue; /* duplicated into its users' fusions */
        out->node[B->node_of[i]].instr = i;
        if (B->start_of[i] != SB_NONE) {
            out->node[B->start_of[i]] = (struct sb_hlo_node){i, 1};
            out->node[B->node_of[i]].half = 2;
        }
    }
}

int sb_hlo_build(const struct sb_hlo_module *m, const struct sb_hlo_opts *o,
                 struct sb_hlo_graph *out, struct sb_err *e)
{
    static const struct sb_hlo_opts defaults = {0};
    int k = sb_hlo_find_computation(m, o ? o->computation : NULL);
    memset(out, 0, sizeof *out);
    if (k < 0)
        return sb_errf(e, "%s: no computation named '%s'", m->path, o->computation);
    struct builder B = {.m = m, .c = &m->c[k], .o = o ? o : &defaults, .e = e};
    if (B.o->step && m->flat && !B.o->computation)
        B.c = m->flat;
    uint32_t n = B.c->n;
    if (B.o->step) {
        B.hc = hlo_costs_new(m, B.c);
        B.is_out = sb_xcalloc(n ? n : 1, 1);
    }
    B.node_of = sb_xcalloc(n, sizeof *B.node_of);
    B.start_of = sb_xmalloc(n * sizeof *B.start_of);
    B.n_dones = sb_xcalloc(n, sizeof *B.n_dones);
    B.role = sb_xcalloc(n, 1);
    B.coll = sb_xcalloc(n, 1);
    B.coll_memo = sb_xmalloc(((size_t)m->n + 1) * sizeof *B.coll_memo);
    for (uint32_t i = 0; i < m->n; i++)
        B.coll_memo[i] = UINT32_MAX;
    hlo_holds_init(&B.holds, m);
    for (uint32_t i = 0; i < n; i++)
        B.start_of[i] = SB_NONE;
    index_names(&B);
    for (uint32_t i = 0; B.is_out && i < n; i++) /* the ROOT tuple's elements */
        if (B.c->in[i].root && !strcmp(B.c->in[i].opcode, "tuple"))
            for (uint32_t j = 0; j < B.c->in[i].n_ops; j++) {
                int p = bfind(&B, B.c->in[i].ops[j], i);
                if (p >= 0)
                    B.is_out[p] = 1;
            }
    int rc = check_names(&B) || classify(&B);
    if (!rc)
        alias_edges(&B);
    if (!rc && B.o->step && m->scheduled && !B.o->no_queues)
        rc = plan_queues(&B);
    if (!rc && B.o->step)
        plan_p2p(&B);
    if (!rc && B.n_after)
        qsort(B.after, B.n_after, sizeof *B.after, by_dst);
    if (!rc && B.o->step && !B.o->no_fuse && !module_has_fusions(B.c))
        plan_fusion(&B);
    if (!rc) {
        out->g = build_graph(&B);
        rc = out->g ? 0 : -1;
    }
    if (!rc)
        fill_nodes(&B, out);
    free(B.node_of);
    free(B.start_of);
    free(B.n_dones);
    free(B.role);
    free(B.coll);
    free(B.coll_memo);
    hlo_holds_free(&B.holds);
    free(B.tab);
    free(B.alias);
    hlo_costs_free(B.hc);
    free(B.is_out);
    free(B.fused_into);
    free(B.group_root);
    free(B.next_member);
    free(B.first_member);
    free(B.inl);
    free(B.grouped);
    free(B.seen);
    free(B.queue);
    free(B.after);
    free(B.p2p_joined);
    return rc ? -1 : 0;
}

void sb_hlo_graph_free(struct sb_hlo_graph *hg)
{
    sb_graph_free(hg->g);
    free(hg->node);
    memset(hg, 0, sizeof *hg);
}

/* ---- the importer -------------------------------------------------------- */

struct sb_graph *sb_hlo_load_mem(const char *path, const char *buf, size_t n,
                                 struct sb_err *e)
{
    return sb_hlo_load_mem_with(path, buf, n, 0, e);
}

struct sb_graph *sb_hlo_load_mem_with(const char *path, const char *buf, size_t n,
                                      int no_fuse, struct sb_err *e)
{
    struct sb_hlo_opts o = {.step = 1, .no_fuse = no_fuse};
    return sb_hlo_load_mem_opts(path, buf, n, &o, NULL, e);
}

struct sb_graph *sb_hlo_load_mem_opts(const char *path, const char *buf, size_t n,
                                      const struct sb_hlo_opts *opts,
                                      const struct sb_hlo_trips *t, struct sb_err *e)
{
    struct sb_hlo_module *m = sb_hlo_parse(path, buf, n, e);
    if (!m)
        return NULL;
    struct sb_hlo_graph hg;
    struct sb_graph *g = NULL;
    struct sb_hlo_opts o = *opts;
    o.step = 1;
    o.computation = NULL;
    if (sb_hlo_expand_with(m, t, e) == 0 && sb_hlo_build(m, &o, &hg, e) == 0) {
        g = hg.g;
        free(hg.node);
    }
    sb_hlo_free(m);
    return g;
}

/* ---- read access ----------------------------------------------------------- */

int sb_hlo_find_computation(const struct sb_hlo_module *m, const char *name)
{
    return name ? hlo_find_comp(m, name) : m->entry;
}

uint32_t sb_hlo_n_computations(const struct sb_hlo_module *m) { return m->n; }

uint64_t sb_hlo_io_bytes(const struct sb_hlo_module *m) { return m->io_bytes; }

const char *sb_hlo_computation_name(const struct sb_hlo_module *m, uint32_t c)
{
    return c < m->n ? m->c[c].name : NULL;
}

void sb_hlo_instr(const struct sb_hlo_module *m, uint32_t comp, uint32_t i,
                  struct sb_hlo_instr_info *out)
{
    const struct comp *c = &m->c[comp];
    const struct instr *in = &c->in[i];
    memset(out, 0, sizeof *out);
    out->name = in->name;
    out->opcode = in->opcode;
    out->line = in->line;
    out->is_tuple = in->sh.tuple;
    out->elems = in->sh.tuple ? 0 : in->sh.elems;
    out->fusion_kind = in->fusion_kind;
    out->frontend = in->frontend;
    out->bytes = in->sh.bytes;
    out->n_ops = in->n_ops;
    out->ops = (const char *const *)in->ops;
    out->n_calls = in->n_calls;
    out->calls = (const char *const *)in->calls;
    out->apply = in->apply;
    if (in->n_ops) {
        int p = find_instr(c, in->ops[0], i);
        if (p >= 0 && !c->in[p].sh.tuple)
            out->op0_elems = c->in[p].sh.elems;
    }
}

uint32_t sb_hlo_n_instrs(const struct sb_hlo_module *m, uint32_t comp)
{
    return comp < m->n ? m->c[comp].n : 0;
}

int sb_hlo_uses(const struct sb_hlo_module *m, uint32_t c, const char *opcode)
{
    for (uint32_t i = 0; i < m->c[c].n; i++)
        if (!strcmp(m->c[c].in[i].opcode, opcode))
            return 1;
    return 0;
}

int sb_hlo_has_attr(const struct sb_hlo_module *m, const char *key)
{
    size_t n = strlen(key);
    for (uint32_t k = 0; k < m->n; k++)
        for (uint32_t i = 0; i < m->c[k].n; i++) {
            const char *fa = m->c[k].in[i].frontend;
            for (const char *p = fa; p && (p = strstr(p, key)); p += n)
                if ((p == fa || !name_char((unsigned char)p[-1])) && p[n] == '=')
                    return 1;
        }
    return 0;
}

uint32_t sb_hlo_n_called(const struct sb_hlo_module *m)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < m->n; k++) {
        if ((int)k == m->entry)
            continue;
        int fused = 0;
        for (uint32_t j = 0; j < m->n && !fused; j++)
            for (uint32_t i = 0; i < m->c[j].n && !fused; i++) {
                const struct instr *in = &m->c[j].in[i];
                if (!strcmp(in->opcode, "fusion") && in->n_calls &&
                    !strcmp(in->calls[0], m->c[k].name))
                    fused = 1;
            }
        n += !fused;
    }
    return n;
}

int sb_hlo_reorder(struct sb_hlo_module *m, uint32_t c, const uint32_t *instr_order)
{
    struct comp *k = &m->c[c];
    uint8_t *seen = sb_xcalloc(k->n ? k->n : 1, 1);
    int ok = 1;
    for (uint32_t i = 0; i < k->n && ok; i++) {
        ok = instr_order[i] < k->n && !seen[instr_order[i]];
        if (ok)
            seen[instr_order[i]] = 1;
    }
    free(seen);
    if (!ok)
        return -1;
    struct instr *in = sb_xmalloc((k->n ? k->n : 1) * sizeof *in);
    for (uint32_t i = 0; i < k->n; i++)
        in[i] = k->in[instr_order[i]];
    memcpy(k->in, in, k->n * sizeof *in);
    free(in);
    return 0;
}

int sb_hlo_expand(struct sb_hlo_module *m, struct sb_err *e)
{
    return hlo_expand(m, NULL, e);
}

int sb_hlo_expand_with(struct sb_hlo_module *m, const struct sb_hlo_trips *t,
                       struct sb_err *e)
{
    return hlo_expand(m, t, e);
}

/* ---- validate's report ------------------------------------------------------ */

/* A scheduled module's streams (operation_queue_id): nodes per stream, and
 * the order-only edges the queues' waits and the send/recv pairs gave. */
static void print_streams(const struct sb_graph *g, FILE *f)
{
    const char *q = sb_graph_meta(g, "hlo_queues"), *p = sb_graph_meta(g, "hlo_p2p_joined");
    if (q) {
        fprintf(f, "  operation queues: %s\n", q);
        uint32_t ns = g->v.n_streams ? g->v.n_streams : 1;
        uint32_t *cnt = sb_xcalloc(ns, sizeof *cnt);
        for (uint32_t v = 0; v < g->v.n_nodes; v++)
            if (g->v.kind[v] != SB_KIND_INPUT)
                cnt[g->v.stream ? g->v.stream[v] : 0]++;
        for (uint32_t s = 0; s < ns; s++)
            if (cnt[s])
                fprintf(f, "    stream %u (queue %u) %8u nodes\n", s, s, cnt[s]);
        free(cnt);
    }
    if (p)
        fprintf(f, "  send/recv joined by channel_id: %s\n", p);
}

void sb_hlo_print_summary(const struct sb_graph *g, FILE *f)
{
    if (!g->dtype)
        return;
    double fl[HLO_CLASS_COUNT] = {0}, by[HLO_CLASS_COUNT] = {0};
    uint32_t cnt[HLO_CLASS_COUNT] = {0};
    double tf = 0, tb = 0;
    for (uint32_t v = 0; v < g->v.n_nodes; v++) {
        if (!g->dtype[v])
            continue;
        enum hlo_class k = hlo_class_of_op(g->v.op_names[g->v.op[v]]);
        fl[k] += g->flops[v];
        by[k] += g->bytes_accessed[v];
        cnt[k]++;
        tf += g->flops[v];
        tb += g->bytes_accessed[v];
    }
    fprintf(f, "  flops %.6e, bytes accessed %.6e (after control flow expansion)\n", tf, tb);
    for (int k = 0; k < HLO_CLASS_COUNT; k++)
        if (cnt[k])
            fprintf(f, "    %-14s %8u nodes  flops %.6e  bytes %.6e\n", hlo_class_name(k),
                    cnt[k], fl[k], by[k]);
    /* custom-calls by target */
    for (uint32_t o = 0; o < g->v.n_ops; o++) {
        const char *op = g->v.op_names[o];
        if (strncmp(op, "custom-call:", 12) != 0)
            continue;
        double f2 = 0, b2 = 0;
        uint32_t c2 = 0;
        for (uint32_t v = 0; v < g->v.n_nodes; v++)
            if (g->v.op[v] == o && g->dtype[v]) {
                f2 += g->flops[v];
                b2 += g->bytes_accessed[v];
                c2++;
            }
        fprintf(f, "      %-30s %6u nodes  flops %.6e  bytes %.6e\n", op + 12, c2, f2, b2);
    }
    uint32_t nc[SB_COLL_COUNT] = {0};
    double cb[SB_COLL_COUNT] = {0};
    for (uint32_t v = 0; v < g->v.n_nodes; v++)
        if (g->kind[v] == SB_KIND_START) {
            nc[g->coll[v]]++;
            cb[g->coll[v]] += (double)g->comm_bytes[v];
        }
    for (int t = 0; t < SB_COLL_COUNT; t++)
        if (nc[t])
            fprintf(f, "    collective %-18s %6u  bytes %.6e\n", sb_coll_name((enum sb_coll)t),
                    nc[t], cb[t]);
    const char *io = sb_graph_meta(g, "io_bytes");
    if (io)
        fprintf(f, "  io_bytes %s (ENTRY parameters and result, less aliased outputs: "
                   "XLA's total_io_size)\n", io);
    print_streams(g, f);
}

int sb_hlo_cost_total(const struct sb_hlo_module *m, const char *instr, double out[3])
{
    const struct comp *c = &m->c[m->entry];
    struct hlo_costs *hc = hlo_costs_new(m, c);
    int found = 0;
    out[0] = out[1] = out[2] = 0;
    for (uint32_t i = 0; i < c->n; i++) {
        if (instr && strcmp(c->in[i].name, instr) != 0)
            continue;
        struct hlo_cost x;
        hlo_cost_of(hc, i, &x);
        out[0] += x.flops;
        out[1] += x.transcendentals;
        out[2] += x.bytes;
        found = 1;
    }
    hlo_costs_free(hc);
    return instr && !found ? -1 : 0;
}
