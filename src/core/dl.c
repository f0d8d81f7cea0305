/* Libraries by dlopen (dl.h). */
#include "dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void bp_dl_open(bp_dl_lib_t *l)
{
    /* RTLD_LOCAL: nothing else resolves against it. */
    const char *file = l->env && getenv(l->env) && *getenv(l->env) ? getenv(l->env) : l->lib;
    void *h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(l->why, sizeof l->why, "%s could not be loaded: %s%s%s%s", l->what,
                 e ? e : file, l->env ? " (" : "", l->env ? l->env : "",
                 l->env ? " names another file)" : "");
        return;
    }
    for (size_t i = 0; i < l->n; i++) {
        *l->slots[i] = dlsym(h, l->names[i]);
        if (!*l->slots[i]) {
            snprintf(l->why, sizeof l->why, "%s has no %s (%s expected)", file, l->names[i],
                     l->expect);
            dlclose(h);
            memset(l->table, 0, l->table_size);
            return;
        }
    }
}

bp_status bp_dl_loaded(bp_dl_lib_t *l, void (*once_fn)(void), bp_error_t *err)
{
    pthread_once(&l->once, once_fn);
    if (l->why[0])
        return bp_error_set(err, BP_EUNAVAIL, "%s", l->why);
    return BP_OK;
}
