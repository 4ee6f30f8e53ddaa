"""The angle-set functions on labelled fields, the maximum of a density, and the angles' range.

``xfskde.rotate``, ``canonicalize``, ``evaluate``, ``distance``, ``canonical_distance``,
``xfskde.density.mean_direction`` and ``mode_direction`` (and ``descriptors.as_real_vector``)
read a DataArray by its ``k`` dim, wherever it is, as the accessor and the orientation maps do:
on a ``(k, y, x)`` field they used to turn and compare along x. ``mode_direction`` finds the
density's maximum (it sampled too few angles and returned points far from it) and every angle
they return lies in [-π, π) (a mean to -x came back as +π).
"""

from __future__ import annotations

import numpy as np
import pytest
import xarray as xr

import xfskde
from xfskde.density import mean_direction, mode_direction
from xfskde.descriptors import as_real_vector
from xfskde.exceptions import DimensionError, ParameterError


@pytest.fixture(scope="module")
def field() -> xr.DataArray:
    """An ℓ = 5 field of a 12 × 10 random image with float y/x coords, labelled (y, x, k)."""
    image = xr.DataArray(
        np.random.default_rng(0).random((12, 10)),
        dims=("y", "x"),
        coords={"y": 100.0 - np.arange(12), "x": 0.5 + np.arange(10)},
    )
    return image.fskde.coefficients(order=4, window="box", size=3)


def _labelled_like(out: xr.DataArray, field: xr.DataArray, *trailing: str) -> None:
    assert isinstance(out, xr.DataArray)
    assert out.dims == ("y", "x", *trailing)
    np.testing.assert_array_equal(out["y"], field["y"])
    np.testing.assert_array_equal(out["x"], field["x"])


