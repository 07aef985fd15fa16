"""Every primitive through stablejit.vmap on XLA: the batched cases of tests/support/batch_cases.py
(all operands batched, and each alone), mapped along axis 0 and along the last axis,
under jit (one compiled program per primitive) and eagerly (one case per primitive),
against a loop of the unbatched op on the reference interpreter."""

import functools

import pytest
import stablejit
from stablejit.compiler.ir import Attrs
from stablejit.dispatch import bind

from tests.support.batch_cases import batch_cases
from tests.support.compare import assert_close
from tests.support.prim_table import PRIM_TABLE
from tests.support.runners import to_backend, xla_backend

NAMES = sorted(n for n in PRIM_TABLE if batch_cases(n))


def _mapped(case, axis: int):
    """stablejit.vmap of the primitive with this case's batched operands on `axis`."""
    attrs, regions = Attrs(case.attrs), case.regions
    in_axes = tuple(axis if b else None for b in case.batched)

    def one(*xs):
        return list(bind(case.prim, xs, attrs, regions=regions))
    return stablejit.vmap(one, in_axes=in_axes)


def _axis_cases(name):
    """(case, axis) pairs: every batched case on axis 0, the all-batched ones on -1."""
    out = []
    for c in batch_cases(name):
        out.append((c, 0))
        if all(c.batched):
            out.append((c, -1))
    return out


@functools.cache
def _jit_results(name):
    pairs = _axis_cases(name)

    def program(operand_lists):
        return [_mapped(c, ax)(*xs) for (c, ax), xs in zip(pairs, operand_lists, strict=True)]

    args = [[to_backend(o, "jit") for o in c.operands(ax)] for c, ax in pairs]
    with stablejit.default_backend(xla_backend()):
        outs = stablejit.jit(program)(args)
    return [[t.numpy() for t in res] for res in outs]


def _check(case, got):
    results = case.one_op().result_types
    for g, e, t in zip(got, case.expected(), results, strict=True):
        assert_close(g, e, t.dtype, msg=f"{case.name} {case.label}")


@pytest.mark.parametrize("name", NAMES)
def test_vmap_of_each_primitive_under_jit(name):
    for (case, _), got in zip(_axis_cases(name), _jit_results(name), strict=True):
        _check(case, got)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("path", ["eager", "reference"])
def test_vmap_of_each_primitive_outside_jit(name, path):
    case = batch_cases(name)[0]
    got = _mapped(case, 0)(*[to_backend(o, path) for o in case.operands(0)])
    _check(case, [t.numpy() for t in got])
