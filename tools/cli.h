/* The ukern command-line tool: one file per command. */
#ifndef UK_CLI_H
#define UK_CLI_H

#include "ukern/ukern.h"

/* Exit codes (documented in `ukern --help`). */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_NO_DEVICE = 3 };

int cli_info(int argc, char **argv);
int cli_cache(int argc, char **argv);
int cli_demo(int argc, char **argv);

/* Prints "ukern: <what>: STATUS: detail" (+ the compile log) to stderr and
 * returns the exit code for the status. */
int cli_fail(const char *what, uk_status s);
/* True when argv holds -h or --help. */
int cli_wants_help(int argc, char **argv);
/* Human-readable byte count ("1.5 MiB") into buf. */
const char *cli_bytes(uint64_t bytes, char *buf, size_t size);

#endif
