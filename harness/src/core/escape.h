/* Names from inputs (workloads, schedulers, devices, nodes, file names,
 * statuses carrying messages) are data.  Every writer that puts one into a
 * language a program or a person's tool reads back goes through this file, so
 * that escaping is decided once per language and no writer improvises its
 * own:
 *
 *   gnuplot     sb_gp_literal, sb_gp_datum, sb_gp_comment
 *   JSON        sb_json_str (hand-written JSON), sb_json_string (jansson)
 *   Markdown    sb_md_cell
 *   CSV for a spreadsheet   sb_csv_sheet_field
 *   HTML        sb_html_text
 *   XML (JUnit) sb_xml_text
 *   `# key=value` lines     sb_meta_text_ok
 *
 * Bytes that are not UTF-8 become U+FFFD wherever the language is UTF-8 text
 * (JSON, Markdown, HTML): each maximal ill-formed subsequence is one U+FFFD,
 * as Unicode recommends (Unicode 15, section 3.9, "U+FFFD Substitution of
 * Maximal Subparts").  The data files schedbench reads back (results CSV,
 * timelines, journals, converted workloads) keep names byte for byte. */
#ifndef SB_ESCAPE_H
#define SB_ESCAPE_H

#include <stdio.h>

/* A gnuplot string literal: single quotes, '' for a quote.  gnuplot reads a
 * script a line at a time, and a newline inside a literal ends the command:
 * the rest of the name would run as the next one (`system "..."`).  Every
 * control byte is therefore written as '?'; nothing else in single quotes is
 * special (no backslash escapes, no `...` or @macro expansion there). */
void sb_gp_literal(FILE *f, const char *s);

/* A string field of a gnuplot data file (read by xtic() or `with labels`):
 * double quotes, which the data reader cannot escape, become ', and control
 * bytes become '?' so that a name never splits or ends a data line. */
void sb_gp_datum(FILE *f, const char *s);

/* Text of a `#` comment line in a gnuplot data file: control bytes become
 * '?', so that a name cannot end the comment and start a data line. */
void sb_gp_comment(FILE *f, const char *s);

/* A JSON string literal (RFC 8259), quotes included: '"' and '\' escaped,
 * control bytes as \n, \t, ... or \u00XX, ill-formed UTF-8 as U+FFFD. */
void sb_json_str(FILE *f, const char *s);

/* s with every ill-formed UTF-8 subsequence replaced by U+FFFD, in a new
 * allocation: jansson refuses such a string (json_string returns NULL and
 * json_object_set_new then drops the key without a word). */
char *sb_utf8_valid(const char *s);

/* json_string(s) of jansson for any s: ill-formed UTF-8 as U+FFFD.  Control
 * characters need nothing: jansson escapes them when it writes. */
struct json_t *sb_json_string(const char *s);

/* A cell of a Markdown (GitHub) table, between its '|'s: '|' and the
 * characters Markdown reads as markup (\ ` * _ [ ] < > & ~) are escaped with
 * a backslash, so that a name is shown as it is and never becomes a link,
 * an HTML tag or a column; a newline, which would end the row, is <br>;
 * other control bytes and ill-formed UTF-8 are U+FFFD. */
void sb_md_cell(FILE *f, const char *s);

/* A CSV field for a file a person opens in a spreadsheet (summary --format
 * csv, summary --devices, compare --format csv): a text that begins with =,
 * +, -, @, a tab or a carriage return is what Excel, LibreOffice and Google
 * Sheets run as a formula (OWASP, "CSV Injection"), so it gets a leading ',
 * which a spreadsheet shows as text.  For names and messages, not numbers:
 * the results file itself keeps names exactly (README, "Names are
 * data", says why). */
void sb_csv_sheet_field(FILE *f, const char *s, int first);

/* Text in an HTML element or a "-quoted attribute: & < > " as entities,
 * control bytes other than tab, newline and carriage return, and ill-formed
 * UTF-8, as U+FFFD. */
void sb_html_text(FILE *f, const char *s);

/* Text of an XML 1.0 element or a "- or '-quoted attribute (compare
 * --format junit): & < > " ' as entities; control bytes other than tab,
 * newline and carriage return, which XML 1.0 does not allow even as
 * references, and ill-formed UTF-8, as U+FFFD. */
void sb_xml_text(FILE *f, const char *s);

/* Whether s can stand in a `# key=value` metadata line of a workload CSV
 * (convert writes them): the reader takes a line to its end, with no
 * escape, so a newline or any other control byte would end the value and
 * start a line of its own.  1 when s has none. */
int sb_meta_text_ok(const char *s);

#endif
