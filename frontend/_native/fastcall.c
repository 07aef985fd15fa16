/* stablejit._fastcall: the cached call of a jitted function, in C.
 *
 * Jitted.__call__ becomes a FastCall object (a method descriptor, so calling a Jitted
 * reaches it with no bound method and no Python frame). It does what the Python fast
 * path in jit.py does, step for step: the same guards, the same key in the same
 * Jitted._fast dict (the Python path enters the keys), PJRT's execute and
 * consume_with_handlers (jaxlib callables, called through the C API) and the output
 * Tensor; in a lazy() block, the entry recorded into the pending graph (Entry.record's
 * steps) or run at once. Anything else - a miss, keyword arguments, a deleted tensor,
 * an evicted program, an output tree only Python rebuilds - calls the Python __call__ or
 * Entry's method, which decides and raises exactly as before. docs/native.md has the
 * design.
 *
 * State: the objects handed to init() (classes, module dicts, interned names), set once
 * at import and never written again; every call holds references to what it uses, so
 * another thread changing a Jitted's dict or a program while PJRT runs is safe.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include "slots.h"
#include "treedef.h"

#ifndef SOURCE_DIGEST /* setup.py defines it: fastcall.py refuses a stale build */
#define SOURCE_DIGEST "unknown"
#endif

static PyObject *writes_dict, *config_dict, *debugging_dict, *tree_dict;
static PyObject *s_fast, *s_epoch, *s_jepoch, *s_checks, *s_disabled, *s_registry, *s_flatten,
    *s_consume, *s_record, *s_outputs, *s_unflatten, *s_execute, *s_weak;
/* slot offsets of Tensor, Entry and Program (their __slots__' member descriptors) */
static TensorSlots T; /* Tensor and its slots' offsets */
static Py_ssize_t e_prog, e_lazy, e_single, e_backend, e_out_types, e_out_weak, e_fast_out,
    e_out_tree;
static TreeDefSlots TD; /* tree.TreeDef's slots: argument and output trees walked in C */
static PyObject *s_structure;
static Py_ssize_t p_execute, p_handlers;
/* lazy_backend.Pending and the offset of its buffer slot; names of a LazyBackend's dict */
static PyTypeObject *pending_cls, *program_cls;
static Py_ssize_t pd_buffer;
static PyObject *s_now, *s_flushes, *s_start_at, *s_ops_list;
static RecorderSlots RS; /* a lazy backend's op count and target (Recorder's slots) */



/* A leaf's part of the key: (type, weak, _backend, _view), as jit._fast_leaf; NULL
 * without an exception when the leaf is no tensor (the Python path misses then). */
static PyObject *
leaf_key(PyObject *x)
{
    if (!PyObject_TypeCheck(x, T.cls))
        return NULL;
    /* allocate first: a collection it starts may run finalizers, which could rebind
     * the slots we read */
    PyObject *key = PyTuple_New(4);
    if (key == NULL)
        return NULL;
    const Py_ssize_t offsets[4] = {T.type, T.weak, T.backend, T.view};
    for (int i = 0; i < 4; i++) {
        PyObject *v = SLOT(x, offsets[i]);
        if (v == NULL) { /* unset: the Python path's attrgetter raises, and misses */
            Py_DECREF(key);
            return NULL;
        }
        Py_INCREF(v);
        PyTuple_SET_ITEM(key, i, v);
    }
    return key;
}

/* Whether the Python path must decide: its guard `self._epoch == writes.epoch and not
 * debugging.active()`, read without calling Python. -1 on error. */
