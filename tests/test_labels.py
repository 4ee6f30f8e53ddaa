"""Every consumer labels its results alike: coords (CRS included) and attrs kept, backend kept.

One shared check (:func:`_xr_checks.assert_labelled_result`) applied to the coefficient field,
the maps computed from it and the segmentation's labels and abundances, for NumPy- and
Dask-backed images.
"""

import numpy as np
import pytest
import xarray as xr
from _xr_checks import assert_labelled_result

import xfskde
from xfskde._labels import VALUE_ATTRS, image_dims
from xfskde.exceptions import DimensionError, XfskdeError

H, W = 48, 40


def _image(backend: str) -> xr.DataArray:
    rng = np.random.default_rng(3)
    pixels = rng.random((H, W)).astype(np.float32)
    yy, xx = np.meshgrid(np.arange(H), np.arange(W), indexing="ij")
    image = xr.DataArray(
        pixels,
        dims=("y", "x"),
        coords={
            "y": ("y", 5000.0 - 10.0 * np.arange(H), {"units": "metre"}),
            "x": ("x", 300000.0 + 10.0 * np.arange(W), {"units": "metre"}),
            "lat": (("y", "x"), 45.0 + 0.001 * yy - 0.0001 * xx, {"units": "degrees_north"}),
            "spatial_ref": ((), 0, {"crs_wkt": "EPSG:32632"}),
        },
        attrs={"instrument": "MSI", "_FillValue": 0, "scale_factor": 1e-4},
        name="scene",
    )
    return image.chunk({"y": 24, "x": 20}) if backend == "dask" else image


@pytest.mark.parametrize("backend", ["numpy", "dask"])
@pytest.mark.parametrize("stride", [1, 3, 8])
def test_coefficients_keep_labels(backend, stride):
    image = _image(backend)
    field = xfskde.local_fskde(image, order=4, window="box", size=8, stride=stride)
    assert_labelled_result(field, image, stride=stride, extra_dims=("k",))
    assert field.attrs["stride"] == stride and field.attrs["source"] == "scene"
    assert not set(VALUE_ATTRS) & {k for k in field.attrs if k not in ("long_name",)}


@pytest.mark.parametrize("backend", ["numpy", "dask"])
def test_maps_keep_labels(backend):
    image = _image(backend)
    field = xfskde.local_fskde(image, order=4, window="gaussian", size=2, stride=2)
    orientation = field.fskde.dominant_orientation()
    assert_labelled_result(orientation, image, stride=2)
    assert orientation.attrs["units"] == "rad"
    density = field.fskde.density([0.0, 1.0])
    assert_labelled_result(density, image, stride=2, extra_dims=("theta",))


@pytest.mark.parametrize("backend", ["numpy", "dask"])
def test_segmentation_keeps_labels(backend):
    image = _image(backend)
    labels, model = xfskde.segment(image, 2, size=2, return_model=True)
    assert_labelled_result(labels, image)
    assert labels.attrs["n_textures"] == 2 and labels.dtype == np.uint8
    abundances = model.abundances(image)
    assert_labelled_result(abundances, image, extra_dims=("texture",))
    np.testing.assert_allclose(np.asarray(abundances.sum("texture")), 1, atol=1e-5)


def test_dimension_errors_are_typed():
    cube = xr.DataArray(np.zeros((2, 3, 4, 5)), dims=("t", "band", "y", "x"))
    with pytest.raises(DimensionError, match=r"isel"):
        image_dims(cube)
    with pytest.raises(XfskdeError):  # the base class catches it too, as does ValueError
        xfskde.local_fskde(cube, order=2)
    with pytest.raises(ValueError):
        xfskde.local_fskde(cube, order=2)
