/* stablejit._recorder: the lazy recorder's hot path in C (docs/native.md).
 *
 * Recorder.apply and Recorder.apply_scalar (frontend/recorder.py) become these
 * functions, bound as methods. Each does what its Python method does, step for step:
 * take the recorder's lock, find the operands' slots, look the result types up in the
 * primitive's memo of its shape rule, append the tape entry, the user's line and the
 * result types, and make the pending result tensors. Anything else - an operand that is
 * not a value of the current graph, a shape rule not seen before, an op with regions or
 * several results, a number that is not a plain int or float - calls the Python method
 * (or the Python helper of that step), which decides and raises exactly as before.
 *
 * The tape is the same on both paths, entry for entry (tests/host/test_native_recorder.py
 * compares the tapes, the user's lines, the results and the errors).
 *
 * State: what init() is handed (classes, the internal-code memo, Python helpers), set once
 * at import and never written again; a recorder's own state is its instance dict, read
 * and written under its lock as the Python methods do. Not built for free-threaded
 * CPython (its dict and list operations would need critical sections): there the Python
 * path runs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <limits.h>
#include <time.h>

#include "memo.h"
#include "slots.h"
#include "treedef.h"

#ifndef SOURCE_DIGEST /* setup.py defines it: recorder_native.py refuses a stale build */
#define SOURCE_DIGEST "unknown"
#endif

#if PY_VERSION_HEX < 0x030B0000 || defined(Py_GIL_DISABLED)
#define RECORDER_UNSUPPORTED 1 /* PyFrame_GetLasti and PyFloat_Pack8 are 3.11's */
#endif

#ifndef RECORDER_UNSUPPORTED

static PyTypeObject *pending_cls;
static PyObject *code_internal; /* errors._CODE_INTERNAL: code object -> bool */
static PyObject *is_internal;   /* errors.is_internal(code): fills that memo */
static PyObject *scalar_tag;    /* recorder._SCALAR */
static PyObject *empty_attrs;   /* ir.EMPTY_ATTRS */
static PyObject *py_apply, *py_apply_scalar; /* the Python methods (the fallback) */
/* Recorder's own _slot, _add and _results: a subclass that overrides one (GradTape's
 * _slot) takes the Python step for it */
static PyObject *py_slot, *py_add, *py_results;
/* grad's GradTape (grad_tape.py) and its own _slot: its values are this tape's pending
 * values while it records (init_tape) */
static PyTypeObject *tape_cls;
static PyObject *tape_slot, *s_recording;
/* init_params: the device buffer type, recorder.PARAM, Recorder._input and _param (a
 * subclass with its own takes the Python step) */
static PyTypeObject *buffer_cls;
static PyTypeObject *lazy_cls; /* LazyBackend (exactly: subclasses are Python's) */
static PyObject *param_tag, *py_input, *py_param, *s_input, *s_param;

static PyObject *s_ops, *s_slot, *s_add, *s_results, *s_op_bound, *s_flush, *s_inferred,
    *s_infer, *s_dtype, *s_acquire, *s_release, *s_scalar_key;

static TensorSlots T; /* Tensor and its slots' offsets */
static Py_ssize_t p_slot, p_graph, p_buffer;
static PyObject *backends_dict; /* backends module dict: scalar_key for other numbers */



/* ---- the recorder's lock ---------------------------------------------------------------
 * A reentrant lock with threading.RLock's Python methods, whose state C reads directly: the
 * recorder's hot path takes and gives it without a method call (threading.RLock's acquire
 * parses its arguments and reads the clock on every call: ~100 ns of a ~650 ns op).
 *
 * owner, count and waiters change only with the GIL held, so an uncontended take or give
 * is a few field updates: no OS lock at all (on CPython 3.11 even a non-blocking
 * PyThread_acquire_lock_timed reads the monotonic clock: ~9% of a recorded op). The OS
 * lock `wake` is a semaphore that is normally taken: a thread that finds the lock held
 * counts itself in `waiters` and waits on `wake` with the GIL released (so the holder, a
 * flush running its program, is never blocked); a give that leaves the lock free while
 * someone waits gives `wake` once. While anyone waits, a newcomer waits too (no barging
 * past a woken waiter), and a woken waiter takes the lock only if it is still free, else
 * waits again, so an extra wake-up costs a loop, never a lost or doubled lock. */

typedef struct {
    PyObject_HEAD
    PyThread_type_lock wake;
    unsigned long owner; /* PyThread_get_thread_ident() of the holder, while count > 0 */
    unsigned long count;
    unsigned long waiters; /* threads waiting in rl_take */
} RLockObject;

static PyTypeObject RLockType;

static double
monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* take the lock, waiting at most `timeout` seconds (< 0: for ever; 0: not at all): 1 when
 * taken, 0 when not, -1 with an exception (a signal handler raised while waiting) */
static int
rl_take(RLockObject *l, double timeout)
{
    unsigned long me = PyThread_get_thread_ident();
    if (l->count > 0 && l->owner == me) {
        if (l->count == ULONG_MAX) {
            PyErr_SetString(PyExc_OverflowError, "Internal lock count overflowed");
            return -1;
        }
        l->count++;
        return 1;
    }
    if (l->count == 0 && l->waiters == 0) {
        l->owner = me;
        l->count = 1;
        return 1;
    }
    if (timeout == 0)
        return 0;
    double deadline = timeout > 0 ? monotonic_s() + timeout : 0;
    l->waiters++;
    for (;;) {
        PY_TIMEOUT_T us = -1;
        if (timeout > 0) {
            double left = deadline - monotonic_s();
            us = left > 0 ? (PY_TIMEOUT_T)(left * 1e6) : 0;
        }
        PyLockStatus st;
        Py_BEGIN_ALLOW_THREADS
        st = PyThread_acquire_lock_timed(l->wake, us, 1);
        Py_END_ALLOW_THREADS
        if (l->count == 0) { /* free (a give woke us, or came just before a timeout) */
            l->waiters--;
            l->owner = me;
            l->count = 1;
            return 1;
        }
        if (st == PY_LOCK_INTR) {
            if (Py_MakePendingCalls() < 0) { /* (a signal handler raised: as RLock does) */
                l->waiters--;
                return -1;
            }
        }
        else if (st != PY_LOCK_ACQUIRED) { /* timed out while another thread holds it */
            l->waiters--;
            return 0;
        }
        /* woken, but another waiter took it first: wait again */
    }
}

/* give the lock back once; -1 with RuntimeError where this thread does not hold it */
static int
rl_give(RLockObject *l)
{
    if (l->count == 0 || l->owner != PyThread_get_thread_ident()) {
        PyErr_SetString(PyExc_RuntimeError, "cannot release un-acquired lock");
        return -1;
    }
    if (--l->count == 0) {
        l->owner = 0;
        if (l->waiters > 0)
            PyThread_release_lock(l->wake); /* wake one waiter */
    }
    return 0;
}

static PyObject *
rlock_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    if (PyTuple_GET_SIZE(args) || (kwds != NULL && PyDict_GET_SIZE(kwds))) {
        PyErr_SetString(PyExc_TypeError, "RLock() takes no arguments");
        return NULL;
    }
    RLockObject *l = (RLockObject *)type->tp_alloc(type, 0);
    if (l == NULL)
        return NULL;
    l->wake = PyThread_allocate_lock();
    if (l->wake == NULL) {
        Py_DECREF(l);
        PyErr_SetString(PyExc_MemoryError, "cannot allocate lock");
        return NULL;
    }
    PyThread_acquire_lock(l->wake, WAIT_LOCK); /* taken: a waiter blocks until a give */
    return (PyObject *)l;
}

static void
rlock_dealloc(RLockObject *l)
{
    if (l->wake != NULL) {
        PyThread_release_lock(l->wake); /* (freed unlocked: no thread can wait on it now) */
        PyThread_free_lock(l->wake);
    }
    Py_TYPE(l)->tp_free((PyObject *)l);
}

static PyObject *
rlock_acquire(RLockObject *l, PyObject *args, PyObject *kwds)
{
    int blocking = 1;
    double timeout = -1;
    static char *names[] = {"blocking", "timeout", NULL};
    if ((PyTuple_GET_SIZE(args) || kwds) &&
        !PyArg_ParseTupleAndKeywords(args, kwds, "|pd:acquire", names, &blocking, &timeout))
        return NULL;
    if (!blocking && timeout != -1) {
        PyErr_SetString(PyExc_ValueError, "can't specify a timeout for a non-blocking call");
        return NULL;
    }
    if (timeout < 0 && timeout != -1) {
        PyErr_SetString(PyExc_ValueError, "timeout value must be a non-negative number");
        return NULL;
    }
    if (timeout > (double)PY_TIMEOUT_MAX * 1e-6) {
        PyErr_SetString(PyExc_OverflowError, "timeout value is too large");
        return NULL;
    }
    int got = rl_take(l, blocking ? timeout : 0);
    return got < 0 ? NULL : PyBool_FromLong(got);
}

static PyObject *
rlock_enter(RLockObject *l, PyObject *unused)
{
    int got = rl_take(l, -1);
    return got < 0 ? NULL : PyBool_FromLong(got);
}

static PyObject *
rlock_release(RLockObject *l, PyObject *unused)
{
    if (rl_give(l) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
rlock_exit(RLockObject *l, PyObject *args)
{
    return rlock_release(l, NULL);
}

static PyObject *
rlock_is_owned(RLockObject *l, PyObject *unused)
{
    return PyBool_FromLong(l->count > 0 && l->owner == PyThread_get_thread_ident());
}

static PyObject *
rlock_repr(RLockObject *l)
{
    return PyUnicode_FromFormat("<%s %s object owner=%lu count=%lu at %p>",
                                l->count ? "locked" : "unlocked", Py_TYPE(l)->tp_name,
                                l->count ? l->owner : 0UL, l->count, l);
}

static PyMethodDef rlock_methods[] = {
    {"acquire", (PyCFunction)(void (*)(void))rlock_acquire, METH_VARARGS | METH_KEYWORDS,
     "acquire(blocking=True, timeout=-1): take the lock (again, if this thread holds it); "
     "whether it was taken"},
    {"release", (PyCFunction)rlock_release, METH_NOARGS,
     "release(): give the lock back once; RuntimeError if this thread does not hold it"},
    {"__enter__", (PyCFunction)rlock_enter, METH_NOARGS, "acquire()"},
    {"__exit__", (PyCFunction)rlock_exit, METH_VARARGS, "release()"},
    {"_is_owned", (PyCFunction)rlock_is_owned, METH_NOARGS,
     "whether this thread holds the lock (threading.Condition asks)"},
    {NULL},
};

static PyTypeObject RLockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stablejit._recorder.RLock",
    .tp_basicsize = sizeof(RLockObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A reentrant lock, as threading.RLock, that the native recorder takes "
              "without a method call (a recorder's _lock).",
    .tp_new = rlock_new,
    .tp_dealloc = (destructor)rlock_dealloc,
    .tp_repr = (reprfunc)rlock_repr,
    .tp_methods = rlock_methods,
};

/* ---- Pending: a lazy tensor's data ------------------------------------------------- */

/* recorder.Pending where this extension is built: the same three attributes and
 * constructor, made and freed without the cyclic GC (it refers to an int, an int and a
 * device buffer, none of which can refer back) or a Python class's generic dealloc:
 * every recorded op makes one. */
typedef struct {
    PyObject_HEAD
    PyObject *slot, *graph, *buffer;
    PyObject *weakrefs;
} PendingObject;

static PyObject *
pending_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"slot", "graph", NULL};
    PyObject *slot, *graph;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OO:Pending", names, &slot, &graph))
        return NULL;
    PendingObject *p = (PendingObject *)type->tp_alloc(type, 0);
    if (p == NULL)
        return NULL;
    p->slot = Py_NewRef(slot);
    p->graph = Py_NewRef(graph);
    p->buffer = Py_NewRef(Py_None);
    return (PyObject *)p;
}

static void
pending_dealloc(PendingObject *p)
{
    if (p->weakrefs != NULL)
        PyObject_ClearWeakRefs((PyObject *)p);
    Py_CLEAR(p->slot);
    Py_CLEAR(p->graph);
    Py_CLEAR(p->buffer);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyMemberDef pending_members[] = {
    {"slot", T_OBJECT_EX, offsetof(PendingObject, slot), 0, "its slot in the graph"},
    {"graph", T_OBJECT_EX, offsetof(PendingObject, graph), 0, "the graph's number"},
    {"buffer", T_OBJECT_EX, offsetof(PendingObject, buffer), 0,
     "the device buffer once the graph has run, else None"},
    {NULL},
};

static PyTypeObject PendingType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stablejit.recorder.Pending",
    .tp_basicsize = sizeof(PendingObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Pending(slot, graph): a lazy tensor's data (recorder.py).",
    .tp_new = pending_new,
    .tp_dealloc = (destructor)pending_dealloc,
    .tp_members = pending_members,
    .tp_weaklistoffset = offsetof(PendingObject, weakrefs),
};

static int type_info(PyObject *type, PyObject **dtype, PyObject **kind);

/* ---- the recorder's state: its slots, and its instance dict ------------------------- */

static RecorderSlots RS; /* Recorder's per-graph state (init_state) */
#define RSLOT(r, field) SLOT((r)->self, RS.field)

typedef struct {
    PyObject *self;    /* the recorder, a Recorder (borrowed: the caller holds it) */
    PyObject *dict;    /* its __dict__ (a reference held) */
    RLockObject *rl;   /* its lock, where it is ours (a reference held), else NULL and: */
    PyObject *lock;    /* the lock's bound acquire (a reference held) */
    PyObject *release; /* and release */
    int single;        /* an op of one result gives the tensor itself, not its 1-tuple
                        * (set by the operators and binds, which unpack it at once) */
} Rec;

/* Whether cls is a Recorder whose _add and _results are Recorder's (else its own steps
 * are Python's). The answer is kept for two types (a lazy backend and a grad tape) with
 * their version tags: a change to the type or a base gives it a new tag, and CPython
 * never gives a tag twice, so a kept (type, tag) pair cannot answer for another type. */
static struct { PyTypeObject *cls; unsigned int tag; } steps_ok[2];
static int steps_ok_next;

static int
records_in_c(PyTypeObject *cls)
{
    for (int i = 0; i < 2; i++)
        if (steps_ok[i].cls == cls && cls->tp_version_tag != 0 &&
            steps_ok[i].tag == cls->tp_version_tag)
            return 1;
    if (RS.cls == NULL || !PyType_IsSubtype(cls, RS.cls) ||
        _PyType_Lookup(cls, s_add) != py_add || _PyType_Lookup(cls, s_results) != py_results)
        return 0;
    if (cls->tp_version_tag != 0) { /* (set by the lookups above where it can be) */
        steps_ok[steps_ok_next].cls = cls;
        steps_ok[steps_ok_next].tag = cls->tp_version_tag;
        steps_ok_next ^= 1;
    }
    return 1;
}

static int
rec_open(PyObject *self, Rec *r)
{
    if (!records_in_c(Py_TYPE(self)))
        return 0; /* a subclass with its own steps: the Python path */
    PyObject **dp = _PyObject_GetDictPtr(self);
    if (dp == NULL || *dp == NULL || !PyDict_Check(*dp))
        return 0; /* not a plain instance: the Python path */
    r->self = self;
    r->single = 0;
    r->dict = *dp;
    Py_INCREF(r->dict);
    PyObject *own = RSLOT(r, lock);
    if (own != NULL && Py_IS_TYPE(own, &RLockType)) {
        r->rl = (RLockObject *)own;
        Py_INCREF(own);
        r->lock = r->release = NULL;
        if (rl_take(r->rl, -1) > 0)
            return 1;
        Py_DECREF(own);
        Py_DECREF(r->dict);
        return -1;
    }
    r->rl = NULL;
    /* another lock (threading.RLock): its bound acquire and release, which
     * Recorder.__init__ keeps (calling a bound builtin method is one C call, where
     * looking the method up costs as much again) */
    r->lock = PyDict_GetItemWithError(r->dict, s_acquire);
    r->release = r->lock ? PyDict_GetItemWithError(r->dict, s_release) : NULL;
    if (r->release == NULL) {
        Py_DECREF(r->dict);
        return PyErr_Occurred() ? -1 : 0;
    }
    Py_INCREF(r->lock);
    Py_INCREF(r->release);
    PyObject *ok = PyObject_CallNoArgs(r->lock);
    if (ok == NULL) {
        Py_DECREF(r->lock);
        Py_DECREF(r->release);
        Py_DECREF(r->dict);
        return -1;
    }
    Py_DECREF(ok);
    return 1;
}

static void
rec_close(Rec *r)
{
    if (r->rl != NULL) {
        /* (this thread holds it: rl_give cannot fail, and sets no exception) */
        rl_give(r->rl);
        Py_DECREF(r->rl);
        Py_DECREF(r->dict);
        return;
    }
    /* release even while an exception is set (the Python `with` does) */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *ok = PyObject_CallNoArgs(r->release);
    if (ok == NULL)
        PyErr_WriteUnraisable(r->release);
    Py_XDECREF(ok);
    PyErr_Restore(type, value, tb);
    Py_DECREF(r->lock);
    Py_DECREF(r->release);
    Py_DECREF(r->dict);
}

/* a borrowed list slot of the recorder (its offset in RS), or NULL where it is unset or
 * no list (no exception set: the caller takes the Python path) */
static PyObject *
rec_list(Rec *r, Py_ssize_t off)
{
    PyObject *v = SLOT(r->self, off);
    return v != NULL && PyList_CheckExact(v) ? v : NULL;
}

/* ---- steps ------------------------------------------------------------------------- */

/* The parameter slot of tensor t where t's value is already computed or belongs to the
 * graph around a grad tape, as Recorder._slot -> _input -> _param and GradTape._slot do
 * (`tape`: self is a GradTape, which binds a parameter to the tensor, where a Recorder
 * binds it to the buffer). The cases, keyed by what owns the data:
 *   - a tensor of the target device holding a device buffer (a step's data, weights);
 *   - on a Recorder: its own tensor whose value an earlier graph computed (weights that
 *     the previous step of a lazy loop updated);
 *   - on a grad tape: a tensor of a lazy backend of the same device (the graph around
 *     the tape: computed or still pending).
 * -2 where t is none of these (the caller takes the Python step), -1 with an exception
 * on error. */
static Py_ssize_t
input_slot(PyObject *self, Rec *r, PyObject *t, int tape)
{
    PyTypeObject *cls = Py_TYPE(self);
    PyObject *d = SLOT(t, T.data), *tb = SLOT(t, T.backend);
    if (buffer_cls == NULL || d == NULL || tb == NULL ||
        _PyType_Lookup(cls, s_input) != py_input || _PyType_Lookup(cls, s_param) != py_param)
        return -2;
    PyObject *target = RSLOT(r, target);
    if (target == NULL)
        return -2;
    PyObject *value; /* what the graph runs with */
    if (Py_IS_TYPE(d, buffer_cls) && tb == target) {
        value = tape ? t : d;
    }
    else if (Py_IS_TYPE(d, pending_cls) && !tape && tb == self) {
        value = SLOT(d, p_buffer);
        if (value == NULL || value == Py_None)
            return -2; /* (a value of this graph is the hot case; Python says the rest) */
    }
    else if (Py_IS_TYPE(d, pending_cls) && tape && Py_IS_TYPE(tb, lazy_cls)) {
        if (recorder_slot(&RS, tb, RS.target) != target) /* (another device: Python raises) */
            return -2;
        value = t;
    }
    else {
        return -2;
    }
    PyObject *input_of = RSLOT(r, input_of);
    PyObject *keep = input_of ? rec_list(r, RS.keep) : NULL;
    PyObject *tape_list = keep ? rec_list(r, RS.tape) : NULL;
    PyObject *locs = tape_list ? rec_list(r, RS.locs) : NULL;
    PyObject *types = locs ? rec_list(r, RS.types) : NULL;
    PyObject *inputs = types ? rec_list(r, RS.inputs) : NULL;
    if (inputs == NULL || !PyDict_CheckExact(input_of))
        return -2;
    PyObject *key = PyLong_FromVoidPtr(d); /* id(owner) */
    if (key == NULL)
        return -1;
    PyObject *known = PyDict_GetItemWithError(input_of, key);
    if (known != NULL) {
        Py_DECREF(key);
        return PyLong_AsSsize_t(known);
    }
    if (PyErr_Occurred()) {
        Py_DECREF(key);
        return -1;
    }
    /* _param: the entry, no user line, the type, what the graph runs with; then _input's
     * memo and the owner kept alive (ids stay unique until the graph ends) */
    PyObject *type = SLOT(t, T.type);
    Py_ssize_t slot = PyList_GET_SIZE(types);
    PyObject *entry = type ? PyTuple_Pack(2, param_tag, type) : NULL;
    PyObject *s = entry ? PyLong_FromSsize_t(slot) : NULL;
    int bad = s == NULL || PyList_Append(tape_list, entry) < 0 ||
              PyList_Append(locs, Py_None) < 0 || PyList_Append(types, type) < 0 ||
              PyList_Append(inputs, value) < 0 || PyDict_SetItem(input_of, key, s) < 0 ||
              PyList_Append(keep, d) < 0;
    if (type == NULL && !PyErr_Occurred())
        PyErr_SetString(PyExc_AttributeError, "a tensor without its type");
    Py_XDECREF(entry);
    Py_XDECREF(s);
    Py_DECREF(key);
    return bad ? -1 : slot;
}

/* The slot of tensor t in the graph (Recorder._slot's hot case in C, the rest in Python):
 * -1 with an exception on error. */
static Py_ssize_t
slot_of(PyObject *self, Rec *r, PyObject *t)
{
    PyObject *slot_fn = Py_IS_TYPE(t, T.cls) ? _PyType_Lookup(Py_TYPE(self), s_slot)
                                                  : NULL;
    if (slot_fn != NULL && slot_fn == tape_slot && SLOT(t, T.backend) == self) {
        /* GradTape._slot's hot case: a pending value of this tape while it records */
        PyObject *d = SLOT(t, T.data), *s = d ? SLOT(d, p_slot) : NULL;
        PyObject *recording = PyDict_GetItemWithError(r->dict, s_recording);
        if (d != NULL && Py_IS_TYPE(d, pending_cls) && s != NULL && PyLong_CheckExact(s) &&
            recording == Py_True)
            return PyLong_AsSsize_t(s);
        if (PyErr_Occurred())
            return -1;
    }
    if (slot_fn != NULL && slot_fn == py_slot) {
        PyObject *d = SLOT(t, T.data), *b = SLOT(t, T.backend);
        if (d != NULL && Py_IS_TYPE(d, pending_cls) && b == self) {
            PyObject *buf = SLOT(d, p_buffer), *g = SLOT(d, p_graph), *s = SLOT(d, p_slot);
            PyObject *graph = RSLOT(r, graph);
            if (buf == Py_None && g != NULL && s != NULL && graph != NULL && PyLong_CheckExact(s)) {
                int same = PyObject_RichCompareBool(g, graph, Py_EQ);
                if (same < 0)
                    return -1;
                if (same)
                    return PyLong_AsSsize_t(s);
            }
            if (PyErr_Occurred())
                return -1;
        }
    }
    if (slot_fn != NULL && (slot_fn == py_slot || slot_fn == tape_slot)) {
        Py_ssize_t s = input_slot(self, r, t, slot_fn == tape_slot);
        if (s != -2)
            return s;
    }
    PyObject *res = PyObject_CallMethodOneArg(self, s_slot, t);
    if (res == NULL)
        return -1;
    Py_ssize_t s = PyLong_AsSsize_t(res);
    Py_DECREF(res);
    return s;
}

/* errors.is_internal's answers by the code object's address: a dict lookup hashes a code
 * object's fields (its constants tuple too) every time, and every recorded op asks for
 * the frames between it and the user. An entry holds its code object, so the address
 * cannot be reused while it is here (memo.h). */
#define SITE_SETS 64
static struct { PyObject *code; int ours; } site_memo[SITE_SETS * MEMO_WAYS];

/* 1 if code is stablejit's own, 0 if not, -1 on error */
static int
code_is_ours(PyCodeObject *code)
{
    size_t set = memo_set((uintptr_t)code, SITE_SETS);
    int empty = -1;
    for (int w = 0; w < MEMO_WAYS; w++) {
        if (site_memo[set + w].code == (PyObject *)code)
            return site_memo[set + w].ours;
        if (site_memo[set + w].code == NULL && empty < 0)
            empty = w;
    }
    PyObject *internal = PyDict_GetItemWithError(code_internal, (PyObject *)code);
    if (internal != NULL) {
        Py_INCREF(internal);
    }
    else {
        if (PyErr_Occurred())
            return -1;
        internal = PyObject_CallOneArg(is_internal, (PyObject *)code);
        if (internal == NULL)
            return -1;
    }
    int ours = PyObject_IsTrue(internal);
    Py_DECREF(internal);
    if (ours < 0)
        return -1;
    size_t i = memo_victim(set, empty);
    PyObject *old = site_memo[i].code;
    Py_INCREF(code);
    site_memo[i].code = (PyObject *)code;
    site_memo[i].ours = ours;
    Py_XDECREF(old);
    return ours;
}

/* The site (code, offset) of an instruction: one tuple per instruction, memoised by its
 * address and offset (a loop body records the same sites every step; the memo holds the
 * tuple, so the code object's address is not reused while it is a key). New reference. */
#define SITE_TUPLE_SETS 128
static struct { PyObject *code; int lasti; PyObject *site; } site_tuples[SITE_TUPLE_SETS *
                                                                         MEMO_WAYS];

static PyObject *
site_tuple(PyCodeObject *code, int lasti)
{
    size_t set = memo_set((uintptr_t)code ^ ((uint64_t)lasti << 48), SITE_TUPLE_SETS);
    int empty = -1;
    for (int w = 0; w < MEMO_WAYS; w++) {
        if (site_tuples[set + w].code == (PyObject *)code && site_tuples[set + w].lasti == lasti)
            return Py_NewRef(site_tuples[set + w].site);
        if (site_tuples[set + w].site == NULL && empty < 0)
            empty = w;
    }
    PyObject *off = PyLong_FromLong(lasti);
    PyObject *site = off ? PyTuple_Pack(2, (PyObject *)code, off) : NULL;
    Py_XDECREF(off);
    if (site == NULL)
        return NULL;
    size_t i = memo_victim(set, empty);
    PyObject *old = site_tuples[i].site;
    site_tuples[i].code = (PyObject *)code;
    site_tuples[i].lasti = lasti;
    site_tuples[i].site = Py_NewRef(site);
    Py_XDECREF(old);
    return site;
}

/* errors.user_site: (code, offset) of the first frame outside stablejit, or None. */
static PyObject *
user_site(void)
{
    PyFrameObject *f = PyEval_GetFrame();
    Py_XINCREF(f);
    while (f != NULL) {
        PyCodeObject *code = PyFrame_GetCode(f);
        int ours = code_is_ours(code);
        if (ours < 0)
            goto fail;
        if (!ours) {
            /* (the line is computed from the offset when a location is made) */
            PyObject *site = site_tuple(code, PyFrame_GetLasti(f));
            Py_DECREF(code);
            Py_DECREF(f);
            return site;
        }
        Py_DECREF(code);
        PyFrameObject *back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
        continue;
    fail:
        Py_DECREF(code);
        Py_DECREF(f);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* prim.infer(in_types, attrs) where its memo has the answer (a new reference); NULL
 * without an exception when it has not (the caller asks Python). */
static PyObject *
inferred(PyObject *prim, PyObject *in_types, PyObject *attrs)
{
    PyObject *memo = PyObject_GetAttr(prim, s_inferred); /* (a __slots__ member) */
    if (memo == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError))
            PyErr_Clear();
        return NULL;
    }
    PyObject *key = PyDict_CheckExact(memo) ? PyTuple_Pack(2, in_types, attrs) : NULL;
    PyObject *out = key ? PyDict_GetItemWithError(memo, key) : NULL;
    Py_XDECREF(key);
    if (out == NULL || !PyTuple_CheckExact(out))
        out = NULL;
    else
        Py_INCREF(out);
    Py_DECREF(memo);
    return out;
}

/* backends.scalar_key(value, dtype) = (dtype, keys.exact_key(value)); plain floats and
 * ints here, anything else by the Python function. */
/* scalar_key's answers for plain floats by their bits and dtype: a loop records the same
 * constants every iteration, and one key object for them is also compared by identity
 * when a graph's key is looked up. An entry holds its key (memo.h). */
#define SCALAR_SETS 64
static struct { uint64_t bits; PyObject *dtype, *key; } scalar_memo[SCALAR_SETS * MEMO_WAYS];

static PyObject *scalar_key_of(PyObject *value, PyObject *dtype);

static PyObject *
scalar_key(PyObject *value, PyObject *dtype)
{
    if (!PyFloat_CheckExact(value))
        return scalar_key_of(value, dtype);
    double v = PyFloat_AS_DOUBLE(value);
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    size_t set = memo_set(bits ^ (bits >> 32) ^ ((uintptr_t)dtype << 16), SCALAR_SETS);
    int empty = -1;
    for (int w = 0; w < MEMO_WAYS; w++) {
        if (scalar_memo[set + w].key != NULL && scalar_memo[set + w].bits == bits &&
            scalar_memo[set + w].dtype == dtype)
            return Py_NewRef(scalar_memo[set + w].key);
        if (scalar_memo[set + w].key == NULL && empty < 0)
            empty = w;
    }
    PyObject *key = scalar_key_of(value, dtype);
    if (key == NULL)
        return NULL;
    size_t i = memo_victim(set, empty);
    PyObject *old_key = scalar_memo[i].key, *old_dtype = scalar_memo[i].dtype;
    Py_INCREF(key);
    Py_INCREF(dtype);
    scalar_memo[i].bits = bits;
    scalar_memo[i].dtype = dtype;
    scalar_memo[i].key = key;
    Py_XDECREF(old_key);
    Py_XDECREF(old_dtype);
    return key;
}

static PyObject *
scalar_key_of(PyObject *value, PyObject *dtype)
{
    PyObject *inner;
    if (PyFloat_CheckExact(value)) {
        char buf[8];
        if (PyFloat_Pack8(PyFloat_AS_DOUBLE(value), buf, 1) < 0)
            return NULL;
        inner = Py_BuildValue("(Oy#)", (PyObject *)&PyFloat_Type, buf, (Py_ssize_t)8);
    }
    else if (PyLong_CheckExact(value)) {
        inner = PyTuple_Pack(2, (PyObject *)&PyLong_Type, value);
    }
    else {
        PyObject *f = PyDict_GetItemWithError(backends_dict, s_scalar_key);
        if (f == NULL)
            return PyErr_Occurred() ? NULL
                                    : PyErr_Format(PyExc_AttributeError, "scalar_key");
        PyObject *args[2] = {value, dtype};
        return PyObject_Vectorcall(f, args, 2, NULL);
    }
    if (inner == NULL)
        return NULL;
    PyObject *key = PyTuple_Pack(2, dtype, inner);
    Py_DECREF(inner);
    return key;
}


/* Recorder._pending_tensor(slot): a Tensor of a new Pending (slot, graph), its weak
 * reference appended to the graph's `pending` list; a new reference, NULL on error */
static PyObject *
pending_tensor(PyObject *self, PyObject *pending, PyObject *graph, Py_ssize_t slot,
               PyObject *type)
{
    PyObject *n = PyLong_FromSsize_t(slot);
    PyObject *p = n ? pending_cls->tp_alloc(pending_cls, 0) : NULL;
    if (p == NULL) {
        Py_XDECREF(n);
        return NULL;
    }
    SLOT(p, p_slot) = n;
    Py_INCREF(graph);
    SLOT(p, p_graph) = graph;
    Py_INCREF(Py_None);
    SLOT(p, p_buffer) = Py_None;
    if (PyList_Append(pending, p) < 0) { /* (held: live while a tensor holds it too) */
        Py_DECREF(p);
        return NULL;
    }
    PyObject *t = make_tensor(&T, p, self, type, Py_False);
    Py_DECREF(p);
    return t;
}

static PyObject *op_bound_of(PyObject *self);

/* Recorder._results(first, 1): the pending result tensor, the op count, and a flush when
 * the graph is full. Returns the 1-tuple of the tensor, or the tensor where r->single. */
static PyObject *
one_result(PyObject *self, Rec *r, Py_ssize_t first, PyObject *type)
{
    PyObject *pending = rec_list(r, RS.pending);
    PyObject *graph = RSLOT(r, graph);
    if (pending == NULL || graph == NULL) {
        PyObject *n = PyLong_FromSsize_t(first), *one = PyLong_FromLong(1);
        PyObject *res = n && one ? PyObject_CallMethodObjArgs(self, s_results, n, one, NULL)
                                 : NULL;
        Py_XDECREF(n);
        Py_XDECREF(one);
        return res;
    }
    PyObject *res = pending_tensor(self, pending, graph, first, type);
    if (res != NULL && !r->single) {
        PyObject *t = res;
        res = PyTuple_Pack(1, t);
        Py_DECREF(t);
    }
    if (res == NULL)
        return NULL;
    /* self._ops += 1; the bound read at the graph's first op; flush when it is reached */
    long n = slot_count_add(self, RS.ops, 1, "a recorder's _ops");
    if (n < 0)
        goto fail;
    if (n == 1) {
        PyObject *bound = op_bound_of(self);
        if (bound == NULL)
            goto fail;
        Py_XSETREF(RSLOT(r, max_ops), bound);
    }
    PyObject *max_ops = RSLOT(r, max_ops);
    int full = -1;
    if (max_ops != NULL && PyLong_CheckExact(max_ops)) {
        int overflow;
        long m = PyLong_AsLongAndOverflow(max_ops, &overflow);
        if (!(m == -1 && PyErr_Occurred()))
            full = overflow ? overflow < 0 : n >= m;
    }
    else if (max_ops != NULL) { /* (another number: Python compares) */
        PyObject *count = PyLong_FromLong(n);
        full = count ? PyObject_RichCompareBool(count, max_ops, Py_GE) : -1;
        Py_XDECREF(count);
    }
    if (full < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_AttributeError, "_max_ops");
        goto fail;
    }
    if (full) {
        PyObject *ok = PyObject_CallMethodNoArgs(self, s_flush);
        if (ok == NULL)
            goto fail;
        Py_DECREF(ok);
    }
    return res;
fail:
    Py_DECREF(res);
    return NULL;
}