static int
must_ask_python(PyObject *jitted)
{
    PyObject *checks = PyDict_GetItemWithError(config_dict, s_checks);
    if (checks != Py_False) /* a NaN/Inf check on, or not yet read */
        return PyErr_Occurred() ? -1 : 1;
    PyObject *disabled = PyDict_GetItemWithError(debugging_dict, s_disabled);
    if (disabled == NULL || !PyLong_CheckExact(disabled) || PyLong_AsLong(disabled) != 0)
        return PyErr_Occurred() ? -1 : 1; /* disable_jit() in some thread */
    PyObject *now = PyDict_GetItemWithError(writes_dict, s_epoch);
    if (now == NULL)
        return PyErr_Occurred() ? -1 : 1;
    PyObject *mine = PyObject_GetAttr(jitted, s_jepoch);
    if (mine == NULL)
        return -1;
    int same = PyObject_RichCompareBool(mine, now, Py_EQ);
    Py_DECREF(mine);
    return same < 0 ? -1 : !same;
}

/* (leaves, structure) of the arguments `argt` laid out as the jitted's last entered
 * structure (Jitted._structure: the registry, our TreeDef and the jaxlib PyTreeDef that
 * _fast's key holds), walked by treedef.h: jaxlib's flatten would give those leaves and
 * an equal PyTreeDef, and the key then holds the key's own PyTreeDef, compared by
 * identity rather than node by node. NULL, maybe with an exception, where it differs. */
static PyObject *
flatten_as_entered(PyObject *jitted, PyObject *registry, PyObject *argt)
{
    PyObject *memo = PyObject_GetAttr(jitted, s_structure), *res = NULL;
    if (memo != NULL && PyTuple_CheckExact(memo) && PyTuple_GET_SIZE(memo) == 3 &&
        PyTuple_GET_ITEM(memo, 0) == registry) {
        PyObject *leaves = PyList_New(0);
        if (leaves != NULL && flatten_as(&TD, PyTuple_GET_ITEM(memo, 1), argt, T.cls, leaves,
                                         0) > 0)
            res = PyTuple_Pack(2, leaves, PyTuple_GET_ITEM(memo, 2));
        Py_XDECREF(leaves);
    }
    Py_XDECREF(memo);
    return res;
}

/* The Entry for these arguments, or NULL (with no exception: a miss). *leaves gets a
 * new reference to the flattened leaves (a tuple or list). */
static PyObject *
lookup(PyObject *jitted, PyObject *const *args, Py_ssize_t n, PyObject **leaves)
{
    PyObject *fast = NULL, *key = NULL, *entry = NULL;
    *leaves = NULL;
    int all_tensors = 1;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!PyObject_TypeCheck(args[i], T.cls)) {
            all_tensors = 0;
            break;
        }
    PyObject *argt = PyTuple_New(n);
    if (argt == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(argt, i, args[i]);
    }
    Py_ssize_t off;
    if (all_tensors) {
        *leaves = argt;
        key = PyTuple_New(n);
        off = 0;
    } else {
        /* pytrees: jaxlib's C++ flattener with our registry (tree.fast_flatten) */
        PyObject *registry = PyDict_GetItemWithError(tree_dict, s_registry);
        Py_XINCREF(registry); /* another thread may register a node (a new registry) */
        PyObject *flat = registry ? flatten_as_entered(jitted, registry, argt) : NULL;
        if (flat == NULL && registry != NULL) {
            PyErr_Clear(); /* (jaxlib's flatten meets any error again) */
            flat = PyObject_CallMethodOneArg(registry, s_flatten, argt);
        }
        Py_XDECREF(registry);
        Py_DECREF(argt);
        if (flat == NULL || !PyTuple_Check(flat) || PyTuple_GET_SIZE(flat) != 2 ||
            !PyList_Check(PyTuple_GET_ITEM(flat, 0))) {
            Py_XDECREF(flat);
            goto miss;
        }
        *leaves = PyTuple_GET_ITEM(flat, 0);
        Py_INCREF(*leaves);
        n = PyList_GET_SIZE(*leaves);
        key = PyTuple_New(n + 1);
        if (key != NULL) {
            PyObject *structure = PyTuple_GET_ITEM(flat, 1);
            Py_INCREF(structure);
            PyTuple_SET_ITEM(key, 0, structure);
        }
        Py_DECREF(flat);
        off = 1;
    }
    if (key == NULL)
        goto miss;
    PyObject **items = PySequence_Fast_ITEMS(*leaves);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = leaf_key(items[i]);
        if (k == NULL)
            goto miss;
        PyTuple_SET_ITEM(key, off + i, k);
    }
    fast = PyObject_GetAttr(jitted, s_fast);
    if (fast == NULL || !PyDict_CheckExact(fast))
        goto miss;
    entry = PyDict_GetItemWithError(fast, key); /* unhashable aux data: TypeError */
    Py_XINCREF(entry);
