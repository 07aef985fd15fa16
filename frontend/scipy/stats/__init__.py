"""stablejit.scipy.stats: probability distributions as jax.scipy.stats — one module per
distribution, each with the functions jax has for it (logpdf, pdf, cdf, ...):

    from stablejit.scipy.stats import norm
    norm.logpdf(x, loc=0.0, scale=1.0)
"""

from . import (
    bernoulli,
    beta,
    cauchy,
    chi2,
    expon,
    gamma,
    geom,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    pareto,
    poisson,
    t,
    uniform,
)
from ._docs import install as _install_docs

__all__ = ["bernoulli", "beta", "cauchy", "chi2", "expon", "gamma", "geom", "laplace",
           "logistic", "multivariate_normal", "norm", "pareto", "poisson", "t", "uniform"]

_install_docs([globals()[n] for n in __all__])
