/* What both extensions (fastcall.c, recorder.c) need of Python classes with __slots__:
 * a slot's offset, read once from its member descriptor, and the Tensor made as
 * Tensor.__init__ makes it. Included by each .c file (each keeps its own offsets). */
#ifndef STABLEJIT_NATIVE_SLOTS_H
#define STABLEJIT_NATIVE_SLOTS_H

#include <Python.h>
#include <structmember.h>

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

/* the offset of cls's __slots__ member `name`; -1 with TypeError where it is none */
static int
slot_offset(PyObject *cls, const char *name, Py_ssize_t *out)
{
    PyObject *d = PyObject_GetAttrString(cls, name);
    if (d == NULL)
        return -1;
    if (!Py_IS_TYPE(d, &PyMemberDescr_Type) ||
        ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "%R.%s is not a __slots__ member", cls, name);
        Py_DECREF(d);
        return -1;
    }
    *out = ((PyMemberDescrObject *)d)->d_member->offset;
    Py_DECREF(d);
    return 0;
}

/* Tensor's slots (set by each extension's init from the class) */
typedef struct {
    PyTypeObject *cls;
    Py_ssize_t data, backend, type, weak, view, aliases;
} TensorSlots;

static int
tensor_slots(PyObject *cls, TensorSlots *t)
{
    if (slot_offset(cls, "_data", &t->data) || slot_offset(cls, "_backend", &t->backend) ||
        slot_offset(cls, "type", &t->type) || slot_offset(cls, "weak", &t->weak) ||
        slot_offset(cls, "_view", &t->view) || slot_offset(cls, "_aliases", &t->aliases))
        return -1;
    Py_INCREF(cls);
    Py_XSETREF(t->cls, (PyTypeObject *)cls);
    return 0;
}

/* Tensor(data, backend, type, weak), as its __init__ makes it (it only sets the slots;
 * the tests compare both paths' tensors slot by slot) */
static PyObject *
make_tensor(const TensorSlots *t, PyObject *data, PyObject *backend, PyObject *type,
            PyObject *weak)
{
    /* held before allocating: a collection it starts may run finalizers */
    Py_INCREF(data);
    Py_INCREF(backend);
    Py_INCREF(type);
    Py_INCREF(weak);
    PyObject *x = t->cls->tp_alloc(t->cls, 0);
    if (x == NULL) {
        Py_DECREF(data);
        Py_DECREF(backend);
        Py_DECREF(type);
        Py_DECREF(weak);
        return NULL;
    }
    SLOT(x, t->data) = data;
    SLOT(x, t->backend) = backend;
    SLOT(x, t->type) = type;
    SLOT(x, t->weak) = weak;
    Py_INCREF(Py_None);
    SLOT(x, t->view) = Py_None;
    Py_INCREF(Py_None);
    SLOT(x, t->aliases) = Py_None;
    return x;
}

/* Recorder's per-graph state: its __slots__ (recorder.py), read and written at fixed
 * offsets where a lookup in the instance dict by name cost about a sixth of a recorded
 * op. `cls` NULL: not read (init_state not called, or Recorder lost a slot). */
typedef struct {
    PyTypeObject *cls;
    Py_ssize_t lock, target, graph, tape, locs, types, inputs, input_of, keep, pending,
        constants, broadcasts, holds, ops, max_ops;
} RecorderSlots;

static inline int
recorder_slots(PyObject *cls, RecorderSlots *r)
{
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "init_state takes the Recorder class");
        return -1;
    }
    if (slot_offset(cls, "_lock", &r->lock) || slot_offset(cls, "target", &r->target) ||
        slot_offset(cls, "_graph", &r->graph) || slot_offset(cls, "_tape", &r->tape) ||
        slot_offset(cls, "_locs", &r->locs) || slot_offset(cls, "_types", &r->types) ||
        slot_offset(cls, "_inputs", &r->inputs) ||
        slot_offset(cls, "_input_of", &r->input_of) || slot_offset(cls, "_keep", &r->keep) ||
        slot_offset(cls, "_pending", &r->pending) ||
        slot_offset(cls, "_constants", &r->constants) ||
        slot_offset(cls, "_broadcasts", &r->broadcasts) ||
        slot_offset(cls, "_holds_functions", &r->holds) ||
        slot_offset(cls, "_ops", &r->ops) || slot_offset(cls, "_max_ops", &r->max_ops))
        return -1;
    Py_INCREF(cls);
    Py_XSETREF(r->cls, (PyTypeObject *)cls);
    return 0;
}

/* slot `off` of `obj` where obj is a Recorder (borrowed; NULL where it is not one or the
 * slot is unset: no exception, the caller takes the Python path) */
static inline PyObject *
recorder_slot(const RecorderSlots *r, PyObject *obj, Py_ssize_t off)
{
    return r->cls != NULL && PyObject_TypeCheck(obj, r->cls) ? SLOT(obj, off) : NULL;
}

/* a counter's value `old` (borrowed, NULL where unset), or -1 with an exception
 * (TypeError naming `what` where it is no int of 0 or more) */
static inline long
count_of(PyObject *old, const char *what)
{
    long c = old != NULL && PyLong_CheckExact(old) ? PyLong_AsLong(old) : -1;
    if (c < 0 && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError, "%s is not an int", what);
    return c;
}

/* obj.<slot> += n for an int slot of a Recorder (its op count): the new value, or -1
 * with an exception */
static inline long
slot_count_add(PyObject *obj, Py_ssize_t off, long n, const char *what)
{
    long c = count_of(SLOT(obj, off), what);
    if (c < 0)
        return -1;
    PyObject *v = PyLong_FromLong(c + n);
    if (v == NULL)
        return -1;
    Py_SETREF(SLOT(obj, off), v);
    return c + n;
}

/* Program.run's step, which both extensions take: the launcher `execute` called on the
 * list `bufs` (stolen), then consume_with_handlers(handlers) of its results. References
 * to execute and handlers are held across the run (PJRT releases the GIL, and another
 * thread may evict the program). *ran says whether execute returned. A new list of output
 * buffers; NULL with an exception on error. */
static PyObject *
run_program(PyObject *execute, PyObject *handlers, PyObject *bufs, PyObject *consume_name,
            int *ran)
{
    Py_INCREF(execute);
    Py_INCREF(handlers);
    PyObject *results = PyObject_CallOneArg(execute, bufs);
    Py_DECREF(execute);
    Py_DECREF(bufs);
    *ran = results != NULL;
    PyObject *outs = results == NULL ? NULL
                                     : PyObject_CallMethodOneArg(results, consume_name, handlers);
    Py_XDECREF(results);
    Py_DECREF(handlers);
    return outs;
}

/* self.<name> += n on an instance dict `d` (a counter such as a recorder's _ops or a lazy
 * backend's flushes); the new value, or -1 with an exception (TypeError naming `what`
 * where the value is no int) */
static long
dict_count_add(PyObject *d, PyObject *name, long n, const char *what)
{
    PyObject *old = PyDict_GetItemWithError(d, name);
    long c = old == NULL && PyErr_Occurred() ? -1 : count_of(old, what);
    if (c < 0)
        return -1;
    PyObject *v = PyLong_FromLong(c + n);
    if (v == NULL || PyDict_SetItem(d, name, v) < 0) {
        Py_XDECREF(v);
        return -1;
    }
    Py_DECREF(v);
    return c + n;
}

#endif