/* append (entry, site, out types) to the tape, as Recorder._add does after its shape rule;
 * returns the first result's slot, -1 on error */
static Py_ssize_t
append_entry(Rec *r, PyObject *entry, PyObject *site, PyObject *out)
{
    PyObject *tape = rec_list(r, RS.tape), *locs = rec_list(r, RS.locs),
             *types = rec_list(r, RS.types);
    if (tape == NULL || locs == NULL || types == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a recorder's tape is not a list");
        return -1;
    }
    Py_ssize_t first = PyList_GET_SIZE(types);
    if (PyList_Append(tape, entry) < 0 || PyList_Append(locs, site) < 0)
        return -1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(out); i++)
        if (PyList_Append(types, PyTuple_GET_ITEM(out, i)) < 0)
            return -1;
    return first;
}

/* ---- result types: the primitive's memo, and ours for attribute-free ops ------------ */

/* Result types of ops without attributes, as the primitive's own memo has them (copied
 * from it), under keys CPython hashes by pointer (Attrs' hash is a Python method, and a
 * tuple key is hashed item by item): one_type[n - 1][prim][t] for n operands all of
 * type t (n = 1, 2: x.tanh(), x + y, x * 2.0), and mixed[(prim, in_types)] otherwise.
 * Pure answers, so any thread may fill them; bounded like the primitive's. */
static PyObject *one_type[2], *mixed_types;
static Py_ssize_t one_type_count;
#define TYPES_MEMO_KEPT 8192

/* the result types of prim on in_types with attrs where a memo has them (a new
 * reference); NULL without an exception where none has (the caller asks Python) */
/* ops with attributes (dot_general, reductions, broadcasts) of one or two operands: the
 * answer by the addresses of (prim, attrs, types), so that the Attrs' hash - a Python
 * method - is not called per op. An entry holds what it names (types are interned, so
 * equal types are one object; an equal Attrs elsewhere only misses; memo.h). */
#define ATTRS_SETS 128
static struct { PyObject *prim, *attrs, *t0, *t1, *out; } attrs_memo[ATTRS_SETS * MEMO_WAYS];

/* the memo's answer for (prim, attrs, t0, t1) (t1 Py_None for one operand): a new
 * reference, or NULL with *set and *empty saying where a miss is filled */
static PyObject *
attrs_memo_get(PyObject *prim, PyObject *attrs, PyObject *t0, PyObject *t1, size_t *set,
               int *empty)
{
    uint64_t h = (uintptr_t)prim ^ ((uint64_t)(uintptr_t)attrs << 13) ^
                 ((uint64_t)(uintptr_t)t0 << 26) ^ ((uint64_t)(uintptr_t)t1 << 39) ^
                 ((uintptr_t)attrs >> 51) ^ ((uintptr_t)t0 >> 38) ^ ((uintptr_t)t1 >> 25);
    *set = memo_set(h, ATTRS_SETS);
    *empty = -1;
    for (int w = 0; w < MEMO_WAYS; w++) {
        size_t j = *set + w;
        if (attrs_memo[j].out != NULL && attrs_memo[j].prim == prim &&
            attrs_memo[j].attrs == attrs && attrs_memo[j].t0 == t0 && attrs_memo[j].t1 == t1)
            return Py_NewRef(attrs_memo[j].out);
        if (attrs_memo[j].out == NULL && *empty < 0)
            *empty = w;
    }
    return NULL;
}

static void
attrs_memo_put(PyObject *prim, PyObject *attrs, PyObject *t0, PyObject *t1, PyObject *out,
               size_t set, int empty)
{
    size_t i = memo_victim(set, empty);
    PyObject *old[5] = {attrs_memo[i].prim, attrs_memo[i].attrs, attrs_memo[i].t0,
                        attrs_memo[i].t1, attrs_memo[i].out};
    Py_INCREF(prim);
    Py_INCREF(attrs);
    Py_INCREF(t0);
    Py_INCREF(t1);
    Py_INCREF(out);
    attrs_memo[i].prim = prim, attrs_memo[i].attrs = attrs, attrs_memo[i].t0 = t0;
    attrs_memo[i].t1 = t1, attrs_memo[i].out = out;
    for (int k = 0; k < 5; k++)
        Py_XDECREF(old[k]);
}

static PyObject *
known_types_with_attrs(PyObject *prim, PyObject *in_types, PyObject *attrs)
{
    Py_ssize_t n = PyTuple_GET_SIZE(in_types);
    if (n < 1 || n > 2)
        return inferred(prim, in_types, attrs);
    PyObject *t0 = PyTuple_GET_ITEM(in_types, 0), *t1 = n == 2 ? PyTuple_GET_ITEM(in_types, 1)
                                                                : Py_None;
    size_t set;
    int empty;
    PyObject *out = attrs_memo_get(prim, attrs, t0, t1, &set, &empty);
    if (out == NULL && (out = inferred(prim, in_types, attrs)) != NULL)
        attrs_memo_put(prim, attrs, t0, t1, out, set, empty);
    return out;
}

/* the memo's result types of prim on n (1 or 2) operands all of type t0 and no attributes
 * (a new reference); NULL without an exception where it has none: a caller with nothing
 * else to ask builds no in_types tuple for a hit */
static PyObject *
known_same_types(PyObject *prim, PyObject *t0, Py_ssize_t n)
{
    /* first the address memo (no hashing), then the dicts, whose hit it keeps */
    PyObject *t1 = n == 2 ? t0 : Py_None;
    size_t set;
    int empty;
    PyObject *out = attrs_memo_get(prim, empty_attrs, t0, t1, &set, &empty);
    if (out != NULL)
        return out;
    PyObject *per_prim = PyDict_GetItemWithError(one_type[n - 1], prim);
    out = per_prim ? PyDict_GetItemWithError(per_prim, t0) : NULL;
    if (out != NULL)
        attrs_memo_put(prim, empty_attrs, t0, t1, out, set, empty);
    return Py_XNewRef(out);
}

static PyObject *
known_types(PyObject *prim, PyObject *in_types, PyObject *attrs)
{
    if (attrs != empty_attrs)
        return known_types_with_attrs(prim, in_types, attrs);
    Py_ssize_t n = PyTuple_GET_SIZE(in_types);
    PyObject *t0 = n ? PyTuple_GET_ITEM(in_types, 0) : NULL;
    int same = n == 1 || (n == 2 && PyTuple_GET_ITEM(in_types, 1) == t0);
    if (same) {
        PyObject *out = known_same_types(prim, t0, n);
        if (out != NULL || PyErr_Occurred())
            return out;
        out = inferred(prim, in_types, attrs);
        if (out == NULL)
            return NULL;
        if (one_type_count >= TYPES_MEMO_KEPT) {
            PyDict_Clear(one_type[0]);
            PyDict_Clear(one_type[1]);
            one_type_count = 0;
        }
        /* (looked up after the shape rule and the clearing: a per-prim dict looked up
         * before them could have been freed by the clearing) */
        PyObject *per_prim = PyDict_GetItemWithError(one_type[n - 1], prim);
        if (per_prim == NULL && PyErr_Occurred()) {
            Py_DECREF(out);
            return NULL;
        }
        if (per_prim == NULL) {
            per_prim = PyDict_New();
            if (per_prim == NULL || PyDict_SetItem(one_type[n - 1], prim, per_prim) < 0) {
                Py_XDECREF(per_prim);
                Py_DECREF(out);
                return NULL;
            }
            Py_DECREF(per_prim); /* (the memo holds it) */
        }
        if (PyDict_SetItem(per_prim, t0, out) < 0) {
            Py_DECREF(out);
            return NULL;
        }
        one_type_count++;
        return out;
    }
    PyObject *key = PyTuple_Pack(2, prim, in_types);
    if (key == NULL)
        return NULL;
    PyObject *out = PyDict_GetItemWithError(mixed_types, key);
    if (out != NULL) {
        Py_INCREF(out);
        Py_DECREF(key);
        return out;
    }
    out = PyErr_Occurred() ? NULL : inferred(prim, in_types, attrs);
    if (out != NULL) {
        if (PyDict_GET_SIZE(mixed_types) >= TYPES_MEMO_KEPT)
            PyDict_Clear(mixed_types);
        if (PyDict_SetItem(mixed_types, key, out) < 0)
            Py_CLEAR(out);
    }
    Py_DECREF(key);
    return out;
}

/* in_types[i] = the tape's type of slot slots[i]; -1 with an exception on error */
static int
slot_types(Rec *r, PyObject *slots, PyObject *in_types)
{
    PyObject *types = rec_list(r, RS.types);
    if (types == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a recorder's _types is not a list");
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(slots); i++) {
        Py_ssize_t s = PyLong_AsSsize_t(PyTuple_GET_ITEM(slots, i));
        if (s < 0 || s >= PyList_GET_SIZE(types)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_IndexError, "a recorder slot out of range");
            return -1;
        }
        PyObject *ty = PyList_GET_ITEM(types, s);
        Py_INCREF(ty);
        PyTuple_SET_ITEM(in_types, i, ty);
    }
    return 0;
}

/* a shape rule not seen before (or one that raises): Recorder._add appends the entry
 * (and decides the error), then the results as Recorder.apply makes them */
static PyObject *
add_in_python(PyObject *self, Rec *r, PyObject *prim, PyObject *slots, PyObject *attrs,
              PyObject *site)
{
    PyObject *first = PyObject_CallMethodObjArgs(self, s_add, prim, slots, attrs, site, NULL);
    if (first == NULL)
        return NULL;
    PyObject *types = rec_list(r, RS.types), *res = NULL;
    Py_ssize_t f = PyLong_AsSsize_t(first);
    Py_ssize_t count = types ? PyList_GET_SIZE(types) - f : -1;
    if (f >= 0 && count == 1) {
        res = one_result(self, r, f, PyList_GET_ITEM(types, f));
    }
    else if (!PyErr_Occurred()) {
        PyObject *c = PyLong_FromSsize_t(count);
        res = c ? PyObject_CallMethodObjArgs(self, s_results, first, c, NULL) : NULL;
        Py_XDECREF(c);
    }
    Py_DECREF(first);
    return res;
}

/* ---- recording ------------------------------------------------------------------------ */

/* Recorder.apply's body for n (1 or 2) tensors and no regions, under the lock: a tuple
 * of the result tensors */
static PyObject *
record_op(PyObject *self, Rec *r, PyObject *prim, PyObject *const *tensors, Py_ssize_t n,
          PyObject *attrs)
{
    PyObject *res = NULL, *slots = NULL, *in_types = NULL, *out = NULL, *site = NULL,
             *entry = NULL;
    slots = PyTuple_New(n);
    in_types = PyTuple_New(n);
    if (slots == NULL || in_types == NULL)
        goto done;
    /* every slot first (Python's _slot may add parameters), then their types, read from
     * the tape as it is then, as Recorder.apply and _add do */
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t s = slot_of(self, r, tensors[i]);
        PyObject *so = s < 0 ? NULL : PyLong_FromSsize_t(s);
        if (so == NULL)
            goto done;
        PyTuple_SET_ITEM(slots, i, so);
    }
    if (slot_types(r, slots, in_types) < 0)
        goto done;
    site = user_site();
    if (site == NULL)
        goto done;
    out = known_types(prim, in_types, attrs);
    if (out == NULL) {
        if (PyErr_Occurred())
            goto done;
        res = add_in_python(self, r, prim, slots, attrs, site);
        goto done;
    }
    entry = PyTuple_Pack(3, prim, attrs, slots);
    if (entry == NULL)
        goto done;
    Py_ssize_t first = append_entry(r, entry, site, out);
    if (first < 0)
        goto done;
    if (PyTuple_GET_SIZE(out) == 1) {
        res = one_result(self, r, first, PyTuple_GET_ITEM(out, 0));
    }
    else {
        PyObject *f = PyLong_FromSsize_t(first),
                 *c = PyLong_FromSsize_t(PyTuple_GET_SIZE(out));
        res = f && c ? PyObject_CallMethodObjArgs(self, s_results, f, c, NULL) : NULL;
        Py_XDECREF(f);
        Py_XDECREF(c);
    }
done:
    Py_XDECREF(slots);
    Py_XDECREF(in_types);
    Py_XDECREF(out);
    Py_XDECREF(site);
    Py_XDECREF(entry);
    return res;
}

/* Recorder.apply_scalar's body, under the lock: the 1-tuple of the result tensor */
static PyObject *
record_scalar(PyObject *self, Rec *r, PyObject *prim, PyObject *x, PyObject *xt,
              PyObject *value, PyObject *scalar_first)
{
    PyObject *res = NULL, *in_types = NULL, *out = NULL, *dtype = NULL, *key = NULL,
             *site = NULL, *entry = NULL, *slot = NULL;
    Py_ssize_t a = slot_of(self, r, x);
    if (a < 0)
        goto done;
    out = known_same_types(prim, xt, 2); /* (the hot case: no in_types tuple) */
    if (out == NULL && !PyErr_Occurred()) {
        in_types = PyTuple_Pack(2, xt, xt);
        if (in_types == NULL)
            goto done;
        out = known_types(prim, in_types, empty_attrs);
    }
    if (out == NULL) {
        if (PyErr_Occurred())
            goto done;
        PyObject *infer_args[3] = {prim, in_types, empty_attrs};
        out = PyObject_VectorcallMethod(s_infer, infer_args,
                                        3 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        if (out == NULL)
            goto done;
        if (!PyTuple_Check(out) || PyTuple_GET_SIZE(out) != 1) {
            PyErr_SetString(PyExc_TypeError, "an elementwise shape rule gave several results");
            goto done;
        }
    }
    if (type_info(xt, &dtype, NULL) < 0)
        goto done;
    Py_INCREF(dtype);
    key = scalar_key(value, dtype);
    if (key == NULL)
        goto done;
    slot = PyLong_FromSsize_t(a);
    if (slot == NULL)
        goto done;
    entry = PyTuple_Pack(5, scalar_tag, prim, slot, key, scalar_first);
    if (entry == NULL)
        goto done;
    site = user_site();
    if (site == NULL)
        goto done;
    Py_ssize_t first = append_entry(r, entry, site, out);
    if (first >= 0)
        res = one_result(self, r, first, PyTuple_GET_ITEM(out, 0));
done:
    Py_XDECREF(in_types);
    Py_XDECREF(out);
    Py_XDECREF(dtype);
    Py_XDECREF(key);
    Py_XDECREF(slot);
    Py_XDECREF(site);
    Py_XDECREF(entry);
    return res;
}

/* ---- the methods --------------------------------------------------------------------- */

static PyObject *
call_python(PyObject *method, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return PyObject_Vectorcall(method, args, nargs, kwnames);
}

/* Recorder.apply(self, prim, tensors, attrs, regions=()) */
static PyObject *
apply(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    /* regions=() may come positionally (dispatch.bind passes it); an op with regions is
     * Python's */
    if (kwnames != NULL || !(nargs == 4 || (nargs == 5 && PyTuple_CheckExact(args[4]) &&
                                            PyTuple_GET_SIZE(args[4]) == 0)))
        return call_python(py_apply, args, nargs, kwnames);
    PyObject *self = args[0], *prim = args[1], *tensors = args[2], *attrs = args[3];
    PyObject *items[2];
    Py_ssize_t n = 0;
    if (PyTuple_CheckExact(tensors) || PyList_CheckExact(tensors)) {
        n = PySequence_Fast_GET_SIZE(tensors);
        for (Py_ssize_t i = 0; i < n && i < 2; i++)
            items[i] = PySequence_Fast_GET_ITEM(tensors, i);
    }
    if (n < 1 || n > 2)
        return call_python(py_apply, args, nargs, kwnames);
    Rec r;
    int opened = rec_open(self, &r);
    if (opened <= 0)
        return opened < 0 ? NULL : call_python(py_apply, args, nargs, kwnames);
    Py_INCREF(tensors); /* (keeps items alive while Python runs) */
    PyObject *res = record_op(self, &r, prim, items, n, attrs);
    Py_DECREF(tensors);
    rec_close(&r);
    return res;
}

/* Recorder.apply_scalar(self, prim, x, value, scalar_first) */
static PyObject *
apply_scalar(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs != 5 || kwnames != NULL || !Py_IS_TYPE(args[2], T.cls))
        return call_python(py_apply_scalar, args, nargs, kwnames);
    PyObject *self = args[0], *x = args[2], *xt = SLOT(x, T.type);
    if (xt == NULL)
        return call_python(py_apply_scalar, args, nargs, kwnames);
    Rec r;
    int opened = rec_open(self, &r);
    if (opened <= 0)
        return opened < 0 ? NULL : call_python(py_apply_scalar, args, nargs, kwnames);
    Py_INCREF(xt);
    PyObject *res = record_scalar(self, &r, args[1], x, xt, args[3], args[4]);
    Py_DECREF(xt);
    rec_close(&r);
    return res;
}

/* Recorder.apply_broadcast's body, under the lock: elementwise prim on tensors (one
 * dtype) broadcast to `shape`, each operand's slot then its broadcast (Recorder._broadcast,
 * cached per (slot, shape) in _broadcasts), in order; the 1-tuple of the result */
static PyObject *py_apply_broadcast, *py_broadcast, *s_broadcast, *s_shape;
static PyObject *trailing_broadcast, *broadcast_prim; /* shape_ops' */

/* Recorder._broadcast(slot, shape, site) in C, its cache (key: (slot, shape)) missed: a
 * broadcast_in_dim of slot `so` to `shape` appended to the tape and cached; its slot (a
 * new reference). A shape rule not seen before takes the Python method. */
static PyObject *
broadcast_slot(PyObject *self, Rec *r, PyObject *cache, PyObject *key, PyObject *so,
               PyObject *shape, PyObject *site)
{
    PyObject *types = rec_list(r, RS.types), *res = NULL, *attrs = NULL, *in_types = NULL,
             *out = NULL, *args = NULL, *entry = NULL;
    Py_ssize_t s = PyLong_AsSsize_t(so);
    if (types == NULL || s < 0 || s >= PyList_GET_SIZE(types) || trailing_broadcast == NULL)
        goto python;
    PyObject *ty = PyList_GET_ITEM(types, s);
    PyObject *tshape = PyObject_GetAttr(ty, s_shape);
    if (tshape == NULL || !PyTuple_Check(tshape)) { /* (an error stays set) */
        Py_XDECREF(tshape);
        goto python;
    }
    PyObject *ndim = PyLong_FromSsize_t(PyTuple_GET_SIZE(tshape));
    Py_DECREF(tshape);
    if (ndim == NULL)
        goto done;
    PyObject *targs[2] = {ndim, shape};
    attrs = PyObject_Vectorcall(trailing_broadcast, targs, 2, NULL); /* (lru_cached) */
    Py_DECREF(ndim);
    in_types = attrs ? PyTuple_Pack(1, ty) : NULL;
    if (in_types == NULL)
        goto done;
    out = known_types(broadcast_prim, in_types, attrs);
    if (out == NULL) {
        if (PyErr_Occurred())
            goto done;
        goto python;
    }
    args = PyTuple_Pack(1, so);
    entry = args ? PyTuple_Pack(3, broadcast_prim, attrs, args) : NULL;
    if (entry == NULL)
        goto done;
    Py_ssize_t first = append_entry(r, entry, site, out);
    if (first < 0)
        goto done;
    res = PyLong_FromSsize_t(first);
    if (res != NULL && PyDict_SetItem(cache, key, res) < 0)
        Py_CLEAR(res);
    goto done;
python:
    if (!PyErr_Occurred())
        res = PyObject_CallMethodObjArgs(self, s_broadcast, so, shape, site, NULL);
done:
    Py_XDECREF(attrs);
    Py_XDECREF(in_types);
    Py_XDECREF(out);
    Py_XDECREF(args);
    Py_XDECREF(entry);
    return res;
}

static PyObject *
record_broadcast(PyObject *self, Rec *r, PyObject *prim, PyObject *const *tensors,
                 Py_ssize_t n, PyObject *shape)
{
    PyObject *res = NULL, *slots = NULL, *in_types = NULL, *out = NULL, *site = NULL,
             *entry = NULL;
    PyObject *cache = RSLOT(r, broadcasts);
    if (cache == NULL || !PyDict_CheckExact(cache)) {
        PyErr_SetString(PyExc_TypeError, "a recorder's _broadcasts is not a dict");
        return NULL;
    }
    site = user_site();
    slots = PyTuple_New(n);
    in_types = PyTuple_New(n);
    if (site == NULL || slots == NULL || in_types == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = tensors[i];
        PyObject *ty = Py_IS_TYPE(t, T.cls) ? SLOT(t, T.type) : NULL;
        PyObject *tshape = ty ? PyObject_GetAttr(ty, s_shape) : NULL;
        if (tshape == NULL) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "apply_broadcast takes tensors");
            goto done;
        }
        int same = PyObject_RichCompareBool(tshape, shape, Py_EQ);
        Py_DECREF(tshape);
        if (same < 0)
            goto done;
        Py_ssize_t s = slot_of(self, r, t);
        PyObject *so = s < 0 ? NULL : PyLong_FromSsize_t(s);
        if (so == NULL)
            goto done;
        if (!same) {
            PyObject *key = PyTuple_Pack(2, so, shape);
            PyObject *b = key ? PyDict_GetItemWithError(cache, key) : NULL;
            if (b != NULL) {
                Py_INCREF(b);
            }
            else if (key != NULL && !PyErr_Occurred()) {
                b = broadcast_slot(self, r, cache, key, so, shape, site);
            }
            Py_XDECREF(key);
            Py_DECREF(so);
            if (b == NULL)
                goto done;
            so = b;
        }
        PyTuple_SET_ITEM(slots, i, so);
    }
    if (slot_types(r, slots, in_types) < 0)
        goto done;
    out = known_types(prim, in_types, empty_attrs);
    if (out == NULL) {
        if (PyErr_Occurred())
            goto done;
        res = add_in_python(self, r, prim, slots, empty_attrs, site);
        goto done;
    }
    if (PyTuple_GET_SIZE(out) != 1) {
        PyErr_SetString(PyExc_TypeError, "an elementwise shape rule gave several results");
        goto done;
    }
    entry = PyTuple_Pack(3, prim, empty_attrs, slots);
    if (entry == NULL)
        goto done;
    Py_ssize_t first = append_entry(r, entry, site, out);
    if (first >= 0)
        res = one_result(self, r, first, PyTuple_GET_ITEM(out, 0));
