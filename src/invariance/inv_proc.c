/* Fresh processes for the invariance sweep (inv_proc.h). */
#include "inv_proc.h"

#include <errno.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static size_t total(const bp_inv_study_t *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nmaps; i++)
        n += bp_inv_map_nconfigs(&s->maps[i]);
    for (size_t i = 0; i < s->ncmaps; i++)
        n += bp_coll_map_ncells(&s->cmaps[i]);
    return n;
}

int bp_inv_proc_write_digests(FILE *f, const bp_inv_study_t *s)
{
    uint64_t n = total(s);
    if (fwrite(&n, sizeof n, 1, f) != 1)
        return 1;
    for (size_t i = 0; i < s->nmaps; i++) {
        size_t k = bp_inv_map_nconfigs(&s->maps[i]);
        uint64_t *d = malloc((k ? k : 1) * sizeof *d);
        if (!d)
            return 1;
        bp_inv_map_digests(&s->maps[i], d);
        size_t w = fwrite(d, sizeof *d, k, f);
        free(d);
        if (w != k)
            return 1;
    }
    for (size_t i = 0; i < s->ncmaps; i++) {
        size_t k = bp_coll_map_ncells(&s->cmaps[i]);
        uint64_t *d = malloc((k ? k : 1) * sizeof *d);
        if (!d)
            return 1;
        bp_coll_map_digests(&s->cmaps[i], d);
        size_t w = fwrite(d, sizeof *d, k, f);
        free(d);
        if (w != k)
            return 1;
    }
    return fflush(f) != 0;
}

/* Reads exactly n bytes (less only at end of input). */
static size_t read_all(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}

bp_status bp_inv_proc_compare(char *const *argv, char *const *envp, bp_inv_study_t *s,
                              bp_error_t *err)
{
    size_t n = total(s), nb = (n + 1) * sizeof(uint64_t);
    uint64_t *buf = malloc(nb + sizeof(uint64_t));
    if (!buf)
        return bp_error_set(err, BP_ENOMEM, "out of memory");
    int fd[2];
    if (pipe(fd)) {
        free(buf);
        return bp_error_set(err, BP_EIO, "fresh process: pipe failed: %s", strerror(errno));
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    pid_t pid;
    char *args[72];
    int na = 0;
    args[na++] = "bitprobe";
    for (char *const *a = argv; *a && na < 71; a++)
        args[na++] = *a;
    args[na] = NULL;
    int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, envp ? envp : environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) {
        close(fd[0]);
        free(buf);
        return bp_error_set(err, BP_EIO, "fresh process: cannot start /proc/self/exe: %s",
                            strerror(rc));
    }
    /* one byte more than expected: a longer stream is an error too */
    size_t got = read_all(fd[0], buf, nb + 1);
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    bp_status st = BP_OK;
    if (WIFSIGNALED(status))
        st = bp_error_set(err, BP_EINTERNAL, "fresh process: killed by signal %d",
                          WTERMSIG(status));
    else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        st = bp_error_set(err, BP_EINTERNAL, "fresh process: exit status %d",
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    else if (got != nb || buf[0] != n)
        st = bp_error_set(err, BP_EINTERNAL, "fresh process: %zu bytes of digests, "
                          "%zu expected (%zu configurations)", got, nb, n);
    if (!st) {
        size_t k = 1;
        for (size_t i = 0; i < s->nmaps; i++) {
            bp_inv_map_check_digests(&s->maps[i], buf + k);
            k += bp_inv_map_nconfigs(&s->maps[i]);
        }
        for (size_t i = 0; i < s->ncmaps; i++) {
            bp_coll_map_check_digests(&s->cmaps[i], buf + k);
            k += bp_coll_map_ncells(&s->cmaps[i]);
        }
    }
    free(buf);
    return st;
}
