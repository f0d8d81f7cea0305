/* Clean interruption (see interrupt.h). */
#define _XOPEN_SOURCE 700
#include "interrupt.h"

#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PATHS 64

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char path[PATH_MAX];
    bool dir, used;
} reg[MAX_PATHS];
static int pipe_fd[2] = {-1, -1};
static pid_t owner;

static void on_signal(int sig)
{
    /* A child made by fork without exec has no watcher: die as usual. */
    if (getpid() != owner) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    int e = errno;
    unsigned char b = (unsigned char)sig;
    if (write(pipe_fd[1], &b, 1) < 0) {
        /* nothing more can be done in a handler */
    }
    errno = e;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)ftw;
    if (flag == FTW_DP)
        rmdir(path);
    else
        unlink(path);
    return 0;
}

static void *watch(void *arg)
{
    (void)arg;
    unsigned char b; /* the signal's number */
    while (read(pipe_fd[0], &b, 1) != 1)
        if (errno != EINTR)
            return NULL;
    /* Never released: no temporary becomes final after this. */
    pthread_mutex_lock(&mu);
    for (int i = 0; i < MAX_PATHS; i++) {
        if (!reg[i].used)
            continue;
        if (reg[i].dir)
            nftw(reg[i].path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
        else
            unlink(reg[i].path);
    }
    /* over a progress line, if one is shown */
    static const char msg[] = "\r\033[Kbitprobe: interrupted\n";
    size_t skip = isatty(STDERR_FILENO) ? 0 : 4;
    if (write(STDERR_FILENO, msg + skip, sizeof msg - 1 - skip) < 0) {
        /* exiting anyway */
    }
    _exit(128 + b);
}

void bp_intr_install(void)
{
    if (pipe_fd[0] >= 0 || pipe(pipe_fd) != 0)
        return;
    owner = getpid();
    pthread_t t;
    if (pthread_create(&t, NULL, watch, NULL) != 0)
        return;
    pthread_detach(t);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        /* a signal the shell ignores (a background job's SIGINT) stays ignored */
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
}

bool bp_intr_add_locked(const char *path, bool dir)
{
    bool ok = false;
    for (int i = 0; i < MAX_PATHS && !ok; i++)
        if (!reg[i].used && strlen(path) < PATH_MAX) {
            snprintf(reg[i].path, PATH_MAX, "%s", path);
            reg[i].dir = dir;
            reg[i].used = ok = true;
        }
    return ok;
}

void bp_intr_rmtree(const char *path)
{
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

bool bp_intr_add(const char *path, bool dir)
{
    pthread_mutex_lock(&mu);
    bool ok = bp_intr_add_locked(path, dir);
    pthread_mutex_unlock(&mu);
    return ok;
}

int bp_intr_mkstemp(char *tmpl)
{
    pthread_mutex_lock(&mu);
    int fd = mkstemp(tmpl);
    if (fd >= 0)
        bp_intr_add_locked(tmpl, false);
    pthread_mutex_unlock(&mu);
    return fd;
}

void bp_intr_remove_locked(const char *path)
{
    for (int i = 0; i < MAX_PATHS; i++)
        if (reg[i].used && strcmp(reg[i].path, path) == 0) {
            reg[i].used = false;
            break;
        }
}

void bp_intr_remove(const char *path)
{
    pthread_mutex_lock(&mu);
    bp_intr_remove_locked(path);
    pthread_mutex_unlock(&mu);
}

void bp_intr_lock(void)
{
    pthread_mutex_lock(&mu);
}

void bp_intr_unlock(void)
{
    pthread_mutex_unlock(&mu);
}