done:
    Py_XDECREF(slots);
    Py_XDECREF(in_types);
    Py_XDECREF(out);
    Py_XDECREF(site);
    Py_XDECREF(entry);
    return res;
}

/* Recorder.apply_broadcast(self, prim, tensors, shape) */
static PyObject *
apply_broadcast(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs != 4 || kwnames != NULL || py_apply_broadcast == NULL ||
        !(PyTuple_CheckExact(args[2]) || PyList_CheckExact(args[2])) ||
        _PyType_Lookup(Py_TYPE(args[0]), s_broadcast) != py_broadcast)
        return PyObject_Vectorcall(py_apply_broadcast, args, nargs, kwnames);
    PyObject *self = args[0], *tensors = args[2];
    Py_ssize_t n = PySequence_Fast_GET_SIZE(tensors);
    if (n < 1)
        return PyObject_Vectorcall(py_apply_broadcast, args, nargs, kwnames);
    Rec r;
    int opened = rec_open(self, &r);
    if (opened <= 0)
        return opened < 0 ? NULL : PyObject_Vectorcall(py_apply_broadcast, args, nargs, kwnames);
    Py_INCREF(tensors);
    PyObject *res = record_broadcast(self, &r, args[1], PySequence_Fast_ITEMS(tensors), n,
                                     args[3]);
    Py_DECREF(tensors);
    rec_close(&r);
    return res;
}

static PyMethodDef apply_broadcast_def = {"apply_broadcast",
                                          (PyCFunction)(void (*)(void))apply_broadcast,
                                          METH_FASTCALL | METH_KEYWORDS,
                                          "Recorder.apply_broadcast in C (the Python method "
                                          "otherwise)."};

/* ---- Recorder.execute: a whole Function as one tape entry ---------------------------- */

static PyObject *py_execute, *py_tensors, *inline_tag, *s_tensors, *s_site, *s_ops_list,
    *s_result_types, *s_start_at;

/* Recorder.execute's body, under the lock: (_INLINE, fn, operand slots) appended at
 * `site`, fn's result types, the op count, one pending tensor per result, and the graph
 * started when fn is at least _start_at ops; the list of result tensors */
static PyObject *
record_function(PyObject *self, Rec *r, PyObject *fn, PyObject *tensors, PyObject *site)
{
    PyObject *res = NULL, *slots = NULL, *entry = NULL, *types_out = NULL, *ops = NULL,
             *start_at = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(tensors);
    if ((slots = PyTuple_New(n)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t s = slot_of(self, r, PySequence_Fast_GET_ITEM(tensors, i));
        PyObject *v = s < 0 ? NULL : PyLong_FromSsize_t(s);
        if (v == NULL)
            goto done;
        PyTuple_SET_ITEM(slots, i, v);
    }
    types_out = PyObject_GetAttr(fn, s_result_types);
    ops = types_out ? PyObject_GetAttr(fn, s_ops_list) : NULL;
    if (ops == NULL)
        goto done;
    if (!PyTuple_CheckExact(types_out) || !PyList_CheckExact(ops)) {
        PyErr_SetString(PyExc_TypeError, "a Function's result_types or ops changed type");
        goto done;
    }
    Py_ssize_t n_ops = PyList_GET_SIZE(ops);
    if ((entry = PyTuple_Pack(3, inline_tag, fn, slots)) == NULL)
        goto done;
    Py_ssize_t first = append_entry(r, entry, site, types_out);
    if (first < 0)
        goto done;
    Py_XSETREF(RSLOT(r, holds), Py_NewRef(Py_True));
    /* self._ops += len(fn.ops) (no bound check here, as in Python) */
    if (slot_count_add(self, RS.ops, (long)n_ops, "a recorder's _ops") < 0)
        goto done;
    /* the results: Recorder._tensors(first, types) */
    PyObject *pending = rec_list(r, RS.pending);
    PyObject *graph = RSLOT(r, graph);
    if (pending == NULL || graph == NULL) {
        PyErr_SetString(PyExc_TypeError, "a recorder's _pending is not a list");
        goto done;
    }
    Py_ssize_t k = PyTuple_GET_SIZE(types_out);
    if ((res = PyList_New(k)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < k; i++) {
        PyObject *t = pending_tensor(self, pending, graph, first + i,
                                     PyTuple_GET_ITEM(types_out, i));
        if (t == NULL) {
            Py_CLEAR(res);
            goto done;
        }
        PyList_SET_ITEM(res, i, t);
    }
    /* a long Function starts the graph at once (LazyBackend._start_at) */
    start_at = PyObject_GetAttr(self, s_start_at);
    PyObject *size = start_at ? PyLong_FromSsize_t(n_ops) : NULL;
    int start = size ? PyObject_RichCompareBool(size, start_at, Py_GE) : -1;
    Py_XDECREF(size);
    if (start < 0) {
        Py_CLEAR(res);
        goto done;
    }
    if (start) {
        PyObject *ok = PyObject_CallMethodNoArgs(self, s_flush);
        if (ok == NULL) {
            Py_CLEAR(res);
            goto done;
        }
        Py_DECREF(ok);
    }
done:
    Py_XDECREF(slots);
    Py_XDECREF(entry);
    Py_XDECREF(types_out);
    Py_XDECREF(ops);
    Py_XDECREF(start_at);
    return res;
}

/* 1 when fn has at least recorder self's _start_at ops (a graph starts at once with
 * it), 0 when fewer, -1 on error */
static int
long_function(PyObject *self, PyObject *fn)
{
    PyObject *ops = PyObject_GetAttr(fn, s_ops_list);
    PyObject *start_at = ops ? PyObject_GetAttr(self, s_start_at) : NULL;
    PyObject *size = start_at && PyList_CheckExact(ops)
                         ? PyLong_FromSsize_t(PyList_GET_SIZE(ops)) : NULL;
    int start = size ? PyObject_RichCompareBool(size, start_at, Py_GE) : -1;
    if (start < 0 && start_at != NULL && !PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "a Function's ops changed type");
    Py_XDECREF(ops);
    Py_XDECREF(start_at);
    Py_XDECREF(size);
    return start;
}

/* 1 when fn would start a graph that has no op yet (Recorder.execute's _run_now case,
 * left to Python: it runs fn's own program, which costs far more than the call), 0 when
 * it is recorded here, -1 on error */
static int
runs_now(PyObject *self, Rec *r, PyObject *fn)
{
    PyObject *count = RSLOT(r, ops);
    if (count == NULL || !PyLong_CheckExact(count) || PyLong_AsLong(count) != 0)
        return PyErr_Occurred() ? -1 : 0;
    return long_function(self, fn);
}

static PyTypeObject *eager_cls, *program_cls; /* XlaBackend, compilation.Program (exactly) */
static Py_ssize_t pr_execute, pr_handlers, pr_types;
static PyObject *s_done, *s_consume;
static PyObject *s_now, *s_flushes;

/* Program.run's step for a loaded compilation.Program `prog`, with the result tensors
 * made as the backends make them: its launcher run on `bufs` (a list, stolen), each
 * result a Tensor of `backend` with weak[i] (weak NULL: all strong). A new list; NULL
 * with no exception where the program is not loaded (Program.run loads it again) or
 * `weak` does not fit it: Python's. `what` names the program in the error raised when
 * its results do not match its result types. */
static PyObject *
run_loaded(PyObject *prog, PyObject *bufs, PyObject *backend, PyObject *weak,
           const char *what)
{
    PyObject *execute = SLOT(prog, pr_execute), *handlers = SLOT(prog, pr_handlers),
             *types = SLOT(prog, pr_types);
    if (execute == NULL || execute == Py_None || handlers == NULL || handlers == Py_None ||
        types == NULL || !PyTuple_CheckExact(types) ||
        (weak != NULL && PySequence_Fast_GET_SIZE(weak) != PyTuple_GET_SIZE(types))) {
        Py_DECREF(bufs);
        return NULL;
    }
    Py_INCREF(types); /* (held across the run: PJRT releases the GIL) */
    Py_XINCREF(weak);
    int ran;
    PyObject *outs = run_program(execute, handlers, bufs, s_consume, &ran);
    PyObject *res = NULL;
    if (outs != NULL && PyList_CheckExact(outs) &&
        PyList_GET_SIZE(outs) == PyTuple_GET_SIZE(types)) {
        Py_ssize_t m = PyList_GET_SIZE(outs);
        res = PyList_New(m);
        for (Py_ssize_t i = 0; res != NULL && i < m; i++) {
            PyObject *t = make_tensor(&T, PyList_GET_ITEM(outs, i), backend,
                                      PyTuple_GET_ITEM(types, i),
                                      weak ? PySequence_Fast_GET_ITEM(weak, i) : Py_False);
            if (t == NULL)
                Py_CLEAR(res);
            else
                PyList_SET_ITEM(res, i, t);
        }
    }
    else if (outs != NULL) {
        PyErr_Format(PyExc_TypeError, "%s gave other than its results", what);
    }
    Py_XDECREF(outs);
    Py_DECREF(types);
    Py_XDECREF(weak);
    return res;
}

/* LazyBackend._run_now in C, for a Function whose program that backend has run at once
 * before (its `_now` table): the program run on the operands' buffers, and the result
 * tensors (a list) holding theirs, with the backend's flushes counted, as _run_now does.
 * Called with the lock held, runs_now having said yes. NULL with no exception where
 * Python's _run_now decides (another recorder, a program not made or evicted, an operand
 * pending, deleted or of another device); NULL with an exception where the run failed. */
static PyObject *
run_now(PyObject *self, Rec *r, PyObject *fn, PyObject *tensors)
{
    if (!Py_IS_TYPE(self, lazy_cls) || program_cls == NULL)
        return NULL;
    PyObject *now = PyDict_GetItemWithError(r->dict, s_now);
    PyObject *target = now ? RSLOT(r, target) : NULL;
    PyObject *prog = target && PyDict_CheckExact(now) ? PyDict_GetItemWithError(now, fn)
                                                       : NULL;
    if (prog == NULL || !Py_IS_TYPE(prog, program_cls))
        return NULL;
    PyObject *seq = PySequence_Fast(tensors, "a Function's operands");
    if (seq == NULL)
        return NULL;
    Py_INCREF(prog); /* (held: an allocation may collect, and the run releases the GIL) */
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *bufs = PyList_New(n);
    for (Py_ssize_t i = 0; bufs != NULL && i < n; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(seq, i);
        PyObject *d = Py_IS_TYPE(t, T.cls) ? SLOT(t, T.data) : NULL;
        PyObject *b = Py_IS_TYPE(t, T.cls) ? SLOT(t, T.backend) : NULL;
        if (d != NULL && Py_IS_TYPE(d, pending_cls))
            d = SLOT(d, p_buffer);
        if (d == NULL || d == Py_None || (b != self && b != target)) {
            Py_CLEAR(bufs); /* (no exception: Python's) */
            break;
        }
        PyList_SET_ITEM(bufs, i, Py_NewRef(d));
    }
    Py_DECREF(seq);
    PyObject *res = bufs != NULL ? run_loaded(prog, bufs, self, NULL, "a program") : NULL;
    Py_DECREF(prog);
    if (res != NULL && dict_count_add(r->dict, s_flushes, 1, "a lazy backend's flushes") < 0)
        Py_CLEAR(res);
    return res;
}

/* Recorder.execute(self, fn, tensors, site=None) */
static PyObject *
execute(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *site = Py_None;
    if (nargs == 4 && nkw == 0)
        site = args[3];
    else if (nargs == 3 && nkw == 1 && PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0)) &&
             PyUnicode_Compare(PyTuple_GET_ITEM(kwnames, 0), s_site) == 0)
        site = args[3];
    else if (!(nargs == 3 && nkw == 0))
        return PyObject_Vectorcall(py_execute, args, nargs, kwnames);
    if (py_execute == NULL || !(PyTuple_CheckExact(args[2]) || PyList_CheckExact(args[2])) ||
        _PyType_Lookup(Py_TYPE(args[0]), s_tensors) != py_tensors)
        return PyObject_Vectorcall(py_execute, args, nargs, kwnames);
    PyObject *self = args[0], *tensors = args[2];
    Rec r;
    int opened = rec_open(self, &r);
    if (opened <= 0)
        return opened < 0 ? NULL : PyObject_Vectorcall(py_execute, args, nargs, kwnames);
    int now = runs_now(self, &r, args[1]);
    if (now > 0) {
        PyObject *res = run_now(self, &r, args[1], tensors);
        rec_close(&r);
        if (res != NULL || PyErr_Occurred())
            return res;
        return PyObject_Vectorcall(py_execute, args, nargs, kwnames);
    }
    if (now < 0) {
        rec_close(&r);
        return NULL;
    }
    Py_INCREF(tensors);
    PyObject *res = record_function(self, &r, args[1], tensors, site);
    Py_DECREF(tensors);
    rec_close(&r);
    return res;
}

static PyMethodDef execute_def = {"execute", (PyCFunction)(void (*)(void))execute,
                                  METH_FASTCALL | METH_KEYWORDS,
                                  "Recorder.execute in C (the Python method otherwise)."};

static PyObject *make_method(PyObject *module, PyMethodDef *def);

/* execute_method(Recorder.execute, Recorder._tensors, recorder._INLINE): the C method */
static PyObject *
execute_method(PyObject *module, PyObject *args)
{
    PyObject *pe, *pt, *tag;
    if (!PyArg_ParseTuple(args, "OOO:execute_method", &pe, &pt, &tag))
        return NULL;
    Py_INCREF(pe);
    Py_XSETREF(py_execute, pe);
    Py_INCREF(pt);
    Py_XSETREF(py_tensors, pt);
    Py_INCREF(tag);
    Py_XSETREF(inline_tag, tag);
    return make_method(module, &execute_def);
}

/* broadcast_method(Recorder.apply_broadcast, Recorder._broadcast): the C method */
static PyObject *
broadcast_method(PyObject *module, PyObject *args)
{
    PyObject *pab, *pb, *tb, *bprim;
    if (!PyArg_ParseTuple(args, "OOOO:broadcast_method", &pab, &pb, &tb, &bprim))
        return NULL;
#define KEEP(var, obj) Py_INCREF(obj); Py_XSETREF(var, obj)
    KEEP(py_apply_broadcast, pab);
    KEEP(py_broadcast, pb);
    KEEP(trailing_broadcast, tb);
    KEEP(broadcast_prim, bprim);
#undef KEEP
    return make_method(module, &apply_broadcast_def);
}

/* the broadcast shape of two shapes (tuples of ints), as NumPy's rule gives it; NULL
 * without an exception when they do not broadcast or a dimension is not an int (Python
 * says why, or handles symbolic dimensions) */
static PyObject *
broadcast_shape(PyObject *a, PyObject *b)
{
    if (!PyTuple_CheckExact(a) || !PyTuple_CheckExact(b))
        return NULL;
    Py_ssize_t na = PyTuple_GET_SIZE(a), nb = PyTuple_GET_SIZE(b), n = na > nb ? na : nb;
    PyObject *out = PyTuple_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) { /* from the right */
        PyObject *da = i < na ? PyTuple_GET_ITEM(a, na - 1 - i) : NULL;
        PyObject *db = i < nb ? PyTuple_GET_ITEM(b, nb - 1 - i) : NULL;
        if ((da && !PyLong_CheckExact(da)) || (db && !PyLong_CheckExact(db))) {
            Py_DECREF(out);
            return NULL;
        }
        long va = da ? PyLong_AsLong(da) : 1, vb = db ? PyLong_AsLong(db) : 1;
        PyObject *d;
        if (va == vb || vb == 1)
            d = da ? da : db;
        else if (va == 1)
            d = db;
        else {
            Py_DECREF(out);
            return NULL;
        }
        Py_INCREF(d);
        PyTuple_SET_ITEM(out, n - 1 - i, d);
    }
    return out;
}

/* ---- operators: Tensor.__add__ and kin, recorded in C on a lazy backend -------------- */

/* The namespace's binary function behind an operator (numpy/_elementwise._binary's f,
 * or _methods' reflected form of it), with what its fast branches need to know. A call
 * that is one of those branches - two tensors of one type and backend, or a tensor and
 * a Python int or float - on the lazy backend that dispatch.fast would let record,
 * with no weak operand, is recorded here; any other call is the Python function's. */
typedef struct {
    PyObject_HEAD
    PyObject *python;  /* the Python operator */
    PyObject *prim;
    PyObject *kinds;   /* the dtype kinds (a str) the op takes */
    int inexact;       /* integer operands become floats first: Python's */
    int reflected;     /* __radd__ ...: called (self, other), computes f(other, self) */
    int unary;         /* __neg__: called (self) */
    int gated;         /* a namespace function (stablejit.numpy.add, .tanh): always in
                        * place, so it takes C's path only while binds_on says so */
    /* the last tensor type whose dtype passed the kind checks, with a tensor operand
     * (or alone) and with a number: a loop meets one type per op again and again, and
     * the checks cost ~190 instructions. Types are interned and immutable; held. */
    PyObject *ok_pair, *ok_scalar;
    /* the last two types of one dtype and two shapes it broadcast, and their shape
     * (types are interned and immutable: a bias add meets the same pair every step) */
    PyObject *bc_types[2], *bc_shape;
    /* matmul (dot_attrs set: numpy/_products' _DOT_ATTRS): its common case, two strong
     * tensors of one dtype and one or two axes that contract, as one dot_general. The
     * attrs for a 1-d and a 2-d left operand, found in dot_attrs under the default
     * precision mm_prec (all three held; looked up again when the default changes). */
    PyObject *dot_attrs, *mm_prec, *mm_attrs[2];
    int indexing;      /* Tensor.__getitem__ (numpy/_views.getitem): fastop_getitem */
    /* a namespace function that returns a view: 1 transpose (all axes reversed), 2
     * reshape; view_fns (its attrs table, and its view's forward, backward and layout
     * functions): fastop_view */
    int view;
    PyObject *view_fns;
    vectorcallfunc vectorcall;
} FastOp;

static int binds_on; /* recorder_native.install's switch */

static PyObject *context_state;   /* context._state (threading.local: .stack) */
static int stack_cached;
static PyObject *writes_dict, *config_dict;
static PyObject *s_stack, *s_live_traces, *s_checks, *s_kind;
static PyObject *fc_kinds;        /* "fc": the kinds whose tensors take a number as is */

/* This thread's backend stack (context.stack(): the list in context._state.stack, made
 * once per thread and never replaced), as a new reference; NULL with AttributeError where
 * this thread has none yet. Every op reads it, and a threading.local attribute costs three
 * lookups, so C keeps the same list under its own key in the thread-state dict. */
static PyObject *s_stack_key; /* (stack_cached: whether context._state is CPython's
                               * threading.local, whose stack is per thread) */

/* the last thread that asked, by its thread state's id (unique for the process's
 * life: a new thread never reuses an id, where it may reuse a PyThreadState's address),
 * and its stack (a reference held): a loop records on one thread, and this skips the
 * thread-state dict's lookup */
static uint64_t last_thread_id;
static PyObject *last_thread_stack;

static PyObject *
thread_stack(void)
{
    PyThreadState *ts = stack_cached ? PyThreadState_Get() : NULL;
    uint64_t id = ts != NULL ? PyThreadState_GetID(ts) : 0;
    if (id != 0 && id == last_thread_id && last_thread_stack != NULL)
        return Py_NewRef(last_thread_stack);
    PyObject *td = ts != NULL ? PyThreadState_GetDict() : NULL;
    if (td != NULL) {
        PyObject *s = PyDict_GetItemWithError(td, s_stack_key);
        if (s != NULL) {
            last_thread_id = id;
            Py_XSETREF(last_thread_stack, Py_NewRef(s));
            return Py_NewRef(s);
        }
        if (PyErr_Occurred())
            return NULL;
    }
    PyObject *s = PyObject_GetAttr(context_state, s_stack);
    if (s != NULL && td != NULL && PyList_CheckExact(s) &&
        PyDict_SetItem(td, s_stack_key, s) < 0)
        Py_CLEAR(s);
    return s;
}

/* The rest of dispatch.fast's question once the recorder is found (recorder_for reads
 * the backend stack): no trace is live and no NaN/Inf checks are on. -1 on error. */
static int
unwatched(void)
{
#if PY_VERSION_HEX < 0x030C0000
    /* CPython before 3.12 stamps a dict with a new version at every change (PEP 509):
     * a "yes" stays true while neither module dict has changed since (two loads, where
     * the two lookups cost ~230 instructions an op) */
    static uint64_t yes_writes, yes_config;
    uint64_t vw = ((PyDictObject *)writes_dict)->ma_version_tag,
             vc = ((PyDictObject *)config_dict)->ma_version_tag;
    if (vw == yes_writes && vc == yes_config && vw != 0)
        return 1;
#endif
    PyObject *live = PyDict_GetItemWithError(writes_dict, s_live_traces);
    PyObject *checks = PyDict_GetItemWithError(config_dict, s_checks);
    if (live == NULL || checks != Py_False || !PyLong_CheckExact(live) ||
        PyLong_AsLong(live) != 0)
        return PyErr_Occurred() ? -1 : 0;
#if PY_VERSION_HEX < 0x030C0000
    yes_writes = vw, yes_config = vc;
#endif
    return 1;
}

static int
is_recorder(PyObject *b)
{
    return Py_IS_TYPE(b, lazy_cls) || (tape_cls != NULL && Py_IS_TYPE(b, tape_cls));
}

/* a recorder's target device backend (borrowed; NULL with no exception where unset) */
static PyObject *
target_of(PyObject *recorder)
{
    return recorder_slot(&RS, recorder, RS.target);
}

/* whether a tensor of backend b is an operand recorder `rec` (of device `target`)
 * records as it is, as _arrive decides: its own, its device's (a parameter), or, rec
 * being a grad tape, the lazy graph's around it on the same device (adopted) */
static int
joins(PyObject *rec, PyObject *target, PyObject *b)
{
    return b == rec || b == target ||
           (Py_IS_TYPE(b, lazy_cls) && !Py_IS_TYPE(rec, lazy_cls) && target_of(b) == target);
}

/* The lazy backend or grad tape that records an op whose operands are tensors of the
 * backends `bs`, as dispatch.backend_for and _arrive decide it:
 *   - with no backend stack, the operands' recorder (a lazy graph before a tape), every
 *     other operand being a tensor of its device;
 *   - where the stack ends with a recorder R: R, if every operand is R's, or a tensor of
 *     R's device (read as it is: a parameter), or, R being a grad tape, a tensor of the
 *     lazy graph around it on the same device (_arrive adopts it as a parameter).
 * A new reference, or NULL (with no exception: Python decides). */
static PyObject *
recorder_for(PyObject *const *bs, Py_ssize_t n)
{
    PyObject *stack = thread_stack();
    if (stack == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError))
            PyErr_Clear();
        return NULL;
    }
    PyObject *top = PyList_CheckExact(stack) && PyList_GET_SIZE(stack) > 0
                        ? PyList_GET_ITEM(stack, PyList_GET_SIZE(stack) - 1) : NULL;
    PyObject *res = NULL;
    if (top == NULL && PyList_CheckExact(stack)) { /* a lazy graph's own, else a tape's */
        for (Py_ssize_t i = 0; i < n && res == NULL; i++)
            if (Py_IS_TYPE(bs[i], lazy_cls))
                res = bs[i];
        for (Py_ssize_t i = 0; i < n && res == NULL; i++)
            if (is_recorder(bs[i]))
                res = bs[i];
        PyObject *target = res != NULL ? target_of(res) : NULL;
        for (Py_ssize_t i = 0; res != NULL && i < n; i++)
            if (bs[i] != res && (target == NULL || bs[i] != target))
                res = NULL;
    }
    else if (is_recorder(top)) {
        PyObject *target = target_of(top);
        res = target != NULL ? top : NULL;
        for (Py_ssize_t i = 0; res != NULL && i < n; i++)
            if (!joins(top, target, bs[i]))
                res = NULL;
    }
    Py_XINCREF(res);
    Py_DECREF(stack);
    return PyErr_Occurred() ? (Py_XDECREF(res), NULL) : res;
}

/* whether t's dtype kind is in `kinds` (a str); -1 on error */
/* A TensorType's dtype and its kind, memoised by the type's address (types are interned
 * and never change; the memo holds a reference, so an address is not reused while it is
 * a key): every recorded op asks, and two attribute reads through Python descriptors cost
 * ~80 ns. Borrowed results; -1 with an exception on error. */
#define TYPE_SETS 64
static struct { PyObject *type, *dtype, *kind; } type_memo[TYPE_SETS * MEMO_WAYS];

static int
type_info(PyObject *type, PyObject **dtype, PyObject **kind)
{
    size_t set = memo_set((uintptr_t)type, TYPE_SETS), i = SIZE_MAX;
    int empty = -1;
    for (int w = 0; w < MEMO_WAYS && i == SIZE_MAX; w++) {
        if (type_memo[set + w].type == type)
            i = set + w;
        else if (type_memo[set + w].type == NULL && empty < 0)
            empty = w;
    }
    if (i == SIZE_MAX) {
        i = memo_victim(set, empty);
        PyObject *d = PyObject_GetAttr(type, s_dtype);
        PyObject *k = d ? PyObject_GetAttr(d, s_kind) : NULL;
        if (k == NULL) {
            Py_XDECREF(d);
            return -1;
        }
        PyObject *old_t = type_memo[i].type, *old_d = type_memo[i].dtype,
                 *old_k = type_memo[i].kind;
        Py_INCREF(type);
        type_memo[i].type = type, type_memo[i].dtype = d, type_memo[i].kind = k;
        Py_XDECREF(old_t);
        Py_XDECREF(old_d);
        Py_XDECREF(old_k);
    }
    if (dtype != NULL)
        *dtype = type_memo[i].dtype;
    if (kind != NULL)
        *kind = type_memo[i].kind;
    return 0;
}

/* `ch in s` for a dtype kind (one character) in a string of kinds: a byte search where
 * both are ASCII, as they are (PySequence_Contains costs ~100 instructions) */
static int
str_has(PyObject *s, PyObject *ch)
{
    if (PyUnicode_CheckExact(s) && PyUnicode_CheckExact(ch) && PyUnicode_IS_ASCII(s) &&
        PyUnicode_IS_ASCII(ch) && PyUnicode_GET_LENGTH(ch) == 1)
        return memchr(PyUnicode_DATA(s), *(const char *)PyUnicode_DATA(ch),
                      PyUnicode_GET_LENGTH(s)) != NULL;
    return PySequence_Contains(s, ch);
}

