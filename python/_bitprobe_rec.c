/* The recorder's per-op path in C (a CPython extension module that
 * bitprobe_torch.py imports from beside itself when it is there; without
 * it, or when its self-check disagrees, the recorder runs the same steps
 * in Python and writes the same ledger).
 *
 * Recorder.__torch_dispatch__ hands each op to Core.dispatch first: the
 * arguments' encoding, each tensor's entry with its two caches (the
 * recorder's own dicts, the same keys and values as Recorder._entry
 * makes), the hash (a CPU tensor's by the native helper's functions,
 * linked in; a CUDA tensor's by one cuLaunchKernel through the address
 * the recorder passes in, into its _CudaHasher's slots), the op's call
 * and the record, in one call.  What is uncommon goes back to Python:
 * dispatch returns the SLOW object before anything is done when the op
 * needs what only the Python path does (keyword arguments, captures, a
 * reference ledger, an op met for the first time), and a tensor whose
 * entry is not the common case (no version counter, conjugate or negative
 * views, other layouts and devices, uninitialised results, a hash the
 * Python helpers must take) gets Recorder._entry or Hasher.hash_plain.
 *
 * Built by `make` without the build's sanitizer flags, like
 * libbitprobe_torch.so (the Python that imports it is not instrumented).
 * tests/ledger_torch/ext_check.py checks that both paths write the same
 * ledgers. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "ledger_fmix.h"

#define BP_REC_VERSION 4
#define BP_REC_MAX_CUDA 16 /* hashers a recorder launches into directly */
#define BP_REC_CACHE_MAX 200000
#define BP_REC_STRIDED_MAX (1 << 20) /* bytes: a larger strided tensor is Python's */
#define BP_BATCH 64                   /* tensors one launch of the batch kernel hashes */
#define BP_SBATCH 16                  /* ... of which strided, at most */
#define BP_BATCH_BYTES 16384          /* the largest tensor a batch takes */
#define BP_BATCH_HELD 65536           /* ... and the largest storage it holds */

/* python/bitprobe_torch_native.c, linked in */
uint64_t bp_torch_hash(const void *p, uint64_t nbytes);
uint64_t bp_torch_hash_strided(const char *base, int64_t elsize, int ndim, const int64_t *dims);

/* cuLaunchKernel's signature (the address comes from Python: the driver's
 * function, or a host emulation of the kernels in the tests). */
typedef int (*bp_launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned shmem, void *stream,
                            void **params, void **extra);

/* The strided kernel's argument, passed by value (bitprobe_torch's
 * struct bp_strided). */
struct bp_strided_arg {
    int32_t ndim, elsize;
    int64_t d[16];
};

/* The batch kernel's argument, passed by value (bitprobe_torch's struct
 * bp_batch): n tensors, each its address, byte count and slot address; a
 * strided one's byte count BP_STRIDED | k, its layout in s[k]. */
#define BP_STRIDED (1ULL << 63)
struct bp_sdesc {
    int32_t ndim, elsize;
    int32_t d[16];
};
struct bp_batch_arg {
    uint64_t n;
    uint64_t e[3 * BP_BATCH];
    struct bp_sdesc s[BP_SBATCH];
};

/* cuStreamSynchronize, cuCtxPushCurrent, cuCtxPopCurrent (or their host
 * stand-ins in the tests). */
typedef int (*bp_stream_fn)(void *stream);
typedef int (*bp_ctx_push_fn)(void *ctx);
typedef int (*bp_ctx_pop_fn)(void **ctx);

/* A _CudaHasher this core launches into. */
typedef struct {
    PyObject *h, *hdict, *current, *stream; /* the hasher, its __dict__, its two functions */
    bp_launch_fn launch;
    void *func, *sfunc; /* the kernels; sfunc NULL: strided tensors are Python's */
    uint64_t base;      /* the slots' device address */
    long index, max_blocks, slots;
    /* Small contiguous tensors are hashed a batch at a time (bfunc NULL:
     * each by its own launch): their launch waits in batch, on the stream
     * they were made on (bstream), the tensors held in the hasher's list
     * `held` until its slots are read, so that no allocation reuses their
     * memory first; batch_flush launches it. */
    void *bfunc, *ctx, *bstream;
    bp_stream_fn sync;
    bp_ctx_push_fn push;
    bp_ctx_pop_fn pop;
    struct bp_batch_arg batch;
    int ns;              /* the batch's strided tensors */
    long long n_batches; /* batch launches */
} bp_cuda_reg;

typedef struct {
    PyObject_HEAD
    PyObject *rec, *rd, *hasher, *hd;             /* the recorder, the hasher, their __dict__s */
    PyObject *cache, *bcache, *ops, *modjson;     /* the recorder's dicts, _OPS */
    PyObject *acquire, *release;                  /* its lock's bound methods */
    PyObject *entry_t, *hash_t;                   /* _Entry, _Hash */
    PyObject *e_slot[5], *h_slot[5];              /* their slots' member descriptors */
    PyObject *dtinfo, *cuda_names, *trefs, *targs, *tensor_t, *param_t, *strided, *no_ret;
    PyObject *not_hashed;                         /* exception -> its entry's why */
    PyObject *json, *encode, *meta_json, *meta_cache; /* _json, _JSON.encode, _meta_json, _META_JSON */
    PyObject *py_td;                              /* the recorder class's __torch_dispatch__ */
    PyObject *storage;                            /* the name of Tensor's storage method */
    int has_neg;
    int ncuda;
    bp_cuda_reg cuda[BP_REC_MAX_CUDA];
    long long n_fast, n_contig, n_strided;        /* ops done here, tensors hashed by each kernel */
    long long n_sbatched;                         /* strided ones hashed in batches */
} Core;

static PyObject *SLOW; /* dispatch's "do it in Python" */
static PyObject *ONE;
static PyObject *s_version, *s_dtype, *s_is_cuda, *s_get_device, *s_is_cpu, *s_layout, *s_is_neg,
    *s_is_conj, *s_stride, *s_shape, *s_data_ptr, *s_epoch,
    *s_capturing, *s_diverged, *s_diverging, *s_records, *s_stack, *s_seq, *s_native,
    *s_native_checked, *s_kinds, *s_pending, *s_used, *s_held, *s_lost, *s_nbytes, *s__entry,
    *s__encode, *s__flatten_out,
    *s__module_json, *s__flush, *s_hash_plain, *s_cpu, *s_empty, *s_overwritten,
    *s_uninitialized;

/* --- small helpers ----------------------------------------------------- */

static PyObject *meth0(PyObject *o, PyObject *name)
{
    return PyObject_VectorcallMethod(name, &o, 1 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
}

static int int_eq(PyObject *a, PyObject *b)
{
    if (a == b)
        return 1;
    return PyObject_RichCompareBool(a, b, Py_EQ);
}

/* An item of a dict that must be there (a borrowed reference). */
static PyObject *need(PyObject *d, PyObject *key)
{
    PyObject *v = PyDict_GetItemWithError(d, key);
    if (!v && !PyErr_Occurred())
        PyErr_Format(PyExc_RuntimeError, "_bitprobe_rec: %R is missing", key);
    return v;
}

/* A new reference to d[name], which must be there. */
static PyObject *item(PyObject *d, const char *name)
{
    PyObject *k = PyUnicode_FromString(name);
    if (!k)
        return NULL;
    PyObject *v = need(d, k);
    Py_DECREF(k);
    return Py_XNewRef(v);
}

/* The pending exception, taken (a new reference), and put back. */
static PyObject *exc_take(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyErr_NormalizeException(&et, &ev, &tb);
    if (ev && tb)
        PyException_SetTraceback(ev, tb);
    Py_XDECREF(et);
    Py_XDECREF(tb);
    return ev;
#endif
}

static void exc_put(PyObject *ev)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(ev);
#else
    if (ev)
        PyErr_Restore(Py_NewRef((PyObject *)Py_TYPE(ev)), ev, PyException_GetTraceback(ev));
#endif
}

/* o, out of the cyclic garbage collector's sight; o itself.  What the
 * recorder keeps per op until the ledger is written (records, entries,
 * their metadata, the caches' tuples and weak references: ~10 objects an
 * op) holds no reference cycle: it is JSON-like data, tensors' weak
 * references and hashes.  Tracked, it made the collector run every ~70
 * ops over all of it and promote it into the oldest generation, whose
 * growth triggers full collections of the whole process (PyTorch's
 * objects with it): 3.0 us an op in collections on the tiny preset on a
 * CPU, 1.6 untracked (tests/ledger_torch/ext_check.py counts).  Untracked,
 * it is freed by reference counts as before; what it refers to stays
 * alive as long as it does. */
static PyObject *untrack(PyObject *o)
{
    if (o && PyObject_IS_GC(o))
        PyObject_GC_UnTrack(o);
    return o;
}

/* A new object of a __slots__ class with its n slots set (their member
 * descriptors in slot[]), as its __init__ would: no Python frame. */
static PyObject *new_slots(PyObject *type, PyObject **slot, PyObject **v, int n)
{
    PyTypeObject *tp = (PyTypeObject *)type;
    PyObject *o = tp->tp_alloc(tp, 0);
    if (!o)
        return NULL;
    for (int k = 0; k < n; k++)
        if (Py_TYPE(slot[k])->tp_descr_set(slot[k], o, v[k]) < 0) {
            Py_DECREF(o);
            return NULL;
        }
    return o;
}

