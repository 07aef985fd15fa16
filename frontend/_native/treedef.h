/* Pytrees of builtin nodes walked along a known TreeDef (tree.py), without building one:
 * a training step passes the same structure (a list of dicts of tensors) every call, and
 * tree.flatten's C++ flatten, its PyTreeDef hash and the TreeDef lookup cost ~1-2 us
 * where checking the tree against the last structure costs a tenth of that. Only list,
 * tuple, dict and None nodes are walked (as tree._flatten / tree._unflatten treat them);
 * any other node, or a leaf that is not the expected type, is the caller's to hand to
 * tree.flatten / tree.unflatten. Included by recorder.c. */
#ifndef STABLEJIT_NATIVE_TREEDEF_H
#define STABLEJIT_NATIVE_TREEDEF_H

#include "slots.h"

typedef struct {
    PyTypeObject *cls; /* tree.TreeDef; NULL: not set, nothing is walked */
    Py_ssize_t kind, aux, children, num_leaves;
} TreeDefSlots;

static int
treedef_slots(PyObject *cls, TreeDefSlots *t)
{
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "treedef_slots takes the TreeDef class");
        return -1;
    }
    if (slot_offset(cls, "kind", &t->kind) || slot_offset(cls, "aux", &t->aux) ||
        slot_offset(cls, "children", &t->children) ||
        slot_offset(cls, "num_leaves", &t->num_leaves))
        return -1;
    Py_INCREF(cls);
    Py_XSETREF(t->cls, (PyTypeObject *)cls);
    return 0;
}

#define TREE_MAX_DEPTH 64 /* (deeper: tree.flatten walks it, and says when too deep) */

/* Appends the leaves of `obj` to the list `out` where obj has td's structure and each
 * leaf is exactly of `leaf_type`: 1. 0 where it differs (out then holds a partial list
 * the caller drops), -1 with an exception. */
static int
flatten_as(const TreeDefSlots *ts, PyObject *td, PyObject *obj, PyTypeObject *leaf_type,
           PyObject *out, int depth)
{
    if (ts->cls == NULL || !Py_IS_TYPE(td, ts->cls) || depth > TREE_MAX_DEPTH)
        return 0;
    PyObject *kind = SLOT(td, ts->kind), *children = SLOT(td, ts->children);
    if (kind == Py_None)
        return Py_IS_TYPE(obj, leaf_type) ? (PyList_Append(out, obj) < 0 ? -1 : 1) : 0;
    if (kind == (PyObject *)Py_TYPE(Py_None))
        return obj == Py_None;
    if (children == NULL || !PyTuple_CheckExact(children))
        return 0;
    Py_ssize_t n = PyTuple_GET_SIZE(children);
    if (kind == (PyObject *)&PyList_Type || kind == (PyObject *)&PyTuple_Type) {
        int list = kind == (PyObject *)&PyList_Type;
        if (list ? !PyList_CheckExact(obj) || PyList_GET_SIZE(obj) != n
                 : !PyTuple_CheckExact(obj) || PyTuple_GET_SIZE(obj) != n)
            return 0;
        for (Py_ssize_t k = 0; k < n; k++) {
            /* (a dict key's __eq__ deeper down may run Python that changes the list:
             * its length read again, its item held while walked) */
            if (list && k >= PyList_GET_SIZE(obj))
                return 0;
            PyObject *c = Py_NewRef(list ? PyList_GET_ITEM(obj, k) : PyTuple_GET_ITEM(obj, k));
            int r = flatten_as(ts, PyTuple_GET_ITEM(children, k), c, leaf_type, out, depth + 1);
            Py_DECREF(c);
            if (r <= 0)
                return r;
        }
        return !list || PyList_GET_SIZE(obj) == n;
    }
    if (kind == (PyObject *)&PyDict_Type) {
        /* td's aux: the sorted keys; a dict of as many keys holding each has the same */
        PyObject *keys = SLOT(td, ts->aux);
        if (!PyDict_CheckExact(obj) || keys == NULL || !PyTuple_CheckExact(keys) ||
            PyTuple_GET_SIZE(keys) != n || PyDict_GET_SIZE(obj) != n)
            return 0;
        for (Py_ssize_t k = 0; k < n; k++) {
            PyObject *c = PyDict_GetItemWithError(obj, PyTuple_GET_ITEM(keys, k));
            if (c == NULL)
                return PyErr_Occurred() ? -1 : 0;
            Py_INCREF(c);
            int r = flatten_as(ts, PyTuple_GET_ITEM(children, k), c, leaf_type, out,
                               depth + 1);
            Py_DECREF(c);
            if (r <= 0)
                return r;
        }
        return PyDict_GET_SIZE(obj) == n; /* (unchanged by a key's __eq__ on the way) */
    }
    return 0; /* a registered node or a namedtuple: tree.flatten's */
}