static int
kind_in(PyObject *type, PyObject *kinds, int *is_int)
{
    PyObject *kind;
    if (type_info(type, NULL, &kind) < 0)
        return -1;
    Py_INCREF(kind); /* (the memo's slot may be refilled by the calls below) */
    int in = str_has(kinds, kind);
    if (is_int != NULL && in > 0) {
        int fc = str_has(fc_kinds, kind);
        *is_int = fc == 0;
        if (fc < 0)
            in = -1;
    }
    Py_DECREF(kind);
    return in;
}

/* whether x's type `xt` passes op's kind checks: with a tensor operand (or none, a unary
 * op: a dtype of op's kinds, not an integer one where op converts integers first), or
 * with a Python number (a float or complex dtype of op's kinds); remembered per op */
static int
op_takes(FastOp *op, PyObject *xt, int with_number)
{
    PyObject **memo = with_number ? &op->ok_scalar : &op->ok_pair;
    if (*memo == xt)
        return 1;
    int is_int = 0;
    int ok = kind_in(xt, with_number ? fc_kinds : op->kinds, with_number ? NULL : &is_int);
    if (ok > 0 && with_number)
        ok = kind_in(xt, op->kinds, NULL);
    if (ok > 0 && !with_number && op->inexact && is_int)
        ok = 0;
    if (ok > 0)
        Py_XSETREF(*memo, Py_NewRef(xt));
    return ok;
}

static int
is_py_number(PyObject *v)
{
    return PyFloat_CheckExact(v) || PyLong_CheckExact(v);
}

/* the result tensor of a recording step's 1-tuple of results, or the tensor itself
 * where the step was told r.single (stolen; NULL passes) */
static PyObject *
only_result(PyObject *res)
{
    if (res == NULL || !PyTuple_CheckExact(res))
        return res; /* (the tensor itself: r.single) */
    PyObject *t = PyTuple_GET_ITEM(res, 0);
    Py_INCREF(t);
    Py_DECREF(res);
    return t;
}

/* ---- an eager op on a device: its cached one-op program run from C -------------------
 * dispatch.bind_unary / bind_binary and the operators, where the op runs on a device now
 * (dispatch.fast: the backend stack empty or ending with that device, no live trace, no
 * NaN checks): XlaBackend.apply's key looked up in the device's op table, and the
 * program run as Program.run runs it, the result made as XlaBackend._run_op makes it.
 * A miss, an evicted program, a deleted operand or a weak one is Python's. */

/* the device that runs an op on tensors of backends bs now: borrowed; NULL with no
 * exception where Python decides */
static PyObject *
eager_backend(PyObject *const *bs, Py_ssize_t n)
{
    if (eager_cls == NULL || bs[0] == NULL || !Py_IS_TYPE(bs[0], eager_cls))
        return NULL;
    for (Py_ssize_t i = 1; i < n; i++)
        if (bs[i] != bs[0])
            return NULL;
    PyObject *stack = thread_stack();
    if (stack == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError))
            PyErr_Clear();
        return NULL;
    }
    Py_ssize_t depth = PyList_CheckExact(stack) ? PyList_GET_SIZE(stack) : -1;
    int ok = depth == 0 || (depth > 0 && PyList_GET_ITEM(stack, depth - 1) == bs[0]);
    Py_DECREF(stack);
    if (!ok)
        return NULL;
    ok = unwatched();
    return ok > 0 ? bs[0] : NULL;
}

/* the entry of a SingleFlightCache's finished table (borrowed; NULL: none, or an error) */
static PyObject *
table_entry(PyObject *owner, PyObject *name, PyObject *key)
{
    PyObject **dp = _PyObject_GetDictPtr(owner);
    PyObject *cache = dp && *dp ? PyDict_GetItemWithError(*dp, name) : NULL;
    dp = cache != NULL ? _PyObject_GetDictPtr(cache) : NULL;
    PyObject *done = dp && *dp ? PyDict_GetItemWithError(*dp, s_done) : NULL;
    return done != NULL && PyDict_Check(done) ? PyDict_GetItemWithError(done, key) : NULL;
}

/* the program under `key` in the op table of `backend`, run on the buffers `datas`: the
 * result tensor; NULL with no exception: Python's */
static PyObject *
eager_program_run(PyObject *backend, PyObject *key, PyObject *const *datas, Py_ssize_t n)
{
    PyObject *prog = table_entry(backend, s_ops, key);
    PyObject *types = prog != NULL && Py_IS_TYPE(prog, program_cls) ? SLOT(prog, pr_types)
                                                                     : NULL;
    if (types == NULL || !PyTuple_CheckExact(types) || PyTuple_GET_SIZE(types) != 1)
        return NULL;
    PyObject *bufs = PyList_New(n), *outs = NULL;
    Py_INCREF(prog); /* (held: an allocation may collect, and the run releases the GIL) */
    for (Py_ssize_t i = 0; bufs != NULL && i < n; i++) {
        if (datas[i] == NULL || datas[i] == Py_None) /* deleted: Python's clear error */
            Py_CLEAR(bufs);
        else
            PyList_SET_ITEM(bufs, i, Py_NewRef(datas[i]));
    }
    if (bufs != NULL)
        outs = run_loaded(prog, bufs, backend, NULL, "a one-op program");
    Py_DECREF(prog);
    PyObject *out = outs != NULL ? Py_NewRef(PyList_GET_ITEM(outs, 0)) : NULL;
    Py_XDECREF(outs);
    return out;
}

/* prim on the n (1 or 2) non-weak tensors ts of `backend` with `attrs` (XlaBackend.apply):
 * the result tensor; NULL with no exception: Python's */
static PyObject *
eager_run(PyObject *backend, PyObject *prim, PyObject *attrs, PyObject *const *ts,
          Py_ssize_t n)
{
    PyObject *key = n == 1 ? PyTuple_Pack(3, prim, attrs, SLOT(ts[0], T.type))
                           : PyTuple_Pack(4, prim, attrs, SLOT(ts[0], T.type),
                                          SLOT(ts[1], T.type));
    if (key == NULL)
        return NULL;
    PyObject *datas[2] = {SLOT(ts[0], T.data), n == 2 ? SLOT(ts[1], T.data) : NULL};
    PyObject *out = eager_program_run(backend, key, datas, n);
    Py_DECREF(key);
    return out;
}

static PyObject *broadcast_tag, *tensor_type_cls, *scalar_types, *s_scalars;

/* elementwise prim on the non-weak tensor x of `backend` and the Python number `value`
 * in x's dtype (XlaBackend.apply_scalar: the number's cached device buffer, and one
 * program broadcasting it); NULL with no exception: Python's (a number not seen yet) */
static PyObject *
eager_scalar(PyObject *backend, PyObject *prim, PyObject *x, PyObject *value,
             int scalar_first)
{
    PyObject *xt = SLOT(x, T.type);
    PyObject *dtype = PyObject_GetAttr(xt, s_dtype);
    PyObject *shape = dtype ? PyObject_GetAttr(xt, s_shape) : NULL;
    PyObject *skey = shape ? scalar_key(value, dtype) : NULL;
    PyObject **dp = skey ? _PyObject_GetDictPtr(backend) : NULL;
    PyObject *cache = dp && *dp ? PyDict_GetItemWithError(*dp, s_scalars) : NULL;
    PyObject *buf = cache && PyDict_CheckExact(cache) ? PyDict_GetItemWithError(cache, skey)
                                                      : NULL;
    PyObject *st = buf ? PyDict_GetItemWithError(scalar_types, dtype) : NULL;
    if (buf != NULL && st == NULL && !PyErr_Occurred()) { /* TensorType((), dtype), once */
        st = PyObject_CallFunction(tensor_type_cls, "(()O)", dtype);
        if (st != NULL && PyDict_SetItem(scalar_types, dtype, st) < 0)
            Py_CLEAR(st);
        Py_XDECREF(st); /* (the dict holds it) */
    }
    PyObject *out = NULL;
    if (st != NULL) {
        PyObject *key = scalar_first ? PyTuple_Pack(5, prim, broadcast_tag, shape, st, xt)
                                     : PyTuple_Pack(5, prim, broadcast_tag, shape, xt, st);
        PyObject *datas[2] = {scalar_first ? buf : SLOT(x, T.data),
                              scalar_first ? SLOT(x, T.data) : buf};
        Py_XINCREF(buf); /* (held across the run) */
        out = key ? eager_program_run(backend, key, datas, 2) : NULL;
        Py_XDECREF(key);
        Py_XDECREF(buf);
    }
    Py_XDECREF(dtype);
    Py_XDECREF(shape);
    Py_XDECREF(skey);
    return out;
}

/* init_eager(XlaBackend, compilation.Program, TensorType, backends._BROADCAST) */
static PyObject *
init_eager(PyObject *module, PyObject *args)
{
    PyObject *xla, *prog, *ttype, *tag;
    if (!PyArg_ParseTuple(args, "O!O!O!O:init_eager", &PyType_Type, &xla, &PyType_Type, &prog,
                          &PyType_Type, &ttype, &tag))
        return NULL;
    if (slot_offset(prog, "execute", &pr_execute) || slot_offset(prog, "handlers", &pr_handlers)
        || slot_offset(prog, "result_types", &pr_types))
        return NULL;
    if (scalar_types == NULL && (scalar_types = PyDict_New()) == NULL)
        return NULL;
#define KEEP(var, obj) Py_INCREF(obj); Py_XSETREF(var, obj)
    KEEP(eager_cls, (PyTypeObject *)xla);
    KEEP(program_cls, (PyTypeObject *)prog);
    KEEP(tensor_type_cls, ttype);
    KEEP(broadcast_tag, tag);
#undef KEEP
    Py_RETURN_NONE;
}

/* the operator on two tensors of one type on a device, run in C (the same checks as
 * recording it: neither weak, a dtype of the operator's kinds); NULL with no exception:
 * Python's */
static PyObject *
fastop_eager(FastOp *op, PyObject *a, PyObject *b, PyObject *const *bs)
{
    PyObject *dev = eager_backend(bs, 2);
    if (dev == NULL || SLOT(a, T.weak) != Py_False)
        return NULL;
    if (op_takes(op, SLOT(a, T.type), 0) <= 0)
        return NULL;
    PyObject *items[2] = {a, b};
    return eager_run(dev, op->prim, empty_attrs, items, 2);
}

/* the operator on a tensor and a Python number on a device, run in C (the same checks
 * as recording it: x not weak, of a float or complex dtype of the operator's kinds);
 * NULL with no exception: Python's */
static PyObject *
fastop_eager_scalar(FastOp *op, PyObject *x, PyObject *value, int scalar_first, PyObject *bx)
{
    PyObject *xt = SLOT(x, T.type);
    PyObject *dev = eager_backend(&bx, 1);
    if (dev == NULL || xt == NULL || SLOT(x, T.weak) != Py_False)
        return NULL;
    int ok = op_takes(op, xt, 1);
    return ok > 0 ? eager_scalar(dev, op->prim, x, value, scalar_first) : NULL;
}

/* the operator recorded in C: the result tensor; NULL with no exception: Python's */
static PyObject *
fastop_record(FastOp *op, PyObject *a, PyObject *b)
{
    PyObject *x, *value = NULL;
    int scalar_first = 0;
    PyObject *backend = NULL, *bshape = NULL;
    if (Py_IS_TYPE(a, T.cls) && Py_IS_TYPE(b, T.cls)) {
        x = a;
        PyObject *ta = SLOT(a, T.type), *tb = SLOT(b, T.type);
        if (ta == NULL || tb == NULL || SLOT(b, T.weak) != Py_False)
            return NULL;
        if (ta != tb && ta == op->bc_types[0] && tb == op->bc_types[1]) {
            bshape = Py_NewRef(op->bc_shape); /* (the last pair of types again) */
        }
        else if (ta != tb) {
            /* one dtype, two shapes (a bias add): Python promotes nothing, checks the
             * kind, and records the broadcasts and the op (Recorder.apply_broadcast) */
            PyObject *da = PyObject_GetAttr(ta, s_dtype), *db = PyObject_GetAttr(tb, s_dtype);
            PyObject *sa = PyObject_GetAttr(ta, s_shape), *sb = PyObject_GetAttr(tb, s_shape);
            int ok = da && db && sa && sb && da == db && py_apply_broadcast != NULL;
            if (ok)
                bshape = broadcast_shape(sa, sb);
            Py_XDECREF(da);
            Py_XDECREF(db);
            Py_XDECREF(sa);
            Py_XDECREF(sb);
            if (bshape == NULL) {
                if (PyErr_Occurred())
                    PyErr_Clear(); /* (Python meets it again and says it well) */
                return NULL;
            }
            Py_XSETREF(op->bc_types[0], Py_NewRef(ta));
            Py_XSETREF(op->bc_types[1], Py_NewRef(tb));
            Py_XSETREF(op->bc_shape, Py_NewRef(bshape));
        }
        /* (a tensor of the recorder and one of its device, p - g in an update step:
         * Python's promote-and-broadcast path picks the recorder, which reads the device
         * tensor as a parameter, as record_op does) */
        PyObject *both[2] = {SLOT(a, T.backend), SLOT(b, T.backend)};
        if (both[0] == NULL || both[1] == NULL || SLOT(a, T.data) == NULL ||
            SLOT(b, T.data) == NULL)
            goto none;
        backend = recorder_for(both, 2); /* (a reference held from here) */
        if (backend == NULL) {
            if (bshape != NULL || PyErr_Occurred())
                goto none;
            return fastop_eager(op, a, b, both);
        }
    }
    else if (Py_IS_TYPE(a, T.cls) && is_py_number(b)) {
        x = a, value = b;
    }
    else if (Py_IS_TYPE(b, T.cls) && is_py_number(a)) {
        x = b, value = a, scalar_first = 1;
    }
    else {
        goto none;
    }
    if (backend == NULL) {
        PyObject *bx = SLOT(x, T.backend);
        backend = bx == NULL ? NULL : recorder_for(&bx, 1); /* (a reference held) */
        if (backend == NULL && bx != NULL && !PyErr_Occurred())
            return fastop_eager_scalar(op, x, value, scalar_first, bx);
    }
    PyObject *xt = SLOT(x, T.type);
    if (backend == NULL || xt == NULL || SLOT(x, T.weak) != Py_False)
        goto none;
    int ok = unwatched();
    if (ok > 0)
        ok = op_takes(op, xt, value != NULL);
    if (ok <= 0)
        goto none;
    Rec r;
    int opened = rec_open(backend, &r);
    if (opened <= 0)
        goto none;
    r.single = 1;
    Py_INCREF(xt);
    PyObject *res;
    if (value != NULL) {
        res = record_scalar(backend, &r, op->prim, x, xt, value,
                            scalar_first ? Py_True : Py_False);
    }
    else if (bshape != NULL) {
        PyObject *items[2] = {a, b};
        res = _PyType_Lookup(Py_TYPE(backend), s_broadcast) == py_broadcast
                  ? record_broadcast(backend, &r, op->prim, items, 2, bshape)
                  : PyObject_CallMethod(backend, "apply_broadcast", "O(OO)O", op->prim, a, b,
                                        bshape);
    }
    else {
        PyObject *items[2] = {a, b};
        res = record_op(backend, &r, op->prim, items, 2, empty_attrs);
    }
    Py_XDECREF(bshape);
    Py_DECREF(xt);
    rec_close(&r);
    Py_DECREF(backend);
    return only_result(res);
none: /* Python's (or an error, which stays set) */
    Py_XDECREF(bshape);
    Py_XDECREF(backend);
    return NULL;
}

/* a unary operator (-x) recorded in C: the result tensor; NULL with no exception:
 * Python's. The Python operator converts nothing for a tensor of its kinds (inexact
 * unary operators are not made FastOps), so C records the primitive as it is. */
static PyObject *
fastop_record_unary(FastOp *op, PyObject *x)
{
    if (!Py_IS_TYPE(x, T.cls))
        return NULL;
    PyObject *bx = SLOT(x, T.backend), *xt = SLOT(x, T.type);
    if (bx == NULL || xt == NULL || SLOT(x, T.data) == NULL || SLOT(x, T.weak) != Py_False)
        return NULL;
    PyObject *backend = recorder_for(&bx, 1); /* (a reference held) */
    if (backend == NULL) {
        PyObject *dev = PyErr_Occurred() ? NULL : eager_backend(&bx, 1);
        int ok = dev == NULL ? 0 : op_takes(op, xt, 0);
        return ok > 0 ? eager_run(dev, op->prim, empty_attrs, &x, 1) : NULL;
    }
    int ok = unwatched();
    if (ok > 0)
        ok = op_takes(op, xt, 0);
    Rec r;
    if (ok > 0)
        ok = rec_open(backend, &r);
    if (ok <= 0) {
        Py_DECREF(backend);
        return NULL;
    }
    r.single = 1;
    PyObject *res = record_op(backend, &r, op->prim, &x, 1, empty_attrs);
    rec_close(&r);
    Py_DECREF(backend);
    return only_result(res);
}

static PyObject *fastbind_general(PyObject *const *args, Py_ssize_t nargs);
static PyObject *precision_dict, *s_default; /* (the composite call's: init_composite) */

/* a shape's axis as a C integer, or -1 (a symbolic dimension: Python's) */
static Py_ssize_t
int_dim(PyObject *shape, Py_ssize_t i)
{
    PyObject *d = PyTuple_GET_ITEM(shape, i);
    return PyLong_CheckExact(d) ? PyLong_AsSsize_t(d) : -1;
}

/* numpy/_products.matmul's first branch in C: x @ y of two strong tensors of one
 * non-boolean dtype, each of one or two axes, that contract (the last axis of x with the
 * first of y), as the one dot_general Python binds (recorded on a lazy backend or grad
 * tape as bind records it, or run on a device as its one-op program). The result tensor;
 * NULL with no exception: Python's. */
static PyObject *
fastop_matmul(FastOp *op, PyObject *x, PyObject *y)
{
    if (!Py_IS_TYPE(x, T.cls) || !Py_IS_TYPE(y, T.cls) || precision_dict == NULL)
        return NULL;
    PyObject *tx = SLOT(x, T.type), *ty = SLOT(y, T.type);
    if (tx == NULL || ty == NULL || SLOT(x, T.weak) != Py_False ||
        SLOT(y, T.weak) != Py_False || SLOT(x, T.data) == NULL || SLOT(y, T.data) == NULL)
        return NULL;
    PyObject *dx, *dy, *kind;
    if (type_info(tx, &dx, &kind) < 0)
        return NULL;
    Py_INCREF(dx); /* (the memo's slot may be refilled by the next call) */
    int ok = str_has(op->kinds, kind);
    if (ok > 0 && type_info(ty, &dy, NULL) < 0)
        ok = -1;
    ok = ok > 0 ? dx == dy : ok;
    Py_DECREF(dx);
    if (ok <= 0)
        return NULL;
    PyObject *xs = PyObject_GetAttr(tx, s_shape);
    PyObject *ys = xs ? PyObject_GetAttr(ty, s_shape) : NULL;
    Py_ssize_t nx = xs && PyTuple_CheckExact(xs) ? PyTuple_GET_SIZE(xs) : 0;
    Py_ssize_t ny = ys && PyTuple_CheckExact(ys) ? PyTuple_GET_SIZE(ys) : 0;
    ok = nx >= 1 && nx <= 2 && ny >= 1 && ny <= 2;
    if (ok) {
        Py_ssize_t inner = int_dim(xs, nx - 1);
        ok = inner >= 0 && inner == int_dim(ys, 0);
    }
    Py_XDECREF(xs);
    Py_XDECREF(ys);
    if (!ok || PyErr_Occurred())
        return NULL;
    PyObject *prec = PyDict_GetItemWithError(precision_dict, s_default);
    if (prec == NULL)
        return NULL;
    if (prec != op->mm_prec) {
        Py_XSETREF(op->mm_prec, Py_NewRef(prec));
        Py_CLEAR(op->mm_attrs[0]);
        Py_CLEAR(op->mm_attrs[1]);
    }
    PyObject *attrs = op->mm_attrs[nx - 1];
    if (attrs == NULL) { /* _DOT_ATTRS's key, as matmul looks it up */
        PyObject *key = Py_BuildValue("((n)(i))(()())OO", nx - 1, 0, prec, Py_None);
        attrs = key ? PyDict_GetItemWithError(op->dot_attrs, key) : NULL;
        Py_XDECREF(key);
        if (attrs == NULL)
            return NULL; /* (Python's call makes them) */
        op->mm_attrs[nx - 1] = Py_NewRef(attrs);
    }
    Py_INCREF(attrs);
    PyObject *pair = PyTuple_Pack(2, x, y), *res = NULL;
    if (pair != NULL) {
        PyObject *targs[3] = {op->prim, pair, attrs};
        res = fastbind_general(targs, 3);
        Py_DECREF(pair);
        if (res == NULL && !PyErr_Occurred()) { /* on a device now: its one-op program */
            PyObject *bs[2] = {SLOT(x, T.backend), SLOT(y, T.backend)};
            PyObject *dev = eager_backend(bs, 2);
            PyObject *items[2] = {x, y};
            if (dev != NULL) {
                res = eager_run(dev, op->prim, attrs, items, 2);
                Py_DECREF(attrs);
                return res;
            }
        }
    }
    Py_DECREF(attrs);
    if (res != NULL && (!PyTuple_CheckExact(res) || PyTuple_GET_SIZE(res) != 1)) {
        Py_DECREF(res);
        return PyErr_Format(PyExc_TypeError, "dot_general gave other than one result");
    }
    return only_result(res);
}

/* ---- basic indexing and its view: numpy/_views.getitem's common case -------------- */

/* Bound(fn, extra): fn(*args, *extra), a closure made in C (a view's forward, backward
 * and layout functions, as _views.getitem's lambdas compute them) */
/* Bound and CompositeFn: two references after the head (one traverse, clear, dealloc) */
typedef struct {
    PyObject_HEAD
    PyObject *refs[2];
} TwoRefs;

static int
tworefs_traverse(TwoRefs *self, visitproc visit, void *arg)
{
    Py_VISIT(self->refs[0]);
    Py_VISIT(self->refs[1]);
    return 0;
}

static int
tworefs_clear(TwoRefs *self)
{
    Py_CLEAR(self->refs[0]);
    Py_CLEAR(self->refs[1]);
    return 0;
}

static void
tworefs_dealloc(TwoRefs *self)
{
    PyObject_GC_UnTrack(self);
    tworefs_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

typedef struct {
    PyObject_HEAD
    PyObject *fn, *extra; /* extra: a tuple (TwoRefs' layout) */
    vectorcallfunc vectorcall;
} Bound;

#define BOUND_ARGS 8

static PyObject *
bound_vectorcall(Bound *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf), ne = PyTuple_GET_SIZE(self->extra);
    if (kwnames != NULL || n + ne > BOUND_ARGS)
        return PyErr_Format(PyExc_TypeError, "a view function takes %zd positional arguments",
                            BOUND_ARGS - ne);
    PyObject *all[BOUND_ARGS];
    for (Py_ssize_t i = 0; i < n; i++)
        all[i] = args[i];
    for (Py_ssize_t i = 0; i < ne; i++)
        all[n + i] = PyTuple_GET_ITEM(self->extra, i);
    return PyObject_Vectorcall(self->fn, all, n + ne, NULL);
}

static PyObject *
bound_repr(Bound *self)
{
    return PyUnicode_FromFormat("<view function %R%R>", self->fn, self->extra);
}

static PyTypeObject BoundType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stablejit._recorder.Bound",
    .tp_doc = "fn(*args, *extra): a view's function, made in C.",
    .tp_basicsize = sizeof(Bound),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_dealloc = (destructor)tworefs_dealloc,
    .tp_traverse = (traverseproc)tworefs_traverse,
    .tp_clear = (inquiry)tworefs_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(Bound, vectorcall),
    .tp_repr = (reprfunc)bound_repr,
};

