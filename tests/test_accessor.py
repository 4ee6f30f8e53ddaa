"""The xarray face: dims, coords, attrs, the .fskde accessor, eager and lazy."""

import re

import numpy as np
import pytest
import xarray as xr
from _xr_checks import assert_keeps_labels, assert_labelled_result
from skimage import data

import xfskde
from xfskde import canonicalize, distance, evaluate, fskde, gradient, local_fskde, rotate

ANGLE_GRID = np.linspace(-np.pi, np.pi, 12, endpoint=False)


@pytest.fixture
def image():
    pixels = data.camera()[:96, :80]
    ny, nx = pixels.shape
    return xr.DataArray(
        pixels,
        dims=("y", "x"),
        coords={
            "y": ("y", 1000.0 - 0.5 * np.arange(ny), {"units": "m"}),
            "x": ("x", 20.0 + 0.5 * np.arange(nx), {"units": "m"}),
            "lat": (("y", "x"), np.add.outer(np.arange(ny), 0.01 * np.arange(nx))),
            "column_id": ("x", np.arange(nx) * 10),
            "spatial_ref": ((), 0, {"crs_wkt": 'LOCAL_CS["pixels"]'}),
        },
        name="camera",
        attrs={"units": "DN"},
    )


def _sampled(image, stride):
    o = (stride - 1) // 2
    return image.isel(y=slice(o, None, stride), x=slice(o, None, stride))


@pytest.mark.parametrize("stride", [1, 3, 8])
def test_dataarray_result_is_labeled(image, stride):
    F = local_fskde(image, order=6, window="box", size=8, stride=stride)
    assert F.name == "fskde" and F.dims == ("y", "x", "k")
    # y, x, the 2-D lat, the 1-D column_id and the scalar spatial_ref: at the centres of the
    # stride cells (the sampled pixels for odd strides; positions half a pixel on for even ones)
    assert_labelled_result(F, image, stride=stride, extra_dims=("k",))
    if stride % 2:
        assert_keeps_labels(F, _sampled(image, stride), dims=("y", "x", "k"), attrs=False)
    else:
        o = (stride - 1) // 2
        np.testing.assert_allclose(F.x, image.x[o::stride] + 0.25)  # x steps 0.5 per pixel
    np.testing.assert_array_equal(F.k, np.arange(7))
    for key in ("kernel", "order", "eps", "window", "size", "stride", "boundary", "weight",
                "angle_convention", "xfskde_version"):  # fmt: skip
        assert key in F.attrs
    assert F.attrs["order"] == 6 and F.attrs["stride"] == stride
    assert F.attrs["source"] == "camera" and F.attrs["source_dims"] == "y x"
    assert F.attrs["xfskde_version"] == xfskde.__version__
    np.testing.assert_array_equal(
        F.values, local_fskde(image.values, order=6, window="box", size=8, stride=stride)
    )


def test_attrs_serialise_to_netcdf(image, tmp_path):
    F = local_fskde(image, order=4, window="gaussian", size=2, stride=4)
    assert all(isinstance(v, str | int | float) for v in F.attrs.values()), F.attrs
    # netCDF3 (scipy) has no complex type; the attrs are what is checked here
    real = xr.DataArray(F.values.real, dims=F.dims, attrs=F.attrs, name="re")
    real.to_netcdf(tmp_path / "f.nc", engine="scipy")
    with xr.open_dataarray(tmp_path / "f.nc", engine="scipy") as back:
        assert back.attrs == F.attrs


def test_other_spatial_dim_names_become_y_x(image):
    renamed = image.rename(y="row", x="col")
    F = renamed.fskde.coefficients(order=3, window="box", size=4, stride=2)
    G = image.fskde.coefficients(order=3, window="box", size=4, stride=2)
    assert F.dims == ("y", "x", "k") and F.attrs["source_dims"] == "row col"
    np.testing.assert_array_equal(F.values, G.values)
    np.testing.assert_array_equal(F.y, G.y)
    np.testing.assert_array_equal(F.lat, G.lat)
    # (x, y) order is read by name: the same field
    xr.testing.assert_identical(image.transpose("x", "y").fskde.coefficients(
        order=3, window="box", size=4, stride=2), G)  # fmt: skip
    # no coords at all: y and x are the sampled pixels' indices
    bare = xr.DataArray(image.values, dims=("y", "x")).fskde.coefficients(
        order=3, window="box", size=4, stride=3
    )
    np.testing.assert_array_equal(bare.y, np.arange(1, 96, 3))
    np.testing.assert_array_equal(bare.x, np.arange(1, 80, 3))