miss:
    Py_XDECREF(fast);
    Py_XDECREF(key);
    PyErr_Clear(); /* the Python path meets the same condition and decides */
    return entry;
}


/* The output tree holding `outs`: built in C where treedef.h builds the entry's out_tree
 * (a TreeDef of list, tuple, dict and None nodes), else by its jaxlib PyTreeDef */
static PyObject *
output_tree(PyObject *entry, PyObject *fast_out, PyObject *outs)
{
    PyObject *out_tree = SLOT(entry, e_out_tree);
    PyObject *num = out_tree != NULL && Py_IS_TYPE(out_tree, TD.cls)
                        ? SLOT(out_tree, TD.num_leaves) : NULL;
    if (num != NULL && PyLong_CheckExact(num) && PyList_CheckExact(outs) &&
        PyLong_AsSsize_t(num) == PyList_GET_SIZE(outs) && builds_as(&TD, out_tree, 0)) {
        Py_ssize_t pos = 0;
        return unflatten_as(&TD, out_tree, outs, &pos);
    }
    return PyObject_CallMethodOneArg(fast_out, s_unflatten, outs);
}

/* The call's result from the output buffers, as Entry.outputs (or the single output
 * tensor) makes it: one Tensor per buffer, rebuilt into the output tree by jaxlib's
 * PyTreeDef where the entry has one; anything else is Entry.outputs' to do. */
static PyObject *
outputs(PyObject *entry, PyObject *outs)
{
    PyObject *single = SLOT(entry, e_single), *types = SLOT(entry, e_out_types),
             *weak = SLOT(entry, e_out_weak), *backend = SLOT(entry, e_backend),
             *fast_out = SLOT(entry, e_fast_out);
    int is_single = single == NULL ? 0 : PyObject_IsTrue(single);
    if (is_single < 0)
        return NULL;
    if (!types || !weak || !backend || !fast_out || !PyTuple_Check(types) ||
        !PyTuple_Check(weak) || !PyList_Check(outs))
        return PyObject_CallMethodOneArg(entry, s_outputs, outs);
    Py_ssize_t n = PyList_GET_SIZE(outs);
    if (is_single ? (n < 1 || PyTuple_GET_SIZE(types) < 1 || PyTuple_GET_SIZE(weak) < 1)
                  : (fast_out == Py_None || PyTuple_GET_SIZE(types) != n ||
                     PyTuple_GET_SIZE(weak) != n)) /* Python's tree, or zip's error */
        return PyObject_CallMethodOneArg(entry, s_outputs, outs);
    /* held while tensors are allocated (a collection may run finalizers; see leaf_key) */
    Py_INCREF(types);
    Py_INCREF(weak);
    Py_INCREF(backend);
    Py_INCREF(fast_out);
    PyObject *res = NULL, *tensors = NULL;
    if (is_single) {
        res = make_tensor(&T, PyList_GET_ITEM(outs, 0), backend, PyTuple_GET_ITEM(types, 0),
                         PyTuple_GET_ITEM(weak, 0));
        goto done;
    }
    tensors = PyList_New(n);
    if (tensors == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = make_tensor(&T, PyList_GET_ITEM(outs, i), backend,
                                 PyTuple_GET_ITEM(types, i), PyTuple_GET_ITEM(weak, i));
        if (t == NULL)
            goto done;
        PyList_SET_ITEM(tensors, i, t);
    }
    res = output_tree(entry, fast_out, tensors);
done:
    Py_XDECREF(tensors);
    Py_DECREF(types);
    Py_DECREF(weak);
    Py_DECREF(backend);
    Py_DECREF(fast_out);
    return res;
}