/* Bound(fn, (a,)) */
static PyObject *
bound_new(PyObject *fn, PyObject *a)
{
    PyObject *extra = PyTuple_Pack(1, a);
    if (extra == NULL)
        return NULL;
    Bound *self = PyObject_GC_New(Bound, &BoundType);
    if (self == NULL) {
        Py_DECREF(extra);
        return NULL;
    }
    self->fn = Py_NewRef(fn);
    self->extra = extra;
    self->vectorcall = (vectorcallfunc)bound_vectorcall;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

/* what init_views hands over: _indexing._PLANS, views.View and views.Aliases, and the
 * three functions a view of x[index] is made of (x[index] of a parent p; p with the
 * view's elements set to new; a NumPy layout indexed) */
static PyObject *plans, *aliases_cls, *index_get, *index_set, *layout_get, *s_add_view;
static PyTypeObject *view_cls;
static Py_ssize_t V_base, V_forward, V_backward, V_writable, V_layout, V_make_layout, V_src,
    A_views, A_prune_at;

/* _indexing._plain_key of an index made of None, Ellipsis and slices with int or None
 * bounds (no int: an int is a program input, Python's), and the index as a tuple
 * (*items); NULL with no exception for any other index */
static PyObject *
plain_key(PyObject *index, PyObject **items)
{
    *items = PyTuple_CheckExact(index) ? Py_NewRef(index) : PyTuple_Pack(1, index);
    if (*items == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(*items);
    PyObject *key = n > 0 ? PyTuple_New(n) : NULL;
    for (Py_ssize_t i = 0; key != NULL && i < n; i++) {
        PyObject *v = PyTuple_GET_ITEM(*items, i), *k = NULL;
        if (v == Py_None || v == Py_Ellipsis) {
            k = Py_NewRef(v);
        }
        else if (Py_IS_TYPE(v, &PySlice_Type)) {
            PySliceObject *sl = (PySliceObject *)v;
            PyObject *b[3] = {sl->start, sl->stop, sl->step};
            int ok = 1;
            for (int j = 0; j < 3; j++)
                ok = ok && (b[j] == Py_None || PyLong_CheckExact(b[j]));
            k = ok ? PyTuple_Pack(3, b[0], b[1], b[2]) : NULL;
        }
        if (k == NULL)
            Py_CLEAR(key);
        else
            PyTuple_SET_ITEM(key, i, k);
    }
    if (key == NULL)
        Py_CLEAR(*items);
    return key;
}

/* prim(x) with attrs, bound as dispatch's bind binds it: recorded by the lazy backend or
 * grad tape that records now, else (*dev set, or found here when NULL) run on x's device
 * as its one-op program. A new reference; NULL with no exception: Python's. */
static PyObject *
bind_one(PyObject *prim, PyObject *x, PyObject *attrs, PyObject **dev)
{
    if (*dev == NULL) {
        PyObject *one = PyTuple_Pack(1, x);
        PyObject *targs[3] = {prim, one, attrs};
        PyObject *r = one ? fastbind_general(targs, 3) : NULL;
        Py_XDECREF(one);
        if (r != NULL) {
            PyObject *next = PyTuple_CheckExact(r) && PyTuple_GET_SIZE(r) == 1
                                 ? Py_NewRef(PyTuple_GET_ITEM(r, 0)) : NULL;
            Py_DECREF(r);
            if (next == NULL)
                PyErr_SetString(PyExc_TypeError, "a view's op gave other than one result");
            return next;
        }
        PyObject *bx = SLOT(x, T.backend);
        if (PyErr_Occurred() || (*dev = eager_backend(&bx, 1)) == NULL)
            return NULL;
    }
    return eager_run(*dev, prim, attrs, &x, 1);
}

/* views.make_view(x, out, forward, backward, layout) where x is a base (no view itself)
 * and out a new tensor of a static shape: out's View and x's Aliases, made as Python
 * makes them. out (a new reference) or NULL with an exception. */
static PyObject *
make_base_view(PyObject *x, PyObject *out, PyObject *fwd, PyObject *bwd, PyObject *lay)
{
    PyObject *aliases = SLOT(x, T.aliases), *res = NULL;
    if (aliases == Py_None) {
        if ((aliases = PyObject_CallNoArgs(aliases_cls)) == NULL)
            return NULL;
        Py_SETREF(SLOT(x, T.aliases), aliases);
    }
    Py_INCREF(aliases);
    PyObject *make = PyTuple_Pack(2, lay, Py_None);
    PyObject *view = make ? view_cls->tp_alloc(view_cls, 0) : NULL;
    if (view != NULL) {
        SLOT(view, V_base) = Py_NewRef(x);
        SLOT(view, V_forward) = Py_NewRef(fwd);
        SLOT(view, V_backward) = Py_NewRef(bwd);
        SLOT(view, V_writable) = Py_NewRef(Py_True);
        SLOT(view, V_layout) = Py_NewRef(Py_None);
        SLOT(view, V_make_layout) = Py_NewRef(make);
        PyObject *data = SLOT(x, T.data); /* (the base's data: see views.write) */
        SLOT(view, V_src) = Py_NewRef(data != NULL ? data : Py_None);
        Py_SETREF(SLOT(out, T.view), view);
        /* aliases.add(out): a weak reference appended, or Python's add where it prunes */
        PyObject *refs = SLOT(aliases, A_views), *at = SLOT(aliases, A_prune_at);
        Py_ssize_t prune = at && PyLong_CheckExact(at) ? PyLong_AsSsize_t(at) : 0;
        if (refs && PyList_CheckExact(refs) && PyList_GET_SIZE(refs) + 1 < prune) {
            PyObject *ref = PyWeakref_NewRef(out, NULL);
            if (ref != NULL && PyList_Append(refs, ref) == 0)
                res = Py_NewRef(out);
            Py_XDECREF(ref);
        }
        else if (!PyErr_Occurred()) {
            PyObject *added = PyObject_CallMethodOneArg(aliases, s_add_view, out);
            if (added != NULL) {
                Py_DECREF(added);
                res = Py_NewRef(out);
            }
        }
    }
    Py_XDECREF(make);
    Py_DECREF(aliases);
    return res;
}

/* whether x may take a C view path: a strong tensor that owns its memory */
static int
view_base(PyObject *x)
{
    return view_cls != NULL && Py_IS_TYPE(x, T.cls) && SLOT(x, T.view) == Py_None &&
           SLOT(x, T.weak) == Py_False && SLOT(x, T.type) != NULL && SLOT(x, T.data) != NULL;
}

/* make_base_view with the view functions Bound(fwd, a), Bound(bwd, b), Bound(lay, c) */
static PyObject *
bound_view(PyObject *x, PyObject *out, PyObject *fwd, PyObject *a, PyObject *bwd,
           PyObject *b, PyObject *lay, PyObject *c)
{
    PyObject *f = bound_new(fwd, a), *g = f ? bound_new(bwd, b) : NULL;
    PyObject *h = g ? bound_new(lay, c) : NULL;
    PyObject *res = h ? make_base_view(x, out, f, g, h) : NULL;
    Py_XDECREF(f);
    Py_XDECREF(g);
    Py_XDECREF(h);
    return res;
}

/* the view of x made by the op prim(x, attrs) (bound by bind_one), with bound_view's
 * functions; NULL with no exception: Python's */
static PyObject *
one_op_view(PyObject *x, PyObject *prim, PyObject *attrs, PyObject *fwd, PyObject *a,
            PyObject *bwd, PyObject *b, PyObject *lay, PyObject *c)
{
    PyObject *dev = NULL;
    PyObject *out = bind_one(prim, x, attrs, &dev);
    if (out == NULL)
        return NULL;
    PyObject *res = bound_view(x, out, fwd, a, bwd, b, lay, c);
    Py_DECREF(out);
    return res;
}

/* x[index] for a tensor x that owns its memory (no view itself), of a static shape, and
 * an index plain_key takes whose plan _indexing.getitem made before: the plan's ops bound
 * as Python binds them, and the result made a view of x as views.make_view makes it.
 * NULL with no exception: Python's. */
static PyObject *
fastop_getitem(PyObject *x, PyObject *index)
{
    if (plans == NULL || !view_base(x))
        return NULL;
    PyObject *items, *key = plain_key(index, &items);
    if (key == NULL)
        return NULL;
    PyObject *shape = PyObject_GetAttr(SLOT(x, T.type), s_shape);
    PyObject *pkey = shape ? PyTuple_Pack(2, shape, key) : NULL;
    Py_XDECREF(shape);
    Py_DECREF(key);
    PyObject *plan = pkey ? PyDict_GetItemWithError(plans, pkey) : NULL;
    Py_XDECREF(pkey);
    Py_ssize_t n = plan && PyTuple_CheckExact(plan) ? PyTuple_GET_SIZE(plan) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *step = PyTuple_GET_ITEM(plan, i);
        if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 2)
            n = 0; /* (a dynamic slice: Python's) */
    }
    if (n == 0) {
        Py_DECREF(items);
        return NULL;
    }
    Py_INCREF(plan); /* (the table may be cleared by another thread meanwhile) */
    PyObject *out = Py_NewRef(x), *res = NULL, *dev = NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *step = PyTuple_GET_ITEM(plan, i);
        /* (a recorder takes every step or none; a device runs each, or leaves the rest
         * to Python, which computes x[index] anew) */
        PyObject *next = bind_one(PyTuple_GET_ITEM(step, 0), out, PyTuple_GET_ITEM(step, 1),
                                  &dev);
        if (next == NULL)
            goto done;
        Py_SETREF(out, next);
    }
    res = bound_view(x, out, index_get, index, index_set, index, layout_get, items);
done:
    Py_DECREF(out);
    Py_DECREF(plan);
    Py_DECREF(items);
    return res;
}

/* a tensor type's shape if every axis is a Python int (a new reference), else NULL
 * with no exception (a symbolic shape: Python's) */
static PyObject *
static_shape(PyObject *type, Py_ssize_t *size)
{
    PyObject *shape = PyObject_GetAttr(type, s_shape);
    if (shape == NULL || !PyTuple_CheckExact(shape)) {
        Py_XDECREF(shape);
        return NULL;
    }
    Py_ssize_t n = 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); i++) {
        Py_ssize_t d = int_dim(shape, i);
        if (d < 0) {
            Py_DECREF(shape);
            return NULL;
        }
        n *= d;
    }
    *size = n;
    return shape;
}

/* numpy/_views.transpose(x) (all axes reversed, as x.T) and reshape(x, shape) of a base
 * of a static shape, in C: the op bound as _manipulation binds it (its attrs from the
 * table Python keeps: _REVERSED by ndim, _RESHAPES by shape) and the result made a view
 * of x as _views makes it. NULL with no exception: Python's. */
static PyObject *
fastop_view(FastOp *op, PyObject *x, PyObject *arg)
{
    if (!view_base(x) || !PyTuple_CheckExact(op->view_fns) ||
        PyTuple_GET_SIZE(op->view_fns) != 4)
        return NULL;
    PyObject *table = PyTuple_GET_ITEM(op->view_fns, 0), *fwd = PyTuple_GET_ITEM(op->view_fns, 1),
             *bwd = PyTuple_GET_ITEM(op->view_fns, 2), *lay = PyTuple_GET_ITEM(op->view_fns, 3);
    Py_ssize_t size, new_size = 1;
    PyObject *shape = static_shape(SLOT(x, T.type), &size), *res = NULL;
    if (shape == NULL || !PyDict_Check(table))
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(shape);
    if (op->view == 1) { /* x.T: the reversed permutation, its own inverse */
        PyObject *nd = n >= 2 ? PyLong_FromSsize_t(n) : NULL;
        PyObject *attrs = nd ? PyDict_GetItemWithError(table, nd) : NULL;
        PyObject *perm = attrs ? PyTuple_New(n) : NULL;
        for (Py_ssize_t i = 0; perm != NULL && i < n; i++) {
            PyObject *a = PyLong_FromSsize_t(n - 1 - i);
            if (a == NULL)
                Py_CLEAR(perm);
            else
                PyTuple_SET_ITEM(perm, i, a);
        }
        if (perm != NULL) { /* (attrs held: recording may run Python that clears the table) */
            Py_INCREF(attrs);
            res = one_op_view(x, op->prim, attrs, fwd, perm, bwd, perm, lay, perm);
            Py_DECREF(attrs);
        }
        Py_XDECREF(nd);
        Py_XDECREF(perm);
    }
    else if (PyTuple_CheckExact(arg)) { /* reshape(x, shape): a shape kept before, no -1 */
        PyObject *attrs = PyDict_GetItemWithError(table, arg);
        if (attrs == NULL && PyErr_ExceptionMatches(PyExc_TypeError))
            PyErr_Clear(); /* (an unhashable size, a 0-d integer tensor: Python's) */
        for (Py_ssize_t i = 0; attrs != NULL && i < PyTuple_GET_SIZE(arg); i++) {
            Py_ssize_t d = int_dim(arg, i);
            if (d < 0)
                attrs = NULL;
            new_size *= d;
        }
        int same = attrs != NULL && new_size == size
                       ? PyObject_RichCompareBool(arg, shape, Py_EQ) : 1;
        if (same == 0) {
            Py_INCREF(attrs);
            res = one_op_view(x, op->prim, attrs, fwd, arg, bwd, shape, lay, arg);
            Py_DECREF(attrs);
        }
    }
    Py_DECREF(shape);
    return res;
}

/* init_views(_indexing._PLANS, views.View, views.Aliases, forward, backward, layout):
 * what fastop_getitem reads and calls */
static PyObject *
init_views(PyObject *module, PyObject *args)
{
    PyObject *p, *v, *a, *get, *set, *lay;
    if (!PyArg_ParseTuple(args, "O!O!O!OOO:init_views", &PyDict_Type, &p, &PyType_Type, &v,
                          &PyType_Type, &a, &get, &set, &lay))
        return NULL;
    if (slot_offset(v, "base", &V_base) || slot_offset(v, "forward", &V_forward) ||
        slot_offset(v, "backward", &V_backward) || slot_offset(v, "writable", &V_writable) ||
        slot_offset(v, "_layout", &V_layout) || slot_offset(v, "_make_layout", &V_make_layout)
        || slot_offset(v, "src", &V_src)
        || slot_offset(a, "views", &A_views) || slot_offset(a, "_prune_at", &A_prune_at))
        return NULL;
    if (s_add_view == NULL && (s_add_view = PyUnicode_InternFromString("add")) == NULL)
        return NULL;
#define KEEP(var, obj) Py_INCREF(obj); Py_XSETREF(var, obj)
    KEEP(view_cls, (PyTypeObject *)v);
    KEEP(aliases_cls, a);
    KEEP(index_get, get);
    KEEP(index_set, set);
    KEEP(layout_get, lay);
    KEEP(plans, p);
#undef KEEP
    Py_RETURN_NONE;
}

static PyObject *
fastop_vectorcall(FastOp *op, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (op->gated && !binds_on)
        return PyObject_Vectorcall(op->python, args, nargsf, kwnames);
    if (op->view) {
        if (kwnames == NULL && (nargs == 2 || (nargs == 1 && op->view == 1)) &&
            (op->view == 2 || nargs == 1 || args[1] == Py_None)) {
            PyObject *res = fastop_view(op, args[0], nargs == 2 ? args[1] : NULL);
            if (res != NULL || PyErr_Occurred())
                return res;
        }
        return PyObject_Vectorcall(op->python, args, nargsf, kwnames);
    }
    if (op->unary) {
        if (nargs == 1 && kwnames == NULL && !op->inexact) {
            PyObject *res = fastop_record_unary(op, args[0]);
            if (res != NULL || PyErr_Occurred())
                return res;
        }
        return PyObject_Vectorcall(op->python, args, nargsf, kwnames);
    }
    if (nargs == 2 && kwnames == NULL) {
        PyObject *a = op->reflected ? args[1] : args[0], *b = op->reflected ? args[0] : args[1];
        PyObject *res = op->indexing            ? fastop_getitem(a, b)
                        : op->dot_attrs != NULL ? fastop_matmul(op, a, b)
                                                : fastop_record(op, a, b);
        if (res != NULL || PyErr_Occurred())
            return res;
    }
    return PyObject_Vectorcall(op->python, args, nargsf, kwnames);
}

static PyObject *
fastop_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
    PyObject *python, *prim, *kinds, *dot_attrs = NULL, *view_fns = NULL;
    int inexact, reflected, unary = 0, gated = 0, indexing = 0, view = 0;
    static char *names[] = {"python", "prim", "kinds", "inexact", "reflected", "unary",
                            "gated", "dot_attrs", "indexing", "view", "view_fns", NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "OOUpp|ppO!piO!:FastOp", names, &python,
                                     &prim, &kinds, &inexact, &reflected, &unary, &gated,
                                     &PyDict_Type, &dot_attrs, &indexing, &view,
                                     &PyTuple_Type, &view_fns))
        return NULL;
    if (view != 0 && (view < 1 || view > 2 || view_fns == NULL))
        return PyErr_Format(PyExc_ValueError, "view=1 (transpose) or 2 (reshape), with "
                                              "view_fns");
    if (lazy_cls == NULL)
        return PyErr_Format(PyExc_RuntimeError, "stablejit._recorder.init_operators first");
    FastOp *self = (FastOp *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(python);
    Py_INCREF(prim);
    Py_INCREF(kinds);
    self->python = python, self->prim = prim, self->kinds = kinds;
    self->inexact = inexact, self->reflected = reflected, self->unary = unary;
    self->gated = gated;
    self->dot_attrs = Py_XNewRef(dot_attrs);
    self->indexing = indexing;
    self->view = view;
    self->view_fns = Py_XNewRef(view_fns);
    self->vectorcall = (vectorcallfunc)fastop_vectorcall;
    return (PyObject *)self;
}

static int
fastop_traverse(FastOp *self, visitproc visit, void *arg)
{
    Py_VISIT(self->python);
    Py_VISIT(self->prim);
    Py_VISIT(self->kinds);
    Py_VISIT(self->ok_pair);
    Py_VISIT(self->ok_scalar);
    Py_VISIT(self->dot_attrs);
    Py_VISIT(self->view_fns);
    Py_VISIT(self->bc_types[0]);
    Py_VISIT(self->bc_types[1]);
    Py_VISIT(self->bc_shape);
    Py_VISIT(self->mm_prec);
    Py_VISIT(self->mm_attrs[0]);
    Py_VISIT(self->mm_attrs[1]);
    return 0;
}

static int
fastop_clear(FastOp *self)
{
    Py_CLEAR(self->python);
    Py_CLEAR(self->prim);
    Py_CLEAR(self->kinds);
    Py_CLEAR(self->ok_pair);
    Py_CLEAR(self->ok_scalar);
    Py_CLEAR(self->dot_attrs);
    Py_CLEAR(self->view_fns);
    Py_CLEAR(self->bc_types[0]);
    Py_CLEAR(self->bc_types[1]);
    Py_CLEAR(self->bc_shape);
    Py_CLEAR(self->mm_prec);
    Py_CLEAR(self->mm_attrs[0]);
    Py_CLEAR(self->mm_attrs[1]);
    return 0;
}

static void
fastop_dealloc(FastOp *self)
{
    PyObject_GC_UnTrack(self);
    fastop_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* FastOp and FastBind both begin with the Python function they stand for */
typedef struct {
    PyObject_HEAD
    PyObject *python;
} Wrapper;

/* repr(stablejit.numpy.add) reads as the function's */
static PyObject *
wrapper_repr(Wrapper *self)
{
    return PyObject_Repr(self->python);
}

static PyObject *
wrapped_attr(Wrapper *self, void *name)
{
    return PyObject_GetAttrString(self->python, (const char *)name);
}

/* the Python function's attribute where the type has none (__wrapped__, eager ...) */
static PyObject *
wrapper_getattro(Wrapper *self, PyObject *name)
{
    PyObject *v = PyObject_GenericGetAttr((PyObject *)self, name);
    if (v != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return v;
    PyErr_Clear();
    return PyObject_GetAttr(self->python, name);
}

/* an attribute set on it (a composed docstring) is set on the Python function, where
 * it is read */
static int
wrapper_setattro(Wrapper *self, PyObject *name, PyObject *value)
{
    return PyObject_SetAttr(self->python, name, value);
}

/* bound to an instance as a method, as the Python function would be */
static PyObject *
wrapper_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

/* what the type itself would answer first: the Python function's instead */
static PyGetSetDef wrapper_getset[] = {
    {"__name__", (getter)wrapped_attr, NULL, NULL, "__name__"},
    {"__qualname__", (getter)wrapped_attr, NULL, NULL, "__qualname__"},
    {"__doc__", (getter)wrapped_attr, NULL, NULL, "__doc__"},
    {"__module__", (getter)wrapped_attr, NULL, NULL, "__module__"},
    {NULL},
};

/* op.with_python(fn): the same operator, with fn as its Python function (what it calls
 * for every call it does not take: tracebacks.wrap_namespace's boundary around it) */
static PyObject *
fastop_with_python(FastOp *op, PyObject *fn)
{
    FastOp *self = (FastOp *)Py_TYPE(op)->tp_alloc(Py_TYPE(op), 0);
    if (self == NULL)
        return NULL;
    self->python = Py_NewRef(fn);
    self->prim = Py_NewRef(op->prim);
    self->kinds = Py_NewRef(op->kinds);
    self->inexact = op->inexact, self->reflected = op->reflected, self->unary = op->unary;
    self->gated = op->gated, self->indexing = op->indexing, self->view = op->view;
    self->dot_attrs = Py_XNewRef(op->dot_attrs);
    self->view_fns = Py_XNewRef(op->view_fns);
    self->vectorcall = op->vectorcall;
    return (PyObject *)self;
}

static PyMethodDef fastop_methods[] = {
    {"with_python", (PyCFunction)fastop_with_python, METH_O,
     "with_python(fn): the same operator, calling fn where it does not take a call"},
    {NULL},
};

static PyMemberDef fastop_members[] = {
    {"python", T_OBJECT, offsetof(FastOp, python), READONLY, "the Python operator"},
    {"__wrapped__", T_OBJECT, offsetof(FastOp, python), READONLY,
     "the Python operator (inspect.signature follows it)"},
    {"prim", T_OBJECT, offsetof(FastOp, prim), READONLY, "the primitive it records"},
    {NULL},
};

static PyTypeObject FastOpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stablejit._recorder.FastOp",
    .tp_doc = "A Tensor operator or namespace function (elementwise, matmul, basic "
              "indexing, x.T / transpose / reshape): its common case recorded or run in C, "
              "the Python one otherwise.",
    .tp_basicsize = sizeof(FastOp),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = fastop_new,
    .tp_dealloc = (destructor)fastop_dealloc,
    .tp_traverse = (traverseproc)fastop_traverse,
    .tp_clear = (inquiry)fastop_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(FastOp, vectorcall),
    .tp_descr_get = wrapper_get,
    .tp_getattro = (getattrofunc)wrapper_getattro,
    .tp_setattro = (setattrofunc)wrapper_setattro,
    .tp_repr = (reprfunc)wrapper_repr,
    .tp_members = fastop_members,
    .tp_methods = fastop_methods,
    .tp_getset = wrapper_getset,
};

/* ---- dispatch's fast binds: the same question, for namespace functions ------------- */

/* dispatch.bind_unary / bind_binary / bind_scalar wrapped: where the op records on a lazy
 * backend or grad tape now (recorder_for, unwatched) with no weak operand, C records it;
 * anything else is the Python function's (also while the native path is switched off). */
typedef struct {
    PyObject_HEAD
    PyObject *python;
    int arity;          /* 1: bind_unary(prim, x, attrs=EMPTY); 2: bind_binary(prim, x, y);
                         * 3: bind_scalar(prim, x, value, scalar_first=False);
                         * 4: bind(prim, tensors, attrs=EMPTY) */
    vectorcallfunc vectorcall;
} FastBind;

/* dispatch.bind(prim, tensors, attrs) where the backend stack ends with a lazy backend or
 * grad tape B that records now, and every operand is a tensor of B or of B's device
 * (bind's backend_for picks B then, and _arrive moves nothing): B records it in C. A
 * tuple of the results; NULL with no exception: Python's. */
static PyObject *
fastbind_general(PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2 || nargs > 3)
        return NULL;
    PyObject *prim = args[0], *tensors = args[1];
    PyObject *attrs = nargs == 3 ? args[2] : empty_attrs;
    if (!Py_IS_TYPE(attrs, Py_TYPE(empty_attrs)) ||
        !(PyTuple_CheckExact(tensors) || PyList_CheckExact(tensors)))
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(tensors);
    if (n < 1)
        return NULL;
    PyObject *stack = thread_stack();
    if (stack == NULL) {
        if (PyErr_ExceptionMatches(PyExc_AttributeError))
            PyErr_Clear();
        return NULL;
    }
    PyObject *b = PyList_CheckExact(stack) && PyList_GET_SIZE(stack) > 0
                      ? PyList_GET_ITEM(stack, PyList_GET_SIZE(stack) - 1) : NULL;
    Py_XINCREF(b);
    Py_DECREF(stack);
    if (b == NULL)
        return NULL;
    PyObject *res = NULL;
    int ready = is_recorder(b) ? unwatched() : 0;
    if (ready <= 0)
        goto done;
    PyObject *target = target_of(b);
    if (target == NULL)
        goto done;
    Py_INCREF(tensors);
    PyObject **items = PySequence_Fast_ITEMS(tensors);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = items[i];
        if (!Py_IS_TYPE(t, T.cls) || SLOT(t, T.weak) != Py_False ||
            !joins(b, target, SLOT(t, T.backend)) || SLOT(t, T.data) == NULL) {
            Py_DECREF(tensors);
            goto done;
        }
    }
    Rec r;
    int opened = rec_open(b, &r);
    if (opened > 0) {
        res = record_op(b, &r, prim, items, n, attrs);
        rec_close(&r);
    }
    Py_DECREF(tensors);
done:
    Py_DECREF(b);
    return res;
}

static PyObject *
fastbind_record(FastBind *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (self->arity == 4)
        return fastbind_general(args, nargs);
    PyObject *prim = args[0], *x = args[1];
    if (!Py_IS_TYPE(x, T.cls) || SLOT(x, T.weak) != Py_False)
        return NULL;
    PyObject *backend = SLOT(x, T.backend), *xt = SLOT(x, T.type);
    if (backend == NULL || xt == NULL)
        return NULL;
    PyObject *attrs = empty_attrs, *y = NULL, *value = NULL, *first = Py_False;
    if (self->arity == 1) {
        if (nargs > 3)
            return NULL;
        if (nargs == 3)
            attrs = args[2];
    }
    else if (self->arity == 2) {
        if (nargs != 3)
            return NULL;
        y = args[2];
        if (!Py_IS_TYPE(y, T.cls) || SLOT(y, T.backend) == NULL ||
            SLOT(y, T.weak) != Py_False || SLOT(x, T.data) == NULL || SLOT(y, T.data) == NULL)
            return NULL;
    }
    else {
        if (nargs < 3 || nargs > 4)
            return NULL;
        value = args[2];
        if (nargs == 4)
            first = args[3];
        if (first != Py_True && first != Py_False)
            return NULL;
    }
    PyObject *bs[2] = {backend, y ? SLOT(y, T.backend) : NULL};
    backend = recorder_for(bs, y ? 2 : 1); /* (a reference held from here) */
    if (backend == NULL) { /* on a device now: its cached program run in C */
        PyObject *dev = PyErr_Occurred() ? NULL : eager_backend(bs, y ? 2 : 1);
        if (dev == NULL || !Py_IS_TYPE(attrs, Py_TYPE(empty_attrs)))
            return NULL;
        if (value == NULL) {
            PyObject *items[2] = {x, y};
            return eager_run(dev, prim, attrs, items, y ? 2 : 1);
        }
        PyObject *out = is_py_number(value) ? eager_scalar(dev, prim, x, value,
                                                            first == Py_True) : NULL;
        if (out == NULL)
            return NULL;
        PyObject *res = PyTuple_Pack(1, out); /* (bind_scalar's tuple) */
        Py_DECREF(out);
        return res;
    }
    int ready = unwatched();
    if (ready <= 0) {
        Py_DECREF(backend);
        return NULL;
    }
    Rec r;
    int opened = rec_open(backend, &r);
    if (opened <= 0) {
        Py_DECREF(backend);
        return NULL;
    }
    r.single = self->arity != 3; /* (bind_scalar returns the tuple) */
    Py_INCREF(xt);
    PyObject *res;
    if (value != NULL) {
        res = record_scalar(backend, &r, prim, x, xt, value, first);
    }
    else {
        PyObject *items[2] = {x, y};
        res = record_op(backend, &r, prim, items, y ? 2 : 1, attrs);
    }
    Py_DECREF(xt);
    rec_close(&r);
    Py_DECREF(backend);
    if (res == NULL || self->arity == 3 || !PyTuple_CheckExact(res))
        return res; /* (bind_scalar's tuple; or the tensor itself: r.single) */
    if (PyTuple_GET_SIZE(res) != 1) { /* `out, = backend.apply(...)` in Python */
        PyErr_Format(PyExc_ValueError, "too many values to unpack (expected 1)");
        Py_DECREF(res);
        return NULL;
    }
    return only_result(res);
}

static PyObject *
fastbind_vectorcall(FastBind *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (binds_on && kwnames == NULL && nargs >= 2) {
        PyObject *res = fastbind_record(self, args, nargs);
        if (res != NULL || PyErr_Occurred())
            return res;
    }
    return PyObject_Vectorcall(self->python, args, nargsf, kwnames);
}

static int
fastbind_traverse(FastBind *self, visitproc visit, void *arg)
{
    Py_VISIT(self->python);
    return 0;
}

static int
fastbind_clear(FastBind *self)
{
    Py_CLEAR(self->python);
    return 0;
}

static void
fastbind_dealloc(FastBind *self)
{
    PyObject_GC_UnTrack(self);
    fastbind_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef fastbind_members[] = {
    {"python", T_OBJECT, offsetof(FastBind, python), READONLY, "the Python function"},
    {"__wrapped__", T_OBJECT, offsetof(FastBind, python), READONLY, "the Python function"},
    {NULL},
};

static PyTypeObject FastBindType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stablejit._recorder.FastBind",
    .tp_doc = "dispatch's bind_unary / bind_binary / bind_scalar: recorded in C on a lazy "
              "backend or grad tape, the Python function otherwise.",
    .tp_basicsize = sizeof(FastBind),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_dealloc = (destructor)fastbind_dealloc,
    .tp_traverse = (traverseproc)fastbind_traverse,
    .tp_clear = (inquiry)fastbind_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(FastBind, vectorcall),
    .tp_members = fastbind_members,
    .tp_getset = wrapper_getset,
};

