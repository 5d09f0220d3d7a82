/* Names from inputs (workloads, schedulers, devices, file names) are data.
 * Every writer that puts one into a language that a program reads back (a
 * gnuplot script or data file, ...) goes through this file, so that escaping
 * is decided once per language and no writer improvises its own. */
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

#endif