/* prog run on the leaves' buffers, its outputs made as `entry` says. `backend` NULL: an
 * eager entry (each leaf's data is its buffer); else a lazy() backend and its `target`:
 * each leaf must be one of theirs and computed (a Pending holding its buffer). NULL with
 * no exception set: ask the Python path (a deleted or pending leaf, an evicted program,
 * a launcher that did not run). */
static PyObject *
run_on(PyObject *entry, PyObject *prog, PyObject *leaves, PyObject *backend, PyObject *target)
{
    PyObject *execute = SLOT(prog, p_execute), *handlers = SLOT(prog, p_handlers);
    if (execute == NULL || execute == Py_None || handlers == NULL)
        return NULL; /* evicted: the Python path loads it again */
    Py_ssize_t n = PySequence_Fast_GET_SIZE(leaves);
    PyObject **items = PySequence_Fast_ITEMS(leaves);
    PyObject *bufs = PyList_New(n);
    if (bufs == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = items[i], *b = SLOT(x, T.data);
        if (backend != NULL) {
            PyObject *owner = SLOT(x, T.backend);
            if (b != NULL && Py_TYPE(b) == pending_cls)
                b = SLOT(b, pd_buffer); /* a lazy value an earlier graph computed */
            if (owner != backend && owner != target)
                b = NULL;
        }
        if (b == NULL || b == Py_None) { /* deleted: the Python path raises clearly */
            Py_DECREF(bufs);
            return NULL;
        }
        Py_INCREF(b);
        PyList_SET_ITEM(bufs, i, b);
    }
    int ran;
    PyObject *outs = run_program(execute, handlers, bufs, s_consume, &ran);
    if (outs == NULL) {
        if (!ran && PyErr_ExceptionMatches(PyExc_TypeError))
            PyErr_Clear(); /* not run: as the Python path, ask the general path */
        return NULL;
    }
    PyObject *res = outputs(entry, outs);
    Py_DECREF(outs);
    return res;
}

/* A jitted call on a lazy() backend whose graph has no op yet, of a Function the backend
 * has run at once before (LazyBackend._now holds its Program): run now, as
 * LazyBackend._run_now does, with the operands' buffers. NULL with no exception set: the
 * Python step (Entry.record) decides (an op recorded, an operand pending or deleted or
 * elsewhere, a Function not run at once before, an evicted program). */
static PyObject *
lazy_now(PyObject *entry, PyObject *leaves, PyObject *fn)
{
    PyObject *backend = SLOT(entry, e_backend);
    PyObject **dp = backend ? _PyObject_GetDictPtr(backend) : NULL;
    if (dp == NULL || *dp == NULL || !PyDict_CheckExact(*dp))
        return NULL;
    PyObject *d = *dp;
    PyObject *ops = recorder_slot(&RS, backend, RS.ops);
    if (ops == NULL || !PyLong_CheckExact(ops) || PyLong_AsLong(ops) != 0) {
        PyErr_Clear(); /* (the Python step meets any error again) */
        return NULL;
    }
    PyObject *now = PyDict_GetItemWithError(d, s_now);
    PyObject *target = now ? recorder_slot(&RS, backend, RS.target) : NULL;
    PyObject *prog = target && PyDict_CheckExact(now) ? PyDict_GetItemWithError(now, fn)
                                                       : NULL;
    if (prog == NULL || Py_TYPE(prog) != program_cls) {
        PyErr_Clear();
        return NULL;
    }
    /* still large enough to start a graph (a test or script may raise _start_at) */
    PyObject *start_at = PyDict_GetItemWithError(d, s_start_at);
    PyObject *fn_ops = start_at ? PyObject_GetAttr(fn, s_ops_list) : NULL;
    long bound = start_at && PyLong_CheckExact(start_at) ? PyLong_AsLong(start_at) : -1;
    int large = fn_ops != NULL && PyList_CheckExact(fn_ops) && bound >= 0 &&
                PyList_GET_SIZE(fn_ops) >= bound;
    Py_XDECREF(fn_ops);
    if (!large) {
        PyErr_Clear(); /* (the Python step meets any error again) */
        return NULL;
    }
    Py_INCREF(d); /* (held across the run: PJRT releases the GIL) */
    PyObject *res = run_on(entry, prog, leaves, backend, target);
    /* self.flushes += 1, as _run_now counts */
    if (res != NULL && dict_count_add(d, s_flushes, 1, "a lazy backend's flushes") < 0)
        Py_CLEAR(res);
    Py_DECREF(d);
    return res;
}

