"""The segmentation defaults' small helpers refuse meaningless arguments in one line, naming the
parameter, instead of a TypeError or AttributeError from inside (or a silent 6.0 for NaN)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from xfskde.exceptions import ParameterError
from xfskde.segmentation.defaults import bounded_window, label_window
from xfskde.segmentation.features import FeatureSpec, vote_step


@pytest.mark.parametrize("sigma", [None, "12", math.nan, math.inf, -3.0, 0, True])
def test_bounded_window_refuses_sigma(sigma):
    with pytest.raises(ParameterError, match=r"^sigma must be a finite number > 0, got "):
        bounded_window(sigma, 100.0)


@pytest.mark.parametrize("region", [None, "100", math.nan, -5.0, 0.0, False])
def test_bounded_window_refuses_region(region):
    with pytest.raises(ParameterError, match=r"^region must be a number > 0, the region scale R"):
        bounded_window(30.0, region)


def test_bounded_window_values_kept():
    assert bounded_window(30.0, 100.0) == 20.0
    assert bounded_window(30.0, math.inf) == 30.0  # no regions found: nothing bounds it
    assert bounded_window(np.float32(30.0), np.int64(100)) == 20.0
    assert bounded_window(30.0, 10.0) == 6.0


@pytest.mark.parametrize("sigma", [None, "10", math.nan, math.inf, -1.0, 0.0])
def test_label_window_refuses_sigma(sigma):
    with pytest.raises(ParameterError, match=r"^sigma must be a finite number > 0, got "):
        label_window(sigma)


def test_label_window_values_kept():
    assert label_window(20.0) == 14.0
    assert label_window(np.float64(10)) == 7.0


@pytest.mark.parametrize("spec", [None, 32.0, {"size": 32.0}])
def test_vote_step_refuses_what_is_no_spec(spec):
    with pytest.raises(TypeError, match=r"^spec must be a FeatureSpec \(the features and their"):
        vote_step(spec)


def test_vote_step_values_kept():
    assert vote_step(FeatureSpec(size=64.0)) == 4
    assert vote_step(FeatureSpec(size=31.9)) == 1