/* fast_bind(python, arity): the C bind around dispatch's Python one */
static PyObject *
fast_bind(PyObject *module, PyObject *args)
{
    PyObject *python;
    int arity;
    if (!PyArg_ParseTuple(args, "Oi:fast_bind", &python, &arity))
        return NULL;
    if (arity < 1 || arity > 4)
        return PyErr_Format(PyExc_ValueError, "arity 1, 2, 3 or 4");
    FastBind *self = PyObject_GC_New(FastBind, &FastBindType);
    if (self == NULL)
        return NULL;
    Py_INCREF(python);
    self->python = python;
    self->arity = arity;
    self->vectorcall = (vectorcallfunc)fastbind_vectorcall;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyObject *
set_binds(PyObject *module, PyObject *on)
{
    int v = PyObject_IsTrue(on);
    if (v < 0)
        return NULL;
    binds_on = v && lazy_cls != NULL;
    Py_RETURN_NONE;
}

/* ---- recorder.structural_key's entries ------------------------------------------------ */

static PyObject *s_key;

/* recorder._structural over a tape (a list): each entry as it is, but an entry holding
 * Functions (an inlined one; an op's regions) with each Function's structural key in
 * its place; a tuple */
static PyObject *
structural_entries(PyObject *module, PyObject *tape)
{
    if (!PyList_CheckExact(tape) || inline_tag == NULL || param_tag == NULL ||
        scalar_tag == NULL)
        return PyErr_Format(PyExc_TypeError, "structural_entries takes a recorder's tape");
    Py_ssize_t n = PyList_GET_SIZE(tape);
    PyObject *out = PyTuple_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n && i < PyList_GET_SIZE(tape); i++) {
        PyObject *e = PyList_GET_ITEM(tape, i), *new = NULL;
        Py_ssize_t size = PyTuple_CheckExact(e) ? PyTuple_GET_SIZE(e) : 0;
        if (size < 1) {
            PyErr_SetString(PyExc_TypeError, "a tape entry is not a tuple");
            goto fail;
        }
        Py_INCREF(e);
        PyObject *head = PyTuple_GET_ITEM(e, 0);
        if (head == inline_tag && size == 3) {
            PyObject *k = PyObject_CallMethodNoArgs(PyTuple_GET_ITEM(e, 1), s_key);
            new = k ? PyTuple_Pack(3, inline_tag, k, PyTuple_GET_ITEM(e, 2)) : NULL;
            Py_XDECREF(k);
        }
        else if (head == param_tag || head == scalar_tag || size == 3) {
            new = Py_NewRef(e);
        }
        else if (size == 4 && PyTuple_CheckExact(PyTuple_GET_ITEM(e, 3))) {
            PyObject *regions = PyTuple_GET_ITEM(e, 3);
            PyObject *keys = PyTuple_New(PyTuple_GET_SIZE(regions));
            for (Py_ssize_t j = 0; keys != NULL && j < PyTuple_GET_SIZE(regions); j++) {
                PyObject *k = PyObject_CallMethodNoArgs(PyTuple_GET_ITEM(regions, j), s_key);
                if (k == NULL)
                    Py_CLEAR(keys);
                else
                    PyTuple_SET_ITEM(keys, j, k);
            }
            new = keys ? PyTuple_Pack(4, head, PyTuple_GET_ITEM(e, 1), PyTuple_GET_ITEM(e, 2),
                                      keys)
                       : NULL;
            Py_XDECREF(keys);
        }
        else
            PyErr_SetString(PyExc_TypeError, "a tape entry of an unknown form");
        Py_DECREF(e);
        if (new == NULL)
            goto fail;
        PyTuple_SET_ITEM(out, i, new);
    }
    if (PyList_GET_SIZE(tape) != n) {
        PyErr_SetString(PyExc_RuntimeError, "a tape changed while it was keyed");
        goto fail;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

/* ---- LazyBackend.flush: the last graph, the live values, the run ------------------ */

/* 1 where tapes a and b (lists of tuples) are equal as Python's == says: entry by entry,
 * each tuple item by item, identity first; 0 where not, -1 on error. A loop's graphs share
 * their items, so most compare by identity without a call per tuple (list == spent ~43 ns
 * per entry of the 30-op chain). a is the tape kept from the last graph: an entry of it
 * found equal to b's, not identical, is replaced by b's, so that a loop's tapes come to
 * share every entry (an Attrs compared by its Python __eq__ each step, otherwise). */
static int
tapes_equal(PyObject *a, PyObject *b)
{
    if (PyList_GET_SIZE(a) != PyList_GET_SIZE(b))
        return 0;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(a) && i < PyList_GET_SIZE(b); i++) {
        PyObject *x = PyList_GET_ITEM(a, i), *y = PyList_GET_ITEM(b, i);
        if (x == y)
            continue;
        Py_INCREF(x); /* (a comparison may run Python, which may change the tapes) */
        Py_INCREF(y);
        Py_ssize_t n = PyTuple_CheckExact(x) && PyTuple_CheckExact(y) ? PyTuple_GET_SIZE(x) : -1;
        int eq = 1;
        if (n >= 0 && n == PyTuple_GET_SIZE(y)) {
            for (Py_ssize_t j = 0; eq > 0 && j < n; j++) {
                PyObject *u = PyTuple_GET_ITEM(x, j), *v = PyTuple_GET_ITEM(y, j);
                if (u != v)
                    eq = PyObject_RichCompareBool(u, v, Py_EQ);
            }
        }
        else {
            eq = PyObject_RichCompareBool(x, y, Py_EQ);
        }
        /* equal, not the same object (an entry first recorded on Python's path, an
         * attribute set made anew): a keeps b's, so the next comparison is by identity */
        if (eq > 0 && i < PyList_GET_SIZE(a) && PyList_GET_ITEM(a, i) == x) {
            PyList_SET_ITEM(a, i, Py_NewRef(y));
            Py_DECREF(x); /* (the list's reference) */
        }
        Py_DECREF(x);
        Py_DECREF(y);
        if (eq <= 0)
            return eq;
        if (PyList_GET_SIZE(a) != PyList_GET_SIZE(b)) /* (changed by a comparison) */
            return 0;
    }
    return 1;
}

static PyObject *
same_tape(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_CheckExact(args[0]) || !PyList_CheckExact(args[1]))
        return PyErr_Format(PyExc_TypeError, "same_tape takes two tapes");
    int eq = tapes_equal(args[0], args[1]);
    return eq < 0 ? NULL : PyBool_FromLong(eq);
}

/* the Pendings of `pending` (a graph's list, which holds them) that something else holds
 * too, not yet computed and of `graph` - what a flush computes, as
 * recorder._python_live_pending: a new list, NULL with an exception. (A Pending only the
 * list holds is one whose tensors are all gone: what a weak reference's death said, for
 * ~400 instructions an op. A free-threaded build, whose counts are not exact, has no C
 * recorder: its Python path lists weak references, recorder._HOLDS.) */
static PyObject *s_buffer, *s_graph;

static PyObject *
live_list(PyObject *pending, PyObject *graph)
{
    PyObject *out = PyList_New(0);
    for (Py_ssize_t i = 0; out != NULL && i < PyList_GET_SIZE(pending); i++) {
        PyObject *p = PyList_GET_ITEM(pending, i);
        if (Py_REFCNT(p) < 2) /* (only the list holds it) */
            continue;
        Py_INCREF(p); /* (an attribute read or a comparison may run Python) */
        int ours = Py_IS_TYPE(p, pending_cls); /* (else the Python class, read as Python) */
        PyObject *buf = ours ? Py_XNewRef(SLOT(p, p_buffer)) : PyObject_GetAttr(p, s_buffer);
        PyObject *g = buf == Py_None ? ours ? Py_XNewRef(SLOT(p, p_graph))
                                            : PyObject_GetAttr(p, s_graph)
                                     : NULL;
        if (buf == NULL || (buf == Py_None && g == NULL)) { /* (deleted: as Python raises) */
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_AttributeError, buf == NULL ? "buffer" : "graph");
            Py_CLEAR(out);
        }
        int same = out == NULL || buf != Py_None ? 0
                   : g == graph                  ? 1
                                                 : PyObject_RichCompareBool(g, graph, Py_EQ);
        if (same < 0 || (same > 0 && PyList_Append(out, p) < 0))
            Py_CLEAR(out);
        Py_XDECREF(buf);
        Py_XDECREF(g);
        Py_DECREF(p);
    }
    return out;
}

/* recorder.live_pending(pending, graph): live_list for Python */
static PyObject *
live_pending(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2 || !PyList_CheckExact(args[0]) || pending_cls == NULL)
        return PyErr_Format(PyExc_TypeError, "live_pending takes a graph's pending list "
                                             "and its number");
    return live_list(args[0], args[1]);
}

/* recorder.tape_leaves(tape, tensors): GradTape.leaves in C (recorder.py's
 * _python_tape_leaves is the reference): for each Tensor of the list, a parameter of the
 * tape bound to that tensor, and a pending tensor of the parameter with the tensor's weak
 * flag. The list of them; None, with nothing recorded, where this is not a recorder whose
 * slots C knows, `tensors` is no list, or a value is not a Tensor (Python then makes
 * them). */
static PyObject *
tape_leaves(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 2)
        return PyErr_Format(PyExc_TypeError, "tape_leaves takes a recorder and a list");
    PyObject *self = args[0], *ts = args[1];
    if (!PyList_CheckExact(ts))
        Py_RETURN_NONE;
    PyObject *tape = recorder_slot(&RS, self, RS.tape);
    PyObject *locs = tape ? SLOT(self, RS.locs) : NULL;
    PyObject *types = tape ? SLOT(self, RS.types) : NULL;
    PyObject *inputs = tape ? SLOT(self, RS.inputs) : NULL;
    PyObject *pending = tape ? SLOT(self, RS.pending) : NULL;
    PyObject *graph = tape ? SLOT(self, RS.graph) : NULL;
    if (param_tag == NULL || pending_cls == NULL || T.cls == NULL || graph == NULL ||
        !PyList_CheckExact(tape) || locs == NULL || !PyList_CheckExact(locs) ||
        types == NULL || !PyList_CheckExact(types) || inputs == NULL ||
        !PyList_CheckExact(inputs) || pending == NULL || !PyList_CheckExact(pending))
        Py_RETURN_NONE;
    Py_ssize_t n = PyList_GET_SIZE(ts);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(ts, i);
        if (!Py_IS_TYPE(t, T.cls) || SLOT(t, T.type) == NULL || SLOT(t, T.weak) == NULL)
            Py_RETURN_NONE;
    }
    PyObject *out = PyList_New(n);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(ts, i);
        PyObject *type = SLOT(t, T.type), *weak = SLOT(t, T.weak);
        Py_ssize_t slot = PyList_GET_SIZE(types);
        PyObject *entry = PyTuple_Pack(2, param_tag, type);
        if (entry == NULL || PyList_Append(tape, entry) < 0 ||
            PyList_Append(locs, Py_None) < 0 || PyList_Append(types, type) < 0 ||
            PyList_Append(inputs, t) < 0) {
            Py_XDECREF(entry);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(entry);
        PyObject *x = pending_tensor(self, pending, graph, slot, type);
        if (x == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        Py_INCREF(weak);
        Py_SETREF(SLOT(x, T.weak), weak);
        PyList_SET_ITEM(out, i, x);
    }
    return out;
}

static PyObject *s_last, *s_new_graph, *s_dump_to, *s_log_compiles;

/* config's functions for the settings below as init_operators found them, the process's
 * os.environ then (config._ENVIRON), and the os module's dict (where os.environ is read) */
static PyObject *setting_fns[3], *environ_obj, *os_dict, *s_environ, *s_data, *s_encoded,
                *s_environ_key, *s_lazy_max_ops;
static PyObject *setting_vars[3]; /* their variables' names */

/* 1 where the variable of config's setting k is unset, as config._getenv reads it: os.environ
 * still the process's own mapping, and its data holding no value under the variable's key
 * (config._encoded's, made by Python's first read). 0: Python reads it (set, or unsure). */
static int
setting_unset(int k)
{
    PyObject *env = os_dict ? PyDict_GetItemWithError(os_dict, s_environ) : NULL;
    if (env == NULL || env != environ_obj || PyErr_Occurred())
        return 0;
    PyObject **dp = _PyObject_GetDictPtr(env);
    PyObject *data = dp && *dp ? PyDict_GetItemWithError(*dp, s_data) : NULL;
    PyObject *encoded = data ? PyDict_GetItemWithError(config_dict, s_encoded) : NULL;
    PyObject *key = encoded && PyDict_CheckExact(encoded)
                        ? PyDict_GetItemWithError(encoded, setting_vars[k]) : NULL;
    int unset = key != NULL && PyDict_CheckExact(data) &&
                PyDict_GetItemWithError(data, key) == NULL && !PyErr_Occurred();
    PyErr_Clear(); /* (Python reads it, and raises what it raises) */
    return unset;
}

/* a setting read by its function in config (dump_to, log_compiles): a new reference. Where
 * the function is config's own and its variable unset, its default without the call (three
 * Python frames, read twice a flush and once a grad call). */
static PyObject *
setting(PyObject *name)
{
    PyObject *f = PyDict_GetItemWithError(config_dict, name);
    if (f == NULL)
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_AttributeError, "config.%U", name);
    for (int k = 0; k < 2; k++)
        if (f == setting_fns[k] && setting_unset(k))
            return Py_NewRef(k == 0 ? Py_None : Py_False);
    return PyObject_CallNoArgs(f);
}

/* self._op_bound() (read at a graph's first op): Recorder's answer (a constant) and
 * LazyBackend's (config.lazy_max_ops(), while STABLEJIT_LAZY_MAX_OPS is unset: its
 * default) kept once seen, where the method and config's function are the ones found
 * at import; the method's call otherwise (four Python frames for a lazy graph). */
static PyObject *op_bound_fns[2], *op_bound_seen[2];

static PyObject *
op_bound_of(PyObject *self)
{
    if (op_bound_fns[1] == NULL && RS.cls != NULL) /* (Recorder's, once its type is known) */
        op_bound_fns[1] = Py_XNewRef(_PyType_Lookup(RS.cls, s_op_bound));
    PyObject *fn = _PyType_Lookup(Py_TYPE(self), s_op_bound);
    int k = fn == NULL ? -1 : fn == op_bound_fns[0] ? 0 : fn == op_bound_fns[1] ? 1 : -1;
    if (k == 0) {
        PyObject *f = PyDict_GetItemWithError(config_dict, s_lazy_max_ops);
        if (f == NULL || f != setting_fns[2] || !setting_unset(2))
            k = -1;
    }
    if (k >= 0 && op_bound_seen[k] != NULL)
        return Py_NewRef(op_bound_seen[k]);
    PyErr_Clear(); /* (the call meets any error again) */
    PyObject *bound = PyObject_CallMethodNoArgs(self, s_op_bound);
    if (bound != NULL && k >= 0)
        Py_XSETREF(op_bound_seen[k], Py_NewRef(bound));
    return bound;
}

/* LazyBackend.flush's common case in C: a graph equal to the last one run (its tape,
 * and the slots still wanted) runs that program again, as flush and _program do on the
 * Python path. True when it ran the graph (or there was none); False where Python's
 * flush decides (nothing live, another graph, a program not loaded, settings that
 * change the flush: a dump directory, logged compiles). */
static PyObject *
flush_last(PyObject *module, PyObject *self)
{
    if (!Py_IS_TYPE(self, lazy_cls) || program_cls == NULL || config_dict == NULL)
        Py_RETURN_FALSE;
    Rec r;
    int opened = rec_open(self, &r);
    if (opened <= 0)
        return opened < 0 ? NULL : Py_NewRef(Py_False);
    PyObject *res = NULL, *live = NULL, *slots = NULL, *last = NULL, *dump = NULL,
             *logged = NULL, *outs = NULL;
    PyObject *tape = rec_list(&r, RS.tape), *pending = rec_list(&r, RS.pending),
             *graph = RSLOT(&r, graph), *inputs = rec_list(&r, RS.inputs);
    if (tape == NULL || pending == NULL || graph == NULL || inputs == NULL)
        goto python;
    if (PyList_GET_SIZE(tape) == 0) {
        res = Py_NewRef(Py_True); /* (nothing recorded) */
        goto done;
    }
    last = PyDict_GetItemWithError(r.dict, s_last);
    if (last == NULL || !PyTuple_CheckExact(last) || PyTuple_GET_SIZE(last) != 3)
        goto python;
    Py_INCREF(last);
    PyObject *prog = PyTuple_GET_ITEM(last, 2);
    if (!Py_IS_TYPE(prog, program_cls) || SLOT(prog, pr_execute) == NULL ||
        SLOT(prog, pr_execute) == Py_None || SLOT(prog, pr_handlers) == NULL ||
        SLOT(prog, pr_handlers) == Py_None)
        goto python; /* (not loaded: Python's Program.run loads it again) */
    if ((live = live_list(pending, graph)) == NULL)
        goto done;
    Py_ssize_t n = PyList_GET_SIZE(live);
    if (n == 0 || (slots = PyTuple_New(n)) == NULL)
        goto python;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *slot = SLOT(PyList_GET_ITEM(live, i), p_slot);
        if (slot == NULL) /* (deleted: Python's flush raises as it reads it) */
            goto python;
        PyTuple_SET_ITEM(slots, i, Py_NewRef(slot));
    }
    int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(last, 1), slots, Py_EQ);
    if (same > 0)
        same = PyList_CheckExact(PyTuple_GET_ITEM(last, 0))
                   ? tapes_equal(PyTuple_GET_ITEM(last, 0), tape) : 0;
    if (same <= 0)
        goto python;
    if ((dump = setting(s_dump_to)) == NULL || (logged = setting(s_log_compiles)) == NULL)
        goto done;
    if (dump != Py_None || logged != Py_False)
        goto python;
    /* the graph is taken: a new one starts, and the program runs on its inputs */
    Py_INCREF(inputs);
    PyObject *fresh = PyObject_CallMethodNoArgs(self, s_new_graph);
    if (fresh == NULL) {
        Py_DECREF(inputs);
        goto done;
    }
    Py_DECREF(fresh);
    int ran;
    outs = run_program(SLOT(prog, pr_execute), SLOT(prog, pr_handlers), inputs, s_consume,
                       &ran); /* (inputs stolen) */
    if (outs == NULL)
        goto done;
    if (!PyList_CheckExact(outs) || PyList_GET_SIZE(outs) != n) {
        PyErr_SetString(PyExc_TypeError, "a program gave other than its results");
        goto done;
    }
    if (dict_count_add(r.dict, s_flushes, 1, "a lazy backend's flushes") < 0)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++)
        Py_XSETREF(SLOT(PyList_GET_ITEM(live, i), p_buffer),
                   Py_NewRef(PyList_GET_ITEM(outs, i)));
    res = Py_NewRef(Py_True);
    goto done;
python:
    if (!PyErr_Occurred())
        res = Py_NewRef(Py_False);
done:
    Py_XDECREF(live);
    Py_XDECREF(slots);
    Py_XDECREF(last);
    Py_XDECREF(dump);
    Py_XDECREF(logged);
    Py_XDECREF(outs);
    rec_close(&r);
    return res;
}

/* ---- composite.one_program's cached call ----------------------------------------------- */

static PyObject *comp_miss;     /* composite._MISS: "Python decides" */
static PyTypeObject *traced_cls; /* composite._Traced */
static PyTypeObject *xla_cls;    /* backends.XlaBackend (exactly) */
static PyObject *comp_run;      /* composite._run(entry, backend, tensors): one program */
static PyObject *promotion_dict, *precision_dict, *s_x64, *s_default;
static Py_ssize_t tr_fn, tr_weak, tr_single, tr_programs;
static PyTypeObject *dtype_cls; /* compiler.dtypes.DType: a setting keyed as exact_key does */

#define COMP_ARGS 16 /* arguments keyed in C; a call with more is Python's */

/* g's signature key (composite.py) for the arguments items[0..n) (the positional ones,
 * then the keyword values named by `names`, a tuple or NULL): each tensor's type and
 * weakness, each None / bool / int / str setting's type and value (a DType's: None and
 * exact_key's (DType, dtype)), the keyword names,
 * x64 mode and the default matrix precision. *backend: the first tensor's backend
 * (borrowed), *mixed: whether another tensor's differs; tens[] gets the tensors in
 * order. A new reference; NULL without an exception for an argument only Python keys. */
static PyObject *
composite_key(PyObject *const *items, Py_ssize_t n, PyObject *names, PyObject **backend,
              PyObject **tens, Py_ssize_t *nt, int *mixed)
{
    PyObject *x64 = PyDict_GetItemWithError(promotion_dict, s_x64);
    PyObject *prec = x64 ? PyDict_GetItemWithError(precision_dict, s_default) : NULL;
    if (prec == NULL)
        return NULL;
    PyObject *key = PyTuple_New(2 * n + (names ? 1 : 0) + 2);
    if (key == NULL)
        return NULL;
    *backend = NULL;
    *nt = 0;
    *mixed = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = items[i], *a, *b;
        PyTypeObject *t = Py_TYPE(v);
        if (t == T.cls) {
            PyObject *be = SLOT(v, T.backend);
            a = SLOT(v, T.type);
            b = SLOT(v, T.weak);
            if (be == NULL || a == NULL || b == NULL)
                goto python;
            if (*backend == NULL)
                *backend = be;
            else if (be != *backend)
                *mixed = 1;
            tens[(*nt)++] = v;
        }
        else if (v == Py_None || t == &PyBool_Type || t == &PyLong_Type ||
                 t == &PyUnicode_Type) {
            a = (PyObject *)t;
            b = v;
        }
        else if (t == dtype_cls) { /* (a dtype setting: None, then exact_key's (DType, v)) */
            PyObject *k = PyTuple_Pack(2, (PyObject *)t, v);
            if (k == NULL)
                goto python;
            Py_INCREF(Py_None);
            PyTuple_SET_ITEM(key, 2 * i, Py_None);
            PyTuple_SET_ITEM(key, 2 * i + 1, k);
            continue;
        }
        else
            goto python;
        Py_INCREF(a);
        PyTuple_SET_ITEM(key, 2 * i, a);
        Py_INCREF(b);
        PyTuple_SET_ITEM(key, 2 * i + 1, b);
    }
    Py_ssize_t j = 2 * n;
    if (names) {
        Py_INCREF(names);
        PyTuple_SET_ITEM(key, j++, names);
    }
    Py_INCREF(x64);
    PyTuple_SET_ITEM(key, j++, x64);
    Py_INCREF(prec);
    PyTuple_SET_ITEM(key, j, prec);
    if (*backend != NULL)
        return key;
python:
    Py_DECREF(key);
    return NULL;
}

/* the Function of `entry` recorded on `rec` at the user's line, its results given the
 * weakness g gives them (Recorder.execute, as g calls it); a list */
static PyObject *
composite_record(PyObject *rec, PyObject *entry, PyObject *tensors)
{
    PyObject *fn = SLOT(entry, tr_fn), *weak = SLOT(entry, tr_weak);
    if (fn == NULL || weak == NULL || !PyTuple_CheckExact(weak))
        return Py_NewRef(comp_miss);
    Rec r;
    int opened = rec_open(rec, &r);
    if (opened <= 0)
        return opened < 0 ? NULL : Py_NewRef(comp_miss);
    PyObject *site = user_site();
    PyObject *outs = site ? record_function(rec, &r, fn, tensors, site) : NULL;
    Py_XDECREF(site);
    rec_close(&r);
    if (outs == NULL)
        return NULL;
    if (PyList_GET_SIZE(outs) != PyTuple_GET_SIZE(weak)) {
        Py_DECREF(outs);
        return PyErr_Format(PyExc_ValueError, "a composite's results and weak flags differ");
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(outs); i++) {
        PyObject *o = PyList_GET_ITEM(outs, i), *w = PyTuple_GET_ITEM(weak, i);
        Py_INCREF(w);
        Py_XSETREF(SLOT(o, T.weak), w);
    }
    return outs;
}

/* whether a composite's tensors tens[0..nt) are all of recorder `rec` or of its device
 * (an XlaBackend), at least one of the device, and `fn` shorter than rec's _start_at:
 * 1 or 0, -1 with an exception */
static int
device_operands(PyObject *rec, PyObject **tens, Py_ssize_t nt, PyObject *fn)
{
    PyObject *target = target_of(rec);
    int device = 0;
    if (target == NULL || !Py_IS_TYPE(target, xla_cls) || fn == NULL)
        return 0;
    for (Py_ssize_t i = 0; i < nt; i++) {
        PyObject *b = SLOT(tens[i], T.backend);
        if (b == target)
            device = 1;
        else if (b != rec)
            return 0;
    }
    if (!device)
        return 0;
    int large = long_function(rec, fn);
    return large < 0 ? -1 : !large;
}

/* composite._run in C: the entry's program for the device `backend` (made by _run at the
 * signature's first eager call there) run on the tensors' buffers, and its result tensors
 * (a list) made as _run makes them, with the entry's weak flags. NULL with no exception
 * where _run decides: no program for this backend yet, an evicted one (Program.run loads
 * it again), a deleted operand (_run raises its clear error). */
static PyObject *
composite_eager(PyObject *entry, PyObject *backend, PyObject *tensors)
{
    PyObject *programs = SLOT(entry, tr_programs), *weak = SLOT(entry, tr_weak);
    if (program_cls == NULL || programs == NULL || !PyDict_CheckExact(programs) ||
        weak == NULL || !(PyTuple_CheckExact(weak) || PyList_CheckExact(weak)))
        return NULL;
    PyObject *prog = PyDict_GetItemWithError(programs, backend);
    if (prog == NULL || !Py_IS_TYPE(prog, program_cls))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(tensors);
    PyObject *bufs = PyList_New(n), *res = NULL;
    Py_INCREF(prog); /* (held: an allocation may collect, and the run releases the GIL) */
    for (Py_ssize_t i = 0; bufs != NULL && i < n; i++) {
        PyObject *d = SLOT(PyList_GET_ITEM(tensors, i), T.data);
        if (d == NULL || d == Py_None) /* deleted: _run's clear error */
            Py_CLEAR(bufs);
        else
            PyList_SET_ITEM(bufs, i, Py_NewRef(d));
    }
    if (bufs != NULL)
        res = run_loaded(prog, bufs, backend, weak, "a composite's program");
    Py_DECREF(prog);
    return res;
}

static PyObject *composite_items(PyObject *done, PyObject *const *items, Py_ssize_t n,
                                 PyObject *names);

/* composite_call(done, args, kwargs): composite.one_program's g, for a call it can key
 * in C (composite_key) whose signature `done` (its cache's entries) holds, where its
 * tensors' backend is the lazy backend or grad tape that ends the backend stack and
 * records now, or that recorder's device (the traced Function becomes one tape entry; its
 * device tensors are parameters), or a device with no backend
 * stack (composite._run: one cached program). Anything else - a new signature, another
 * argument or backend, NaN checks, a live trace - gives comp_miss, and g's Python
 * decides and raises as it always did. */
static PyObject *
composite_call(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (comp_miss == NULL) /* (never None: g would return it as the result) */
        return PyErr_Format(PyExc_RuntimeError, "composite_call before init_composite");
    if (nargs != 3 || !binds_on || !PyDict_Check(args[0]) || !PyTuple_CheckExact(args[1]) ||
        !PyDict_CheckExact(args[2]))
        return Py_NewRef(comp_miss);
    PyObject *done = args[0], *pos = args[1], *kw = args[2];
    Py_ssize_t np = PyTuple_GET_SIZE(pos), n = np + PyDict_GET_SIZE(kw);
    if (n > COMP_ARGS)
        return Py_NewRef(comp_miss);
    PyObject *items[COMP_ARGS], *names = NULL;
    for (Py_ssize_t i = 0; i < np; i++)
        items[i] = PyTuple_GET_ITEM(pos, i);
    if (n > np) {
        if ((names = PyTuple_New(n - np)) == NULL)
            return NULL;
        Py_ssize_t at = 0, i = 0;
        PyObject *k, *v;
        while (PyDict_Next(kw, &at, &k, &v)) {
            Py_INCREF(k);
            PyTuple_SET_ITEM(names, i, k);
            items[np + i++] = v;
        }
    }
    PyObject *res = composite_items(done, items, n, names);
    Py_XDECREF(names);
    return res;
}

/* composite_call's work on the arguments items[0..n): the positional ones, then the
 * values of the keywords `names` (a tuple, or NULL for none), in the call's order */
