"""Libraries that write into views of their arrays, run on stablejit tensors.

scikit-learn's GaussianMixture regularises each covariance through a view
(`covariances[k, :, :]`); SciPy's overlap-add convolution fills its output through
slices. With writes lost, the first returned NaN means and the second wrong values.
SciPy needs SCIPY_ARRAY_API=1 before it is first imported, so the cases run in a child
process (this file run as a script) and each test reads its outcome from there.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("sklearn")
pytest.importorskip("scipy")

SHAPES = [(35, 2), (100, 7), (1000, 33), (64, 64), (5, 40)]
MODES = ["full", "same", "valid"]
INIT = ["random", "random_from_data"]  # what sklearn allows under array_api_dispatch


def _cases() -> dict:
    import scipy.signal as ss
    import sklearn
    import stablejit.numpy as snp
    from sklearn.mixture import GaussianMixture

    rng = np.random.default_rng(0)
    out = {}
    for n, m in SHAPES:
        a, b = rng.standard_normal(n), rng.standard_normal(m)
        for mode in MODES:
            got = np.asarray(ss.oaconvolve(snp.asarray(a), snp.asarray(b), mode=mode))
            want = ss.oaconvolve(a, b, mode=mode)
            out[f"oaconvolve-{n}-{m}-{mode}"] = float(np.max(np.abs(got - want),
                                                             initial=0.0))
    x = rng.standard_normal((200, 3))
    x[:100] += 4.0
    sklearn.set_config(array_api_dispatch=True)
    for init in INIT:
        for cov in ("full", "tied", "diag", "spherical"):
            g = GaussianMixture(3, covariance_type=cov, init_params=init, random_state=0)
            g.fit(snp.asarray(x))
            with sklearn.config_context(array_api_dispatch=False):
                want = GaussianMixture(3, covariance_type=cov, init_params=init,
                                       random_state=0).fit(x)
            out[f"gmm-{init}-{cov}"] = float(max(
                np.max(np.abs(np.asarray(g.means_) - want.means_)),
                np.max(np.abs(np.asarray(g.covariances_) - want.covariances_))))
    return out


@pytest.fixture(scope="module")
def outcomes():
    from tests.support.runners import outcomes_of_script  # the child runs this file as a script
    return outcomes_of_script(__file__, timeout=600)


@pytest.mark.parametrize("n,m", SHAPES)
@pytest.mark.parametrize("mode", MODES)
def test_scipy_oaconvolve_matches_numpy_inputs(outcomes, n, m, mode):
    assert outcomes[f"oaconvolve-{n}-{m}-{mode}"] < 1e-9


@pytest.mark.parametrize("init", INIT)
@pytest.mark.parametrize("cov", ["full", "tied", "diag", "spherical"])
def test_sklearn_gaussian_mixture_matches_numpy(outcomes, init, cov):
    assert outcomes[f"gmm-{init}-{cov}"] < 1e-8


if __name__ == "__main__":
    print(json.dumps(_cases()))