def test_lazy_dataarray_matches_eager(image):
    eager = local_fskde(image, order=4, window="gaussian", size=1.5)
    lazy = local_fskde(image.chunk({"y": 40, "x": 30}), order=4, window="gaussian", size=1.5)
    assert lazy.chunks == ((40, 40, 16), (30, 30, 20), (5,))
    assert_keeps_labels(lazy, eager)
    xr.testing.assert_allclose(lazy.compute(), eager, rtol=1e-6)


def _follow_hint(array, message):
    """Apply the .transpose(...) call that an error message names."""
    call = re.search(r"\.transpose\(([^)]*)\)", message).group(1)
    return array.transpose(*[name.strip(" '") for name in call.split(",")])


def test_colour_dims_and_layout_errors():
    rgb = xr.DataArray(data.astronaut()[:40, :50], dims=("y", "x", "band"))
    F = rgb.fskde.coefficients(order=3, window="box", size=3)
    np.testing.assert_array_equal(
        F.values, local_fskde(rgb.values, order=3, window="box", size=3, channel_axis=-1)
    )
    first = rgb.transpose("band", "y", "x").chunk({"band": 1, "y": 16, "x": 20})
    xr.testing.assert_allclose(first.fskde.coefficients(order=3, window="box", size=3), F)
    middle = rgb.transpose("x", "band", "y")
    with pytest.raises(ValueError, match="transpose") as info:
        middle.fskde.coefficients(order=3)
    fixed = _follow_hint(middle, str(info.value))
    assert fixed.dims == ("y", "x", "band")
    xr.testing.assert_identical(fixed.fskde.coefficients(order=3, window="box", size=3), F)
    # a stack whose image dims are not named y and x: which two are the image's is not guessed
    # (named so, it is a stack: tests/test_labels.py)
    with pytest.raises(ValueError, match="rename"):
        xr.DataArray(np.zeros((2, 3, 8, 8)), dims=("t", "z", "row", "col")).fskde.coefficients(
            order=3
        )
    with pytest.raises(ValueError, match="colour dim named one of"):
        xr.DataArray(np.zeros((2, 8, 8)), dims=("time", "row", "col")).fskde.coefficients(order=3)
    with pytest.raises(ValueError, match="found by name"):
        rgb.fskde.coefficients(order=3, channel_axis=-1)
    with pytest.raises(ValueError, match="already an FS-KDE coefficient field"):
        F.fskde.coefficients(order=3)


def test_a_refused_layout_is_told_the_call_that_fixes_it():
    """A (time, row, col) series was told to rename time a colour dim (.rename({'time':
    'band'}): its dates read as the channels of one image), and an image stacked into one dim
    (pix) to select .isel(pix=0) or rename it a colour dim. The series is told to name its
    spatial dims y and x (each date then gets its own field), the stacked image to be
    unstacked; either call, made, gives the field."""
    values = np.random.default_rng(0).random((3, 16, 16))
    series = xr.DataArray(values, dims=("time", "row", "col"))
    with pytest.raises(ValueError, match=r"\.rename\(row='y', col='x'\)") as info:
        series.fskde.coefficients(order=3)
    assert "{'time': 'band'}" not in str(info.value) and ".isel(time=0)" in str(info.value)
    field = series.rename(row="y", col="x").fskde.coefficients(order=3, window="box", size=4)
    assert field.dims == ("time", "y", "x", "k")
    image = series.isel(time=0).rename(row="y", col="x")
    stacked = image.stack(pix=("y", "x"))
    with pytest.raises(ValueError, match=r"'pix' stacks \('y', 'x'\); unstack it") as info:
        stacked.fskde.coefficients(order=3)
    assert ".isel(pix=0)" not in str(info.value) and "{'pix'" not in str(info.value)
    xr.testing.assert_identical(
        stacked.unstack("pix").fskde.coefficients(order=3, window="box", size=4),
        image.fskde.coefficients(order=3, window="box", size=4),
    )