/* Entry.record in C: the program recorded as one entry of the lazy backend's graph
 * (backend.execute, the recorder's C or Python method), each output given the entry's
 * weakness, and the single output or the output tree rebuilt by the entry's PyTreeDef.
 * An entry whose tree only Python rebuilds calls Entry.record itself. */
static PyObject *
lazy_record(PyObject *entry, PyObject *leaves)
{
    PyObject *backend = SLOT(entry, e_backend), *prog = SLOT(entry, e_prog),
             *weak = SLOT(entry, e_out_weak), *single = SLOT(entry, e_single),
             *fast_out = SLOT(entry, e_fast_out);
    int is_single = single == NULL ? -1 : PyObject_IsTrue(single);
    if (is_single < 0 || backend == NULL || prog == NULL || weak == NULL ||
        !(PyTuple_CheckExact(weak) || PyList_CheckExact(weak)) || fast_out == NULL ||
        (!is_single && fast_out == Py_None)) {
        PyErr_Clear();
        return PyObject_CallMethodOneArg(entry, s_record, leaves);
    }
    /* held across the call: recording may run a collection, and it runs Python */
    Py_INCREF(backend);
    Py_INCREF(prog);
    Py_INCREF(weak);
    Py_INCREF(fast_out);
    PyObject *res = NULL;
    PyObject *outs = PyObject_CallMethodObjArgs(backend, s_execute, prog, leaves, NULL);
    if (outs == NULL)
        goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(weak);
    if (!(PyList_CheckExact(outs) || PyTuple_CheckExact(outs)) ||
        PySequence_Fast_GET_SIZE(outs) != n || (is_single && n < 1)) { /* (zip's strict) */
        PyErr_SetString(PyExc_ValueError, "a recorded program gave other than its results");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) { /* o.weak = w, as Entry._weak sets it */
        PyObject *o = PySequence_Fast_GET_ITEM(outs, i), *w = PySequence_Fast_GET_ITEM(weak, i);
        if (Py_IS_TYPE(o, T.cls)) {
            PyObject *old = SLOT(o, T.weak);
            SLOT(o, T.weak) = Py_NewRef(w);
            Py_XDECREF(old);
        }
        else if (PyObject_SetAttr(o, s_weak, w) < 0) {
            goto done;
        }
    }
    res = is_single ? Py_NewRef(PySequence_Fast_GET_ITEM(outs, 0))
                    : output_tree(entry, fast_out, outs);
done:
    Py_XDECREF(outs);
    Py_DECREF(backend);
    Py_DECREF(prog);
    Py_DECREF(weak);
    Py_DECREF(fast_out);
    return res;
}

/* Run a found entry; NULL with no exception set means: ask the Python path. */
static PyObject *
run(PyObject *entry, PyObject *leaves)
{
    PyObject *lazy = SLOT(entry, e_lazy), *prog = SLOT(entry, e_prog);
    if (lazy == NULL || prog == NULL)
        return NULL;
    int is_lazy = PyObject_IsTrue(lazy);
    if (is_lazy < 0)
        return NULL;
    if (is_lazy) { /* run at once on an empty graph, or one tape entry Python records */
        Py_INCREF(prog);
        PyObject *res = lazy_now(entry, leaves, prog);
        Py_DECREF(prog);
        if (res != NULL || PyErr_Occurred())
            return res;
        return lazy_record(entry, leaves);
    }
    return run_on(entry, prog, leaves, NULL, NULL);
}

