/* A CSV file read whole into rows of fields (libcsv does the parsing), for the
 * commands that read results files: compare, merge, plot. */
#ifndef SB_TABLE_H
#define SB_TABLE_H

#include "core/util.h"

struct sb_table {
    uint32_t n_cols;       /* fields of the header row */
    uint32_t n_rows;       /* data rows, header excluded */
    char **cell;           /* [(n_rows + 1) * n_cols]; row 0 is the header */
    uint32_t *line;        /* [n_rows + 1] line each row starts on */
    char *path;
};

/* Reads path; every row must have the header's field count. */
int sb_table_read(struct sb_table *t, const char *path, struct sb_err *e);
void sb_table_free(struct sb_table *t);
/* Column index of name, or -1. */
int sb_table_col(const struct sb_table *t, const char *name);
/* Field c of data row r (0-based, header excluded). */
const char *sb_table_get(const struct sb_table *t, uint32_t r, uint32_t c);

#endif
