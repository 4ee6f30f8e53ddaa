"""Refusals of images and windows that cannot give a field say why in the user's own terms.

An empty image was told "give a stride of at most 0"; a box window too wide for its image was
quoted by its sigma ("sigma 288675 px" for ``size=1e6``), a number the user never gave; and
``size=True`` was taken as a window of 1 pixel.
"""

from __future__ import annotations

import numpy as np
import pytest

import xfskde
from xfskde.exceptions import ParameterError


@pytest.mark.parametrize("shape", [(0, 6), (6, 0), (0, 0)])
def test_an_empty_image_is_refused_as_empty(shape):
    with pytest.raises(ParameterError) as err:
        xfskde.local_fskde(np.zeros(shape), order=3)
    message = str(err.value)
    assert message.startswith(f"the image is empty ({shape[0]} x {shape[1]} pixels)")
    assert "stride" not in message and "\n" not in message


@pytest.mark.parametrize(
    ("window", "size", "said", "largest"),
    [
        ("box", 1e6, "(a box of side 1000000 px)", 3547),  # side / sqrt(12) = 1024
        ("gaussian", 1e6, "(a gaussian of sigma 1e+06 px)", 1024),
        ("disk", 2500.5, "(a disk of radius 2500.5 px)", 2048),  # radius / 2 = 1024
    ],
)
def test_a_window_too_wide_is_refused_in_its_own_size(window, size, said, largest):
    with pytest.raises(ParameterError) as err:
        xfskde.local_fskde(np.zeros((20, 20)), order=3, window=window, size=size)
    message = str(err.value)
    assert "is a window wider than this 20 x 20 image " + said in message
    assert message.endswith(f"give a size of at most {largest}")
    assert "sigma 288675" not in message and "\n" not in message
    # the largest size it names is accepted
    field = xfskde.local_fskde(np.ones((3, 3)), order=1, window=window, size=largest)
    assert field.shape == (3, 3, 2)
    with pytest.raises(ParameterError, match="wider than this 3 x 3 image"):
        xfskde.local_fskde(np.ones((3, 3)), order=1, window=window, size=largest + 1)


@pytest.mark.parametrize("window", ["box", "gaussian", "disk"])
@pytest.mark.parametrize("flag", [True, False, np.True_])
def test_a_boolean_size_is_refused(window, flag):
    with pytest.raises(TypeError, match=r"size must be a positive number of pixels, got"):
        xfskde.local_fskde(np.zeros((8, 8)), order=3, window=window, size=flag)
    with pytest.raises(TypeError, match=r"size must be a positive number"):
        xfskde.Window(window, flag)