/* ---- FastCall: Jitted.__call__ ------------------------------------------------------ */

typedef struct {
    PyObject_HEAD
    PyObject *python; /* the Python __call__: every case the C path does not take */
    vectorcallfunc vectorcall;
} FastCall;

static PyObject *
fastcall_vectorcall(FastCall *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs < 1 || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0))
        goto python;
    PyObject *jitted = args[0];
    int ask = must_ask_python(jitted);
    if (ask < 0)
        return NULL;
    if (ask)
        goto python;
    PyObject *leaves;
    PyObject *entry = lookup(jitted, args + 1, nargs - 1, &leaves);
    if (entry == NULL) {
        Py_XDECREF(leaves);
        goto python;
    }
    PyObject *res = run(entry, leaves);
    Py_DECREF(entry);
    Py_DECREF(leaves);
    if (res != NULL || PyErr_Occurred())
        return res;
python:
    return PyObject_Vectorcall(self->python, args, nargsf, kwnames);
}

static PyObject *
fastcall_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *python;
    if (!PyArg_ParseTuple(args, "O:FastCall", &python))
        return NULL;
    FastCall *self = (FastCall *)type->tp_alloc(type, 0);
    if (self == NULL)
        return NULL;
    Py_INCREF(python);
    self->python = python;
    self->vectorcall = (vectorcallfunc)fastcall_vectorcall;
    return (PyObject *)self;
}

static int
fastcall_traverse(FastCall *self, visitproc visit, void *arg)
{
    Py_VISIT(self->python);
    return 0;
}

static int
fastcall_clear(FastCall *self)
{
    Py_CLEAR(self->python);
    return 0;
}

static void
fastcall_dealloc(FastCall *self)
{
    PyObject_GC_UnTrack(self);
    fastcall_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* jitted.__call__ as an attribute: a bound method, as for a Python function */
static PyObject *
fastcall_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

/* __name__, __qualname__ and __doc__: the Python __call__'s (reprs, help, inspect) */
static PyObject *
fastcall_attr(FastCall *self, void *name)
{
    return PyObject_GetAttrString(self->python, (const char *)name);
}

static PyGetSetDef fastcall_getset[] = {
    {"__name__", (getter)fastcall_attr, NULL, NULL, "__name__"},
    {"__qualname__", (getter)fastcall_attr, NULL, NULL, "__qualname__"},
    {"__doc__", (getter)fastcall_attr, NULL, NULL, "__doc__"},
    {NULL},
};

static PyMemberDef fastcall_members[] = {
    {"python", T_OBJECT, offsetof(FastCall, python), READONLY,
     "the Python __call__ that decides every case the C path does not take"},
    {"__wrapped__", T_OBJECT, offsetof(FastCall, python), READONLY,
     "the Python __call__ (inspect.signature follows it)"},
    {NULL},
};

static PyTypeObject FastCallType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stablejit._fastcall.FastCall",
    .tp_doc = "Jitted.__call__: the cached call in C, the Python __call__ otherwise.",
    .tp_basicsize = sizeof(FastCall),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_new = fastcall_new,
    .tp_dealloc = (destructor)fastcall_dealloc,
    .tp_traverse = (traverseproc)fastcall_traverse,
    .tp_clear = (inquiry)fastcall_clear,
    .tp_call = PyVectorcall_Call,
    .tp_vectorcall_offset = offsetof(FastCall, vectorcall),
    .tp_descr_get = fastcall_get,
    .tp_members = fastcall_members,
    .tp_getset = fastcall_getset,
};

/* ---- module --------------------------------------------------------------------------- */