static PyObject *new_entry(Core *c, PyObject *meta, PyObject *h, PyObject *why)
{
    PyObject *v[5] = {meta, h, why, Py_None, Py_None}; /* meta hash why cap js */
    return untrack(new_slots(c->entry_t, c->e_slot, v, 5));
}

/* --- one tensor's entry ------------------------------------------------- */

/* Recorder._entry(t, why, fresh): the uncommon cases. */
static PyObject *py_entry(Core *c, PyObject *t, PyObject *why, int fresh)
{
    PyObject *args[4] = {c->rec, t, why, fresh ? Py_True : Py_False};
    return PyObject_VectorcallMethod(s__entry, args, 4, NULL);
}

static PyObject *c_launch(Core *c, bp_cuda_reg *r, PyObject *h, PyObject *t, uintptr_t ptr,
                          int contig, int small, Py_ssize_t ndim, const int64_t *dims,
                          long long es, long long nbytes, long used, int *py, int *launch_rc);

/* The current stream of r's device (what a launch there now is ordered
 * after), or NULL with an exception. */
static void *cur_stream(bp_cuda_reg *r, int *err)
{
    PyObject *idx = PyLong_FromLong(r->index), *so = idx ? PyObject_CallOneArg(r->stream, idx)
                                                          : NULL;
    Py_XDECREF(idx);
    void *st = so ? PyLong_AsVoidPtr(so) : NULL;
    Py_XDECREF(so);
    *err = PyErr_Occurred() != NULL;
    return st;
}

/* The grid of a hash kernel over nbytes: a thread per word, 256 a
 * block, at most r's max_blocks. */
static unsigned grid_for(const bp_cuda_reg *r, long long nbytes)
{
    long long blocks = (nbytes / 4 + 255) / 256;
    return (unsigned)(blocks > r->max_blocks ? r->max_blocks : blocks ? blocks : 1);
}

/* The contiguous kernel on nbytes at p into the slot at out, on stream. */
static int launch_contig(bp_cuda_reg *r, void *p, long long nbytes, uint64_t out, void *stream)
{
    double n = (double)nbytes;
    void *argv[3] = {&p, &n, &out};
    return r->launch(r->func, grid_for(r, nbytes), 1, 1, 256, 1, 1, 0, stream, argv, NULL);
}

/* The strided kernel on the ndim sizes and strides in d (as
 * bp_strided_arg holds them) of elements of es bytes at p, nbytes in all,
 * into the slot at out, on stream. */
static int launch_strided(bp_cuda_reg *r, void *p, int ndim, long long es, const int64_t *d,
                          long long nbytes, uint64_t out, void *stream)
{
    struct bp_strided_arg a;
    memset(&a, 0, sizeof a);
    a.ndim = ndim;
    a.elsize = (int32_t)es;
    memcpy(a.d, d, sizeof(int64_t) * 2 * (size_t)ndim);
    void *argv[3] = {&p, &a, &out};
    return r->launch(r->sfunc, grid_for(r, nbytes), 1, 1, 256, 1, 1, 0, stream, argv, NULL);
}

/* Entry k of r's batch launched by itself, by the contiguous or the
 * strided kernel. */
static int launch_one(bp_cuda_reg *r, uint64_t k)
{
    const uint64_t *e = r->batch.e + 3 * k;
    void *p = (void *)(uintptr_t)e[0];
    if (!(e[1] & BP_STRIDED))
        return launch_contig(r, p, (long long)e[1], e[2], r->bstream);
    const struct bp_sdesc *sd = &r->batch.s[e[1] & ~BP_STRIDED];
    int64_t d[16];
    long long nbytes = sd->elsize;
    for (int j = 0; j < 2 * sd->ndim; j++)
        d[j] = sd->d[j];
    for (int j = 0; j < sd->ndim; j++)
        nbytes *= d[j];
    return launch_strided(r, p, sd->ndim, sd->elsize, d, nbytes, e[2], r->bstream);
}

/* Launches r's batch on its stream with r's device's context pushed (any
 * device may be current); where `cur`, the stream what comes next runs
 * on, is another, waits for the batch to finish, so that nothing there
 * (an op writing one of the tensors) runs before the hashes have read
 * them.  A batch launch that fails is made again one tensor per launch of
 * the contiguous or strided kernel.  0, or the CUDA error: the batch's
 * hashes are then lost, which the callers make an exception (no entry of
 * a ledger may show a hash its kernel never made). */
static int batch_flush(bp_cuda_reg *r, void *cur)
{
    if (!r->batch.n)
        return 0;
    void *argv[1] = {&r->batch}, *old = NULL;
    int rc = r->push(r->ctx);
    if (!rc) {
        rc = r->launch(r->bfunc, (unsigned)r->batch.n, 1, 1, 128, 1, 1, 0, r->bstream, argv,
                       NULL);
        r->n_batches++;
        for (uint64_t k = 0, again = rc != 0; again && k < r->batch.n; k++) {
            rc = launch_one(r, k);
            again = rc == 0;
        }
        if (!rc && cur != r->bstream)
            rc = r->sync(r->bstream);
        int rp = r->pop(&old);
        rc = rc ? rc : rp;
    }
    r->batch.n = 0;
    r->ns = 0;
    return rc;
}

/* A batch of r whose hashes are lost (CUDA error rc): said in the hasher's
 * `lost`, which makes its read() raise (so no ledger shows those slots),
 * and raised (NULL). */
static PyObject *batch_lost(bp_cuda_reg *r, int rc)
{
    PyObject *msg = PyUnicode_FromFormat("the CUDA hash kernels of a batch of tensors could "
                                         "not be launched (CUDA error %d): their hashes are "
                                         "lost", rc);
    if (msg && PyDict_SetItem(r->hdict, s_lost, msg) == 0)
        PyErr_SetObject(PyExc_RuntimeError, msg);
    Py_XDECREF(msg);
    return NULL;
}

/* Every waiting batch launched (batch_flush, each device's current stream
 * as `cur`): before an op that writes its arguments, before Python's path
 * runs an op, before the slots are read.  0, or -1 with an exception. */
static int flush_all(Core *c)
{
    for (int k = 0; k < c->ncuda; k++) {
        bp_cuda_reg *r = &c->cuda[k];
        if (!r->batch.n)
            continue;
        int err, rc;
        void *cur = cur_stream(r, &err);
        if (err) {
            r->batch.n = 0;
            r->ns = 0;
            return -1;
        }
        if ((rc = batch_flush(r, cur))) {
            batch_lost(r, rc);
            return -1;
        }
    }
    return 0;
}

/* The hash of a tensor showing its own bytes (Hasher.hash_plain's common
 * cases): a new reference to an int (CPU) or a pending _Hash (CUDA), or
 * NULL with *py set when hash_plain must take it, or NULL with
 * *launch_rc set when the launch failed, or NULL with an exception. */
static PyObject *c_hash(Core *c, PyObject *t, PyObject *dn, uintptr_t ptr, int contig,
                        PyObject *shape, PyObject *stride, long long es, long long nbytes,
                        int *py, int *launch_rc)
{
    *py = 0;
    *launch_rc = 0;
    int is_cpu = PyUnicode_Check(dn) && PyUnicode_Compare(dn, s_cpu) == 0;
    if (!PyTuple_Check(shape) || !PyTuple_Check(stride) ||
        PyTuple_GET_SIZE(stride) != PyTuple_GET_SIZE(shape)) {
        *py = 1;
        return NULL;
    }
    Py_ssize_t ndim = PyTuple_GET_SIZE(shape);
    int64_t dims[16];
    int small = ndim <= 8;
    if (small)
        for (Py_ssize_t d = 0; d < ndim; d++) {
            dims[d] = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
            dims[ndim + d] = PyLong_AsLongLong(PyTuple_GET_ITEM(stride, d));
        }
    if (PyErr_Occurred())
        return NULL;
    if (is_cpu) {
        PyObject *nat = need(c->hd, s_native);
        if (!nat)
            return NULL;
        if (PyObject_IsTrue(nat)) {
            PyObject *chk = need(c->hd, s_native_checked);
            if (!chk)
                return NULL;
            if (!PyObject_IsTrue(chk) || (!contig && (nbytes > BP_REC_STRIDED_MAX || !small))) {
                *py = 1; /* the first CPU tensor (the self-test), or copied first */
                return NULL;
            }
            uint64_t h = contig ? bp_torch_hash((const void *)ptr, (uint64_t)nbytes)
                                : bp_torch_hash_strided((const char *)ptr, es, (int)ndim, dims);
            return PyLong_FromUnsignedLongLong(h);
        }
    }
    PyObject *kinds = need(c->hd, s_kinds);
    if (!kinds)
        return NULL;
    PyObject *kind = PyDict_GetItemWithError(kinds, dn);
    if (!kind) {
        if (PyErr_Occurred())
            return NULL;
        *py = 1; /* the first tensor on this device */
        return NULL;
    }
    PyObject *h = PyTuple_Check(kind) && PyTuple_GET_SIZE(kind) == 2 ? PyTuple_GET_ITEM(kind, 1)
                                                                      : Py_None;
    bp_cuda_reg *r = NULL;
    for (int k = 0; k < c->ncuda; k++)
        if (c->cuda[k].h == h)
            r = &c->cuda[k];
    if (!r) {
        *py = 1; /* torch ops, or a hasher not registered */
        return NULL;
    }
    PyObject *usedo = need(r->hdict, s_used);
    if (!usedo)
        return NULL;
    long used = PyLong_AsLong(usedo);
    if (used == -1 && PyErr_Occurred())
        return NULL;
    PyObject *hh = c_launch(c, r, h, t, ptr, contig, small, ndim, dims, es, nbytes, used, py,
                            launch_rc);
    return hh;
}

