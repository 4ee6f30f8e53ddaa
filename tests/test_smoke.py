import numpy as np

import xfskde


def test_public_api_is_importable():
    for name in xfskde.__all__:
        assert hasattr(xfskde, name), name


def test_flat_image_gives_zeros_not_nan():
    F = xfskde.local_fskde(np.full((20, 20), 7, dtype=np.uint8), order=4, window="box", size=5)
    assert F.dtype == np.complex64
    assert np.all(F == 0)
