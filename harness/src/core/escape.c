#include "core/escape.h"
#include "core/util.h"

#include <jansson.h>
#include <string.h>

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

/* ---- UTF-8 ---------------------------------------------------------------- */

/* The length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * form, no surrogate, nothing past U+10FFFF), or 0 when ill-formed, with
 * *skip the length of its maximal subpart: the bytes that begin a sequence
 * and continue it correctly so far, at least 1, replaced by one U+FFFD. */
static size_t utf8_len(const unsigned char *s, size_t *skip)
{
    unsigned char c = s[0];
    size_t n;
    unsigned char lo = 0x80, hi = 0xbf; /* the range of the second byte */
    *skip = 1;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        n = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80; /* overlong */
        hi = c == 0xed ? 0x9f : 0xbf; /* surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        lo = c == 0xf0 ? 0x90 : 0x80; /* overlong */
        hi = c == 0xf4 ? 0x8f : 0xbf; /* past U+10FFFF */
    } else
        return 0; /* a continuation byte, C0, C1, F5..FF */
    for (size_t i = 1; i < n; i++) {
        unsigned char b = s[i]; /* the NUL that ends s fails every range */
        if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xbf))
            return 0;
        *skip = i + 1;
    }
    return n;
}

static const char fffd[] = "\xef\xbf\xbd";

char *sb_utf8_valid(const char *s)
{
    size_t n = strlen(s), len = 0;
    /* at worst every byte is one U+FFFD of three */
    char *out = sb_xmalloc(3 * n + 1);
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t skip, k = utf8_len(p, &skip);
        if (k) {
            memcpy(out + len, p, k);
            len += k, p += k;
        } else {
            memcpy(out + len, fffd, 3);
            len += 3, p += skip;
        }
    }
    out[len] = 0;
    return out;
}

json_t *sb_json_string(const char *s)
{
    char *v = sb_utf8_valid(s);
    json_t *j = json_string(v);
    free(v);
    SB_ASSERT(j); /* valid UTF-8 without NUL: jansson takes it */
    return j;
}

/* Writes s, each well-formed character through put (with its length), each
 * ill-formed subpart as U+FFFD. */
static void each_char(FILE *f, const char *s, void (*put)(FILE *, const unsigned char *, size_t))
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t skip, k = utf8_len(p, &skip);
        if (k) {
            put(f, p, k);
            p += k;
        } else {
            fputs(fffd, f);
            p += skip;
        }
    }
}

/* ---- JSON ----------------------------------------------------------------- */

static void json_char(FILE *f, const unsigned char *c, size_t k)
{
    if (k > 1) {
        fwrite(c, 1, k, f);
        return;
    }
    switch (*c) {
    case '"': fputs("\\\"", f); break;
    case '\\': fputs("\\\\", f); break;
    case '\n': fputs("\\n", f); break;
    case '\r': fputs("\\r", f); break;
    case '\t': fputs("\\t", f); break;
    default:
        if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
}

void sb_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    each_char(f, s, json_char);
    fputc('"', f);
}

/* ---- Markdown --------------------------------------------------------------- */

static void md_char(FILE *f, const unsigned char *c, size_t k)
{
    if (k > 1)
        fwrite(c, 1, k, f);
    else if (*c == '\n')
        fputs("<br>", f);
    else if (is_control(*c))
        fputs(fffd, f);
    else {
        if (strchr("\\|`*_[]<>&~", *c))
            fputc('\\', f);
        fputc(*c, f);
    }
}

void sb_md_cell(FILE *f, const char *s)
{
    each_char(f, s, md_char);
}

/* ---- CSV for a spreadsheet ------------------------------------------------ */

void sb_csv_sheet_field(FILE *f, const char *s, int first)
{
    if (*s && strchr("=+-@\t\r", *s)) {
        char *q = sb_strf("'%s", s);
        sb_csv_field(f, q, first);
        free(q);
    } else
        sb_csv_field(f, s, first);
}

/* ---- HTML ------------------------------------------------------------------- */

static void html_char(FILE *f, const unsigned char *c, size_t k)
{
    if (k > 1) {
        fwrite(c, 1, k, f);
        return;
    }
    switch (*c) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    default:
        if (is_control(*c) && *c != '\t' && *c != '\n' && *c != '\r')
            fputs(fffd, f);
        else
            fputc(*c, f);
    }
}

void sb_html_text(FILE *f, const char *s)
{
    each_char(f, s, html_char);
}

/* ---- XML ------------------------------------------------------------------- */

static void xml_char(FILE *f, const unsigned char *c, size_t k)
{
    /* tab, newline and carriage return are XML characters, but a parser
     * turns them into spaces in an attribute and \r\n into \n in text: as
     * references they come back as written (fuzz_names found a \r) */
    if (k == 1 && *c == '\'')
        fputs("&apos;", f);
    else if (k == 1 && (*c == '\t' || *c == '\n' || *c == '\r'))
        fprintf(f, "&#%d;", *c);
    else
        html_char(f, c, k); /* the same entities, the same bytes refused */
}

void sb_xml_text(FILE *f, const char *s)
{
    each_char(f, s, xml_char);
}

/* ---- `# key=value` lines ----------------------------------------------------- */

int sb_meta_text_ok(const char *s)
{
    for (; *s; s++)
        if (is_control((unsigned char)*s) && *s != '\t')
            return 0;
    return 1;
}
