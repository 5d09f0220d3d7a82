/* Computation instances ("scopes") of a graph, as a compiler schedules them
 * (docs/workload-format.md, `scope`).  XLA schedules each computation on its
 * own: a while is one instruction of its caller, and its body is scheduled
 * apart.  An importer that expands a loop by its trip count keeps that
 * structure by giving each node the path of the iterations it sits in, e.g.
 * "while.1#17" or "while.1#3/while.2#0"; nodes without one are in the top
 * scope (the ENTRY).  The builder interns the paths here. */
#ifndef SB_SCOPE_H
#define SB_SCOPE_H

#include <stddef.h>
#include <stdint.h>

#define SB_SCOPE_MAX_DEPTH 64    /* loops nested in loops (as hlo_flat.c) */
#define SB_SCOPE_MAX_PATH 4096   /* bytes of one path */
#define SB_SCOPE_MAX_ITER 2147483647u

struct sb_strtab { /* string -> dense id, open addressing */
    uint32_t n, cap;
    uint32_t *slot; /* [cap] id + 1, 0 empty */
    char **key;     /* [n] owned */
};

struct sb_scopes {
    uint32_t n;          /* scopes; 0 is the top, its path "" */
    uint32_t *parent;    /* [n] the scope its loop sits in; parent[0] = 0 */
    uint32_t *loop;      /* [n] its loop, UINT32_MAX for the top */
    uint32_t *iter;      /* [n] its iteration of that loop */
    struct sb_strtab paths;  /* key[s] is scope s's path */
    struct sb_strtab loops;  /* "<parent path>/<loop name>" -> loop id */
    uint32_t *loop_parent;   /* [loops.n] */
    uint32_t cap;
};

void sb_scopes_init(struct sb_scopes *s);
void sb_scopes_free(struct sb_scopes *s);
/* The scope of `path` (interned with its parents); "" is 0.  Returns -1 with
 * the problem in why when the path is malformed: each segment must be
 * NAME#ITERATION, NAME without '/' or '#', ITERATION a decimal in
 * 0..2^31-1, at most SB_SCOPE_MAX_DEPTH segments. */
int sb_scopes_intern(struct sb_scopes *s, const char *path, uint32_t *id, char *why,
                     size_t n_why);

#endif