/* Whether a strided tensor's ndim sizes and strides (dims, as c_hash
 * holds them) fit a batch's struct bp_sdesc. */
static int fits_sdesc(Py_ssize_t ndim, const int64_t *dims)
{
    for (Py_ssize_t j = 0; j < 2 * ndim; j++)
        if (dims[j] < INT32_MIN || dims[j] > INT32_MAX)
            return 0;
    return 1;
}

/* c_hash's launch on CUDA hasher r (h) of tensor t: the kernel into slot
 * `used`, now or in r's batch (a small tensor, contiguous or strided,
 * whose storage is small too). */
static PyObject *c_launch(Core *c, bp_cuda_reg *r, PyObject *h, PyObject *t, uintptr_t ptr,
                          int contig, int small, Py_ssize_t ndim, const int64_t *dims,
                          long long es, long long nbytes, long used, int *py, int *launch_rc)
{
    int strided = !contig;
    if (used >= r->slots ||
        (contig && nbytes && (ptr & 3)) || /* cloned to an aligned copy first */
        (strided && (!r->sfunc || !small || (ptr & ((es < 4 ? es : 4) - 1))))) {
        *py = 1;
        return NULL;
    }
    /* A batch holds the tensor's storage, not the tensor: a tensor object
     * kept alive makes PyTorch add a detach to a factory's result
     * (torch.arange), an op the ledger would show. */
    PyObject *st = NULL;
    if (nbytes && r->bfunc && nbytes <= BP_BATCH_BYTES && (!strided || fits_sdesc(ndim, dims))) {
        st = meth0(t, c->storage);
        PyObject *sz = st ? meth0(st, s_nbytes) : NULL;
        long long n = sz ? PyLong_AsLongLong(sz) : -1;
        Py_XDECREF(sz);
        if (PyErr_Occurred()) {
            Py_XDECREF(st);
            return NULL;
        }
        if (n > BP_BATCH_HELD) /* a small view of a large tensor: launched now */
            Py_CLEAR(st);
    }
    if (!st) { /* launched now, in the current context, which must be r's device's (a
                * batch pushes its context itself) */
        PyObject *cur = PyObject_CallNoArgs(r->current);
        long ci = cur ? PyLong_AsLong(cur) : -1;
        Py_XDECREF(cur);
        if (ci == -1 && PyErr_Occurred())
            return NULL;
        if (ci != r->index) { /* another current device: hash_plain switches */
            *py = 1;
            return NULL;
        }
    }
    PyObject *nu = PyLong_FromLong(used + 1);
    if (!nu || PyDict_SetItem(r->hdict, s_used, nu) < 0) {
        Py_XDECREF(nu);
        Py_XDECREF(st);
        return NULL;
    }
    Py_DECREF(nu);
    if (nbytes) {
        int err;
        void *stream = cur_stream(r, &err);
        if (err) {
            Py_XDECREF(st);
            return NULL;
        }
        void *p = (void *)ptr;
        uint64_t out = r->base + 8 * (uint64_t)used;
        int rc;
        if (r->bfunc && r->batch.n && stream != r->bstream && /* another stream: the batch first */
            (rc = batch_flush(r, stream))) {
            Py_XDECREF(st);
            return batch_lost(r, rc);
        }
        if (st) {
            PyObject *held = need(r->hdict, s_held);
            int bad = !held || PyList_Append(held, st) < 0;
            Py_DECREF(st);
            if (bad)
                return NULL;
            uint64_t *e = r->batch.e + 3 * r->batch.n++;
            e[0] = (uint64_t)ptr;
            e[1] = (uint64_t)nbytes;
            e[2] = out;
            if (strided) {
                struct bp_sdesc *sd = &r->batch.s[r->ns];
                sd->ndim = (int32_t)ndim;
                sd->elsize = (int32_t)es;
                for (Py_ssize_t j = 0; j < 2 * ndim; j++)
                    sd->d[j] = (int32_t)dims[j];
                e[1] = BP_STRIDED | (uint64_t)r->ns++;
                c->n_strided++;
                c->n_sbatched++;
            } else
                c->n_contig++;
            r->bstream = stream;
            rc = r->batch.n == BP_BATCH || r->ns == BP_SBATCH ? batch_flush(r, stream) : 0;
            if (rc)
                return batch_lost(r, rc);
        } else if (strided) {
            rc = launch_strided(r, p, (int)ndim, es, dims, nbytes, out, stream);
            c->n_strided++;
        } else {
            rc = launch_contig(r, p, nbytes, out, stream);
            c->n_contig++;
        }
        if (rc) {
            *launch_rc = strided ? -rc : rc;
            return NULL;
        }
    }
    PyObject *nb = PyLong_FromLongLong(nbytes), *slot = PyLong_FromLong(used);
    PyObject *hh = NULL;
    if (nb && slot) {
        PyObject *v[5] = {Py_None, nb, Py_None, h, slot}; /* s nbytes value src slot */
        hh = untrack(new_slots(c->hash_t, c->h_slot, v, 5));
    }
    Py_XDECREF(nb);
    Py_XDECREF(slot);
    if (!hh)
        return NULL;
    PyObject *pending = need(c->hd, s_pending);
    if (!pending || PyList_Append(pending, hh) < 0) {
        Py_DECREF(hh);
        return NULL;
    }
    return hh;
}

/* A tensor's element count and contiguity from its sizes and strides
 * (tuples of ints), as c10 computes them; -1 where they are not plain
 * tuples of ints or the count overflows (then Python asks the tensor). */
