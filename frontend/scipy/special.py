"""stablejit.scipy.special: special functions, as scipy.special / jax.scipy.special.

Arguments are promoted together; integers and booleans become the default float
(float32), as in jax; complex arguments are an error (real functions only). Each family
lives in its own module; this one is the namespace.
"""

from ._bessel import i0, i0e, i1, i1e
from ._error_functions import erf, erfc, erfinv, log_ndtr, ndtr, ndtri
from ._gamma import (
    beta,
    betaln,
    comb,
    digamma,
    factorial,
    gamma,
    gammaln,
    gammasgn,
    loggamma,
    multigammaln,
    poch,
)
from ._incomplete import betainc, gammainc, gammaincc
from ._logarithmic import (
    boxcox,
    boxcox1p,
    entr,
    expit,
    kl_div,
    log_softmax,
    logit,
    logsumexp,
    rel_entr,
    softmax,
    xlog1py,
    xlogy,
)
from ._zeta import bernoulli, polygamma, zeta

__all__ = ["erf", "erfc", "erfinv", "ndtr", "ndtri", "log_ndtr", "gammaln", "digamma",
           "gamma", "gammasgn", "loggamma", "betaln", "multigammaln", "factorial", "comb",
           "gammainc", "gammaincc", "betainc", "i0", "i0e", "i1", "i1e", "xlogy", "xlog1py",
           "logit", "expit", "entr", "rel_entr", "kl_div", "logsumexp", "softmax",
           "log_softmax", "zeta", "polygamma", "beta", "poch", "boxcox", "boxcox1p",
           "bernoulli"]