@pytest.mark.parametrize("lazy", [False, True])
def test_accessor_methods_delegate_and_keep_labels(image, lazy):
    F = image.fskde.coefficients(order=5, window="box", size=5, stride=4)
    if lazy:
        F = F.chunk({"y": 10, "x": 7, "k": 2})  # even a split k axis is handled
    values = F.values
    results = {
        "density": F.fskde.density(ANGLE_GRID),
        "canonicalize": F.fskde.canonicalize(2),
        "rotate": F.fskde.rotate(0.4),
        "distance": F.fskde.distance(F.isel(y=3, x=2)),
        "orientation": F.fskde.dominant_orientation(),
        "argmax": F.fskde.dominant_orientation("argmax"),
    }
    for name, result in results.items():
        assert (result.chunks is not None) == lazy, name  # lazy fields stay lazy
        if lazy:
            assert result.chunks[:2] == F.chunks[:2], name  # block by block, same grid
            assert result.dtype == result.compute().dtype, name
    dens = results["density"]
    assert_keeps_labels(dens, F, dims=("y", "x", "theta"))
    assert dens.theta.dtype == np.float64 and dens.theta.attrs["units"] == "rad"
    np.testing.assert_array_equal(dens.theta, ANGLE_GRID)
    np.testing.assert_allclose(dens.values, evaluate(values, ANGLE_GRID), rtol=1e-12)
    C = results["canonicalize"]
    assert_keeps_labels(C, F)
    np.testing.assert_allclose(C.values, canonicalize(values, 2), atol=1e-7)
    R = results["rotate"]
    assert_keeps_labels(R, F)
    np.testing.assert_allclose(R.values, rotate(values, 0.4), atol=1e-7)
    d = results["distance"]
    assert_keeps_labels(d, F, dims=("y", "x"))
    np.testing.assert_allclose(d.values, distance(values, values[3, 2]), rtol=1e-6)
    assert float(d.isel(y=3, x=2)) == 0.0
    for name in ("orientation", "argmax"):
        assert_keeps_labels(results[name], F, dims=("y", "x"))
        assert results[name].attrs["units"] == "rad"


def test_distance_between_fields(image):
    F = image.fskde.coefficients(order=4, window="box", size=6, stride=6)
    G = image[::-1].fskde.coefficients(order=8, window="box", size=6, stride=6)
    G = G.assign_coords(y=F.y)  # same grid, other image, other length
    d = F.fskde.distance(G)
    np.testing.assert_allclose(d.values, distance(F.values, G.values), rtol=1e-6)
    assert F.sizes["k"] != G.sizes["k"]
    with pytest.raises(ValueError, match="exact"):  # a field on another grid is refused
        F.fskde.distance(G.assign_coords(y=G.y + 1))
    with pytest.raises(ValueError, match="one FS-KDE"):
        F.fskde.distance(np.zeros((2, 5)))


def test_dominant_orientation_mean_is_the_cell_gradient_direction(image):
    # box 8, stride 8: F_1 = H_1 mean(conj g) over each 8x8 cell, so -arg F_1 = arg(sum of g)
    F = image.fskde.coefficients(order=4, window="box", size=8, stride=8)
    g = gradient(image.values)
    cells = g.reshape(12, 8, 10, 8).sum(axis=(1, 3))
    got = F.fskde.dominant_orientation().values
    np.testing.assert_allclose(np.angle(np.exp(1j * (got - np.angle(cells)))), 0, atol=1e-5)


