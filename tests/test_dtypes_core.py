"""The core keeps its input's precision (docs/concepts.md, "dtypes"): complex64 coefficients give
complex64 / float32 results, the complex128 results of the same coefficients rounded once, and
lazy (Dask) results say the dtype they compute. Angles stay float64."""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import xfskde
from xfskde import Cos2KKernel
from xfskde.canonical import canonical_distance, canonicalize
from xfskde.density import distance, evaluate, fskde, mean_direction, mode_direction, rotate

da = pytest.importorskip("dask.array")


@pytest.fixture(scope="module")
def field64() -> np.ndarray:
    """A complex64 field of 70 x 70 pixels (more than one 4096-pixel slab), ℓ = 9."""
    image = np.random.default_rng(7).random((70, 70), dtype=np.float32)
    F = xfskde.local_fskde(image, order=8, size=3)
    assert F.dtype == np.complex64 and F.shape == (70, 70, 9)
    return F


@pytest.mark.parametrize("ell", [1, 3, 8])
def test_canonicalize_keeps_complex64_and_rounds_the_double_result_once(field64, ell):
    out, alpha = canonicalize(field64, ell, return_angle=True)
    double, alpha_double = canonicalize(field64.astype(np.complex128), ell, return_angle=True)
    assert out.dtype == np.complex64 and out.shape == field64.shape
    assert double.dtype == np.complex128
    # the rotation found in float64 from the same coefficients, rounded once at the end
    np.testing.assert_array_equal(out, double.astype(np.complex64))
    assert alpha.dtype == np.float64 and alpha.shape == field64.shape[:-1]
    np.testing.assert_array_equal(alpha, alpha_double)
    last = out[..., min(ell, 8)]  # the coefficient made real last
    assert np.abs(last.imag).max() <= 1e-7 * np.abs(out[..., 0]).max()


def test_canonicalize_dtype_of_other_inputs():
    real32 = np.array([[0.5, 0.25, -0.125]], np.float32)
    assert canonicalize(real32).dtype == np.complex64
    assert canonicalize(real32.astype(np.float64)).dtype == np.complex128
    assert canonicalize(np.array([[3, 1, 2]])).dtype == np.complex128  # int64: double
    assert canonicalize(np.array([[1 + 0j]], np.complex64)).dtype == np.complex64  # F_0 alone


def test_long_doubles_give_double_precision_never_wider():
    """Long double angles and coefficients give complex128 / float64, as the docstrings say and
    the kernel's values were (NumPy's promotion alone kept complex256 in fskde, canonicalize,
    rotate and distance, while evaluate and the kernel gave float64)."""
    angles = np.linspace(-1.0, 1.0, 12).astype(np.longdouble)
    assert fskde(angles, order=4).dtype == np.complex128
    assert Cos2KKernel(4)(angles).dtype == np.float64
    F = fskde(angles.astype(np.float64), order=4).astype(np.clongdouble)
    assert canonicalize(F).dtype == rotate(F, 0.3).dtype == np.complex128
    assert evaluate(F, 0.3).dtype == distance(F, F).dtype == np.float64
    assert canonical_distance(F, F).dtype == np.float64


def test_rotate_keeps_complex64(field64):
    out = rotate(field64, 0.7)
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(out, rotate(field64.astype(np.complex128), 0.7).astype(out.dtype))


def test_evaluate_of_complex64_is_float32_rounded_once(field64):
    theta = np.linspace(-np.pi, np.pi, 7)
    values = evaluate(field64, theta)
    double = evaluate(field64.astype(np.complex128), theta)
    assert values.dtype == np.float32 and values.shape == (70, 70, 7)
    assert double.dtype == np.float64
    np.testing.assert_array_equal(values, double.astype(np.float32))  # across slabs too
    assert evaluate(field64[0, 0], np.float64(0.3)).dtype == np.float32
    assert evaluate(field64.astype(np.complex128)[0, 0], np.float32(0.3)).dtype == np.float64


def test_distance_dtype_follows_both_arguments(field64):
    one = field64[10, 10]
    d = distance(field64, one)
    assert d.dtype == np.float32
    exact = distance(field64.astype(np.complex128), one.astype(np.complex128))
    np.testing.assert_allclose(d, exact, rtol=1e-6, atol=1e-6 * exact.max())
    assert distance(field64, one.astype(np.complex128)).dtype == np.float64
    half = np.array([[1.0, 0.5]], np.float16)
    d16 = distance(half, np.zeros((1, 2), np.float16))
    assert d16.dtype == np.float32  # float16 promoted with complex64, not summed in float16
    np.testing.assert_allclose(d16, [np.sqrt(2 * np.pi * 1.5)], rtol=1e-7)


