/* Shared by the fuzz targets (tests/fuzz/fuzz_*.c): each defines
 * LLVMFuzzerTestOneInput, built two ways: with clang's libFuzzer by
 * `make fuzz`, and with replay.c as a plain program that `make check`
 * runs over the target's corpus.  A target aborts (FUZZ_CHECK) when a
 * reader breaks its contract: a failure without a message or with one
 * that does not name the input, a success that violates the rules the
 * reader promises, or a round trip that changes anything. */
#ifndef BP_FUZZ_H
#define BP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond, ...)                                               \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__,          \
                    __LINE__, #cond);                                       \
            fprintf(stderr, __VA_ARGS__);                                   \
            fputc('\n', stderr);                                            \
            abort();                                                        \
        }                                                                   \
    } while (0)

/* A failed read must say what failed, starting with the input's label;
 * only bad input or lack of memory may make a reader fail. */
#define FUZZ_CHECK_FAIL(st, e, label)                                       \
    do {                                                                    \
        FUZZ_CHECK((st) == BP_EINPUT || (st) == BP_ENOMEM,                  \
                   "status %d: %s", (int)(st), (e)->msg);                   \
        FUZZ_CHECK((e)->code == (st), "code %d, status %d", (e)->code,      \
                   (int)(st));                                              \
        FUZZ_CHECK((st) == BP_ENOMEM ||                                     \
                       strncmp((e)->msg, (label), strlen(label)) == 0,      \
                   "message does not name the input: %s", (e)->msg);        \
    } while (0)

#endif