static PyObject *
composite_items(PyObject *done, PyObject *const *items, Py_ssize_t n, PyObject *names)
{
    PyObject *tens[COMP_ARGS], *backend;
    Py_ssize_t nt;
    int mixed;
    PyObject *key = composite_key(items, n, names, &backend, tens, &nt, &mixed);
    if (key == NULL)
        return PyErr_Occurred() ? NULL : Py_NewRef(comp_miss);
    PyObject *entry = PyDict_GetItemWithError(done, key);
    Py_DECREF(key);
    if (entry == NULL || !Py_IS_TYPE(entry, traced_cls))
        return PyErr_Occurred() ? NULL : Py_NewRef(comp_miss);
    Py_INCREF(entry);
    Py_INCREF(backend);
    PyObject *res = NULL, *tensors = NULL, *outs = NULL;
    PyObject *stack = thread_stack();
    if (stack == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            goto done;
        PyErr_Clear();
        res = Py_NewRef(comp_miss);
        goto done;
    }
    PyObject *top = PyList_CheckExact(stack) && PyList_GET_SIZE(stack) > 0
                        ? PyList_GET_ITEM(stack, PyList_GET_SIZE(stack) - 1) : NULL;
    int recording = !mixed && top == backend && is_recorder(backend);
    int eager = !mixed && top == NULL && PyList_CheckExact(stack) &&
                Py_IS_TYPE(backend, xla_cls);
    Py_DECREF(stack);
    if (!recording && top != NULL && is_recorder(top)) {
        /* tensors of the recorder's device (alone, or with the recorder's own) in a lazy()
         * block or under a grad tape: recorded there, as g decides, unless the Function
         * is one a lazy graph would start at once (Recorder.execute: Python's step) */
        int r = device_operands(top, tens, nt, SLOT(entry, tr_fn));
        if (r < 0)
            goto done;
        if (r) {
            recording = 1;
            Py_SETREF(backend, Py_NewRef(top));
        }
    }
    int ready = recording || eager ? unwatched() : 0;
    if (ready <= 0) {
        res = ready < 0 ? NULL : Py_NewRef(comp_miss);
        goto done;
    }
    if ((tensors = PyList_New(nt)) == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < nt; i++)
        PyList_SET_ITEM(tensors, i, Py_NewRef(tens[i]));
    if (recording && _PyType_Lookup(Py_TYPE(backend), s_tensors) != py_tensors) {
        res = Py_NewRef(comp_miss);
        goto done;
    }
    if (recording)
        outs = composite_record(backend, entry, tensors);
    else if ((outs = composite_eager(entry, backend, tensors)) == NULL && !PyErr_Occurred())
        outs = PyObject_CallFunctionObjArgs(comp_run, entry, backend, tensors, NULL);
    if (outs == NULL || outs == comp_miss) {
        res = outs;
        outs = NULL;
        goto done;
    }
    PyObject *single = SLOT(entry, tr_single);
    if (!(PyList_CheckExact(outs) || PyTuple_CheckExact(outs)) || single == NULL ||
        PySequence_Fast_GET_SIZE(outs) < 1) {
        PyErr_SetString(PyExc_TypeError, "a composite's program gave no results");
        goto done;
    }
    res = single == Py_True ? Py_NewRef(PySequence_Fast_GET_ITEM(outs, 0))
                            : PySequence_Tuple(outs);
done:
    Py_XDECREF(outs);
    Py_XDECREF(tensors);
    Py_DECREF(backend);
    Py_DECREF(entry);
    return res;
}

/* init_composite(composite._MISS, composite._Traced, composite._run, XlaBackend,
 * promotion, precision, DType) */
static PyObject *
init_composite(PyObject *module, PyObject *args)
{
    PyObject *miss, *traced, *run, *xla, *promotion, *precision, *dtype;
    if (!PyArg_ParseTuple(args, "OO!OO!OOO!:init_composite", &miss, &PyType_Type, &traced,
                          &run, &PyType_Type, &xla, &promotion, &precision, &PyType_Type,
                          &dtype))
        return NULL;
    if (slot_offset(traced, "fn", &tr_fn) || slot_offset(traced, "weak", &tr_weak) ||
        slot_offset(traced, "single", &tr_single) ||
        slot_offset(traced, "programs", &tr_programs))
        return NULL;
    PyObject *pd = PyObject_GetAttrString(promotion, "__dict__");
    PyObject *cd = pd ? PyObject_GetAttrString(precision, "__dict__") : NULL;
    if (cd == NULL || !PyDict_Check(pd) || !PyDict_Check(cd)) {
        Py_XDECREF(pd);
        Py_XDECREF(cd);
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "a module dict");
    }
    if ((s_x64 == NULL && (s_x64 = PyUnicode_InternFromString("x64")) == NULL) ||
        (s_default == NULL && (s_default = PyUnicode_InternFromString("default")) == NULL)) {
        Py_DECREF(pd);
        Py_DECREF(cd);
        return NULL;
    }
    Py_XSETREF(promotion_dict, pd);
    Py_XSETREF(precision_dict, cd);
#define KEEP(var, obj) Py_INCREF(obj); Py_XSETREF(var, obj)
    KEEP(comp_run, run);
    KEEP(traced_cls, (PyTypeObject *)traced);
    KEEP(xla_cls, (PyTypeObject *)xla);
    KEEP(comp_miss, miss);
    KEEP(dtype_cls, (PyTypeObject *)dtype);
#undef KEEP
    Py_RETURN_NONE;
}

/* one_program's g as a C callable: a call reaches composite_items with its arguments as
 * they came (no args tuple, no kwargs dict, no Python frame), and g itself runs for
 * everything composite_items leaves to Python (it asks once more, and misses again),
 * and for every call while the Python path is on. Its attributes are g's. */
typedef struct {
    PyObject_HEAD
    PyObject *python; /* g (first, as in FastOp and FastBind: Wrapper's layout) */
    PyObject *done;   /* g's cache entries (the two: TwoRefs' layout) */
    vectorcallfunc vectorcall;
} CompositeFn;

static PyObject *
compfn_vectorcall(CompositeFn *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t nk = kwnames == NULL ? 0 : PyTuple_GET_SIZE(kwnames);
    if (binds_on && comp_miss != NULL && nargs + nk <= COMP_ARGS) {
        PyObject *res = composite_items(self->done, args, nargs + nk, nk ? kwnames : NULL);
        if (res != comp_miss)
            return res; /* (a result, or NULL with the error) */
        Py_DECREF(res);
    }
    return PyObject_Vectorcall(self->python, args, nargsf, kwnames);
}

static PyObject *composite_fn(PyObject *module, PyObject *args);

/* f.with_python(fn): the same cached call, with fn for every call C does not take */
static PyObject *
compfn_with_python(CompositeFn *self, PyObject *fn)
{
    PyObject *args = PyTuple_Pack(2, fn, self->done);
    PyObject *res = args ? composite_fn(NULL, args) : NULL;
    Py_XDECREF(args);
    return res;
}

static PyMethodDef compfn_methods[] = {
    {"with_python", (PyCFunction)compfn_with_python, METH_O,
     "with_python(fn): the same cached call, calling fn where C does not take a call"},
    {NULL},
};

static PyMemberDef compfn_members[] = {
    {"python", T_OBJECT, offsetof(CompositeFn, python), READONLY, "one_program's g"},
    {NULL},
};

static PyTypeObject CompositeFnType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stablejit._recorder.CompositeFn",
    .tp_doc = "A one_program function: its cached call keyed and recorded (or run) in C, "
              "the Python function otherwise.",
    .tp_basicsize = sizeof(CompositeFn),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_dealloc = (destructor)tworefs_dealloc,
    .tp_traverse = (traverseproc)tworefs_traverse,
    .tp_clear = (inquiry)tworefs_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(CompositeFn, vectorcall),
    .tp_descr_get = wrapper_get,
    .tp_getattro = (getattrofunc)wrapper_getattro,
    .tp_setattro = (setattrofunc)wrapper_setattro,
    .tp_repr = (reprfunc)wrapper_repr,
    .tp_members = compfn_members,
    .tp_methods = compfn_methods,
    .tp_getset = wrapper_getset,
};

/* composite_fn(g, done): g as a CompositeFn */
static PyObject *
composite_fn(PyObject *module, PyObject *args)
{
    PyObject *g, *done;
    if (!PyArg_ParseTuple(args, "OO!:composite_fn", &g, &PyDict_Type, &done))
        return NULL;
    CompositeFn *self = PyObject_GC_New(CompositeFn, &CompositeFnType);
    if (self == NULL)
        return NULL;
    self->python = Py_NewRef(g);
    self->done = Py_NewRef(done);
    self->vectorcall = (vectorcallfunc)compfn_vectorcall;
    PyObject_GC_Track(self);
    return (PyObject *)self;
}

static PyObject *
init_operators(PyObject *module, PyObject *args)
{
    PyObject *lazy, *state, *writes, *config;
    if (!PyArg_ParseTuple(args, "O!OOO:init_operators", &PyType_Type, &lazy, &state, &writes,
                          &config))
        return NULL;
    PyObject *wd = PyObject_GetAttrString(writes, "__dict__");
    PyObject *cd = wd ? PyObject_GetAttrString(config, "__dict__") : NULL;
    if (cd == NULL || !PyDict_Check(wd) || !PyDict_Check(cd)) {
        Py_XDECREF(wd);
        Py_XDECREF(cd);
        return PyErr_Occurred() ? NULL : PyErr_Format(PyExc_TypeError, "a module dict");
    }
    Py_XSETREF(writes_dict, wd);
    Py_XSETREF(config_dict, cd);
    /* (setting's fast path: the functions, the mapping and the dict it reads) */
    PyObject *os_module = PyImport_ImportModule("os");
    PyObject *od = os_module ? PyObject_GetAttrString(os_module, "__dict__") : NULL;
    Py_XDECREF(os_module);
    if (od == NULL)
        return NULL;
    Py_XSETREF(os_dict, od);
    Py_XSETREF(environ_obj, Py_XNewRef(PyDict_GetItemWithError(cd, s_environ_key)));
    Py_XSETREF(setting_fns[0], Py_XNewRef(PyDict_GetItemWithError(cd, s_dump_to)));
    Py_XSETREF(setting_fns[1], Py_XNewRef(PyDict_GetItemWithError(cd, s_log_compiles)));
    Py_XSETREF(setting_fns[2], Py_XNewRef(PyDict_GetItemWithError(cd, s_lazy_max_ops)));
    Py_XSETREF(op_bound_fns[0], Py_XNewRef(_PyType_Lookup((PyTypeObject *)lazy, s_op_bound)));
    if (PyErr_Occurred())
        return NULL;
    Py_INCREF(lazy);
    Py_XSETREF(lazy_cls, (PyTypeObject *)lazy);
    Py_INCREF(state);
    Py_XSETREF(context_state, state);
    /* (a threading.local that is not CPython's, gevent's per-greenlet one, keeps a stack
     * per greenlet, not per thread: no cache then) */
    stack_cached = strcmp(Py_TYPE(state)->tp_name, "_thread._local") == 0;
    Py_RETURN_NONE;
}

/* ---- module ----------------------------------------------------------------------------- */

static PyObject *
make_method(PyObject *module, PyMethodDef *def)
{
    PyObject *f = PyCFunction_NewEx(def, module, NULL);
    if (f == NULL)
        return NULL;
    PyObject *m = PyInstanceMethod_New(f);
    Py_DECREF(f);
    return m;
}

static PyMethodDef apply_def = {"apply", (PyCFunction)(void (*)(void))apply,
                                METH_FASTCALL | METH_KEYWORDS,
                                "Recorder.apply in C (the Python method otherwise)."};
static PyMethodDef apply_scalar_def = {"apply_scalar",
                                       (PyCFunction)(void (*)(void))apply_scalar,
                                       METH_FASTCALL | METH_KEYWORDS,
                                       "Recorder.apply_scalar in C (the Python method "
                                       "otherwise)."};

static PyObject *
init(PyObject *module, PyObject *args)
{
    PyObject *tensor, *pending, *internal, *is_int, *tag, *empty, *pa, *pas, *backends,
        *ps, *padd, *pres;
    if (!PyArg_ParseTuple(args, "O!O!O!OOOOOOOOO:init", &PyType_Type, &tensor, &PyType_Type,
                          &pending, &PyDict_Type, &internal, &is_int, &tag, &empty, &pa, &pas,
                          &ps, &padd, &pres, &backends))
        return NULL;
    if (tensor_slots(tensor, &T) < 0 || slot_offset(pending, "slot", &p_slot) || slot_offset(pending, "graph", &p_graph) ||
        slot_offset(pending, "buffer", &p_buffer))
        return NULL;
    PyObject *bd = PyObject_GetAttrString(backends, "__dict__");
    if (bd == NULL)
        return NULL;
    if (!PyDict_Check(bd)) {
        Py_DECREF(bd);
        return PyErr_Format(PyExc_TypeError, "backends.__dict__ is not a dict");
    }
    Py_XSETREF(backends_dict, bd);
#define KEEP(var, obj) Py_INCREF(obj); Py_XSETREF(var, obj)
    KEEP(pending_cls, (PyTypeObject *)pending);
    KEEP(code_internal, internal);
    KEEP(is_internal, is_int);
    KEEP(scalar_tag, tag);
    KEEP(empty_attrs, empty);
    KEEP(py_apply, pa);
    KEEP(py_apply_scalar, pas);
    KEEP(py_slot, ps);
    KEEP(py_add, padd);
    KEEP(py_results, pres);
#undef KEEP
    PyObject *methods = PyTuple_New(2);
    if (methods == NULL)
        return NULL;
    PyObject *m1 = make_method(module, &apply_def), *m2 = make_method(module, &apply_scalar_def);
    if (m1 == NULL || m2 == NULL) {
        Py_XDECREF(m1);
        Py_XDECREF(m2);
        Py_DECREF(methods);
        return NULL;
    }
    PyTuple_SET_ITEM(methods, 0, m1);
    PyTuple_SET_ITEM(methods, 1, m2);
    return methods; /* (apply, apply_scalar): the methods to install on Recorder */
}

static PyObject *
init_state(PyObject *module, PyObject *cls)
{
    if (recorder_slots(cls, &RS) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* the functions GradTape(backend) runs (GradTape.__init__, Recorder.__init__,
 * Recorder._new_graph) and GradTape.slots, as init_tape found them: make_tape builds a
 * tape and result_slots reads its slots in C only while they are still these (a test or
 * subclass that replaces one gets its own) */
static PyObject *tape_init_fns[4], *s_init, *s_result_slots, *s_slots, *s_device_buffers, *s_device, *s_name,
    *s_also_reads, *s_new_lock, *graph_one, *max_ops_start;

static int
tape_fns_unchanged(void)
{
    PyTypeObject *rec = RS.cls;
    if (tape_cls == NULL || rec == NULL || tape_init_fns[0] == NULL)
        return 0;
    PyObject *now[3] = {PyDict_GetItemWithError(tape_cls->tp_dict, s_init),
                        PyDict_GetItemWithError(rec->tp_dict, s_init),
                        PyDict_GetItemWithError(rec->tp_dict, s_new_graph)};
    if (PyErr_Occurred())
        return -1;
    if (now[0] != tape_init_fns[0] || now[1] != tape_init_fns[1] ||
        now[2] != tape_init_fns[2] || !PyFunction_Check(now[1]))
        return 0;
    /* recorder.new_lock: the native RLock (threading's needs its bound methods kept) */
    PyObject *lock = PyDict_GetItemWithError(PyFunction_GET_GLOBALS(now[1]), s_new_lock);
    return lock == (PyObject *)&RLockType ? 1 : PyErr_Occurred() ? -1 : 0;
}

/* GradTape(backend), made as its __init__ makes it (the target, Recorder.__init__'s
 * attributes, _new_graph's empty graph, recording): tests/host/test_grad_tape.py compares
 * the two attribute by attribute. A new reference, or NULL with an exception. */
static PyObject *last_target_name, *last_tape_name; /* the last tape's name, and its
                                                      * device's (strings: immutable) */

static PyObject *
make_tape(PyObject *backend)
{
    int same = tape_fns_unchanged();
    if (same <= 0)
        return same < 0 ? NULL : PyObject_CallOneArg((PyObject *)tape_cls, backend);
    PyObject *db = PyObject_GetAttr(backend, s_device_buffers);
    int own = db ? PyObject_IsTrue(db) : -1;
    Py_XDECREF(db);
    PyObject *target = own < 0 ? NULL : own ? backend : recorder_slot(&RS, backend, RS.target);
    if (target == NULL) {
        if (PyErr_Occurred())
            return NULL;
        return PyObject_CallOneArg((PyObject *)tape_cls, backend); /* (its error) */
    }
    Py_INCREF(target);
    PyObject *device = PyObject_GetAttr(target, s_device), *tname = NULL, *name = NULL,
             *reads = NULL, *lock = NULL, *tape = NULL, *dict = NULL;
    tname = device ? PyObject_GetAttr(target, s_name) : NULL;
    if (tname != NULL && !PyUnicode_Check(tname)) { /* (f"{...}" formats it: Python's) */
        tape = PyObject_CallOneArg((PyObject *)tape_cls, backend);
        goto done;
    }
    if (tname != NULL && tname == last_target_name) { /* (a step's tapes: one device) */
        name = Py_NewRef(last_tape_name);
    }
    else if (tname != NULL && (name = PyUnicode_FromFormat("grad tape:%U", tname)) != NULL) {
        Py_XSETREF(last_target_name, Py_NewRef(tname));
        Py_XSETREF(last_tape_name, Py_NewRef(name));
    }
    reads = name ? PyTuple_Pack(1, target) : NULL;
    lock = reads ? PyObject_CallNoArgs((PyObject *)&RLockType) : NULL;
    tape = lock ? tape_cls->tp_alloc(tape_cls, 0) : NULL;
    if (tape == NULL)
        goto done;
    /* the slots, as Recorder.__init__ and _new_graph set them */
    const Py_ssize_t lists[] = {RS.tape, RS.locs, RS.types, RS.inputs, RS.keep, RS.pending};
    const Py_ssize_t dicts[] = {RS.input_of, RS.constants, RS.broadcasts};
    SLOT(tape, RS.target) = Py_NewRef(target);
    SLOT(tape, RS.lock) = Py_NewRef(lock);
    SLOT(tape, RS.graph) = Py_NewRef(graph_one);
    SLOT(tape, RS.holds) = Py_NewRef(Py_False);
    SLOT(tape, RS.ops) = PyLong_FromLong(0);
    SLOT(tape, RS.max_ops) = Py_NewRef(max_ops_start);
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++)
        if ((SLOT(tape, lists[k]) = PyList_New(0)) == NULL)
            Py_CLEAR(tape);
    for (size_t k = 0; tape != NULL && k < sizeof dicts / sizeof dicts[0]; k++)
        if ((SLOT(tape, dicts[k]) = PyDict_New()) == NULL)
            Py_CLEAR(tape);
    PyObject **dp = tape ? _PyObject_GetDictPtr(tape) : NULL;
    if (tape != NULL && (dp == NULL || (*dp == NULL && (*dp = PyDict_New()) == NULL)))
        Py_CLEAR(tape);
    dict = tape ? Py_NewRef(*dp) : NULL;
    if (dict != NULL && (PyDict_SetItem(dict, s_device, device) < 0 ||
                         PyDict_SetItem(dict, s_name, name) < 0 ||
                         PyDict_SetItem(dict, s_also_reads, reads) < 0 ||
                         PyDict_SetItem(dict, s_recording, Py_True) < 0))
        Py_CLEAR(tape);
done:
    Py_DECREF(target);
    Py_XDECREF(device);
    Py_XDECREF(tname);
    Py_XDECREF(name);
    Py_XDECREF(reads);
    Py_XDECREF(lock);
    Py_XDECREF(dict);
    return tape;
}

/* GradTape.slots(results) (the results' slots, kept as tape._result_slots), in C where
 * each result is a pending value of the tape, as the method's common case reads it; the
 * method itself for anything else, or where it was replaced */
static PyObject *
result_slots(PyObject *tape, PyObject *results)
{
    PyObject *fn = PyDict_GetItemWithError(tape_cls->tp_dict, s_slots);
    if (fn == NULL || fn != tape_init_fns[3] || !PyList_CheckExact(results))
        return PyErr_Occurred() ? NULL : PyObject_CallMethodOneArg(tape, s_slots, results);
    Py_ssize_t n = PyList_GET_SIZE(results);
    PyObject *slots = PyTuple_New(n);
    for (Py_ssize_t k = 0; slots != NULL && k < n; k++) {
        PyObject *t = PyList_GET_ITEM(results, k);
        PyObject *d = Py_IS_TYPE(t, T.cls) && SLOT(t, T.backend) == tape ? SLOT(t, T.data)
                                                                          : NULL;
        if (d == NULL || !Py_IS_TYPE(d, &PendingType)) {
            Py_DECREF(slots);
            return PyObject_CallMethodOneArg(tape, s_slots, results);
        }
        PyTuple_SET_ITEM(slots, k, Py_NewRef(((PendingObject *)d)->slot));
    }
    if (slots != NULL && PyObject_SetAttr(tape, s_result_slots, slots) < 0)
        Py_CLEAR(slots);
    return slots;
}

/* recorder_native's test hook: make_tape(backend) as tape_one calls it */
static PyObject *
make_tape_py(PyObject *module, PyObject *backend)
{
    return make_tape(backend);
}

/* ---- grad's tape call: autodiff._python_tape_one in C --------------------------------
 * value_and_grad(f)(*args) w.r.t. args[i] on a GradTape, where every leaf is a Tensor: the
 * steps between the user's call and f, and between f and the derivative's run, were a
 * dozen Python lines each (the flatten loop, the tape's backend, the stack push, the
 * written-argument check), about a third of an eager training step's grad. The pieces
 * with decisions in them stay Python (autodiff's _tape_results for an output that is
 * not one tensor or an argument f wrote to, _tape_finish for the derivative and its run),
 * so both paths make the same tape and raise the same errors at the user's line. */

static PyObject *autodiff_dict, *grad_tape_dict, *py_tape_backend, *py_flatten,
    *py_unflatten, *tree_leaf, *needs_trace, *py_runs_on, *s_meshes;
static PyObject *s_leaves, *c_kinds, *s_python_tape_one, *s_tape_results,
    *s_tape_finish, *s_tape_backend;

/* the structure of the last differentiated argument whose nodes treedef.h walks: the next
 * call's is checked against it before tree.flatten is asked (a training step passes the
 * same one every call). Held under the GIL, as the module's other state. */
static TreeDefSlots TD;
static PyObject *last_arg_td;

/* (leaves, treedef) of a differentiated argument: its leaves, Tensors laid out as the last
 * argument's structure, or tree.flatten's answer (a new reference either way) */
static PyObject *
flatten_arg(PyObject *arg)
{
    if (last_arg_td != NULL) {
        PyObject *td = Py_NewRef(last_arg_td), *leaves = PyList_New(0);
        int same = leaves ? flatten_as(&TD, td, arg, T.cls, leaves, 0) : -1;
        PyObject *res = same > 0 ? PyTuple_Pack(2, leaves, td) : NULL;
        Py_XDECREF(leaves);
        Py_DECREF(td);
        if (res != NULL || same < 0)
            return res;
    }
    PyObject *flat = PyObject_CallOneArg(py_flatten, arg);
    if (flat != NULL && PyTuple_CheckExact(flat) && PyTuple_GET_SIZE(flat) == 2 &&
        builds_as(&TD, PyTuple_GET_ITEM(flat, 1), 0)) {
        Py_INCREF(PyTuple_GET_ITEM(flat, 1));
        Py_XSETREF(last_arg_td, PyTuple_GET_ITEM(flat, 1));
    }
    return flat;
}

/* tree.unflatten(td, leaves), built in C where treedef.h builds td's nodes */
static PyObject *
unflatten_tree(PyObject *td, PyObject *leaves)
{
    if (PyList_CheckExact(leaves) && (td == last_arg_td || builds_as(&TD, td, 0))) {
        PyObject *num = SLOT(td, TD.num_leaves);
        Py_ssize_t pos = 0, n = num != NULL && PyLong_CheckExact(num)
                                    ? PyLong_AsSsize_t(num) : -1;
        if (n == PyList_GET_SIZE(leaves))
            return unflatten_as(&TD, td, leaves, &pos);
        PyErr_Clear(); /* (tree.unflatten says what differs) */
    }
    return PyObject_CallFunctionObjArgs(py_unflatten, td, leaves, NULL);
}

/* autodiff's function `name`, read from its module at each call as Python's global lookup
 * reads it (a test that swaps one sees both paths call its own); borrowed, or NULL with an
 * exception */
static PyObject *
autodiff_fn(PyObject *name)
{
    PyObject *f = PyDict_GetItemWithError(autodiff_dict, name);
    if (f == NULL && !PyErr_Occurred())
        PyErr_Format(PyExc_AttributeError, "stablejit.autodiff has no %U", name);
    return f;
}

/* autodiff._python_tape_one(*args): the whole call in Python */
static PyObject *
python_tape_one(PyObject *const *args, Py_ssize_t nargs)
{
    PyObject *f = autodiff_fn(s_python_tape_one);
    return f == NULL ? NULL : PyObject_Vectorcall(f, args, nargs, NULL);
}

/* grad_tape.tape_backend's answer where C can tell at once: the lazy backend ending this
 * thread's backend stack, with no trace live, no debug checks and no dump directory (a new
 * reference); NULL with no exception: tape_backend decides */
static PyObject *
lazy_tape_backend(void)
{
    PyObject *stack = thread_stack();
    if (stack == NULL) {
        PyErr_Clear();
        return NULL;
    }
    Py_ssize_t n = PyList_CheckExact(stack) ? PyList_GET_SIZE(stack) : 0;
    PyObject *b = n > 0 ? PyList_GET_ITEM(stack, n - 1) : NULL;
    if (b == NULL || !Py_IS_TYPE(b, lazy_cls)) {
        Py_DECREF(stack);
        return NULL;
    }
    Py_INCREF(b);
    Py_DECREF(stack);
    PyObject *dump = unwatched() > 0 ? setting(s_dump_to) : NULL;
    if (dump != Py_None) {
        Py_XDECREF(dump);
        Py_DECREF(b);
        PyErr_Clear(); /* (Python asks again, and raises what it raises) */
        return NULL;
    }
    Py_DECREF(dump);
    return b;
}

/* this thread's backend stack as context.stack() gives it (made where there is none): a
 * new reference, or NULL with an exception */
static PyObject *
stack_made(void)
{
    PyObject *s = thread_stack();
    if (s != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return s;
    PyErr_Clear();
    s = PyList_New(0);
    if (s != NULL && PyObject_SetAttr(context_state, s_stack, s) < 0)
        Py_CLEAR(s);
    return s;
}

/* the NeedsTrace being raised, taken as the result (_on_tape's `except NeedsTrace as e:
 * return e`); NULL with the exception still set for any other */
static PyObject *
needs_trace_taken(void)
{
    if (!PyErr_ExceptionMatches(needs_trace))
        return NULL;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL && value != NULL)
        PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
}

/* the tape's result once f returned `out`: the list [out] and tree.LEAF where out is one
 * tensor and f left every argument's value alone, else _tape_results(out, xs, before)'s
 * (its flatten, its conversions and its error) */
static PyObject *
tape_results(PyObject *out, PyObject *xs, PyObject *before)
{
    int same = Py_IS_TYPE(out, T.cls);
    for (Py_ssize_t k = 0; same && k < PyList_GET_SIZE(xs); k++)
        same = SLOT(PyList_GET_ITEM(xs, k), T.data) == PyList_GET_ITEM(before, k);
    PyObject *python = same ? NULL : autodiff_fn(s_tape_results);
    if (!same)
        return python == NULL ? NULL
                              : PyObject_CallFunctionObjArgs(python, out, xs, before, NULL);
    PyObject *results = PyList_New(1);
    if (results == NULL)
        return NULL;
    PyList_SET_ITEM(results, 0, Py_NewRef(out));
    PyObject *r = PyTuple_Pack(2, results, tree_leaf);
    Py_DECREF(results);
    return r;
}

/* A broken invariant of grad's C path (a stablejit bug, never the user's input): a
 * TypeError that says so and how to go on meanwhile. */
static void
internal_error(const char *what)
{
    PyErr_Format(PyExc_TypeError,
                 "grad's native path found %s: a bug in stablejit, not in your code. "
                 "Run with STABLEJIT_NATIVE=0 (the Python path) meanwhile, and report it",
                 what);
}

/* whether every leaf is a Tensor whose dtype kind may carry a gradient; -1 on error */
static int
differentiable(PyObject *leaves, int holomorphic)
{
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(leaves); k++) {
        PyObject *t = PyList_GET_ITEM(leaves, k), *kind;
        if (!Py_IS_TYPE(t, T.cls))
            return 0;
        if (type_info(SLOT(t, T.type), NULL, &kind) < 0)
            return -1;
        int ok = str_has(holomorphic ? c_kinds : fc_kinds, kind);
        if (ok <= 0)
            return ok;
    }
    return 1;
}

