/* Report files written whole or not at all (see outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "interrupt.h"

bool bp_out_open(bp_out_t *o, const char *path)
{
    memset(o, 0, sizeof *o);
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        return true;
    }
    if (strlen(path) + 16 >= sizeof o->tmp) {
        errno = ENAMETOOLONG;
        return false;
    }
    snprintf(o->path, sizeof o->path, "%s", path);
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        o->f = fopen(path, "w");
        return o->f != NULL;
    }
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.XXXXXX", path);
    int fd = bp_intr_mkstemp(o->tmp);
    if (fd < 0)
        return false;
    /* mkstemp's 0600 as a plain open would have made it */
    mode_t um = umask(0);
    umask(um);
    (void)fchmod(fd, 0666 & ~um);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        bp_intr_remove(o->tmp);
        errno = e;
        return false;
    }
    return true;
}

bool bp_out_close(bp_out_t *o, bool ok)
{
    if (!o->f)
        return false;
    if (o->f == stdout) {
        ok = fflush(stdout) == 0 && ok;
        o->f = NULL;
        return ok;
    }
    ok = fclose(o->f) == 0 && ok;
    o->f = NULL;
    if (!o->tmp[0])
        return ok;
    int e = 0;
    bp_intr_lock();
    if (ok && rename(o->tmp, o->path) != 0) {
        e = errno;
        ok = false;
    }
    if (!ok)
        unlink(o->tmp);
    bp_intr_remove_locked(o->tmp);
    bp_intr_unlock();
    if (e)
        errno = e;
    return ok;
}
