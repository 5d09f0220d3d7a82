/* "Did you mean": the nearest of a list of names to what the user typed; and
 * the rule every command's options share (one value per option). */
#define _POSIX_C_SOURCE 200809L
#include "commands.h"
#include "core/util.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Edit distance (insert, delete, substitute, swap of neighbours), ignoring
 * case; names here are short, so the O(n*m) table is small. */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    size_t *d = calloc((n + 1) * (m + 1), sizeof *d);
    if (!d)
        return (size_t)-1;
#define D(i, j) d[(i) * (m + 1) + (j)]
    for (size_t i = 0; i <= n; i++)
        D(i, 0) = i;
    for (size_t j = 0; j <= m; j++)
        D(0, j) = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t sub = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = D(i - 1, j - 1) + sub;
            if (D(i - 1, j) + 1 < best)
                best = D(i - 1, j) + 1;
            if (D(i, j - 1) + 1 < best)
                best = D(i, j - 1) + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                D(i - 2, j - 2) + 1 < best)
                best = D(i - 2, j - 2) + 1;
            D(i, j) = best;
        }
    size_t r = D(n, m);
#undef D
    free(d);
    return r;
}

const char *sb_did_you_mean(const char *typed, const char *const *names, uint32_t n)
{
    /* spaces around the name are the commonest slip (-s 'a, b') */
    while (*typed == ' ')
        typed++;
    size_t len = strlen(typed);
    while (len && typed[len - 1] == ' ')
        len--;
    char *t = malloc(len + 1);
    if (!t)
        return NULL;
    memcpy(t, typed, len);
    t[len] = 0;
    const char *best = NULL;
    size_t best_d = (size_t)-1;
    for (uint32_t i = 0; i < n; i++) {
        size_t d = distance(t, names[i]);
        if (d < best_d)
            best_d = d, best = names[i];
    }
    /* a third of the name, at least 2: 'overlapp' and 'LHS' are near,
     * 'heft' is not near 'dp' */
    size_t limit = len / 3 > 2 ? len / 3 : 2;
    if (best && best_d > limit)
        best = NULL;
    if (best && best_d >= len)
        best = NULL;
    free(t);
    return best;
}

/* ---- one value per option ------------------------------------------------------ */

int sb_opt_once(struct sb_opt_seen *s, const char *cmd, const char *flag, const char *value,
                struct sb_err *e)
{
    for (uint32_t k = 0; k < s->n; k++)
        if (!strcmp(s->flag[k], flag))
            return sb_errf(e, "schedbench %s: %s given twice (the second is '%.200s'): give it "
                              "once", cmd, flag, value ? value : "");
    if (s->n < sizeof s->flag / sizeof s->flag[0])
        s->flag[s->n++] = flag;
    return 0;
}