/* 1 where every node of td is one unflatten_as builds */
static int
builds_as(const TreeDefSlots *ts, PyObject *td, int depth)
{
    if (ts->cls == NULL || !Py_IS_TYPE(td, ts->cls) || depth > TREE_MAX_DEPTH)
        return 0;
    PyObject *kind = SLOT(td, ts->kind), *children = SLOT(td, ts->children);
    if (kind == Py_None || kind == (PyObject *)Py_TYPE(Py_None))
        return 1;
    if ((kind != (PyObject *)&PyList_Type && kind != (PyObject *)&PyTuple_Type &&
         kind != (PyObject *)&PyDict_Type) || children == NULL || !PyTuple_CheckExact(children))
        return 0;
    if (kind == (PyObject *)&PyDict_Type) {
        PyObject *keys = SLOT(td, ts->aux);
        if (keys == NULL || !PyTuple_CheckExact(keys) ||
            PyTuple_GET_SIZE(keys) != PyTuple_GET_SIZE(children))
            return 0;
    }
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(children); k++)
        if (!builds_as(ts, PyTuple_GET_ITEM(children, k), depth + 1))
            return 0;
    return 1;
}

/* td's tree with leaves[*pos...] at its leaves (td passed builds_as, and leaves holds
 * enough): a new reference, or NULL with an exception */
static PyObject *
unflatten_as(const TreeDefSlots *ts, PyObject *td, PyObject *leaves, Py_ssize_t *pos)
{
    PyObject *kind = SLOT(td, ts->kind), *children = SLOT(td, ts->children);
    if (kind == Py_None) {
        if (*pos >= PyList_GET_SIZE(leaves))
            return PyErr_Format(PyExc_ValueError, "unflatten: too few leaves");
        return Py_NewRef(PyList_GET_ITEM(leaves, (*pos)++));
    }
    if (kind == (PyObject *)Py_TYPE(Py_None))
        return Py_NewRef(Py_None);
    Py_ssize_t n = PyTuple_GET_SIZE(children);
    if (kind == (PyObject *)&PyDict_Type) {
        PyObject *keys = SLOT(td, ts->aux), *d = PyDict_New();
        for (Py_ssize_t k = 0; d != NULL && k < n; k++) {
            PyObject *c = unflatten_as(ts, PyTuple_GET_ITEM(children, k), leaves, pos);
            if (c == NULL || PyDict_SetItem(d, PyTuple_GET_ITEM(keys, k), c) < 0)
                Py_CLEAR(d);
            Py_XDECREF(c);
        }
        return d;
    }
    int list = kind == (PyObject *)&PyList_Type;
    PyObject *seq = list ? PyList_New(n) : PyTuple_New(n);
    for (Py_ssize_t k = 0; seq != NULL && k < n; k++) {
        PyObject *c = unflatten_as(ts, PyTuple_GET_ITEM(children, k), leaves, pos);
        if (c == NULL)
            Py_CLEAR(seq);
        else if (list)
            PyList_SET_ITEM(seq, k, c);
        else
            PyTuple_SET_ITEM(seq, k, c);
    }
    return seq;
}

#endif