static int
module_dict(PyObject *module, PyObject **out)
{
    PyObject *d = PyObject_GetAttrString(module, "__dict__");
    if (d == NULL)
        return -1;
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "a module's __dict__ is not a dict");
        Py_DECREF(d);
        return -1;
    }
    Py_XSETREF(*out, d);
    return 0;
}

static PyObject *
init(PyObject *module, PyObject *args)
{
    PyObject *tensor, *entry, *program, *writes, *config, *debugging, *tree, *pending,
        *recorder;
    if (!PyArg_ParseTuple(args, "O!OOOOOOO!O:init", &PyType_Type, &tensor, &entry, &program,
                          &writes, &config, &debugging, &tree, &PyType_Type, &pending,
                          &recorder))
        return NULL;
    if (recorder_slots(recorder, &RS) < 0)
        return NULL;
    if (slot_offset(pending, "buffer", &pd_buffer))
        return NULL;
    Py_INCREF(pending);
    Py_XSETREF(pending_cls, (PyTypeObject *)pending);
    if (!PyType_Check(program)) {
        PyErr_SetString(PyExc_TypeError, "init: Program is not a class");
        return NULL;
    }
    Py_INCREF(program);
    Py_XSETREF(program_cls, (PyTypeObject *)program);
    if (slot_offset(entry, "prog", &e_prog) || slot_offset(entry, "lazy", &e_lazy) ||
        slot_offset(entry, "_single", &e_single) || slot_offset(entry, "backend", &e_backend) ||
        slot_offset(entry, "out_types", &e_out_types) ||
        slot_offset(entry, "out_weak", &e_out_weak) ||
        slot_offset(entry, "fast_out", &e_fast_out) ||
        slot_offset(entry, "out_tree", &e_out_tree) ||
        slot_offset(program, "execute", &p_execute) ||
        slot_offset(program, "handlers", &p_handlers))
        return NULL;
    if (module_dict(writes, &writes_dict) || module_dict(config, &config_dict) ||
        module_dict(debugging, &debugging_dict) || module_dict(tree, &tree_dict))
        return NULL;
    PyObject *treedef = PyDict_GetItemString(tree_dict, "TreeDef");
    if (treedef == NULL || treedef_slots(treedef, &TD) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "init: stablejit.tree has no TreeDef");
        return NULL;
    }
    if (tensor_slots(tensor, &T) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init", init, METH_VARARGS,
     "init(Tensor, Entry, Program, writes, config, debugging, tree, Pending, Recorder): "
     "what the C "
     "path reads"},
    {NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "stablejit._fastcall",
    "The cached call of a jitted function in C (see frontend/fastcall.py).", -1, methods,
};

PyMODINIT_FUNC
PyInit__fastcall(void)
{
    if (PyType_Ready(&FastCallType) < 0)
        return NULL;
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL
    INTERN(s_fast, "_fast");
    INTERN(s_epoch, "epoch");
    INTERN(s_jepoch, "_epoch");
    INTERN(s_checks, "_checks");
    INTERN(s_disabled, "jit_disabled");
    INTERN(s_registry, "_cpp_registry");
    INTERN(s_flatten, "flatten");
    INTERN(s_consume, "consume_with_handlers");
    INTERN(s_record, "record");
    INTERN(s_outputs, "outputs");
    INTERN(s_unflatten, "unflatten");
    INTERN(s_execute, "execute");
    INTERN(s_weak, "weak");
    INTERN(s_now, "_now");
    INTERN(s_flushes, "flushes");
    INTERN(s_start_at, "_start_at");
    INTERN(s_ops_list, "ops");
    INTERN(s_structure, "_structure");
#undef INTERN
    PyObject *m = PyModule_Create(&moduledef);
    if (m == NULL)
        return NULL;
    Py_INCREF(&FastCallType);
    if (PyModule_AddObject(m, "FastCall", (PyObject *)&FastCallType) < 0 ||
        PyModule_AddStringConstant(m, "SOURCE_DIGEST", SOURCE_DIGEST) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
