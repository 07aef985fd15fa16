"""stablejit.scipy.special: what the op records (test_op_records.py) do not show."""

from __future__ import annotations

import numpy as np
import pytest
import stablejit
import stablejit.scipy
from stablejit.scipy import special


def test_the_namespace_is_reachable_from_the_package():
    assert stablejit.scipy.special.erf is special.erf


@pytest.mark.parametrize("fn", [special.erf, special.erfc])
def test_complex_input_is_rejected_with_advice(fn):
    with pytest.raises(TypeError, match=r"real tensors only.*real part"):
        fn(np.ones(2, np.complex64))


def test_python_scalars_and_integers_give_the_default_float():
    assert special.erf(1).dtype == stablejit.numpy.float32
    assert special.erfc(np.arange(3, dtype=np.int64)).dtype == stablejit.numpy.float32
    np.testing.assert_allclose(float(special.erf(1)), 0.8427007929497149, rtol=1e-6)
