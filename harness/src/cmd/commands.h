/* Subcommands that live outside cli.c.  Each takes argv with argv[0] = the
 * command name and returns the process exit status. */
#ifndef SB_COMMANDS_H
#define SB_COMMANDS_H

int sb_cmd_compare(int argc, char **argv);
int sb_cmd_merge(int argc, char **argv);
int sb_cmd_plot(int argc, char **argv);

/* schedbench collective: one collective under ASTRA-sim's model (collective.c). */
int sb_cmd_collective(int argc, char **argv);

#endif