static int shape_facts(PyObject *shape, PyObject *stride, long long *numel, int *contig)
{
    if (!PyTuple_Check(shape) || !PyTuple_Check(stride) ||
        PyTuple_GET_SIZE(shape) != PyTuple_GET_SIZE(stride))
        return -1;
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    long long n = 1, expect = 1;
    int c = 1;
    for (Py_ssize_t d = nd - 1; d >= 0; d--) {
        long long sz = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
        long long st = PyLong_AsLongLong(PyTuple_GET_ITEM(stride, d));
        if ((sz == -1 || st == -1) && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (sz < 0 || (sz && n > LLONG_MAX / sz))
            return -1;
        n *= sz;
        if (sz != 1 && c) {
            if (st == expect && (!sz || expect <= LLONG_MAX / sz))
                expect *= sz;
            else
                c = 0;
        }
    }
    *numel = n;
    *contig = c || n == 0;
    return 0;
}

/* t's entry, as Recorder._entry(t, None, fresh) makes it, with the same
 * cache entries; epoch: the recorder's.  A new reference, or NULL. */
static PyObject *c_entry(Core *c, PyObject *t, PyObject *epoch, int fresh)
{
    PyObject *ver = NULL, *id = NULL, *ptro = NULL, *dt = NULL, *o = NULL, *stride = NULL,
             *shape = NULL, *meta = NULL, *key = NULL, *e = NULL, *nb = NULL,
             *hash = NULL, *vf = NULL, *wr = NULL, *tup = NULL, *dn;
    int contig, rc;
    ver = PyObject_GetAttr(t, s_version);
    if (!ver) { /* inference tensors have no version counter */
        PyErr_Clear();
        return py_entry(c, t, Py_None, fresh);
    }
    id = PyLong_FromVoidPtr(t);
    if (!id)
        goto fail;
    if (!fresh) {
        PyObject *hit = PyDict_GetItemWithError(c->cache, id);
        if (!hit && PyErr_Occurred())
            goto fail;
        if (hit && PyTuple_Check(hit) && PyTuple_GET_SIZE(hit) == 5) {
            rc = int_eq(PyTuple_GET_ITEM(hit, 1), ver);
            if (rc > 0)
                rc = int_eq(PyTuple_GET_ITEM(hit, 3), epoch);
            if (rc > 0)
                rc = PyWeakref_GetObject(PyTuple_GET_ITEM(hit, 0)) == t;
            if (rc > 0) {
                ptro = meth0(t, s_data_ptr);
                if (!ptro)
                    goto fail;
                rc = int_eq(PyTuple_GET_ITEM(hit, 2), ptro);
                Py_CLEAR(ptro);
            }
            if (rc < 0)
                goto fail;
            if (rc) {
                e = PyTuple_GET_ITEM(hit, 4);
                Py_INCREF(e);
                goto done;
            }
        }
    }
    /* what the entry needs, each asked once; anything uncommon: Python */
    dt = PyObject_GetAttr(t, s_dtype);
    if (!dt)
        goto fail;
    PyObject *info = PyDict_GetItemWithError(c->dtinfo, dt);
    if (!info) {
        if (PyErr_Occurred())
            goto fail;
        goto python;
    }
    if (!PyTuple_Check(info) || PyTuple_GET_SIZE(info) != 3)
        goto python;
    long long es = PyLong_AsLongLong(PyTuple_GET_ITEM(info, 1));
    if (es == -1 && PyErr_Occurred())
        goto fail;
    o = PyObject_GetAttr(t, s_is_cuda);
    if (!o)
        goto fail;
    if (o == Py_True) {
        Py_CLEAR(o);
        o = meth0(t, s_get_device);
        if (!o)
            goto fail;
        dn = PyDict_GetItemWithError(c->cuda_names, o);
        if (!dn) {
            if (PyErr_Occurred())
                goto fail;
            goto python;
        }
    } else {
        Py_CLEAR(o);
        o = PyObject_GetAttr(t, s_is_cpu);
        if (!o)
            goto fail;
        if (o != Py_True)
            goto python;
        dn = s_cpu;
    }
    Py_CLEAR(o);
    o = PyObject_GetAttr(t, s_layout);
    if (!o)
        goto fail;
    if (o != c->strided)
        goto python;
    Py_CLEAR(o);
    if (c->has_neg) {
        o = meth0(t, s_is_neg);
        if (!o)
            goto fail;
        if (o != Py_False)
            goto python;
        Py_CLEAR(o);
    }
    if (PyTuple_GET_ITEM(info, 2) == Py_True) {
        o = meth0(t, s_is_conj);
        if (!o)
            goto fail;
        if (o != Py_False)
            goto python;
        Py_CLEAR(o);
    }
    stride = meth0(t, s_stride);
    if (!stride)
        goto fail;
    shape = PyObject_GetAttr(t, s_shape);
    if (!shape)
        goto fail;
    /* numel() and is_contiguous() from the sizes and strides, as c10
     * computes them (_compute_contiguous: dims of size 1 skipped, an
     * empty tensor contiguous): two calls fewer per tensor */
    long long n;
    if (shape_facts(shape, stride, &n, &contig) < 0)
        goto python;
    long long nbytes = n * es;
    ptro = meth0(t, s_data_ptr);
    if (!ptro) { /* no storage to point at */
        PyErr_Clear();
        goto python;
    }
    uintptr_t ptr = (uintptr_t)PyLong_AsUnsignedLongLong(ptro);
    if (PyErr_Occurred())
        goto fail;
    nb = PyLong_FromLongLong(nbytes);
    if (!nb)
        goto fail;
    meta = untrack(PyTuple_Pack(5, PyTuple_GET_ITEM(info, 0), untrack(shape), untrack(stride),
                                dn, nb));
    if (!meta)
        goto fail;
    key = untrack(contig ? PyTuple_Pack(3, ptro, nb, dn)
                         : PyTuple_Pack(5, ptro, PyTuple_GET_ITEM(info, 0), shape, stride, dn));
    if (!key)
        goto fail;
    if (!fresh) {
        PyObject *hit = PyDict_GetItemWithError(c->bcache, key);
        if (!hit && PyErr_Occurred())
            goto fail;
        if (hit && PyTuple_Check(hit) && PyTuple_GET_SIZE(hit) == 4 &&
            (rc = int_eq(PyTuple_GET_ITEM(hit, 2), epoch)) != 0) {
            if (rc < 0)
                goto fail;
            PyObject *src = PyWeakref_GetObject(PyTuple_GET_ITEM(hit, 0));
            if (src != Py_None) {
                Py_INCREF(src);
                o = PyObject_GetAttr(src, s_version);
                Py_DECREF(src);
                if (!o)
                    goto fail;
                rc = int_eq(o, PyTuple_GET_ITEM(hit, 1));
                Py_CLEAR(o);
                if (rc < 0)
                    goto fail;
                if (rc) {
                    PyObject *h = PyTuple_GET_ITEM(hit, 3);
                    e = new_entry(c, meta, h, h != Py_None ? Py_None : s_uninitialized);
                    if (!e)
                        goto fail;
                    Py_CLEAR(key); /* (there already) */
                }
            }
        }
    }
    if (!e) {
        int py, launch_rc;
        hash = c_hash(c, t, dn, ptr, contig, shape, stride, es, nbytes, &py, &launch_rc);
        if (!hash && py) { /* Hasher.hash_plain(t, ptr, contig, meta, es) */
            PyObject *eso = PyLong_FromLongLong(es);
            if (!eso)
                goto fail;
            PyObject *args[6] = {c->hasher, t, ptro, contig ? Py_True : Py_False, meta, eso};
            hash = PyObject_VectorcallMethod(s_hash_plain, args, 6, NULL);
            Py_DECREF(eso);
        }
        if (hash) {
            e = new_entry(c, meta, hash, Py_None);
        } else {
            PyObject *why;
            if (launch_rc)
                why = PyUnicode_FromFormat("not hashed: cuLaunchKernel%s: CUDA error %d",
                                           launch_rc < 0 ? " (strided)" : "",
                                           launch_rc < 0 ? -launch_rc : launch_rc);
            else { /* as _entry words a hash that raised */
                PyObject *ev = exc_take();
                if (!ev || !PyErr_GivenExceptionMatches(ev, PyExc_Exception)) {
                    exc_put(ev); /* KeyboardInterrupt and kin go on */
                    goto fail;
                }
                why = PyObject_CallOneArg(c->not_hashed, ev);
                Py_DECREF(ev);
            }
            if (!why)
                goto fail;
            e = new_entry(c, meta, Py_None, why);
            Py_DECREF(why);
            Py_CLEAR(key);
        }
        if (!e)
            goto fail;
    }
    /* into the caches (no callback on the weak reference, as _entry) */
    if (PyDict_Size(c->cache) > BP_REC_CACHE_MAX)
        PyDict_Clear(c->cache);
    wr = untrack(PyWeakref_NewRef(t, NULL));
    if (!wr) {
        PyErr_Clear();
        goto done;
    }
    vf = fresh ? PyNumber_Add(ver, ONE) : (Py_INCREF(ver), ver);
    if (!vf)
        goto fail;
    tup = untrack(PyTuple_Pack(5, wr, vf, ptro, epoch, e));
    if (!tup || PyDict_SetItem(c->cache, id, tup) < 0)
        goto fail;
    Py_CLEAR(tup);
    if (key) {
        if (PyDict_Size(c->bcache) > BP_REC_CACHE_MAX)
            PyDict_Clear(c->bcache);
        PyObject *h = hash ? hash : Py_None; /* e.hash */
        tup = untrack(PyTuple_Pack(4, wr, vf, epoch, h));
        if (!tup || PyDict_SetItem(c->bcache, key, tup) < 0)
            goto fail;
    }
    goto done;
python:
    PyErr_Clear();
    Py_XDECREF(e);
    e = py_entry(c, t, Py_None, fresh);
    goto done;
fail:
    Py_CLEAR(e);
done:
    Py_XDECREF(ver);
    Py_XDECREF(id);
    Py_XDECREF(ptro);
    Py_XDECREF(dt);
    Py_XDECREF(o);
    Py_XDECREF(stride);
    Py_XDECREF(shape);
    Py_XDECREF(meta);
    Py_XDECREF(key);
    Py_XDECREF(nb);
    Py_XDECREF(hash);
    Py_XDECREF(vf);
    Py_XDECREF(wr);
    Py_XDECREF(tup);
    return e;
}

/* --- the arguments ------------------------------------------------------ */

static int is_exact_tensor(Core *c, PyObject *a)
{
    return (PyObject *)Py_TYPE(a) == c->tensor_t || (PyObject *)Py_TYPE(a) == c->param_t;
}

/* {"t": k}: the shared reference object where there is one. */
static PyObject *tref(Core *c, Py_ssize_t k)
{
    if (k < PyList_GET_SIZE(c->trefs)) {
        PyObject *r = PyList_GET_ITEM(c->trefs, k);
        Py_INCREF(r);
        return r;
    }
    PyObject *d = PyDict_New(), *ko = PyLong_FromSsize_t(k);
    if (!d || !ko || PyDict_SetItemString(d, "t", ko) < 0) {
        Py_XDECREF(d);
        d = NULL;
    }
    Py_XDECREF(ko);
    return d;
}

/* Recorder._encode(v, ins): the common exact types here, the rest by it. */
static PyObject *encode(Core *c, PyObject *v, PyObject *ins)
{
    PyTypeObject *tp = Py_TYPE(v);
    if (tp == &PyLong_Type) {
        int over;
        PyLong_AsLongLongAndOverflow(v, &over);
        if (!over) {
            Py_INCREF(v);
            return v;
        }
    } else if (tp == &PyFloat_Type) {
        double d = PyFloat_AS_DOUBLE(v);
        if (d == d && d - d == 0) { /* finite */
            Py_INCREF(v);
            return v;
        }
    } else if (v == Py_None || tp == &PyBool_Type || tp == &PyUnicode_Type) {
        Py_INCREF(v);
        return v;
    } else if (is_exact_tensor(c, v)) {
        PyObject *r = tref(c, PyList_GET_SIZE(ins));
        if (r && PyList_Append(ins, v) < 0)
            Py_CLEAR(r);
        return r;
    } else if (tp == &PyList_Type || tp == &PyTuple_Type) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        PyObject *l = untrack(PyList_New(n));
        if (!l)
            return NULL;
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *x = encode(c, PySequence_Fast_GET_ITEM(v, k), ins);
            if (!x) {
                Py_DECREF(l);
                return NULL;
            }
            PyList_SET_ITEM(l, k, x);
        }
        return l;
    }
    PyObject *args[3] = {c->rec, v, ins};
    return PyObject_VectorcallMethod(s__encode, args, 3, NULL);
}

/* --- the op ------------------------------------------------------------- */

static int lock_take(Core *c, int wait)
{
    PyObject *r = wait ? PyObject_CallNoArgs(c->acquire) : PyObject_CallOneArg(c->acquire, Py_False);
    if (!r)
        return -1;
    int got = r == Py_True;
    Py_DECREF(r);
    return got;
}

