"""The xarray face: dims, coords, attrs, the .fskde accessor, eager and lazy."""

import numpy as np
import pytest
import xarray as xr
from _xr_checks import assert_keeps_labels
from skimage import data

import xfskde
from xfskde import canonicalize, distance, evaluate, local_fskde, rotate


@pytest.fixture
def image():
    pixels = data.camera()[:96, :80]
    return xr.DataArray(
        pixels,
        dims=("y", "x"),
        coords={"y": 1000.0 - 0.5 * np.arange(96), "x": 20.0 + 0.5 * np.arange(80), "crs": 0},
        name="camera",
        attrs={"units": "DN"},
    )


@pytest.mark.parametrize("stride", [1, 3, 8])
def test_dataarray_result_is_labeled(image, stride):
    F = local_fskde(image, order=6, window="box", size=8, stride=stride)
    assert F.name == "fskde" and F.dims == ("y", "x", "k")
    o = (stride - 1) // 2
    np.testing.assert_array_equal(F.y, image.y.values[o::stride])
    np.testing.assert_array_equal(F.x, image.x.values[o::stride])
    np.testing.assert_array_equal(F.k, np.arange(7))
    assert F.coords["crs"] == 0
    for key in ("kernel", "order", "eps", "window", "size", "stride", "boundary", "weight",
                "angle_convention", "xfskde_version"):  # fmt: skip
        assert key in F.attrs
    assert F.attrs["order"] == 6 and F.attrs["stride"] == stride and F.attrs["source"] == "camera"
    np.testing.assert_array_equal(
        F.values, local_fskde(image.values, order=6, window="box", size=8, stride=stride)
    )


def test_lazy_dataarray_matches_eager(image):
    eager = local_fskde(image, order=4, window="gaussian", size=1.5)
    lazy = local_fskde(image.chunk({"y": 40, "x": 30}), order=4, window="gaussian", size=1.5)
    assert lazy.chunks is not None
    xr.testing.assert_allclose(lazy.compute(), eager, rtol=1e-6)
    assert lazy.attrs == eager.attrs


def test_colour_dims_and_layout_errors():
    rgb = xr.DataArray(data.astronaut()[:40, :50], dims=("y", "x", "band"))
    F = rgb.fskde.coefficients(order=3, window="box", size=3)
    np.testing.assert_array_equal(
        F.values, local_fskde(rgb.values, order=3, window="box", size=3, channel_axis=-1)
    )
    first = rgb.transpose("band", "y", "x")
    np.testing.assert_array_equal(first.fskde.coefficients(order=3, window="box", size=3), F)
    with pytest.raises(ValueError, match="transpose"):
        rgb.transpose("y", "band", "x").fskde.coefficients(order=3)
    with pytest.raises(ValueError, match="rename"):
        xr.DataArray(np.zeros((2, 3, 8, 8)), dims=("t", "z", "y", "x")).fskde.coefficients(order=3)
    named = xr.DataArray(np.zeros((8, 9)), dims=("row", "col"))
    assert named.fskde.coefficients(order=2).dims == ("y", "x", "k")


@pytest.mark.parametrize("lazy", [False, True])
def test_accessor_methods_delegate_and_keep_labels(image, lazy):
    F = image.fskde.coefficients(order=5, window="box", size=5, stride=4)
    if lazy:
        F = F.chunk({"y": 10, "x": 7})
    theta = np.linspace(-np.pi, np.pi, 12, endpoint=False)
    dens = F.fskde.density(theta)
    assert_keeps_labels(dens, F, dims=("y", "x", "theta"))
    np.testing.assert_allclose(dens.theta, theta)
    np.testing.assert_allclose(dens.values, evaluate(F.values, theta))
    C = F.fskde.canonicalize(2)
    assert_keeps_labels(C, F)
    np.testing.assert_allclose(C.values, canonicalize(F.values, 2), atol=1e-7)
    R = F.fskde.rotate(0.4)
    assert_keeps_labels(R, F)
    np.testing.assert_allclose(R.values, rotate(F.values, 0.4), atol=1e-7)
    ref = F.isel(y=3, x=2).values
    d = F.fskde.distance(ref)
    assert_keeps_labels(d, F, dims=("y", "x"))
    np.testing.assert_allclose(d.values, distance(F.values, ref), rtol=1e-6)
    assert float(d.isel(y=3, x=2)) < 1e-7
    ori = F.fskde.dominant_orientation()
    assert_keeps_labels(ori, F, dims=("y", "x"))
    np.testing.assert_allclose(ori.values, -np.angle(F.values[..., 1]), atol=1e-6)


def test_accessor_constructor_never_raises_but_methods_explain():
    plain = xr.DataArray(np.zeros((4, 4)), dims=("y", "x"))
    accessor = plain.fskde  # no error
    with pytest.raises(ValueError, match="coefficients"):
        accessor.density([0.0])


def test_to_zarr_roundtrip(image, tmp_path):
    F = image.fskde.coefficients(order=4, window="box", size=4, stride=2)
    F.fskde.to_zarr(tmp_path / "f.zarr")
    G = xfskde.open_coefficients(tmp_path / "f.zarr")
    xr.testing.assert_identical(G.drop_vars("crs").compute(), F.drop_vars("crs"))


def test_segment_method_delegates():
    from xfskde.datasets import dead_leaves

    image, _ = dead_leaves((64, 64), seed=3)
    da_image = xr.DataArray(image, dims=("y", "x", "c"))
    labels = da_image.fskde.segment(3, seed=0)
    direct = xfskde.segment(da_image, 3, seed=0)
    assert labels.dims == ("y", "x")
    np.testing.assert_array_equal(labels.values, direct.values)
