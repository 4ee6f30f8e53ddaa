"""The public core at the edges of its parameters: a value it cannot take is refused in one line
that names the parameter, never a crash from deep inside (IndexError, a NumPy reshape or
broadcast message) nor a result silently computed from something else (complex angles stripped
of their imaginary parts, ``None`` read as NaN); a huge level that changes nothing is no longer
a memory error."""

from __future__ import annotations

import numpy as np
import pytest

import xfskde
from xfskde import canonical_distance, canonicalize, distance, evaluate, fskde, rotate
from xfskde.descriptors import (
    as_real_vector,
    canonical_histogram,
    disk_mask,
    fskde_cells,
    histogram_cells,
    hog_descriptor,
)
from xfskde.exceptions import DimensionError, ParameterError
from xfskde.orientation import orientation

ANGLES = np.array([0.1, 0.5, 1.3, 2.0, 2.9])
F = fskde(np.array([[0.1, 0.5, 1.3], [2.0, 2.9, 0.4]]), order=4)  # two FS-KDEs, ℓ = 5


def _one_line(info: pytest.ExceptionInfo) -> str:
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.mark.parametrize(
    ("axis", "error", "words"),
    [
        (True, TypeError, "axis must be an integer"),
        ("0", TypeError, "axis must be an integer"),
        ([0], TypeError, "axis must be an integer"),
        (10**12, ParameterError, "axis 1000000000000 is out of range"),
        (1, ParameterError, "axis 1 is out of range for angles of 1 axes"),
    ],
)
def test_fskde_refuses_an_axis_it_cannot_read(axis, error, words):
    with pytest.raises(error) as info:
        fskde(ANGLES, order=3, axis=axis)
    assert words in _one_line(info)


def test_fskde_refuses_complex_angles_rather_than_dropping_their_imaginary_parts():
    with pytest.raises(TypeError) as info:
        fskde(ANGLES + 1j, order=3)
    assert _one_line(info) == "angles must be real numbers, got an array of complex values"
    with pytest.raises(TypeError, match="weights must be real numbers, got an array of complex"):
        fskde(ANGLES, np.ones(5) + 1j, order=3)


def test_fskde_refuses_text_angles_naming_them():
    with pytest.raises(TypeError, match=r"^angles must be real numbers, got an array of <U3"):
        fskde("abc", order=3)


def test_fskde_weights_of_another_shape_are_refused_naming_weights():
    with pytest.raises(ParameterError) as info:
        fskde(ANGLES, np.ones(3), order=3)
    assert _one_line(info).startswith(
        "weights of shape (3,) do not broadcast to the angles' shape (5,)"
    )
    with pytest.raises(ParameterError, match="weights must be non-negative"):
        fskde(ANGLES, -np.ones(5), order=3)
    with pytest.raises(ParameterError, match="empty: give at least one angle"):
        fskde(np.zeros((3, 0)), order=3)


def test_fskde_valid_axis_still_gives_the_same_coefficients():
    sets = np.array([[0.1, 0.5, 1.3], [2.0, 2.9, 0.4]])
    np.testing.assert_array_equal(fskde(sets.T, order=4, axis=0), fskde(sets, order=4))
    np.testing.assert_array_equal(fskde(sets.T, order=4, axis=-2), F)
    # the coefficients are eq. 6 on the angle set: F_k = H_k / N Σ e^{-ikθ}
    kernel = xfskde.Cos2KKernel(4)
    brute = kernel.coefficients * np.exp(-1j * np.outer(sets[0], np.arange(5))).mean(axis=0)
    np.testing.assert_allclose(F[0], brute, rtol=1e-13, atol=1e-16)


@pytest.mark.parametrize(
    "call",
    [
        lambda G: evaluate(G, 0.3),
        lambda G: rotate(G, 0.3),
        lambda G: distance(G, F),
        canonicalize,
        lambda G: canonical_distance(G, F),
        lambda G: canonical_distance(G, F, "fk"),
    ],
)
def test_coefficient_functions_refuse_a_scalar_and_an_empty_k_axis(call):
    with pytest.raises(DimensionError) as info:
        call(np.complex128(1.0))
    assert _one_line(info) == (
        "F must hold FS-KDEs along its last axis (k = 0 .. ℓ-1), got a scalar"
    )
    with pytest.raises(DimensionError) as info:
        call(np.zeros((3, 0), complex))
    assert _one_line(info) == "F has no coefficients: its last axis (k) is empty, shape (3, 0)"
    with pytest.raises(TypeError, match="F must be numeric FS-KDE coefficients"):
        call(np.array(["a", "b"]))


def test_object_coefficients_are_read_as_complex():
    np.testing.assert_array_equal(canonicalize(F.astype(object)), canonicalize(F))
    np.testing.assert_array_equal(
        canonical_distance(F.astype(object), F[::-1], "fk"), canonical_distance(F, F[::-1], "fk")
    )
    out = rotate(F.astype(object), 0.4)
    assert out.dtype == np.complex128
    np.testing.assert_array_equal(out, rotate(F, 0.4))