static int lock_give(Core *c)
{
    PyObject *r = PyObject_CallNoArgs(c->release);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

/* Releases the lock keeping a pending exception. */
static void lock_give_keep(Core *c)
{
    PyObject *ev = exc_take();
    if (lock_give(c) < 0)
        PyErr_Clear();
    exc_put(ev);
}

/* Entries of tensors (a list) into a new list. */
static PyObject *entries(Core *c, PyObject *ts, PyObject *epoch, int fresh, int overwrites)
{
    Py_ssize_t n = PyList_GET_SIZE(ts);
    PyObject *l = untrack(PyList_New(n));
    if (!l)
        return NULL;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *t = PyList_GET_ITEM(ts, k);
        PyObject *e = k == 0 && overwrites ? py_entry(c, t, s_overwritten, 0)
                                           : c_entry(c, t, epoch, fresh);
        if (!e) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, k, e);
    }
    return l;
}

/* dispatch(func, args, kwargs): Recorder.__torch_dispatch__'s work, the
 * op's result; or SLOW, before anything is done, for the Python path. */
static PyObject *Core_dispatch(Core *c, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc != 3) {
        PyErr_SetString(PyExc_TypeError, "dispatch(func, args, kwargs)");
        return NULL;
    }
    PyObject *func = argv[0], *args = argv[1], *kwargs = argv[2];
    if (!PyTuple_Check(args) || (kwargs != Py_None && !PyDict_Check(kwargs)))
        return Py_NewRef(SLOW);
    if (kwargs != Py_None && !PyDict_GET_SIZE(kwargs))
        kwargs = Py_None;
    PyObject *id = PyLong_FromVoidPtr(func);
    if (!id)
        return NULL;
    PyObject *info = PyDict_GetItemWithError(c->ops, id);
    Py_DECREF(id);
    if (!info) /* the op's first time: _op_info in Python */
        return PyErr_Occurred() ? NULL : Py_NewRef(SLOW);
    if (!PyTuple_Check(info) || PyTuple_GET_SIZE(info) != 6)
        return Py_NewRef(SLOW);
    PyObject *capt = need(c->rd, s_capturing), *dvd = need(c->rd, s_diverged),
             *dvg = need(c->rd, s_diverging);
    if (!capt || !dvd || !dvg)
        return NULL;
    int slow = PyObject_IsTrue(capt);
    if (!slow)
        slow = PyObject_RichCompareBool(dvd, dvg, Py_LT);
    if (slow)
        return slow < 0 ? NULL : Py_NewRef(SLOW);
    int got = lock_take(c, 0);
    if (got <= 0) /* another thread is recording: Python waits for it */
        return got < 0 ? NULL : Py_NewRef(SLOW);
    PyObject *call = PyTuple_GET_ITEM(info, 0), *name_json = PyTuple_GET_ITEM(info, 2);
    int mutates = PyObject_IsTrue(PyTuple_GET_ITEM(info, 3));
    int uninit = PyObject_IsTrue(PyTuple_GET_ITEM(info, 4));
    int overwrites = PyObject_IsTrue(PyTuple_GET_ITEM(info, 5));
    PyObject *ins = NULL, *enc = NULL, *in_e = NULL, *out = NULL, *outs = NULL, *out_e = NULL,
             *ret = NULL, *rec = NULL, *seq1 = NULL, *enc_kw = NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    int only_tensors = 1;
    ins = PyList_New(0);
    enc = untrack(PyList_New(n));
    if (!ins || !enc)
        goto fail_locked;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *a = PyTuple_GET_ITEM(args, k);
        if (!is_exact_tensor(c, a))
            only_tensors = 0;
        PyObject *x = encode(c, a, ins);
        if (!x)
            goto fail_locked;
        PyList_SET_ITEM(enc, k, x);
    }
    Py_ssize_t nin = PyList_GET_SIZE(ins);
    if (kwargs != Py_None) { /* keyword arguments that hold no tensor (else: Python) */
        PyObject *k, *v;
        Py_ssize_t pos = 0;
        enc_kw = untrack(PyDict_New());
        if (!enc_kw)
            goto fail_locked;
        while (PyDict_Next(kwargs, &pos, &k, &v)) {
            PyObject *x = encode(c, v, ins);
            if (!x || PyDict_SetItem(enc_kw, k, x) < 0) {
                Py_XDECREF(x);
                goto fail_locked;
            }
            Py_DECREF(x);
        }
        if (PyList_GET_SIZE(ins) != nin) { /* out= and kin: Python's path, nothing done yet */
            if (lock_give(c) < 0)
                goto fail;
            Py_DECREF(ins);
            Py_DECREF(enc);
            Py_DECREF(enc_kw);
            return Py_NewRef(SLOW);
        }
    }
    if (only_tensors && nin < PyList_GET_SIZE(c->targs)) {
        Py_SETREF(enc, Py_NewRef(PyList_GET_ITEM(c->targs, nin))); /* their JSON already */
    }
    PyObject *epoch = need(c->rd, s_epoch);
    if (!epoch)
        goto fail_locked;
    Py_INCREF(epoch);
    in_e = entries(c, ins, epoch, 0, overwrites && nin);
    Py_DECREF(epoch);
    if (!in_e)
        goto fail_locked;
    if (mutates && flush_all(c) < 0) /* the hashes waiting in batches read the bytes first */
        goto fail_locked;
    if (lock_give(c) < 0)
        goto fail;
    out = PyObject_Call(call, args, kwargs != Py_None ? kwargs : NULL);
    if (!out)
        goto fail;
    if (lock_take(c, 1) < 0)
        goto fail;
    epoch = need(c->rd, s_epoch);
    if (!epoch)
        goto fail_locked;
    if (mutates) {
        epoch = PyNumber_Add(epoch, ONE);
        if (!epoch || PyDict_SetItem(c->rd, s_epoch, epoch) < 0) {
            Py_XDECREF(epoch);
            goto fail_locked;
        }
    } else
        Py_INCREF(epoch);
    ret = Py_NewRef(c->no_ret);
    if (PyObject_TypeCheck(out, (PyTypeObject *)c->tensor_t)) {
        outs = PyList_New(1);
        if (outs)
            PyList_SET_ITEM(outs, 0, Py_NewRef(out));
    } else {
        PyObject *a2[2] = {c->rec, out};
        outs = PyObject_VectorcallMethod(s__flatten_out, a2, 2, NULL);
        if (outs && !PyList_Check(outs))
            Py_SETREF(outs, PySequence_List(outs));
        if (outs && !PyList_GET_SIZE(outs) && out != Py_None) {
            PyObject *empty = PyList_New(0);
            if (!empty)
                goto fail_epoch;
            PyObject *a3[3] = {c->rec, out, empty};
            Py_SETREF(ret, PyObject_VectorcallMethod(s__encode, a3, 3, NULL));
            Py_DECREF(empty);
            if (!ret)
                goto fail_epoch;
        }
    }
    if (!outs)
        goto fail_epoch;
    if (uninit) {
        Py_ssize_t m = PyList_GET_SIZE(outs);
        out_e = untrack(PyList_New(m));
        for (Py_ssize_t k = 0; out_e && k < m; k++) {
            PyObject *e = py_entry(c, PyList_GET_ITEM(outs, k), s_uninitialized, mutates);
            if (!e)
                Py_CLEAR(out_e);
            else
                PyList_SET_ITEM(out_e, k, e);
        }
    } else
        out_e = entries(c, outs, epoch, mutates, 0);
    Py_DECREF(epoch);
    if (!out_e)
        goto fail_locked;
    PyObject *seq = need(c->rd, s_seq);
    if (!seq)
        goto fail_locked;
    Py_INCREF(seq);
    seq1 = PyNumber_Add(seq, ONE);
    if (!seq1 || PyDict_SetItem(c->rd, s_seq, seq1) < 0) {
        Py_DECREF(seq);
        goto fail_locked;
    }
    PyObject *stack = need(c->rd, s_stack), *mj;
    if (!stack) {
        Py_DECREF(seq);
        goto fail_locked;
    }
    PyObject *m = PyList_Check(stack) && PyList_GET_SIZE(stack)
                      ? PyList_GET_ITEM(stack, PyList_GET_SIZE(stack) - 1) : s_empty;
    mj = PyDict_GetItemWithError(c->modjson, m);
    if (mj && PyObject_IsTrue(mj))
        Py_INCREF(mj);
    else
        mj = PyErr_Occurred() ? NULL : meth0(c->rec, s__module_json);
    if (!mj) {
        Py_DECREF(seq);
        goto fail_locked;
    }
    rec = untrack(PyTuple_New(8));
    if (!rec) {
        Py_DECREF(seq);
        Py_DECREF(mj);
        goto fail_locked;
    }
    PyTuple_SET_ITEM(rec, 0, seq);
    PyTuple_SET_ITEM(rec, 1, Py_NewRef(name_json));
    PyTuple_SET_ITEM(rec, 2, mj);
    PyTuple_SET_ITEM(rec, 3, Py_NewRef(enc));
    PyTuple_SET_ITEM(rec, 4, Py_NewRef(enc_kw ? enc_kw : Py_None));
    PyTuple_SET_ITEM(rec, 5, Py_NewRef(ret));
    PyTuple_SET_ITEM(rec, 6, Py_NewRef(in_e));
    PyTuple_SET_ITEM(rec, 7, Py_NewRef(out_e));
    PyObject *records = need(c->rd, s_records);
    if (!records || PyList_Append(records, rec) < 0)
        goto fail_locked;
    if (PyList_GET_SIZE(records) >= 1024) {
        PyObject *r = meth0(c->rec, s__flush);
        if (!r)
            goto fail_locked;
        Py_DECREF(r);
    }
    if (lock_give(c) < 0)
        goto fail;
    c->n_fast++;
    Py_DECREF(ins);
    Py_DECREF(enc);
    Py_DECREF(in_e);
    Py_DECREF(outs);
    Py_DECREF(out_e);
    Py_DECREF(ret);
    Py_DECREF(rec);
    Py_DECREF(seq1);
    Py_XDECREF(enc_kw);
    return out;