/* _tape_finish's common case in a lazy() block: the tape ended with one result of a
 * float (holomorphic: complex) scalar type, its derivative is the one the last tape found
 * or built (grad_tape._last: the same tape, results and arguments), the graph is
 * `backend`, the lazy backend ending this thread's stack, and each input is its tensor or
 * one of its device's, so run_function would pick `backend` (dispatch.backend_for), and
 * runs_on(fn, backend) says the derivative runs there: its outputs recorded by the
 * backend's execute. NULL with no exception where _tape_finish decides. */
/* runs_on(fn, backend) where spmd's memo (_MESHES: id(fn) -> (fn, its mesh)) says fn
 * names no mesh: backend, whatever backend is (runs_on's answer then). NULL with no
 * exception where runs_on must answer (not remembered yet, or a mesh). */
static PyObject *
runs_here(PyObject *fn, PyObject *backend)
{
    PyObject *meshes = PyFunction_Check(py_runs_on)
                           ? PyDict_GetItemWithError(PyFunction_GET_GLOBALS(py_runs_on),
                                                     s_meshes) : NULL;
    PyObject *id = meshes != NULL && PyDict_CheckExact(meshes) ? PyLong_FromVoidPtr(fn) : NULL;
    PyObject *hit = id ? PyDict_GetItemWithError(meshes, id) : NULL;
    Py_XDECREF(id);
    PyErr_Clear(); /* (runs_on meets any error again) */
    if (hit != NULL && PyTuple_CheckExact(hit) && PyTuple_GET_SIZE(hit) == 2 &&
        PyTuple_GET_ITEM(hit, 0) == fn && PyTuple_GET_ITEM(hit, 1) == Py_None)
        return Py_NewRef(backend);
    return NULL;
}

static PyObject *
finish_in_c(PyObject *tape, PyObject *backend, PyObject *slots, PyObject *out_tree,
            PyObject *has_aux, PyObject *holo, Py_ssize_t n_diff)
{
    if (out_tree != tree_leaf || has_aux != Py_False || !Py_IS_TYPE(backend, lazy_cls) ||
        !PyTuple_CheckExact(slots) || PyTuple_GET_SIZE(slots) != 1)
        return NULL;
    PyObject *types = recorder_slot(&RS, tape, RS.types);
    PyObject *entries = recorder_slot(&RS, tape, RS.tape);
    PyObject *inputs = recorder_slot(&RS, tape, RS.inputs);
    PyObject *target = target_of(backend), *kind, *shape;
    if (types == NULL || !PyList_CheckExact(types) || entries == NULL ||
        !PyList_CheckExact(entries) || inputs == NULL || !PyList_CheckExact(inputs) ||
        target == NULL)
        return NULL;
    Py_ssize_t s0 = PyLong_CheckExact(PyTuple_GET_ITEM(slots, 0))
                        ? PyLong_AsSsize_t(PyTuple_GET_ITEM(slots, 0)) : -1;
    if (s0 < 0 || s0 >= PyList_GET_SIZE(types)) {
        PyErr_Clear();
        return NULL;
    }
    PyObject *type = PyList_GET_ITEM(types, s0);
    if (type_info(type, NULL, &kind) < 0) {
        PyErr_Clear();
        return NULL;
    }
    if (!PyUnicode_Check(kind) ||
        PyUnicode_CompareWithASCIIString(kind, holo == Py_True ? "c" : "f") != 0)
        return NULL; /* (check_scalar_output raises) */
    if ((shape = PyObject_GetAttr(type, s_shape)) == NULL) {
        PyErr_Clear();
        return NULL;
    }
    int scalar = PyTuple_CheckExact(shape) && PyTuple_GET_SIZE(shape) == 0;
    Py_DECREF(shape);
    PyObject *last = scalar ? PyDict_GetItemWithError(grad_tape_dict, s_last) : NULL;
    PyObject *key = last != NULL && PyTuple_CheckExact(last) && PyTuple_GET_SIZE(last) == 3
                        ? PyTuple_GET_ITEM(last, 1) : NULL;
    if (key == NULL || !PyTuple_CheckExact(key) || PyTuple_GET_SIZE(key) != 3 ||
        PyTuple_GET_ITEM(key, 2) != holo || !PyLong_CheckExact(PyTuple_GET_ITEM(key, 1)) ||
        PyLong_AsSsize_t(PyTuple_GET_ITEM(key, 1)) != n_diff ||
        !PyList_CheckExact(PyTuple_GET_ITEM(last, 0))) {
        PyErr_Clear();
        return NULL;
    }
    Py_INCREF(last); /* (another thread may replace it while the tapes are compared) */
    int same = PyObject_RichCompareBool(PyTuple_GET_ITEM(key, 0), slots, Py_EQ);
    if (same > 0)
        same = tapes_equal(PyTuple_GET_ITEM(last, 0), entries);
    PyObject *fn = same > 0 ? Py_NewRef(PyTuple_GET_ITEM(last, 2)) : NULL;
    Py_DECREF(last);
    PyObject *stack = fn != NULL ? thread_stack() : NULL;
    Py_ssize_t depth = stack != NULL && PyList_CheckExact(stack) ? PyList_GET_SIZE(stack) : 0;
    int here = depth > 0 && PyList_GET_ITEM(stack, depth - 1) == backend;
    Py_XDECREF(stack);
    for (Py_ssize_t k = 0; here && k < PyList_GET_SIZE(inputs); k++) {
        PyObject *t = PyList_GET_ITEM(inputs, k);
        PyObject *b = Py_IS_TYPE(t, T.cls) ? SLOT(t, T.backend) : NULL;
        here = b == backend || b == target;
    }
    PyObject *runs = here ? runs_here(fn, backend) : NULL;
    if (here && runs == NULL)
        runs = PyObject_CallFunctionObjArgs(py_runs_on, fn, backend, NULL);
    PyObject *outs = NULL;
    if (runs == backend) {
        PyObject *ex[3] = {backend, fn, inputs};
        outs = execute(NULL, ex, 3, NULL);
    }
    Py_XDECREF(runs);
    Py_XDECREF(fn);
    if (outs == NULL && (same < 0 || runs == NULL))
        PyErr_Clear(); /* (_tape_finish asks again, and raises what it raises) */
    return outs;
}

/* autodiff._tape_one(f, args, i, has_aux, holomorphic): the result, the NeedsTrace that
 * stopped the tape, or None where f has not run (value_and_grad_f goes on) */
static PyObject *
tape_one(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5 || autodiff_dict == NULL)
        return PyErr_Format(PyExc_TypeError, "tape_one takes f, args, i, has_aux and "
                                             "holomorphic, after init_grad");
    PyObject *f = args[0], *fargs = args[1], *holo = args[4];
    Py_ssize_t i = PyLong_CheckExact(args[2]) ? PyLong_AsSsize_t(args[2]) : -1;
    if (i < 0 && PyErr_Occurred())
        PyErr_Clear();
    if (!binds_on || T.cls == NULL || tape_cls == NULL || !PyTuple_CheckExact(fargs) ||
        i < 0 || i >= PyTuple_GET_SIZE(fargs) || (holo != Py_True && holo != Py_False))
        return python_tape_one(args, nargs);
    Py_ssize_t nf = PyTuple_GET_SIZE(fargs);
    PyObject *flat = NULL, *xs = NULL, *before = NULL, *backend = NULL, *tape = NULL,
             *call = NULL, *stack = NULL, *res = NULL, *slots = NULL, *fast = NULL,
             *done = NULL, *grads = NULL, *value = NULL, *result = NULL;
    flat = flatten_arg(PyTuple_GET_ITEM(fargs, i));
    if (flat == NULL)
        return NULL;
    PyObject *leaves = PyTuple_CheckExact(flat) && PyTuple_GET_SIZE(flat) == 2
                           ? PyTuple_GET_ITEM(flat, 0) : NULL;
    if (leaves == NULL || !PyList_CheckExact(leaves)) {
        Py_DECREF(flat);
        return python_tape_one(args, nargs);
    }
    PyObject *td = PyTuple_GET_ITEM(flat, 1);
    Py_ssize_t n = PyList_GET_SIZE(leaves);
    int ok = differentiable(leaves, holo == Py_True);
    for (Py_ssize_t j = 0; ok > 0 && j < nf; j++)
        ok = j == i || Py_IS_TYPE(PyTuple_GET_ITEM(fargs, j), T.cls);
    if (ok <= 0) {
        Py_DECREF(flat);
        return ok < 0 ? NULL : Py_NewRef(Py_None);
    }
    /* xs: the tape's leaves and then the other arguments (the Python's xs); first the
     * differentiated leaves, for tape_backend's question where C leaves it */
    xs = PyList_GetSlice(leaves, 0, n);
    for (Py_ssize_t j = 0; xs != NULL && j < nf; j++)
        if (j != i && PyList_Append(xs, PyTuple_GET_ITEM(fargs, j)) < 0)
            Py_CLEAR(xs);
    if (xs == NULL)
        goto error;
    PyObject *which = autodiff_fn(s_tape_backend); /* (the lazy case, in C: unless swapped) */
    if (which == NULL)
        goto error;
    backend = which == py_tape_backend ? lazy_tape_backend() : NULL;
    if (backend == NULL && (backend = PyObject_CallOneArg(which, xs)) == NULL)
        goto error;
    if (backend == Py_None) {
        result = Py_NewRef(Py_None);
        goto error;
    }
    tape = make_tape(backend);
    if (tape == NULL)
        goto error;
    /* from here on, as _on_tape's try: a NeedsTrace is the answer, and the tape stops
     * recording whatever happens */
    PyObject *ta[2] = {tape, leaves};
    PyObject *diff = tape_leaves(NULL, ta, 2);
    if (diff == Py_None) {
        Py_DECREF(diff);
        diff = PyObject_CallMethodOneArg(tape, s_leaves, leaves);
    }
    if (diff == NULL || !PyList_CheckExact(diff) || PyList_GET_SIZE(diff) != n) {
        if (diff != NULL)
            internal_error("GradTape.leaves returned no list of leaves");
        Py_XDECREF(diff);
        goto stopped;
    }
    ok = PyList_SetSlice(xs, 0, n, diff);
    PyObject *tree_arg = ok < 0 ? NULL : unflatten_tree(td, diff);
    Py_DECREF(diff);
    if (tree_arg == NULL || (call = PyTuple_New(nf)) == NULL) {
        Py_XDECREF(tree_arg);
        goto stopped;
    }
    for (Py_ssize_t j = 0; j < nf; j++)
        PyTuple_SET_ITEM(call, j, j == i ? tree_arg : Py_NewRef(PyTuple_GET_ITEM(fargs, j)));
    Py_ssize_t nx = PyList_GET_SIZE(xs);
    if ((before = PyList_New(nx)) == NULL)
        goto stopped;
    for (Py_ssize_t k = 0; k < nx; k++) {
        PyObject *x = PyList_GET_ITEM(xs, k);
        PyObject *d = Py_IS_TYPE(x, T.cls) ? SLOT(x, T.data) : NULL;
        if (d == NULL) { /* (GradTape.leaves gives Tensors: a broken override) */
            internal_error("a grad tape's leaf is no Tensor");
            goto stopped;
        }
        PyList_SET_ITEM(before, k, Py_NewRef(d));
    }
    if ((stack = stack_made()) == NULL || !PyList_CheckExact(stack)) {
        if (stack != NULL)
            internal_error("the backend stack is no list");
        goto stopped;
    }
    if (PyList_Append(stack, tape) < 0)
        goto stopped;
    PyObject *out = PyObject_Call(f, call, NULL);
    if (out != NULL) {
        res = tape_results(out, xs, before);
        Py_DECREF(out);
    }
    Py_ssize_t depth = PyList_GET_SIZE(stack); /* (s.pop(), whatever f left there) */
    if (depth > 0 && PyList_SetSlice(stack, depth - 1, depth, NULL) < 0)
        Py_CLEAR(res);
    if (res == NULL)
        goto stopped;
    if (!PyTuple_CheckExact(res) || PyTuple_GET_SIZE(res) != 2) {
        internal_error("_tape_results returned no pair");
        goto stopped;
    }
    slots = result_slots(tape, PyTuple_GET_ITEM(res, 0));
    if (slots == NULL)
        goto stopped;
    if (PyObject_SetAttr(tape, s_recording, Py_False) < 0)
        goto error;
    /* the derivative's outputs: f's (its value, then any aux leaves), then the grads;
     * from C's finish (one output, no aux) or from _tape_finish's (outputs, n, aux) */
    PyObject *aux_tree = Py_None;
    Py_ssize_t n_out = 1;
    PyObject *outs = fast = finish_in_c(tape, backend, slots, PyTuple_GET_ITEM(res, 1),
                                        args[3], holo, n);
    if (outs == NULL) {
        if (PyErr_Occurred())
            goto error;
        PyObject *nd = PyLong_FromSsize_t(n);
        PyObject *fin[7] = {tape, f, slots, PyTuple_GET_ITEM(res, 1), nd, args[3], holo};
        PyObject *finish = nd ? autodiff_fn(s_tape_finish) : NULL;
        done = finish ? PyObject_Vectorcall(finish, fin, 7, NULL) : NULL;
        Py_XDECREF(nd);
        if (done == NULL)
            goto error;
        if (PyTuple_CheckExact(done) && PyTuple_GET_SIZE(done) == 3) {
            outs = PyTuple_GET_ITEM(done, 0);
            n_out = PyLong_AsSsize_t(PyTuple_GET_ITEM(done, 1));
            aux_tree = PyTuple_GET_ITEM(done, 2);
        }
    }
    if (outs == NULL || !PyList_CheckExact(outs) || n_out < 1 ||
        n_out > PyList_GET_SIZE(outs)) {
        if (!PyErr_Occurred())
            internal_error("_tape_finish returned no (outputs, n, aux)");
        goto error;
    }
    PyObject *rest = PyList_GetSlice(outs, n_out, PyList_GET_SIZE(outs));
    grads = rest ? unflatten_tree(td, rest) : NULL;
    Py_XDECREF(rest);
    if (grads == NULL)
        goto error;
    if (aux_tree == Py_None)
        value = Py_NewRef(PyList_GET_ITEM(outs, 0));
    else {
        PyObject *aux = PyList_GetSlice(outs, 1, n_out);
        PyObject *a = aux ? unflatten_tree(aux_tree, aux) : NULL;
        Py_XDECREF(aux);
        value = a ? PyTuple_Pack(2, PyList_GET_ITEM(outs, 0), a) : NULL;
        Py_XDECREF(a);
        if (value == NULL)
            goto error;
    }
    result = PyTuple_Pack(2, value, grads);
    goto error;
stopped:
    result = needs_trace_taken();
    {
        PyObject *type, *exc, *tb; /* (another exception stays the one raised) */
        PyErr_Fetch(&type, &exc, &tb);
        if (PyObject_SetAttr(tape, s_recording, Py_False) < 0) {
            Py_CLEAR(result);
            if (type != NULL) {
                PyErr_Clear();
                PyErr_Restore(type, exc, tb);
            }
        }
        else if (type != NULL)
            PyErr_Restore(type, exc, tb);
    }
error:
    Py_XDECREF(flat);
    Py_XDECREF(xs);
    Py_XDECREF(before);
    Py_XDECREF(backend);
    Py_XDECREF(tape);
    Py_XDECREF(call);
    Py_XDECREF(stack);
    Py_XDECREF(res);
    Py_XDECREF(slots);
    Py_XDECREF(fast);
    Py_XDECREF(done);
    Py_XDECREF(grads);
    Py_XDECREF(value);
    return result;
}

static PyObject *
init_grad(PyObject *module, PyObject *args)
{
    PyObject *globals, *tape_globals, *backend, *runs_on, *flatten, *unflatten, *leaf, *needs;
    if (!PyArg_ParseTuple(args, "O!O!OOOOOO!:init_grad", &PyDict_Type, &globals, &PyDict_Type,
                          &tape_globals, &backend, &runs_on, &flatten, &unflatten, &leaf,
                          &PyType_Type, &needs))
        return NULL;
#define KEEP(var, obj) Py_INCREF(obj); Py_XSETREF(var, obj)
    KEEP(grad_tape_dict, tape_globals);
    KEEP(py_runs_on, runs_on);
    KEEP(py_tape_backend, backend);
    KEEP(py_flatten, flatten);
    KEEP(py_unflatten, unflatten);
    if (treedef_slots((PyObject *)Py_TYPE(leaf), &TD) < 0)
        return NULL;
    KEEP(tree_leaf, leaf);
    KEEP(needs_trace, needs);
    KEEP(autodiff_dict, globals); /* (last: tape_one reads it as "ready") */
#undef KEEP
    Py_RETURN_NONE;
}

static PyObject *
init_tape(PyObject *module, PyObject *cls)
{
    if (!PyType_Check(cls) || RS.cls == NULL)
        return PyErr_Format(PyExc_TypeError, "init_tape takes the GradTape class, after "
                                             "init_state");
    PyObject *slot = PyObject_GetAttr(cls, s_slot);
    if (slot == NULL)
        return NULL;
    Py_XSETREF(tape_slot, slot);
    Py_INCREF(cls);
    Py_XSETREF(tape_cls, (PyTypeObject *)cls);
    PyObject *fns[4] = {PyDict_GetItemWithError(tape_cls->tp_dict, s_init),
                        PyDict_GetItemWithError(RS.cls->tp_dict, s_init),
                        PyDict_GetItemWithError(RS.cls->tp_dict, s_new_graph),
                        PyDict_GetItemWithError(tape_cls->tp_dict, s_slots)};
    for (int k = 0; k < 4; k++)
        Py_XSETREF(tape_init_fns[k], Py_XNewRef(fns[k]));
    if (PyErr_Occurred())
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
init_params(PyObject *module, PyObject *args)
{
    PyObject *buf, *tag, *pin, *ppar;
    if (!PyArg_ParseTuple(args, "O!OOO:init_params", &PyType_Type, &buf, &tag, &pin, &ppar))
        return NULL;
#define KEEP(var, obj) Py_INCREF(obj); Py_XSETREF(var, obj)
    KEEP(param_tag, tag);
    KEEP(py_input, pin);
    KEEP(py_param, ppar);
    KEEP(buffer_cls, (PyTypeObject *)buf);
#undef KEEP
    Py_RETURN_NONE;
}

#endif /* RECORDER_UNSUPPORTED */

static PyMethodDef methods[] = {
#ifndef RECORDER_UNSUPPORTED
    {"init", init, METH_VARARGS,
     "init(Tensor, Pending, errors._CODE_INTERNAL, errors.is_internal, recorder._SCALAR, "
     "EMPTY_ATTRS, Recorder.apply, Recorder.apply_scalar, Recorder._slot, Recorder._add, "
     "Recorder._results, backends) -> (apply, "
     "apply_scalar): the C methods, around the Python ones"},
#endif
#ifndef RECORDER_UNSUPPORTED
    {"fast_bind", fast_bind, METH_VARARGS,
     "fast_bind(python, arity): dispatch's bind_unary (1) / bind_binary (2) / bind_scalar "
     "(3) in C, around the Python one"},
    {"set_binds", set_binds, METH_O, "set_binds(on): whether the C binds record"},
    {"broadcast_method", broadcast_method, METH_VARARGS,
     "broadcast_method(Recorder.apply_broadcast, Recorder._broadcast): the C method"},
    {"execute_method", execute_method, METH_VARARGS,
     "execute_method(Recorder.execute, Recorder._tensors, recorder._INLINE): the C method"},
    {"init_params", init_params, METH_VARARGS,
     "init_params(device buffer type, recorder.PARAM, Recorder._input, Recorder._param): "
     "a device tensor read by a graph becomes its parameter in C"},
    {"init_state", init_state, METH_O,
     "init_state(Recorder): the offsets of its per-graph state (its __slots__)"},
    {"init_grad", init_grad, METH_VARARGS,
     "init_grad(autodiff's globals, grad_tape's, grad_tape.tape_backend, spmd.runs_on, "
     "tree.flatten, tree.unflatten, tree.LEAF, NeedsTrace): what tape_one calls"},
    {"make_tape", make_tape_py, METH_O,
     "make_tape(backend): GradTape(backend), made in C as tape_one makes it"},
    {"tape_one", (PyCFunction)(void (*)(void))tape_one, METH_FASTCALL,
     "tape_one(f, args, i, has_aux, holomorphic): autodiff._tape_one in C"},
    {"init_tape", init_tape, METH_O,
     "init_tape(GradTape): grad's tape records in C too (its own _slot rule)"},
    {"structural_entries", structural_entries, METH_O,
     "structural_entries(tape): recorder._structural over a tape, as a tuple"},
    {"tape_leaves", (PyCFunction)(void (*)(void))tape_leaves, METH_FASTCALL,
     "tape_leaves(tape, tensors): GradTape.leaves in C; None where Python makes them"},
    {"same_tape", (PyCFunction)(void (*)(void))same_tape, METH_FASTCALL,
     "same_tape(a, b): a == b for two tapes, items compared by identity first"},
    {"flush_last", flush_last, METH_O,
     "flush_last(lazy backend): LazyBackend.flush's run of a graph equal to the last one, "
     "in C; False where Python's flush decides"},
    {"live_pending", (PyCFunction)(void (*)(void))live_pending, METH_FASTCALL,
     "live_pending(pending, graph): the live, uncomputed Pendings of a graph, as a list"},
    {"composite_call", (PyCFunction)(void (*)(void))composite_call, METH_FASTCALL,
     "composite_call(done, args, kwargs): one_program's cached call in C, or _MISS"},
    {"init_views", init_views, METH_VARARGS,
     "init_views(_indexing._PLANS, views.View, views.Aliases, forward, backward, layout): "
     "what x[index] reads in C"},
    {"composite_fn", composite_fn, METH_VARARGS,
     "composite_fn(g, done): one_program's g as a C callable (CompositeFn)"},
    {"init_composite", init_composite, METH_VARARGS,
     "init_composite(_MISS, _Traced, _run, XlaBackend, promotion, precision, DType)"},
    {"init_eager", init_eager, METH_VARARGS,
     "init_eager(XlaBackend, compilation.Program, TensorType, backends._BROADCAST): what an "
     "eager op run in C reads"},
    {"init_operators", init_operators, METH_VARARGS,
     "init_operators(LazyBackend, context._state, writes, config): what FastOp reads"},
#endif
    {NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "stablejit._recorder",
    "The lazy recorder's hot path in C (see frontend/recorder_native.py).", -1, methods,
};

PyMODINIT_FUNC
PyInit__recorder(void)
{
#ifndef RECORDER_UNSUPPORTED
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL
    INTERN(s_key, "key");
    INTERN(s_ops, "_ops");
    INTERN(s_done, "_done");
    INTERN(s_scalars, "_scalars");
    INTERN(s_consume, "consume_with_handlers");
    INTERN(s_slot, "_slot");
    INTERN(s_add, "_add");
    INTERN(s_results, "_results");
    INTERN(s_op_bound, "_op_bound");
    INTERN(s_flush, "flush");
    INTERN(s_inferred, "_inferred");
    INTERN(s_infer, "infer");
    INTERN(s_dtype, "dtype");
    INTERN(s_acquire, "_lock_acquire");
    INTERN(s_release, "_lock_release");
    INTERN(s_scalar_key, "scalar_key");
    INTERN(s_stack, "stack");
    INTERN(s_stack_key, "stablejit._recorder.stack");
    INTERN(s_recording, "recording");
    INTERN(s_input, "_input");
    INTERN(s_param, "_param");
    INTERN(s_broadcast, "_broadcast");
    INTERN(s_shape, "shape");
    INTERN(s_live_traces, "live_traces");
    INTERN(s_checks, "_checks");
    INTERN(s_kind, "kind");
    INTERN(fc_kinds, "fc");
    INTERN(c_kinds, "c");
    INTERN(s_leaves, "leaves");
    INTERN(s_slots, "slots");
    INTERN(s_python_tape_one, "_python_tape_one");
    INTERN(s_tape_results, "_tape_results");
    INTERN(s_tape_finish, "_tape_finish");
    INTERN(s_tape_backend, "tape_backend");
    INTERN(s_tensors, "_tensors");
    INTERN(s_site, "site");
    INTERN(s_ops_list, "ops");
    INTERN(s_result_types, "result_types");
    INTERN(s_start_at, "_start_at");
    INTERN(s_now, "_now");
    INTERN(s_flushes, "flushes");
    INTERN(s_last, "_last");
    INTERN(s_new_graph, "_new_graph");
    INTERN(s_dump_to, "dump_to");
    INTERN(s_environ, "environ");
    INTERN(s_buffer, "buffer");
    INTERN(s_graph, "graph");
    INTERN(s_data, "_data");
    INTERN(s_encoded, "_encoded");
    INTERN(s_environ_key, "_ENVIRON");
    INTERN(setting_vars[0], "STABLEJIT_DUMP_TO");
    INTERN(setting_vars[1], "STABLEJIT_LOG_COMPILES");
    INTERN(setting_vars[2], "STABLEJIT_LAZY_MAX_OPS");
    INTERN(s_lazy_max_ops, "lazy_max_ops");
    INTERN(s_log_compiles, "log_compiles");
    INTERN(s_init, "__init__");
    INTERN(s_device_buffers, "device_buffers");
    INTERN(s_device, "device");
    INTERN(s_name, "name");
    INTERN(s_also_reads, "also_reads");
    INTERN(s_new_lock, "new_lock");
    INTERN(s_meshes, "_MESHES");
    INTERN(s_result_slots, "_result_slots");
#undef INTERN
    if ((graph_one = PyLong_FromLong(1)) == NULL ||
        (max_ops_start = PyLong_FromLongLong(1LL << 62)) == NULL)
        return NULL;
    if ((one_type[0] = PyDict_New()) == NULL || (one_type[1] = PyDict_New()) == NULL ||
        (mixed_types = PyDict_New()) == NULL)
        return NULL;
    if (PyType_Ready(&FastOpType) < 0 || PyType_Ready(&FastBindType) < 0 ||
        PyType_Ready(&CompositeFnType) < 0 || PyType_Ready(&BoundType) < 0 ||
        PyType_Ready(&RLockType) < 0 || PyType_Ready(&PendingType) < 0)
        return NULL;
#endif
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL)
        return NULL;
#ifndef RECORDER_UNSUPPORTED
    Py_INCREF(&FastOpType);
    Py_INCREF(&RLockType);
    Py_INCREF(&PendingType);
    if (PyModule_AddObject(m, "FastOp", (PyObject *)&FastOpType) < 0 ||
        PyModule_AddObject(m, "RLock", (PyObject *)&RLockType) < 0 ||
        PyModule_AddObject(m, "Pending", (PyObject *)&PendingType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
#endif
    if (PyModule_AddStringConstant(m, "SOURCE_DIGEST", SOURCE_DIGEST) < 0 ||
        PyModule_AddIntConstant(m, "SUPPORTED",
#ifdef RECORDER_UNSUPPORTED
                                0
#else
                                1
#endif
                                ) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