def test_evaluate_and_rotate_refuse_angles_that_are_no_numbers():
    with pytest.raises(TypeError, match=r"^theta must be angles in radians \(real numbers\)"):
        evaluate(F, None)  # was NaN densities
    with pytest.raises(TypeError, match=r"^phi must be angles in radians \(real numbers\)"):
        rotate(F, None)
    with pytest.raises(TypeError, match=r"^theta must be angles in radians"):
        evaluate(F, 0.3 + 1j)


def test_mismatched_leading_axes_are_refused_naming_both_arguments():
    G = np.ones((3, 5), complex)
    for call in (distance, canonical_distance):
        with pytest.raises(DimensionError) as info:
            call(F, G)
        assert _one_line(info).startswith(
            "F of shape (2, 5) and G of shape (3, 5) do not broadcast"
        )
    with pytest.raises(DimensionError) as info:
        rotate(F, np.ones(3))
    assert _one_line(info).startswith("phi of shape (3,) does not broadcast to F's FS-KDEs")
    # broadcasting that works still does
    np.testing.assert_array_equal(distance(F, F[:1]), distance(F, np.repeat(F[:1], 2, 0)))


def test_a_huge_canonical_level_is_the_last_one_not_a_memory_error():
    np.testing.assert_array_equal(canonicalize(F, 10**12), canonicalize(F, 4))
    _, angle = canonicalize(F, 10**12, return_angle=True)
    np.testing.assert_array_equal(angle, canonicalize(F, 4, return_angle=True)[1])
    G = rotate(F[::-1], 0.7)
    np.testing.assert_array_equal(
        canonical_distance(F, G, "fk", ells=10**12), canonical_distance(F, G, "fk", ells=4)
    )
    np.testing.assert_array_equal(
        canonical_distance(F, G, "fk", ells=10**12), canonical_distance(F, G, "fk")
    )


def test_orientation_refusal_is_one_line_without_the_array():
    with pytest.raises(DimensionError) as info:
        orientation(np.ones((40, 5), bool))
    assert _one_line(info) == (
        "F must be a numeric array of FS-KDEs along its last axis, got an array of bool"
    )


def test_gradient_of_an_empty_image_is_refused():
    with pytest.raises(ParameterError) as info:
        xfskde.gradient(np.ones((0, 5)))
    assert _one_line(info) == "image is empty (0 x 5 pixels): there is no gradient to compute"


@pytest.mark.parametrize("describe", [lambda a: fskde_cells(a, 4), lambda a: histogram_cells(a, 8)])
@pytest.mark.parametrize("shape", [(), (9,), (16, 16, 2)])
def test_cell_descriptors_refuse_what_is_not_one_grey_image(describe, shape):
    with pytest.raises(DimensionError) as info:
        describe(np.ones(shape))
    assert _one_line(info).startswith(
        f"image must be one grey image, shape (h, w), got shape {shape}"
    )


@pytest.mark.parametrize("policy", [0, False, ""])
def test_local_fskde_refuses_a_falsy_nan_policy_rather_than_reading_it_as_raise(policy):
    with pytest.raises(ParameterError) as info:
        xfskde.local_fskde(np.ones((6, 6)), order=3, nan_policy=policy)
    assert _one_line(info) == f"nan_policy must be one of 'raise', 'omit'; got {policy!r}"


def test_canonical_histogram_refuses_what_holds_no_bins():
    with pytest.raises(DimensionError) as info:
        canonical_histogram(np.zeros((4, 0)))
    assert _one_line(info) == (
        "histograms must hold bins along their last axis, shape (..., n_bins), got shape (4, 0)"
    )
    with pytest.raises(DimensionError, match=r"got shape \(\)$"):
        canonical_histogram(3.0)
    with pytest.raises(TypeError, match="histograms must hold real numbers, got an array of <U1"):
        canonical_histogram(np.array(["a", "b"]))
    np.testing.assert_array_equal(
        canonical_histogram([[1, 5, 2], [7, 0, 7]]),
        [[5, 2, 1], [7, 0, 7]],  # ties: the first largest
    )


@pytest.mark.parametrize("norm", [None, "l2", 3])
def test_hog_descriptor_refuses_a_block_norm_not_in_the_list(norm):
    with pytest.raises(ParameterError) as info:
        hog_descriptor(np.random.default_rng(0).random((2, 16, 16)), block_norm=norm)
    assert _one_line(info) == (
        f"block_norm must be one of 'L1', 'L1-sqrt', 'L2', 'L2-Hys'; got {norm!r}"
    )


def test_coherence_refuses_a_bool_kernel_rather_than_reading_it_as_the_ratio_one():
    with pytest.raises(TypeError) as info:
        xfskde.coherence(F, True)
    assert _one_line(info) == (
        "kernel must be a Cos2KKernel or the ratio H_2/H_0 in (0, 1], got True"
    )
    # the ratio given as a number still divides out: C = (|F_2| / ratio) / F_0
    np.testing.assert_allclose(xfskde.coherence(F, 0.5), np.abs(F[:, 2]) / 0.5 / F[:, 0].real)