fail_epoch:
    Py_DECREF(epoch);
fail_locked:
    lock_give_keep(c);
fail:
    Py_XDECREF(ins);
    Py_XDECREF(enc);
    Py_XDECREF(in_e);
    Py_XDECREF(out);
    Py_XDECREF(outs);
    Py_XDECREF(out_e);
    Py_XDECREF(ret);
    Py_XDECREF(rec);
    Py_XDECREF(seq1);
    Py_XDECREF(enc_kw);
    return NULL;
}

/* torch_dispatch(mode, func, types, args, kwargs=None): the recorder's
 * __torch_dispatch__ as PyTorch calls it, bound to the recorder as an
 * attribute of its own (bitprobe_torch.Recorder._direct): dispatch's
 * common path with no Python frame between PyTorch and this core; the
 * rest by the class's __torch_dispatch__ (which PyTorch 2 wraps so that
 * torch.compile does not trace it). */
static PyObject *Core_torch_dispatch(Core *c, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc < 4 || argc > 5) {
        PyErr_SetString(PyExc_TypeError, "torch_dispatch(mode, func, types, args, kwargs=None)");
        return NULL;
    }
    PyObject *a3[3] = {argv[1], argv[3], argc == 5 ? argv[4] : Py_None};
    PyObject *out = Core_dispatch(c, a3, 3);
    if (out != SLOW)
        return out;
    Py_DECREF(out);
    return PyObject_Vectorcall(c->py_td, argv, (size_t)argc, NULL);
}

/* add_cuda(hasher, launch, func, sfunc, index, base, max_blocks, slots,
 * current, stream[, bfunc, batch, ctx, sync, push, pop, sbatch]):
 * launches into hasher's slots from here on (in batches with the rest). */
static PyObject *Core_add_cuda(Core *c, PyObject *args)
{
    PyObject *h, *cur, *stream;
    unsigned long long launch, func, sfunc, base, bfunc = 0, ctx = 0, sync = 0, push = 0, pop = 0;
    long index, max_blocks, slots, batch = 0, sbatch = 0;
    if (!PyArg_ParseTuple(args, "OKKKlKllOO|KlKKKKl", &h, &launch, &func, &sfunc, &index, &base,
                          &max_blocks, &slots, &cur, &stream, &bfunc, &batch, &ctx, &sync, &push,
                          &pop, &sbatch))
        return NULL;
    if (c->ncuda == BP_REC_MAX_CUDA)
        Py_RETURN_FALSE; /* Python launches into the others */
    if (!launch || !func || slots <= 0 || max_blocks <= 0) {
        PyErr_SetString(PyExc_ValueError, "add_cuda: no launch function, kernel or slots");
        return NULL;
    }
    PyObject *hdict = PyObject_GenericGetDict(h, NULL);
    if (!hdict)
        return NULL;
    bp_cuda_reg *r = &c->cuda[c->ncuda++];
    r->h = Py_NewRef(h);
    r->hdict = hdict;
    r->current = Py_NewRef(cur);
    r->stream = Py_NewRef(stream);
    r->launch = (bp_launch_fn)(uintptr_t)launch;
    r->func = (void *)(uintptr_t)func;
    r->sfunc = (void *)(uintptr_t)sfunc;
    r->base = base;
    r->index = index;
    r->max_blocks = max_blocks;
    r->slots = slots;
    /* batches where the kernel is there, made for this BP_BATCH and
     * BP_SBATCH (struct bp_batch), with the driver's functions and a list
     * to hold the tensors in; strided tensors in them only where the
     * strided kernel is used (its self-test passed) */
    int held = PyDict_GetItemWithError(hdict, s_held) != NULL;
    if (PyErr_Occurred())
        return NULL;
    r->bfunc = bfunc && batch == BP_BATCH && sbatch == BP_SBATCH && sync && push && pop && held
                   ? (void *)(uintptr_t)bfunc
                   : NULL;
    r->ctx = (void *)(uintptr_t)ctx;
    r->sync = (bp_stream_fn)(uintptr_t)sync;
    r->push = (bp_ctx_push_fn)(uintptr_t)push;
    r->pop = (bp_ctx_pop_fn)(uintptr_t)pop;
    r->batch.n = 0;
    r->ns = 0;
    r->n_batches = 0;
    Py_RETURN_TRUE;
}

/* --- the ledger's lines -------------------------------------------------- */

static PyObject *slot_get(PyObject *descr, PyObject *o)
{
    return Py_TYPE(descr)->tp_descr_get(descr, o, (PyObject *)Py_TYPE(o));
}

/* An entry's JSON, as _Entry.json makes and keeps it: the common case (a
 * hash known, no capture) here, the rest by it. */
static PyObject *entry_json(Core *c, PyObject *e)
{
    PyObject *js = slot_get(c->e_slot[4], e);
    if (!js || js != Py_None)
        return js;
    Py_DECREF(js);
    PyObject *h = slot_get(c->e_slot[1], e), *cap = slot_get(c->e_slot[3], e), *v = NULL;
    if (h && cap && cap == Py_None) {
        if (PyLong_CheckExact(h))
            v = Py_NewRef(h);
        else if (h != Py_None && Py_TYPE(h) == (PyTypeObject *)c->hash_t)
            v = slot_get(c->h_slot[2], h);
    }
    Py_XDECREF(cap);
    Py_XDECREF(h);
    if (!v || !PyLong_CheckExact(v)) {
        Py_XDECREF(v);
        if (PyErr_Occurred())
            return NULL;
        return PyObject_CallMethod(e, "json", NULL);
    }
    unsigned long long x = PyLong_AsUnsignedLongLong(v);
    Py_DECREF(v);
    if (PyErr_Occurred())
        return NULL;
    PyObject *meta = slot_get(c->e_slot[0], e);
    if (!meta)
        return NULL;
    PyObject *head = PyDict_GetItemWithError(c->meta_cache, meta);
    if (head && PyUnicode_Check(head) && PyUnicode_GET_LENGTH(head))
        Py_INCREF(head);
    else
        head = PyErr_Occurred() ? NULL : PyObject_CallOneArg(c->meta_json, meta);
    Py_DECREF(meta);
    if (!head)
        return NULL;
    Py_ssize_t hn;
    js = NULL;
    const char *hu = PyUnicode_AsUTF8AndSize(head, &hn);
    char sbuf_[512], *buf = hu && hn + 24 > (Py_ssize_t)sizeof sbuf_ ? PyMem_Malloc(hn + 24)
                                                                     : sbuf_;
    if (hu && buf) {
        memcpy(buf, hu, (size_t)hn);
        snprintf(buf + hn, 24, "\"%016llx\"}", x);
        js = PyUnicode_DecodeUTF8(buf, hn + 19, NULL);
    } else if (hu)
        PyErr_NoMemory();
    if (buf && buf != sbuf_)
        PyMem_Free(buf);
    Py_DECREF(head);
    if (js && Py_TYPE(c->e_slot[4])->tp_descr_set(c->e_slot[4], e, js) < 0)
        Py_CLEAR(js);
    return js;
}

/* A growing text buffer: the lines of a batch, made into one str. */
typedef struct {
    char *p;
    size_t n, cap;
} sbuf;

static int sb_put(sbuf *b, const char *s, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 1 << 16;
        while (cap < b->n + n)
            cap *= 2;
        char *q = PyMem_Realloc(b->p, cap);
        if (!q) {
            PyErr_NoMemory();
            return -1;
        }
        b->p = q;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

#define SB_LIT(b, lit) sb_put((b), (lit), sizeof(lit) - 1)

/* s (a str, a new reference, or NULL on an error) into b as UTF-8. */
static int sb_str(sbuf *b, PyObject *s)
{
    if (!s)
        return -1;
    Py_ssize_t n;
    const char *u = PyUnicode_Check(s) ? PyUnicode_AsUTF8AndSize(s, &n) : NULL;
    if (!u && !PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "lines: JSON text that is not a str");
    int r = u ? sb_put(b, u, (size_t)n) : -1;
    Py_DECREF(s);
    return r;
}

/* v as _json writes it (compact), where v is made only of what encode()
 * passes through: ints, finite floats, True, False, None, {"t": k} and
 * lists of them; 1 (b as it was) for anything else, -1 on an error. */
static int json_simple(sbuf *b, PyObject *v, int depth)
{
    char num[32];
    if (v == Py_None)
        return SB_LIT(b, "null");
    if (v == Py_True)
        return SB_LIT(b, "true");
    if (v == Py_False)
        return SB_LIT(b, "false");
    if (PyLong_CheckExact(v)) {
        int over;
        long long x = PyLong_AsLongLongAndOverflow(v, &over);
        if (over || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 1;
        }
        return sb_put(b, num, (size_t)snprintf(num, sizeof num, "%lld", x));
    }
    if (PyFloat_CheckExact(v)) { /* float.__repr__, as json writes a finite float */
        double d = PyFloat_AS_DOUBLE(v);
        if (d != d || d - d != 0)
            return 1;
        char *r = PyOS_double_to_string(d, 'r', 0, Py_DTSF_ADD_DOT_0, NULL);
        if (!r)
            return -1;
        int rc = sb_put(b, r, strlen(r));
        PyMem_Free(r);
        return rc;
    }
    if (PyDict_CheckExact(v) && PyDict_GET_SIZE(v) == 1) {
        PyObject *k = PyDict_GetItemString(v, "t");
        if (!k || !PyLong_CheckExact(k))
            return 1;
        size_t n0 = b->n;
        int rc = SB_LIT(b, "{\"t\":");
        if (!rc)
            rc = json_simple(b, k, depth + 1);
        if (!rc)
            rc = SB_LIT(b, "}");
        if (rc > 0)
            b->n = n0;
        return rc;
    }
    if ((PyList_CheckExact(v) || PyTuple_CheckExact(v)) && depth < 16) {
        size_t n0 = b->n;
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        int rc = SB_LIT(b, "[");
        for (Py_ssize_t k = 0; !rc && k < n; k++) {
            if (k)
                rc = SB_LIT(b, ",");
            if (!rc)
                rc = json_simple(b, PySequence_Fast_GET_ITEM(v, k), depth + 1);
        }
        if (!rc)
            rc = SB_LIT(b, "]");
        if (rc > 0)
            b->n = n0;
        return rc;
    }
    return 1;
}

/* v's JSON into b: json_simple's, else _json's. */
static int sb_json(Core *c, sbuf *b, PyObject *v)
{
    int rc = json_simple(b, v, 0);
    return rc <= 0 ? rc : sb_str(b, PyObject_CallOneArg(c->json, v));
}

static int add_entries(Core *c, sbuf *b, PyObject *es)
{
    if (!PyList_Check(es)) {
        PyErr_SetString(PyExc_TypeError, "lines: entries not in a list");
        return -1;
    }
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(es); k++)
        if ((k && SB_LIT(b, ",")) || sb_str(b, entry_json(c, PyList_GET_ITEM(es, k))))
            return -1;
    return 0;
}