def test_dominant_orientation_argmax_finds_the_density_maximum(rng):
    alpha = rng.uniform(-np.pi, np.pi, (4, 5))
    # one angle per pixel: the peak of the cos^2K kernel sits exactly at it (eq. 3)
    single = fskde(alpha[..., None], order=16)
    field = xr.DataArray(single, dims=("y", "x", "k"))
    for method in ("mean", "argmax"):
        got = field.fskde.dominant_orientation(method).values
        np.testing.assert_allclose(np.angle(np.exp(1j * (got - alpha))), 0, atol=1e-4)
    # two angles 2:1 apart by 120 degrees: the maximum shifts off the heavier angle, the mean
    # lies between the two; compare with a dense brute-force search
    angles = np.stack([alpha, alpha + 2 * np.pi / 3], axis=-1)
    weights = np.broadcast_to([2.0, 1.0], angles.shape)
    pair = xr.DataArray(fskde(angles, weights, order=6), dims=("y", "x", "k"))
    dense = np.linspace(-np.pi, np.pi, 200_000, endpoint=False)
    brute = dense[np.argmax(evaluate(pair.values, dense), axis=-1)]
    got = pair.chunk({"y": 2}).fskde.dominant_orientation("argmax", n_angles=90).values
    np.testing.assert_allclose(np.angle(np.exp(1j * (got - brute))), 0, atol=1e-3)
    mean = pair.fskde.dominant_orientation().values
    assert np.abs(np.angle(np.exp(1j * (mean - brute)))).min() > 0.05  # they do differ
    # a flat region has no orientation
    flat = xr.DataArray(np.zeros((2, 2, 5), np.complex64), dims=("y", "x", "k"))
    for method in ("mean", "argmax"):
        assert np.isnan(flat.fskde.dominant_orientation(method).values).all()
    with pytest.raises(ValueError, match="method"):
        field.fskde.dominant_orientation("median")


def test_accessor_constructor_never_raises_but_methods_explain():
    for obj in (xr.DataArray(np.zeros((4, 4)), dims=("y", "x")), xr.DataArray(["a", "b"])):
        accessor = obj.fskde  # no error, whatever the array
        with pytest.raises(ValueError, match=r"not an FS-KDE coefficient field.*coefficients"):
            accessor.density([0.0])
        with pytest.raises(ValueError, match="coefficients"):
            accessor.to_zarr("never-written.zarr")


def test_to_zarr_roundtrip(image, tmp_path):
    F = image.fskde.coefficients(order=4, window="box", size=4, stride=2)
    assert F.fskde.to_zarr(tmp_path / "f.zarr") > 0
    assert F.fskde.to_zarr(tmp_path / "f.zarr", resume=True) == 0  # already complete
    G = xfskde.open_coefficients(tmp_path / "f.zarr")
    assert_keeps_labels(G, F)
    xr.testing.assert_identical(G.compute(), F)


def test_segment_method_delegates():
    from xfskde.datasets import dead_leaves

    image, _ = dead_leaves((64, 64), seed=3)
    da_image = xr.DataArray(image, dims=("y", "x", "c"))
    labels = da_image.fskde.segment(3, seed=0)
    direct = xfskde.segment(da_image, 3, seed=0)
    assert labels.dims == ("y", "x")
    np.testing.assert_array_equal(labels.values, direct.values)


def test_channel_axis_is_refused_for_dataarrays():
    rgb = xr.DataArray(data.astronaut()[:16, :16], dims=("y", "x", "dim_2"))
    with pytest.raises(ValueError, match="rename"):
        local_fskde(rgb, order=3, channel_axis=-1)


def test_an_image_of_two_colour_dims_is_told_what_to_do():
    """An image of two dims named as colour (c and band) and two spatial dims not named y and
    x fell into the refusal's advice for stacks, which had no stack dim to name: IndexError.
    It is one line naming the two colour dims and what to select or rename."""
    values = np.random.default_rng(0).random((3, 16, 16, 3))
    image = xr.DataArray(values, dims=("c", "row", "col", "band"))
    with pytest.raises(ValueError, match=r"it has 2 colour dims \('c', 'band'\): select one "
                       r"image \(e\.g\. \.isel\(c=0\)\)") as info:  # fmt: skip
        image.fskde.coefficients(order=3)
    assert str(info.value).endswith("the spatial dims y and x (.rename(row='y', col='x'))")