@pytest.mark.parametrize("method", ["exact", "fk"])
def test_canonical_distance_is_float32_for_complex64(field64, method):
    F, one = field64[::5, ::5], field64[10, 10]
    d, phi = canonical_distance(F, one, method, return_angle=True)
    d2, phi2 = canonical_distance(
        F.astype(np.complex128), one.astype(np.complex128), method, return_angle=True
    )
    assert d.dtype == np.float32 and d2.dtype == np.float64
    np.testing.assert_array_equal(d, d2.astype(np.float32))
    assert phi.dtype == np.float64
    np.testing.assert_array_equal(phi, phi2)
    assert canonical_distance(F, one.astype(np.complex128), method).dtype == np.float64


def test_fskde_of_float32_angles_is_complex64():
    angles = np.random.default_rng(3).uniform(-np.pi, np.pi, (50, 40)).astype(np.float32)
    F = fskde(angles, order=6)
    double = fskde(angles.astype(np.float64), order=6)
    assert F.dtype == np.complex64 and double.dtype == np.complex128
    np.testing.assert_array_equal(F, double.astype(np.complex64))
    assert fskde(angles, np.ones(40), order=6).dtype == np.complex128  # float64 weights
    assert fskde([0.1, 0.2], order=3).dtype == np.complex128


def test_kernel_values_follow_the_angles_precision():
    kernel = Cos2KKernel(8)
    theta = np.linspace(-np.pi, np.pi, 9)
    for call in (kernel, kernel.series):
        single = call(theta.astype(np.float32))
        assert single.dtype == np.float32
        np.testing.assert_array_equal(
            single, call(theta.astype(np.float32).astype(np.float64)).astype(np.float32)
        )
        assert call(theta).dtype == np.float64
        assert isinstance(call(0.3), np.float64)


def test_directions_stay_float64(field64):
    assert mean_direction(field64).dtype == np.float64
    assert mode_direction(field64[:5, :5]).dtype == np.float64


@pytest.mark.parametrize("lazy", [False, True])
def test_labelled_and_lazy_results_have_the_numpy_dtypes(field64, lazy):
    field = xr.DataArray(field64, dims=("y", "x", "k"))
    if lazy:
        field = field.chunk({"y": 32, "x": 32})
    one = field64[10, 10]
    cases = {
        "density": (field.fskde.density([0.1, 0.2]), evaluate(field64, [0.1, 0.2])),
        "canonicalize": (field.fskde.canonicalize(3), canonicalize(field64, 3)),
        "rotate": (field.fskde.rotate(0.3), rotate(field64, 0.3)),
        "distance": (field.fskde.distance(one), distance(field64, one)),
        "canonical_distance": (
            canonical_distance(field[::7, ::7], one, "fk"),
            canonical_distance(field64[::7, ::7], one, "fk"),
        ),
        "canonical_angle": (
            canonicalize(field, 2, return_angle=True)[1],
            canonicalize(field64, 2, return_angle=True)[1],
        ),
        "dominant_orientation": (field.fskde.dominant_orientation(), mean_direction(field64)),
    }
    for name, (result, plain) in cases.items():
        assert (result.chunks is not None) == lazy, name
        if lazy:
            assert result.data._meta.dtype == plain.dtype, name
        computed = result.compute()
        assert result.dtype == computed.dtype == plain.dtype, name
        np.testing.assert_array_equal(computed.values, plain, err_msg=name)


@pytest.mark.parametrize("method", ["euclidean", "f1", "fk", "exact"])
def test_descriptor_distances_follow_the_descriptors_precision(method):
    from xfskde.descriptors import fskde_distance

    F = np.random.default_rng(5).standard_normal((6, 5, 2)).view(np.complex128)[..., 0]
    G = F[::-1] * 0.7
    single = fskde_distance(F.astype(np.complex64), G.astype(np.complex64), method)
    double = fskde_distance(F, G, method)
    assert single.dtype == np.float32 and double.dtype == np.float64
    np.testing.assert_allclose(single, double, rtol=2e-6)