/* lines(records): the records' lines as Recorder._flush writes them (their
 * hashes resolved), ASCII bytes. */
static PyObject *Core_lines(Core *c, PyObject *records)
{
    if (!PyList_Check(records)) {
        PyErr_SetString(PyExc_TypeError, "lines(records): a list");
        return NULL;
    }
    sbuf b = {NULL, 0, 0};
    PyObject *r = NULL;
    char num[32];
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(records); i++) {
        PyObject *rec = PyList_GET_ITEM(records, i);
        if (!PyTuple_Check(rec) || PyTuple_GET_SIZE(rec) != 8) {
            PyErr_SetString(PyExc_TypeError, "lines: a record not of 8 items");
            goto out;
        }
        PyObject *args = PyTuple_GET_ITEM(rec, 3), *kw = PyTuple_GET_ITEM(rec, 4),
                 *ret = PyTuple_GET_ITEM(rec, 5);
        long long seq = PyLong_AsLongLong(PyTuple_GET_ITEM(rec, 0));
        if (seq == -1 && PyErr_Occurred())
            goto out;
        int nn = snprintf(num, sizeof num, "%lld", seq);
        if (SB_LIT(&b, "{\"seq\":") || sb_put(&b, num, (size_t)nn) ||
            SB_LIT(&b, ",\"op\":") || sb_str(&b, Py_NewRef(PyTuple_GET_ITEM(rec, 1))) ||
            SB_LIT(&b, ",\"module\":") || sb_str(&b, Py_NewRef(PyTuple_GET_ITEM(rec, 2))) ||
            SB_LIT(&b, ",\"args\":") ||
            (PyUnicode_CheckExact(args) ? sb_str(&b, Py_NewRef(args)) : sb_json(c, &b, args)))
            goto out;
        int has_kw = PyObject_IsTrue(kw);
        if (has_kw < 0 || (has_kw && (SB_LIT(&b, ",\"kwargs\":") ||
                                      sb_str(&b, PyObject_CallOneArg(c->json, kw)))))
            goto out;
        if (ret != c->no_ret && (SB_LIT(&b, ",\"ret\":") ||
                                 sb_str(&b, PyObject_CallOneArg(c->encode, ret))))
            goto out;
        if (SB_LIT(&b, ",\"in\":[") || add_entries(c, &b, PyTuple_GET_ITEM(rec, 6)) ||
            SB_LIT(&b, "],\"out\":[") || add_entries(c, &b, PyTuple_GET_ITEM(rec, 7)) ||
            SB_LIT(&b, "]}\n"))
            goto out;
    }
    r = PyBytes_FromStringAndSize(b.p ? b.p : "", (Py_ssize_t)b.n);
out:
    PyMem_Free(b.p);
    return r;
}

/* fill(pending): Hasher.resolve's loop: each pending _Hash with a source
 * (a CUDA hasher) takes its value from the source's read(), called once
 * per source, and lets the source go; the others (a sum held on the
 * device) are returned, a new list. */
static PyObject *Core_fill(Core *c, PyObject *pending)
{
    if (!PyList_Check(pending)) {
        PyErr_SetString(PyExc_TypeError, "fill(pending): a list");
        return NULL;
    }
    PyObject *rest = PyList_New(0), *read = PyDict_New();
    descrsetfunc set = Py_TYPE(c->h_slot[2])->tp_descr_set;
    for (Py_ssize_t i = 0; rest && read && i < PyList_GET_SIZE(pending); i++) {
        PyObject *h = PyList_GET_ITEM(pending, i), *src = NULL, *vals, *slot = NULL, *v = NULL;
        int rc = -1;
        if (Py_TYPE(h) != (PyTypeObject *)c->hash_t) {
            PyErr_SetString(PyExc_TypeError, "fill: an item not a _Hash");
            goto next;
        }
        src = slot_get(c->h_slot[3], h);
        if (!src)
            goto next;
        if (src == Py_None) {
            rc = PyList_Append(rest, h);
            goto next;
        }
        vals = PyDict_GetItemWithError(read, src);
        if (vals)
            Py_INCREF(vals);
        else if (!PyErr_Occurred()) {
            vals = PyObject_CallMethod(src, "read", NULL);
            if (vals && PyDict_SetItem(read, src, vals) < 0)
                Py_CLEAR(vals);
        }
        if (!vals)
            goto next;
        slot = slot_get(c->h_slot[4], h);
        v = slot ? PyObject_GetItem(vals, slot) : NULL;
        Py_DECREF(vals);
        if (v && set(c->h_slot[2], h, v) == 0)
            rc = set(c->h_slot[3], h, Py_None);
    next:
        Py_XDECREF(src);
        Py_XDECREF(slot);
        Py_XDECREF(v);
        if (rc < 0)
            Py_CLEAR(rest);
    }
    Py_XDECREF(read);
    return rest;
}

/* flush(): the batches launched (flush_all); Python calls it before the
 * slots are read and before its own path runs an op. */
