"""An input's attrs are carried onto results only as values netCDF and Zarr store.

An image whose attrs held ``True`` or ``None`` (``da.attrs["flag"] = True``) gave a coefficient
field, maps and segment labels carrying them, and their ``to_netcdf`` failed as the input's
own does. Carried attrs are now those netCDF holds: a boolean as 1 or 0, UTF-8 bytes as their
text, and None, dicts, complex numbers and mixed lists dropped.
"""

import numpy as np
import pytest
import xarray as xr
from skimage import data

import xfskde
from xfskde.orientation import orientation

#: Each input attr, and what a result carries of it (absent: dropped).
GIVEN = {
    "flag": True,
    "off": np.False_,
    "nothing": None,
    "meta": {"a": 1},
    "phase": 1 + 2j,
    "mixed": [1, "a"],
    "count": np.int64(3),
    "gain": np.float32(0.5),
    "bands": np.array([1, 2, 3]),
    "flags": [True, False],
    "note": b"scanned",
    "instrument": "MSI",
}
KEPT = {
    "flag": 1,
    "off": 0,
    "count": 3,
    "gain": 0.5,
    "bands": [1, 2, 3],
    "flags": [1, 0],
    "note": "scanned",
    "instrument": "MSI",
}
#: What netCDF4 and Zarr hold beyond scipy's netCDF3: strings in a list or an array.
TEXTS = {"names": ["red", "green"], "labels": np.array(["a", "b"])}


def _image(attrs: dict) -> xr.DataArray:
    pixels = data.camera()[:48, :48].astype(np.float32)
    image = xr.DataArray(pixels, dims=("y", "x"), name="camera", attrs=attrs)
    x = ("x", np.arange(48.0), {"axis": "X", "regular": True, "nothing": None})
    return image.assign_coords(x=x)  # a coord's attrs are carried alike


def _results(image: xr.DataArray) -> dict[str, xr.DataArray]:
    field = xfskde.local_fskde(image, order=2, size=3)
    return {
        # netCDF3 has no complex numbers: the field's real part, with its coords and attrs
        "coefficients": field.copy(data=field.values.real),
        "orientation": orientation(field),
        "segment": xfskde.segment(image, 2),
    }


def _written(result: xr.DataArray, path, engine: str) -> dict:
    if engine == "zarr":
        result.to_dataset(name="v").to_zarr(path, mode="w", consolidated=False)
        return dict(xr.open_zarr(path, consolidated=False)["v"].attrs)
    result.to_netcdf(path, engine=engine)
    with xr.open_dataarray(path, engine=engine) as back:
        return dict(back.attrs)


def test_carried_attrs_write_to_netcdf_and_zarr_and_read_back(tmp_path):
    image = _image(GIVEN)
    with pytest.raises(TypeError, match="Invalid value for attr"):  # the input's own write
        image.to_netcdf(tmp_path / "input.nc", engine="scipy")
    for name, result in _results(image).items():
        for key, value in KEPT.items():
            assert np.array_equal(result.attrs[key], value), (name, key, result.attrs[key])
        assert not {"nothing", "meta", "phase", "mixed"} & set(result.attrs), name
        assert type(result.attrs["flag"]) is int and type(result.attrs["off"]) is int
        assert result.x.attrs == {"axis": "X", "regular": 1}, name
        for engine in ("scipy", "zarr"):
            back = _written(result, tmp_path / f"{name}.{engine}", engine)
            for key, value in KEPT.items():
                assert np.array_equal(back[key], value), (name, engine, key, back[key])
            assert back["xfskde_version"] == xfskde.__version__
        with xr.open_dataset(tmp_path / f"{name}.scipy", engine="scipy") as back:
            assert (back.x.attrs["axis"], back.x.attrs["regular"]) == ("X", 1)


def test_carried_texts_write_where_the_format_holds_them(tmp_path):
    """Lists and arrays of strings are kept (a NumPy array of them as a list, which h5netcdf
    writes): Zarr stores them, as netCDF4 and h5netcdf do (checked by hand on 2026-11-30, with
    both installed: neither is a dependency, so the suite writes Zarr only); scipy's netCDF3
    holds no list of strings, for the input as for the result."""
    engine = "zarr"
    result = _results(_image({**GIVEN, **TEXTS}))["orientation"]
    assert result.attrs["names"] == ["red", "green"] and result.attrs["labels"] == ["a", "b"]
    back = _written(result, tmp_path / f"texts.{engine}", engine)
    assert list(back["names"]) == ["red", "green"] and list(back["labels"]) == ["a", "b"]
    assert back["flag"] == 1 and "nothing" not in back


def test_a_zarr_scene_written_by_xarray_gives_stores_that_read_back(tmp_path):
    """The geospatial page's recipe: a band written by xarray's ``to_zarr`` (float coordinates,
    whose ``_FillValue`` xarray stores beside them) gave its coordinates a ``_FillValue`` attr,
    which the results carried into their stores: complete, yet neither ``xr.open_zarr`` nor
    ``open_coefficients`` could read them ("Failed to decode fill_value")."""
    from xfskde.cli import main

    values = data.camera()[:96, :96].astype(np.float32) / 255
    north, east = 5000000.0 - 10 * np.arange(96), 500000.0 + 10 * np.arange(96)
    coords = {"y": ("y", north, {"units": "m"}), "x": ("x", east, {"units": "m"})}
    band = xr.DataArray(values, dims=("y", "x"), name="B04", coords=coords)
    band.to_dataset().to_zarr(tmp_path / "b04.zarr", mode="w", consolidated=False)
    image = xfskde.open_image(tmp_path / "b04.zarr")
    assert "_FillValue" not in image.x.attrs and "_FillValue" not in image.y.attrs
    field = xfskde.local_fskde(image, order=4, window="box", size=5, stride=4)
    xfskde.write_coefficients(field, tmp_path / "c.zarr", progress=False)
    back = xfskde.io.open_coefficients(tmp_path / "c.zarr")
    assert np.array_equal(back.x.values, field.x.values)
    assert field.x.attrs == {"units": "m"}  # the coordinate's own attrs are kept
    assert main(["segment", str(tmp_path / "b04.zarr"), str(tmp_path / "lab.zarr"),
                 "--textures", "2", "--no-progress"]) == 0  # fmt: skip
    with xr.open_zarr(tmp_path / "lab.zarr") as labels:
        assert labels.y.values[0] == 5000000.0 and set(np.unique(labels["labels"].values)) <= {1, 2}
