/* PLACEHOLDER: replaced by the probes work. */
#include <stdio.h>
#include "cli.h"
int cmd_run(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "bitprobe run: not built yet\n"); return BP_EXIT_TROUBLE; }
