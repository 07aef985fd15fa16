"""The docstrings of the distributions' functions, from one template: every module has
the same few functions (logpdf, cdf, ppf ...) with the same meaning, so they are written
here once instead of fifteen times."""

from __future__ import annotations

import inspect
import textwrap
import types

_WHAT = {
    "pdf": "the probability density at `x`",
    "logpdf": "the log of the probability density at `x`",
    "pmf": "the probability mass at `k`",
    "logpmf": "the log of the probability mass at `k`",
    "cdf": "the cumulative distribution function, P(X <= x)",
    "logcdf": "the log of the cumulative distribution function",
    "sf": "the survival function, 1 - cdf (computed without the cancellation)",
    "logsf": "the log of the survival function",
    "ppf": "the percent point function (the inverse of cdf) at probability `q`",
    "isf": "the inverse of the survival function at probability `q`",
    "entropy": "the distribution's (differential) entropy",
}
_PARAMS = {
    "loc": "shifts the distribution: the result is that of `x - loc`",
    "scale": "stretches it: the density of `(x - loc) / scale`, divided by `scale`",
    "allow_singular": "accepted for jax's signature; a singular `cov` gives NaN",
}


def _doc(dist: str, module_doc: str, fn) -> str:
    name = fn.__name__
    args = list(inspect.signature(fn).parameters)
    params = [a for a in args[1:] if a not in _PARAMS] if name != "entropy" else \
        [a for a in args if a not in _PARAMS]
    summary = (f"{_WHAT[name][0].upper()}{_WHAT[name][1:]}, for {module_doc[0].lower()}"
               f"{module_doc[1:].split(', as jax')[0]}.")
    lines = [textwrap.fill(summary, 88), "", textwrap.fill(
             f"The same function as `jax.scipy.stats.{dist}.{name}` and "
             f"`scipy.stats.{dist}.{name}`. The arguments broadcast against each other "
             "and are promoted to one real floating dtype (integers and booleans become "
             "float32, the default float); outside the distribution's support the "
             "result is the limit SciPy gives (0, or -inf for a log), and a parameter "
             "out of its domain gives NaN, as in SciPy.", 88), "", "Args:"]
    if name != "entropy":
        lines.append(f"    {args[0]}: where to evaluate; a tensor, NumPy array or number.")
    lines += [f"    {p}: the distribution's parameter `{p}`, broadcast with the others."
              for p in params]
    lines += [f"    {p}: {_PARAMS[p]}." for p in args if p in _PARAMS]
    lines += ["", "Returns:", "    A tensor of the broadcast shape, in the promoted float dtype.",
              "", "Raises:",
              "    TypeError: if an argument is complex (apply it to the real part).",
              "    ValueError: if the arguments' shapes do not broadcast."]
    return "\n".join(lines)


def install(modules: list[types.ModuleType]) -> None:
    """Give each distribution's functions their docstring, and make dir() of a
    distribution module list its functions only."""
    for mod in modules:
        dist = mod.__name__.rsplit(".", 1)[1]
        for name in mod.__all__:
            fn = getattr(mod, name)
            if not fn.__doc__:
                fn.__doc__ = _doc(dist, mod.__doc__, fn)
        mod.__dir__ = lambda names=tuple(mod.__all__): sorted(names)
