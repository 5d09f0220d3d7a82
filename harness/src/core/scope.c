#include "core/scope.h"
#include "core/util.h"

#include <stdio.h>
#include <string.h>

/* FNV-1a: scopes are few (an iteration holds hundreds of nodes), so the
 * speed of this hash never shows. */
static uint64_t str_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static void strtab_grow(struct sb_strtab *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : 64;
    uint32_t *slot = sb_xcalloc(cap, sizeof *slot);
    for (uint32_t id = 0; id < t->n; id++) {
        size_t k = str_hash(t->key[id], strlen(t->key[id])) & (cap - 1);
        while (slot[k])
            k = (k + 1) & (cap - 1);
        slot[k] = id + 1;
    }
    free(t->slot);
    t->slot = slot;
    t->cap = cap;
    t->key = sb_xrealloc(t->key, (size_t)cap / 2 * sizeof *t->key);
}

/* The id of s[0..n), added as t->n when new (*added = 1). */
static uint32_t strtab_get(struct sb_strtab *t, const char *s, size_t n, int *added)
{
    if (2 * (t->n + 1) > t->cap)
        strtab_grow(t);
    size_t k = str_hash(s, n) & (t->cap - 1);
    for (; t->slot[k]; k = (k + 1) & (t->cap - 1)) {
        const char *key = t->key[t->slot[k] - 1];
        if (!strncmp(key, s, n) && !key[n]) {
            *added = 0;
            return t->slot[k] - 1;
        }
    }
    char *key = sb_xmalloc(n + 1);
    memcpy(key, s, n);
    key[n] = 0;
    t->key[t->n] = key;
    t->slot[k] = ++t->n;
    *added = 1;
    return t->n - 1;
}

static void strtab_free(struct sb_strtab *t)
{
    for (uint32_t i = 0; i < t->n; i++)
        free(t->key[i]);
    free(t->key);
    free(t->slot);
}

void sb_scopes_init(struct sb_scopes *s)
{
    memset(s, 0, sizeof *s);
    uint32_t id;
    char why[8];
    sb_scopes_intern(s, "", &id, why, sizeof why); /* the top is scope 0 */
}

void sb_scopes_free(struct sb_scopes *s)
{
    strtab_free(&s->paths);
    strtab_free(&s->loops);
    free(s->parent);
    free(s->loop);
    free(s->iter);
    free(s->loop_parent);
    memset(s, 0, sizeof *s);
}

/* Checks the last segment "NAME#ITER" of path[0..n): its start, and the
 * position of its '#'. */
static int last_segment(const char *path, size_t n, size_t *seg, size_t *hash, uint32_t *iter,
                        char *why, size_t n_why)
{
    size_t b = n;
    while (b > 0 && path[b - 1] != '/')
        b--;
    size_t h = b;
    while (h < n && path[h] != '#')
        h++;
    if (h == b || h >= n - 1 || memchr(path + h + 1, '#', n - h - 1)) {
        snprintf(why, n_why, "segment '%.*s' is not LOOP#ITERATION", (int)(n - b), path + b);
        return -1;
    }
    uint64_t v = 0;
    for (size_t i = h + 1; i < n; i++) {
        if (path[i] < '0' || path[i] > '9' || (v = v * 10 + (uint64_t)(path[i] - '0')) >
                                                  SB_SCOPE_MAX_ITER) {
            snprintf(why, n_why, "iteration '%.*s' is not a decimal in 0..2^31-1",
                     (int)(n - h - 1), path + h + 1);
            return -1;
        }
    }
    *seg = b;
    *hash = h;
    *iter = (uint32_t)v;
    return 0;
}

static void scopes_room(struct sb_scopes *s)
{
    if (s->paths.n < s->cap)
        return;
    s->cap = s->cap ? 2 * s->cap : 64;
    s->parent = sb_xrealloc(s->parent, s->cap * sizeof *s->parent);
    s->loop = sb_xrealloc(s->loop, s->cap * sizeof *s->loop);
    s->iter = sb_xrealloc(s->iter, s->cap * sizeof *s->iter);
}

/* Interns path[0..n), parents first (depth below the ceiling, checked by the
 * caller). */
static int intern(struct sb_scopes *s, const char *path, size_t n, uint32_t *id, char *why,
                  size_t n_why)
{
    size_t seg = 0, hash = 0;
    uint32_t iter = 0, parent = 0;
    if (n && (last_segment(path, n, &seg, &hash, &iter, why, n_why) ||
              (seg > 0 && intern(s, path, seg - 1, &parent, why, n_why))))
        return -1;
    if (n && seg == 1) { /* "/x#0": an empty parent segment */
        snprintf(why, n_why, "an empty segment");
        return -1;
    }
    scopes_room(s);
    int added;
    uint32_t k = strtab_get(&s->paths, path, n, &added);
    *id = k;
    if (!added)
        return 0;
    s->parent[k] = parent;
    s->iter[k] = iter;
    s->loop[k] = UINT32_MAX;
    if (!n)
        return 0;
    uint32_t l = strtab_get(&s->loops, path, hash, &added); /* "<parent>/<loop>" */
    if (added) {
        s->loop_parent = sb_xrealloc(s->loop_parent, s->loops.n * sizeof *s->loop_parent);
        s->loop_parent[l] = parent;
    }
    s->loop[k] = l;
    return 0;
}

int sb_scopes_intern(struct sb_scopes *s, const char *path, uint32_t *id, char *why,
                     size_t n_why)
{
    size_t n = strlen(path), depth = n > 0;
    for (size_t i = 0; i < n; i++)
        depth += path[i] == '/';
    if (n > SB_SCOPE_MAX_PATH || depth > SB_SCOPE_MAX_DEPTH) {
        snprintf(why, n_why, "more than %d bytes or %d nested loops", SB_SCOPE_MAX_PATH,
                 SB_SCOPE_MAX_DEPTH);
        return -1;
    }
    int rc = intern(s, path, n, id, why, n_why);
    s->n = s->paths.n;
    return rc;
}