@pytest.mark.parametrize("units", [0, 1.5, ["m"]])
def test_energy_refuses_image_units_that_are_not_text(units):
    with pytest.raises(TypeError) as info:
        xfskde.energy(F, units)
    assert _one_line(info) == (
        f"image_units must be the image's units as text (for example 'm'), got {units!r}"
    )


def test_as_real_vector_of_no_fskde_is_an_empty_batch_of_the_right_width():
    out = as_real_vector(np.zeros((0, 5), complex))
    assert out.shape == (0, 9)
    # and one FS-KDE still gives sqrt(2π) (F_0, √2 Re F_1, √2 Im F_1, ...)
    expected = (
        np.sqrt(2 * np.pi)
        * np.r_[F[0, 0].real, np.sqrt(2) * np.c_[F[0, 1:].real, F[0, 1:].imag].ravel()]
    )
    np.testing.assert_allclose(as_real_vector(F[0]), expected, rtol=1e-15)


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        (
            {"pixels_per_cell": "ab"},
            ParameterError,
            "pixels_per_cell must be two integers (rows, columns), got 'ab'",
        ),
        (
            {"pixels_per_cell": [3]},
            ParameterError,
            "pixels_per_cell must be two integers (rows, columns), got [3]",
        ),
        (
            {"cells_per_block": (0, 2)},
            ParameterError,
            "cells_per_block must be a positive integer, got 0",
        ),
        (
            {"pixels_per_cell": (2.5, 2)},
            TypeError,
            "pixels_per_cell must be a positive integer, got 2.5",
        ),
    ],
)
def test_hog_descriptor_refuses_cells_and_blocks_that_are_not_two_positive_integers(
    keywords, error, message
):
    with pytest.raises(error) as info:
        hog_descriptor(np.random.default_rng(0).random((2, 16, 16)), **keywords)
    assert _one_line(info) == message


def test_hog_descriptor_refuses_patches_smaller_than_a_block_naming_its_parameters():
    with pytest.raises(ParameterError) as info:
        hog_descriptor(np.ones((2, 15, 20)))
    assert _one_line(info) == (
        "patches of 15x20 pixels hold no block of cells_per_block (2, 2) cells of "
        "pixels_per_cell (8, 8): give patches of at least 16x16 pixels, or smaller cells"
    )
    assert hog_descriptor(np.ones((2, 16, 16))).shape == (2, 36)


def test_disk_mask_refuses_a_shape_that_is_not_two_counts():
    with pytest.raises(ParameterError, match=r"^shape must be two integers \(rows, columns\)"):
        disk_mask((5,))
    with pytest.raises(ParameterError, match=r"^shape must be an integer >= 0, got -1$"):
        disk_mask((-1, 4), None)
    with pytest.raises(TypeError, match=r"^shape must be an integer >= 0, got 2.5$"):
        disk_mask((2.5, 3), None)  # was silently 2 rows
    np.testing.assert_array_equal(disk_mask((4, 4), 4), np.hypot(*np.ogrid[-1.5:2, -1.5:2]) <= 2)


def test_subpackages_are_reached_from_the_package_alone():
    """``import xfskde`` then ``xfskde.datasets.random_textures(...)``, as a notebook writes
    it, raised AttributeError; the subpackages are imported on first use, and a name that is
    none still raises AttributeError."""
    import subprocess
    import sys

    code = (
        "import xfskde; xfskde.datasets.random_textures((32, 32), seed=0); "
        "xfskde.descriptors.disk_mask; assert callable(xfskde.fit_textures)\n"
        "try:\n    xfskde.no_such_name\nexcept AttributeError as e:\n    print(e)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "module 'xfskde' has no attribute 'no_such_name'"


def test_an_empty_colour_image_is_refused_as_empty():
    """(0, 10, 3) was refused as an array whose 3 channels might be its rows."""
    with pytest.raises(DimensionError, match=r"the image is empty \(shape \(0, 10\)\)"):
        xfskde.segment(np.zeros((0, 10, 3)), 3)


@pytest.mark.parametrize(("given", "advice"), [("nan", "nodata=np.nan"), ("0", "nodata=0.0"),
                                               ("abc", None)])  # fmt: skip
def test_nodata_as_text_is_refused_with_the_number_to_give(given, advice):
    """``--nodata nan`` on the command line is ``nodata=np.nan`` in Python: the text "nan" was
    refused as any other text, without saying that the number is what it takes."""
    with pytest.raises(ParameterError) as info:
        xfskde.local_fskde(np.zeros((16, 16)), order=2, nodata=given)
    message = _one_line(info)
    assert message.startswith("nodata must be 'auto'")
    assert (advice in message) if advice else message.endswith("got 'abc'")
