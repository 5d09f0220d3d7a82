/* schedbench gen: workload generators (workloads/README.md).
 *
 * The CLI's `gen` subcommand calls sb_gen_main with argv[0] = "gen".  It returns
 * the process exit status: 0 when the graph was written, 2 on bad usage or
 * input (the message is on stderr and no file, not even a partial one, is left
 * behind). */
#ifndef SB_GEN_H
#define SB_GEN_H

int sb_gen_main(int argc, char **argv);

#endif
