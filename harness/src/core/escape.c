#include "core/escape.h"

static int is_control(unsigned char c)
{
    return c < 0x20 || c == 0x7f;
}

void sb_gp_literal(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'')
            fputc('\'', f);
        fputc(is_control(c) ? '?' : c, f);
    }
    fputc('\'', f);
}

void sb_gp_datum(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        fputc(is_control(c) ? '?' : c == '"' ? '\'' : c, f);
    }
    fputc('"', f);
}

void sb_gp_comment(FILE *f, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        fputc(is_control(c) ? '?' : c, f);
    }
}