static PyObject *Core_flush(Core *c, PyObject *Py_UNUSED(ignored))
{
    if (flush_all(c) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *Core_stats(Core *c, PyObject *Py_UNUSED(ignored))
{
    long long nb = 0;
    for (int k = 0; k < c->ncuda; k++)
        nb += c->cuda[k].n_batches;
    return Py_BuildValue("{s:L,s:L,s:L,s:L,s:L}", "ops", c->n_fast, "contiguous", c->n_contig,
                         "strided", c->n_strided, "strided_batched", c->n_sbatched, "batches",
                         nb);
}

/* Core(recorder, consts): consts a dict of what the recorder's module
 * holds (see bitprobe_torch._make_core). */
static int Core_init(Core *c, PyObject *args, PyObject *kw)
{
    PyObject *rec, *k;
    if (kw && PyDict_GET_SIZE(kw)) {
        PyErr_SetString(PyExc_TypeError, "Core(recorder, consts)");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "OO!", &rec, &PyDict_Type, &k))
        return -1;
    if (c->rec) {
        PyErr_SetString(PyExc_RuntimeError, "Core: made once");
        return -1;
    }
    c->rec = Py_NewRef(rec);
    if (!(c->rd = PyObject_GenericGetDict(rec, NULL)))
        return -1;
#define TAKE(field, obj, name)                                                              \
    do {                                                                                    \
        if (!(c->field = item(obj, name)))                                                  \
            return -1;                                                                      \
    } while (0)
    TAKE(hasher, c->rd, "hasher");
    if (!(c->hd = PyObject_GenericGetDict(c->hasher, NULL)))
        return -1;
    TAKE(cache, c->rd, "cache");
    TAKE(bcache, c->rd, "bytes_cache");
    TAKE(modjson, c->rd, "modjson");
    TAKE(ops, k, "ops");
    TAKE(entry_t, k, "entry");
    TAKE(hash_t, k, "hash");
    TAKE(dtinfo, k, "dtinfo");
    TAKE(cuda_names, k, "cuda_names");
    TAKE(trefs, k, "trefs");
    TAKE(targs, k, "targs");
    TAKE(tensor_t, k, "tensor");
    TAKE(param_t, k, "parameter");
    TAKE(strided, k, "strided");
    TAKE(no_ret, k, "no_ret");
    TAKE(not_hashed, k, "not_hashed");
    TAKE(json, k, "json");
    TAKE(encode, k, "encode");
    TAKE(meta_json, k, "meta_json");
    TAKE(meta_cache, k, "meta_cache");
    TAKE(py_td, k, "py_dispatch");
    TAKE(storage, k, "storage");
#undef TAKE
    PyObject *has_neg = item(k, "has_neg");
    if (!has_neg)
        return -1;
    c->has_neg = PyObject_IsTrue(has_neg);
    Py_DECREF(has_neg);
    if (!PyType_Check(c->entry_t) || !PyType_Check(c->hash_t) || !PyType_Check(c->tensor_t) ||
        !PyType_Check(c->param_t) || !PyList_Check(c->trefs) || !PyList_Check(c->targs) ||
        !PyDict_Check(c->cache) || !PyDict_Check(c->bcache) || !PyDict_Check(c->ops) ||
        !PyDict_Check(c->modjson) || !PyDict_Check(c->dtinfo) || !PyDict_Check(c->cuda_names) ||
        !PyDict_Check(c->meta_cache)) {
        PyErr_SetString(PyExc_TypeError, "Core: consts of the wrong types");
        return -1;
    }
    static const char *const es[5] = {"meta", "hash", "why", "cap", "js"};
    static const char *const hs[5] = {"s", "nbytes", "value", "src", "slot"};
    for (int i = 0; i < 5; i++) {
        c->e_slot[i] = PyObject_GetAttrString(c->entry_t, es[i]);
        c->h_slot[i] = PyObject_GetAttrString(c->hash_t, hs[i]);
        if (!c->e_slot[i] || !c->h_slot[i])
            return -1;
        if (!Py_TYPE(c->e_slot[i])->tp_descr_set || !Py_TYPE(c->h_slot[i])->tp_descr_set ||
            strcmp(Py_TYPE(c->e_slot[i])->tp_name, "member_descriptor") ||
            strcmp(Py_TYPE(c->h_slot[i])->tp_name, "member_descriptor")) {
            PyErr_SetString(PyExc_TypeError, "Core: _Entry and _Hash need their __slots__");
            return -1;
        }
    }
    PyObject *lock = item(c->rd, "lock");
    if (!lock)
        return -1;
    c->acquire = PyObject_GetAttrString(lock, "acquire");
    c->release = PyObject_GetAttrString(lock, "release");
    Py_DECREF(lock);
    return c->acquire && c->release ? 0 : -1;
}

static int Core_traverse(Core *c, visitproc visit, void *arg)
{
    Py_VISIT(c->rec);
    Py_VISIT(c->rd);
    Py_VISIT(c->hasher);
    Py_VISIT(c->hd);
    for (int k = 0; k < c->ncuda; k++) {
        Py_VISIT(c->cuda[k].h);
        Py_VISIT(c->cuda[k].hdict);
        Py_VISIT(c->cuda[k].current);
        Py_VISIT(c->cuda[k].stream);
    }
    return 0;
}

static int Core_clear(Core *c)
{
    Py_CLEAR(c->rec);
    Py_CLEAR(c->rd);
    Py_CLEAR(c->hasher);
    Py_CLEAR(c->hd);
    Py_CLEAR(c->cache);
    Py_CLEAR(c->bcache);
    Py_CLEAR(c->ops);
    Py_CLEAR(c->modjson);
    Py_CLEAR(c->acquire);
    Py_CLEAR(c->release);
    Py_CLEAR(c->entry_t);
    Py_CLEAR(c->hash_t);
    for (int i = 0; i < 5; i++) {
        Py_CLEAR(c->e_slot[i]);
        Py_CLEAR(c->h_slot[i]);
    }
    Py_CLEAR(c->dtinfo);
    Py_CLEAR(c->cuda_names);
    Py_CLEAR(c->trefs);
    Py_CLEAR(c->targs);
    Py_CLEAR(c->tensor_t);
    Py_CLEAR(c->param_t);
    Py_CLEAR(c->strided);
    Py_CLEAR(c->no_ret);
    Py_CLEAR(c->not_hashed);
    Py_CLEAR(c->json);
    Py_CLEAR(c->encode);
    Py_CLEAR(c->meta_json);
    Py_CLEAR(c->meta_cache);
    Py_CLEAR(c->py_td);
    Py_CLEAR(c->storage);
    for (int k = 0; k < c->ncuda; k++) {
        Py_CLEAR(c->cuda[k].h);
        Py_CLEAR(c->cuda[k].hdict);
        Py_CLEAR(c->cuda[k].current);
        Py_CLEAR(c->cuda[k].stream);
        c->cuda[k].batch.n = 0; /* never launched: the recorder was not closed */
        c->cuda[k].ns = 0;
    }
    c->ncuda = 0;
    return 0;
}

static void Core_dealloc(Core *c)
{
    PyObject_GC_UnTrack(c);
    Core_clear(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyMethodDef Core_methods[] = {
    {"dispatch", (PyCFunction)(void (*)(void))Core_dispatch, METH_FASTCALL,
     "dispatch(func, args, kwargs): the op run and recorded, or SLOW"},
    {"torch_dispatch", (PyCFunction)(void (*)(void))Core_torch_dispatch, METH_FASTCALL,
     "torch_dispatch(mode, func, types, args, kwargs=None): __torch_dispatch__, bound"},
    {"add_cuda", (PyCFunction)Core_add_cuda, METH_VARARGS,
     "add_cuda(hasher, launch, func, sfunc, index, base, max_blocks, slots, current, stream"
     "[, bfunc, batch, ctx, sync, push, pop, sbatch])"},
    {"stats", (PyCFunction)Core_stats, METH_NOARGS, "ops done here and kernel launches"},
    {"lines", (PyCFunction)Core_lines, METH_O, "lines(records): the records' ledger lines, bytes"},
    {"flush", (PyCFunction)Core_flush, METH_NOARGS, "flush(): the waiting batches launched"},
    {"fill", (PyCFunction)Core_fill, METH_O,
     "fill(pending): the hashes read from their CUDA hashers; the rest, a list"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_bitprobe_rec.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A recorder's per-op path: Core(recorder, consts)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_traverse = (traverseproc)Core_traverse,
    .tp_clear = (inquiry)Core_clear,
    .tp_methods = Core_methods,
};

/* hash(address, nbytes), hash_strided(address, elsize, shape, strides):
 * the linked-in host hash, for the self-check. */
static PyObject *m_hash(PyObject *self, PyObject *args)
{
    unsigned long long p, n;
    (void)self;
    if (!PyArg_ParseTuple(args, "KK", &p, &n))
        return NULL;
    return PyLong_FromUnsignedLongLong(bp_torch_hash((const void *)(uintptr_t)p, n));
}

/* finish(address, n): H = fmix64(v) of n 64-bit words at address (a
 * hasher's slots, S + nbytes each, copied to the host), as a list. */
static PyObject *m_finish(PyObject *self, PyObject *args)
{
    unsigned long long p;
    Py_ssize_t n;
    (void)self;
    if (!PyArg_ParseTuple(args, "Kn", &p, &n))
        return NULL;
    PyObject *l = PyList_New(n < 0 ? 0 : n);
    for (Py_ssize_t i = 0; l && i < n; i++) {
        uint64_t v;
        memcpy(&v, (const char *)(uintptr_t)p + 8 * i, 8);
        PyObject *h = PyLong_FromUnsignedLongLong(bp_fmix64(v));
        if (!h)
            Py_CLEAR(l);
        else
            PyList_SET_ITEM(l, i, h);
    }
    return l;
}

static PyMethodDef module_methods[] = {
    {"hash", m_hash, METH_VARARGS, "hash(address, nbytes): the ledger hash of host bytes"},
    {"finish", m_finish, METH_VARARGS,
     "finish(address, n): fmix64 of n 64-bit words of host memory, a list"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_bitprobe_rec",
    "bitprobe_torch's per-op path in C (see python/_bitprobe_rec.c)", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__bitprobe_rec(void)
{
    struct {
        PyObject **p;
        const char *s;
    } names[] = {
        {&s_version, "_version"}, {&s_dtype, "dtype"}, {&s_is_cuda, "is_cuda"},
        {&s_get_device, "get_device"}, {&s_is_cpu, "is_cpu"}, {&s_layout, "layout"},
        {&s_is_neg, "is_neg"}, {&s_is_conj, "is_conj"}, {&s_stride, "stride"},
        {&s_shape, "shape"}, {&s_data_ptr, "data_ptr"},
        {&s_epoch, "epoch"}, {&s_capturing, "capturing"},
        {&s_diverged, "diverged"}, {&s_diverging, "diverging"}, {&s_records, "records"},
        {&s_stack, "stack"}, {&s_seq, "seq"}, {&s_native, "native"},
        {&s_native_checked, "native_checked"}, {&s_kinds, "kinds"}, {&s_pending, "pending"},
        {&s_used, "used"}, {&s_held, "held"}, {&s_lost, "lost"}, {&s_nbytes, "nbytes"},
        {&s__entry, "_entry"}, {&s__encode, "_encode"},
        {&s__flatten_out, "_flatten_out"}, {&s__module_json, "_module_json"},
        {&s__flush, "_flush"}, {&s_hash_plain, "hash_plain"}, {&s_cpu, "cpu"}, {&s_empty, ""},
        {&s_overwritten, "overwritten by the op"}, {&s_uninitialized, "uninitialized"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!(*names[i].p = PyUnicode_InternFromString(names[i].s)))
            return NULL;
    if (PyType_Ready(&CoreType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m)
        return NULL;
    SLOW = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    ONE = PyLong_FromLong(1);
    if (!SLOW || !ONE || PyModule_AddObjectRef(m, "SLOW", SLOW) < 0 ||
        PyModule_AddIntConstant(m, "VERSION", BP_REC_VERSION) < 0 ||
        PyModule_AddObjectRef(m, "Core", (PyObject *)&CoreType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