@pytest.mark.parametrize("lazy", [False, True])
def test_top_level_functions_read_a_k_first_field_by_its_k_dim(field, lazy):
    F = field.values  # (y, x, k): the NumPy truth
    T = field.transpose("k", "y", "x")
    if lazy:
        T = T.chunk({"y": 5, "x": 4})
    pixel = field.isel(y=0, x=0)
    theta = np.linspace(-np.pi, np.pi, 7, endpoint=False)

    turned = xfskde.rotate(T, 0.3)
    _labelled_like(turned, field, "k")
    assert (turned.chunks is not None) == lazy
    np.testing.assert_allclose(turned.values, xfskde.rotate(F, 0.3), rtol=0, atol=1e-15)

    canon, alpha = xfskde.canonicalize(T, 2, return_angle=True)
    _labelled_like(canon, field, "k")
    _labelled_like(alpha, field)
    want, want_alpha = xfskde.canonicalize(F, 2, return_angle=True)
    np.testing.assert_allclose(canon.values, want, rtol=0, atol=1e-15)
    np.testing.assert_allclose(alpha.values, want_alpha, rtol=0, atol=1e-15)
    assert canon.attrs["canonical"] == "F2"

    f = xfskde.evaluate(T, theta)
    _labelled_like(f, field, "theta")
    np.testing.assert_allclose(f.values, xfskde.evaluate(F, theta), rtol=1e-14)
    one = xfskde.evaluate(T, 0.25)  # one angle: no theta dim, as on NumPy
    _labelled_like(one, field)
    np.testing.assert_allclose(one.values, xfskde.evaluate(F, 0.25), rtol=1e-14)

    d = xfskde.distance(T, pixel)  # used to be (5, 12), the pixel zero-padded to length 10
    _labelled_like(d, field)
    np.testing.assert_allclose(d.values, xfskde.distance(F, F[0, 0]), rtol=1e-14)
    np.testing.assert_allclose(xfskde.distance(F[0, 0], T).values, d.values, rtol=1e-14)

    for method in ("exact", "fk"):
        cd, phi = xfskde.canonical_distance(T, pixel, method, return_angle=True)
        _labelled_like(cd, field)
        _labelled_like(phi, field)
        want_d, want_phi = xfskde.canonical_distance(F, F[0, 0], method, return_angle=True)
        np.testing.assert_allclose(cd.values, want_d, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(phi.values, want_phi, rtol=0, atol=1e-12)

    for func in (mean_direction, mode_direction):
        got = func(T)
        _labelled_like(got, field)
        assert got.attrs["units"] == "rad"
        np.testing.assert_allclose(got.values, func(F), rtol=0, atol=1e-12)

    v = as_real_vector(T)
    _labelled_like(v, field, "component")
    np.testing.assert_allclose(v.values, as_real_vector(F), rtol=1e-15)


def test_a_k_coordinate_in_another_order_is_read_by_label(field):
    backwards = field.sortby("k", ascending=False)  # position 0 holds F_4
    F = field.values
    np.testing.assert_allclose(xfskde.rotate(backwards, 1.1).values, xfskde.rotate(F, 1.1))
    np.testing.assert_allclose(
        xfskde.distance(backwards, field).values, np.zeros(F.shape[:2]), atol=1e-17
    )
    np.testing.assert_allclose(
        xfskde.canonicalize(backwards).values, xfskde.canonicalize(F), atol=1e-15
    )


def test_rotate_takes_per_pixel_angles_as_a_dataarray_on_the_fields_dims(field):
    T = field.transpose("k", "x", "y")
    angles = xr.DataArray(
        np.random.default_rng(1).uniform(-np.pi, np.pi, (12, 10)), dims=("y", "x")
    )
    turned = xfskde.rotate(T, angles)
    np.testing.assert_allclose(
        turned.transpose("y", "x", "k").values,
        xfskde.rotate(field.values, angles.values),
        rtol=0,
        atol=1e-15,
    )
    # a column of angles, one per row y, broadcast by name along x
    rows = angles.isel(x=0, drop=True)
    np.testing.assert_allclose(
        xfskde.rotate(T, rows).transpose("y", "x", "k").values,
        xfskde.rotate(field.values, rows.values[:, None]),
        atol=1e-15,
    )
    # turning each pixel back by its canonical angle is the canonical form
    canon, alpha = xfskde.canonicalize(field, return_angle=True)
    np.testing.assert_allclose(xfskde.rotate(field, alpha).values, canon.values, atol=1e-15)


def test_what_cannot_be_read_by_name_is_refused_in_one_line(field):
    image = xr.DataArray(np.zeros((4, 5)), dims=("y", "x"))
    for call in (
        lambda: xfskde.rotate(image, 0.1),
        lambda: xfskde.canonicalize(image),
        lambda: xfskde.evaluate(image, 0.0),
        lambda: xfskde.distance(image, field),
        lambda: xfskde.canonical_distance(field, image),
        lambda: mean_direction(image),
        lambda: mode_direction(image),
    ):
        with pytest.raises(DimensionError, match=r"has no 'k' dim") as err:
            call()
        assert "\n" not in str(err.value)
    with pytest.raises(DimensionError, match=r"pass its coefficient field"):
        xfskde.rotate(field.to_dataset(name="F"), 0.1)
    with pytest.raises(ParameterError, match=r"plain array of shape \(12, 10\)"):
        xfskde.rotate(field, np.zeros((12, 10)))  # which axis is y? the array does not say
    with pytest.raises(DimensionError, match=r"not \('k',\)"):
        xfskde.rotate(field, field.real)
    with pytest.raises(DimensionError, match=r"G must be one FS-KDE .* shape \(12, 10, 5\)"):
        xfskde.distance(field, field.values)
    with pytest.raises(ParameterError, match=r"theta .* scalar or 1-D, got shape \(2, 2\)"):
        xfskde.evaluate(field, np.zeros((2, 2)))


@pytest.fixture(scope="module")
def sharp() -> np.ndarray:
    """FS-KDEs of K = 64 (ℓ = 65) of 200 sets of von Mises angles of varied spread."""
    rng = np.random.default_rng(0)
    angles = rng.vonmises(rng.uniform(-3, 3, (200, 1)), rng.uniform(0.5, 20, (200, 1)), (200, 30))
    return xfskde.fskde(angles, order=64)


def test_mode_direction_is_the_maximum_of_the_density(sharp):
    grid = np.linspace(-np.pi, np.pi, 1 << 17, endpoint=False)
    f = xfskde.evaluate(sharp, grid)
    top = f.max(axis=-1)
    m = mode_direction(sharp)
    around = m[:, None] + np.array([-1e-6, 0, 1e-6])
    at = np.array([xfskde.evaluate(F, a) for F, a in zip(sharp, around, strict=True)])
    # never below the dense grid's best (the old parabola fell short of it by up to 2e-6)
    assert np.all(at[:, 1] >= top * (1 - 1e-13))
    # and a stationary point of f: f'(m) = 0
    slope = (at[:, 2] - at[:, 0]) / 2e-6
    assert np.abs(slope).max() < 1e-6 * top.max()


def test_two_nearly_equal_modes_are_told_apart_by_the_density():
    # modes at 1.0 and -2.0 whose heights differ by 1e-6: the higher one, wherever the grid lies
    F = xfskde.fskde([1.0, -2.0], [1.0, 1.0 + 1e-6], order=30)
    for n in (62, 64, 100, 361):
        assert mode_direction(F, n) == pytest.approx(-2.0, abs=1e-9)


def test_mode_direction_refuses_fewer_angles_than_it_needs(sharp, field):
    with pytest.raises(ParameterError, match=r"n_angles must be at least 2ℓ = 130 .* got 16"):
        mode_direction(sharp, n_angles=16)
    with pytest.raises(ParameterError, match=r"at least 2ℓ = 10 .* got 3"):
        field.fskde.dominant_orientation("argmax", n_angles=3)
    assert np.isfinite(mode_direction(sharp, n_angles=130)).all()
    big = xfskde.fskde([0.5, 0.6], order=300)  # ℓ = 301: the default samples 4ℓ angles
    assert mode_direction(big) == pytest.approx(0.55, abs=1e-9)


def _edge_to_minus_x(dtype) -> xr.DataArray:
    y, x = np.mgrid[0:64, 0:64].astype(float)
    # bright left, gradients to -x; the edge's normal at angle π leaves F_1 a -0.0 imaginary part
    s = (x - 32) * np.cos(np.pi) + (y - 32) * np.sin(np.pi)
    image = (1 / (1 + np.exp(-s / 1.5))).astype(dtype)
    return xr.DataArray(image, dims=("y", "x")).fskde.coefficients(
        order=8, window="gaussian", size=3
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_directions_stay_in_minus_pi_to_pi(dtype):
    field = _edge_to_minus_x(dtype)
    for method in ("mean", "argmax"):
        d = field.fskde.dominant_orientation(method).values
        finite = d[np.isfinite(d)]
        assert finite.size > 2000
        assert finite.min() >= -np.pi and finite.max() < np.pi
        # the edge's pixels all point to -x: exactly -π (the mean), not +π nor below -π
        if method == "mean":
            assert np.count_nonzero(finite == -np.pi) > 2000


def test_mean_direction_of_a_mean_to_minus_x_is_minus_pi_whatever_zeros_sign():
    for F1 in (complex(-0.5, 0.0), complex(-0.5, -0.0)):
        assert mean_direction(np.array([1.0, F1])) == -np.pi
    single = np.array([1.0, complex(-0.5, -0.0)], dtype=np.complex64)
    assert mean_direction(single) == -np.pi  # float32's π exceeds π: not -3.1415927410


def test_returned_rotation_angles_stay_in_minus_pi_to_pi(rng):
    F = xfskde.fskde(rng.vonmises(0, 1, (300, 15)), order=8)
    G = xfskde.fskde(rng.vonmises(1, 1, (300, 15)), order=8)
    _, alpha = xfskde.canonicalize(F, 5, return_angle=True)
    assert alpha.min() >= -np.pi and alpha.max() < np.pi
    np.testing.assert_allclose(xfskde.canonicalize(F, 5), xfskde.rotate(F, alpha), atol=1e-15)
    for method in ("exact", "fk"):
        _, phi = xfskde.canonical_distance(F, G, method, return_angle=True)
        assert phi.min() >= -np.pi and phi.max() < np.pi


def test_the_exact_canonical_distance_refuses_levels(rng):
    F = xfskde.fskde(rng.vonmises(0, 1, (3, 15)), order=8)
    G = xfskde.fskde(rng.vonmises(1, 1, (3, 15)), order=8)
    with pytest.raises(ParameterError, match=r"ells=3 .* method='fk'.* no levels") as err:
        xfskde.canonical_distance(F, G, method="exact", ells=3)
    assert "\n" not in str(err.value)
    # fk honours them: level 1 alone is the F_1 canonical distance
    np.testing.assert_allclose(
        xfskde.canonical_distance(F, G, "fk", ells=1),
        xfskde.distance(xfskde.canonicalize(F), xfskde.canonicalize(G)),
    )
