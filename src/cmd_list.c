/* PLACEHOLDER: replaced by the probes work. */
#include <stdio.h>
#include "cli.h"
int cmd_list(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "bitprobe list: not built yet\n"); return BP_EXIT_TROUBLE; }
