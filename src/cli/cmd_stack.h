/* What stack and its mode stack --ranks (cmd_stack_ranks.c) share. */
#ifndef BP_CMD_STACK_H
#define BP_CMD_STACK_H

#include "stack.h"

/* --gemm pedantic|default: 0, or the usage error's exit status. */
int cmd_stack_gemm(const char *cmd, const char *arg, bp_stack_gemm_t *out);

#endif
