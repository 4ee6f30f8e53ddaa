"""Every output puts its samples where they are in the input, as the format's own reader says.

A stride-``s`` result stands for the s×s cells of its input: sample ``(i, j)`` for the pixels
``i*s .. i*s + s - 1`` × ``j*s .. j*s + s - 1`` (the brute-force sum below shows it for the cell
a ``window="box", size=s`` field sums), so its position is the cell's centre, input pixel
``i*s + (s - 1)/2`` (half a pixel past the sampled pixel ``i*s + o`` for an even stride). Here
that position is checked, for the first and the last sample, in the input's own frame (input
pixels for a plain image, µm for an OME-TIFF, the CRS for a GeoTIFF), as each format's second
reader places it:

* our Zarr stores: the coords xarray reads (a plain image's results keep the sampled pixels'
  indices, ``i*s + o``, documented as indices; the others are the cells' centres);
* OME-Zarr: ome-zarr-py's transforms, napari's convention ``centre = index*scale + translation``;
* OME-TIFF: tifffile's OME-XML, ``PhysicalSizeX/Y`` and the ``xfskde.origin`` key-values (the
  first pixel's centre; OME's own convention, 0, where they are absent);
* GeoTIFF: rasterio's ``xy(row, col)`` (pixel-is-area: the transform gives the corner, and GDAL
  reads a plain image with the identity transform, its pixel ``k`` centred at ``k + 1/2``).

Inputs: a DataArray without coords (NumPy), a plain TIFF, an OME-TIFF with a pixel size, a
GeoTIFF with a CRS and a north-up transform; strides 1, 2, 3 and 8; the complex field, maps, and
segmentation labels with ``resolution`` 4 (per pixel, each cell's label on its pixels).
"""

from __future__ import annotations

import warnings
from xml.etree import ElementTree

import numpy as np
import pytest
import rasterio
import tifffile
import xarray as xr
import zarr
from ome_zarr.io import parse_url
from ome_zarr.reader import Reader
from rasterio.transform import from_origin

import xfskde
from xfskde import Cos2KKernel
from xfskde.exceptions import ParameterError
from xfskde.io import (
    write_blocks,
    write_coefficients,
    write_geotiff,
    write_ome_tiff,
    write_ome_zarr,
)
from xfskde.orientation import orientation

SHAPE = (48, 40)
UM = 0.5  # µm per pixel of the OME-TIFF input (and pixel_size= for the plain ones' OME-TIFFs)
CORNER = (6_000_000.0, 500_000.0)  # the GeoTIFF input's top-left corner (north, east), 10 m
STRIDES = (1, 2, 3, 8)
KINDS = ("numpy", "tiff", "ome-tiff", "geotiff")


def _pixels() -> np.ndarray:
    y, x = np.mgrid[0 : SHAPE[0], 0 : SHAPE[1]].astype(np.float64)
    rng = np.random.default_rng(5)
    return (100 + 60 * np.cos(0.7 * x + 0.3 * y) + 20 * rng.random(SHAPE)).astype(np.float32)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> dict[str, xr.DataArray]:
    folder = tmp_path_factory.mktemp("inputs")
    pixels = _pixels()
    tifffile.imwrite(folder / "plain.tif", pixels)
    tifffile.imwrite(folder / "slide.ome.tif", pixels, metadata={
        "axes": "YX", "PhysicalSizeX": UM, "PhysicalSizeY": UM,
        "PhysicalSizeXUnit": "µm", "PhysicalSizeYUnit": "µm",
    })  # fmt: skip
    with rasterio.open(
        folder / "scene.tif", "w", driver="GTiff", height=SHAPE[0], width=SHAPE[1], count=1,
        dtype="float32", crs="EPSG:32633", transform=from_origin(CORNER[1], CORNER[0], 10, 10),
    ) as dst:  # fmt: skip
        dst.write(pixels, 1)
    return {
        "numpy": xr.DataArray(pixels, dims=("y", "x")),
        "tiff": xfskde.open_image(folder / "plain.tif"),
        "ome-tiff": xfskde.open_image(folder / "slide.ome.tif"),
        "geotiff": xfskde.open_image(folder / "scene.tif"),
    }


def _world(kind: str, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The input's own position of the (fractional) input pixels ``rows, cols``, pixel ``k``'s
    centre at index ``k``: input pixels, µm, or metres east and north."""
    rows, cols = np.asarray(rows, float), np.asarray(cols, float)
    if kind == "ome-tiff":
        return UM * rows, UM * cols
    if kind == "geotiff":
        return CORNER[0] - 10 * (rows + 0.5), CORNER[1] + 10 * (cols + 0.5)
    return rows, cols


def _cells(result: xr.DataArray, stride: int) -> tuple[np.ndarray, np.ndarray]:
    """The samples checked, first and last, and their cells' centres in input pixels."""
    index = np.array([[0, 0], [result.sizes["y"] - 1, result.sizes["x"] - 1]])
    return index, index * stride + (stride - 1) / 2


# ----------------------------------------------------------------------------- the readers


def _ome_zarr_centres(path, index: np.ndarray, label: str | None = None) -> np.ndarray:
    """ome-zarr-py's level-0 transforms, as napari places a pixel: index * scale + translation."""
    nodes = list(Reader(parse_url(str(path)))())
    node = nodes[0] if label is None else next(n for n in nodes if n.metadata.get("name") == label)
    transforms = node.metadata["coordinateTransformations"][0]
    scale = next(t["scale"] for t in transforms if t["type"] == "scale")[-2:]
    shift = next(t["translation"] for t in transforms if t["type"] == "translation")[-2:]
    return index * np.asarray(scale) + np.asarray(shift)


def _ome_tiff_centres(path, index: np.ndarray, series: int = 0) -> np.ndarray | None:
    """tifffile's OME-XML: PhysicalSizeY/X and the series' ``xfskde.origin`` pairs (the first
    pixel's centre; 0 without them, OME's convention); None without a pixel size."""
    with tifffile.TiffFile(path) as tif:
        root = ElementTree.fromstring(tif.ome_metadata)
    ns = {"ome": root.tag[1:].split("}")[0]}
    image = root.findall("ome:Image", ns)[series]
    pixels = image.find("ome:Pixels", ns)
    if pixels.get("PhysicalSizeY") is None:
        return None
    assert pixels.get("PhysicalSizeYUnit", "µm") == pixels.get("PhysicalSizeXUnit", "µm") == "µm"
    size = np.array([float(pixels.get("PhysicalSizeY")), float(pixels.get("PhysicalSizeX"))])
    refs = {r.get("ID") for r in image.findall("ome:AnnotationRef", ns)}
    origin = np.zeros(2)
    for note in root.iter(f"{{{ns['ome']}}}MapAnnotation"):
        if note.get("ID") in refs and note.get("Namespace") == "xfskde.origin":
            pairs = {m.get("K"): float(m.text) for m in note.iter(f"{{{ns['ome']}}}M")}
            origin = np.array([pairs["y"], pairs["x"]])
    return origin + index * size


def _geotiff_centres(path, index: np.ndarray, plain: bool) -> np.ndarray:
    """rasterio's centre of each pixel (pixel-is-area), (y, x); for a result of a plain image
    in input pixels (GDAL's frame, in which it reads the input, centres pixel k at k + 1/2)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)
        with rasterio.open(path) as src:
            xs, ys = src.xy(index[:, 0], index[:, 1])  # offset="center"
    centres = np.stack([ys, xs], axis=1)
    return centres - 0.5 if plain else centres


def _store_coords(path, index: np.ndarray) -> np.ndarray:
    """The coords xarray reads from one of our Zarr stores."""
    ds = xr.open_zarr(path, consolidated=False)
    return np.stack([ds["y"].values[index[:, 0]], ds["x"].values[index[:, 1]]], axis=1)


# ----------------------------------------------------------------------------- where a sample is


def test_a_stride_s_sample_sums_its_cell():
    """Brute force: sample (2, 3) of a box-8 stride-8 field is H_k times the mean over the
    pixels 16..23 × 24..31 of |g| e^{-ikΘ} (central differences): its cell, centred at input
    pixel (19.5, 27.5); the cell one pixel on is another sum. Its coords say so where the
    image has coordinates (µm here), and are the sampled pixel's index, 19 and 27, where not."""
    pixels = _pixels().astype(np.float64)
    gy, gx = np.gradient(pixels)  # central differences inside the image
    terms = np.hypot(gx, gy)[..., None] * np.exp(-1j * np.arange(5) * np.arctan2(gy, gx)[..., None])
    H = Cos2KKernel(4).coefficients
    cell = H * terms[16:24, 24:32].mean(axis=(0, 1))
    shifted = H * terms[17:25, 25:33].mean(axis=(0, 1))
    field = xfskde.local_fskde(
        xr.DataArray(pixels, dims=("y", "x"), coords={"y": UM * np.arange(SHAPE[0]),
                                                      "x": UM * np.arange(SHAPE[1])}),
        order=4, window="box", size=8, stride=8,
    )  # fmt: skip
    np.testing.assert_allclose(field.values[2, 3], cell, rtol=1e-5, atol=1e-6)
    assert np.abs(shifted - cell).max() > 1e-2 * np.abs(cell).max()
    assert (float(field.y[2]), float(field.x[3])) == (UM * 19.5, UM * 27.5)
    plain = xfskde.local_fskde(xr.DataArray(pixels, dims=("y", "x")), order=4, window="box",
                               size=8, stride=8)  # fmt: skip
    np.testing.assert_array_equal(plain.values, field.values)
    assert (int(plain.y[2]), int(plain.x[3])) == (19, 27)


# ----------------------------------------------------------------------------- maps and fields


@pytest.mark.parametrize("stride", STRIDES)
@pytest.mark.parametrize("kind", KINDS)
def test_maps_and_fields_sit_on_their_cells_in_every_format(inputs, kind, stride, tmp_path):
    image = inputs[kind]
    field = xfskde.local_fskde(image, order=4, window="gaussian", size=1.5, stride=stride)
    maps = {"orientation": orientation(field)}
    index, cells = _cells(field, stride)
    expected = np.stack(_world(kind, cells[:, 0], cells[:, 1]), axis=1)
    plain = kind in ("numpy", "tiff")

    # the labelled result and our Zarr stores (field and map): indices for a plain image
    coords = np.stack([field.y.values[index[:, 0]], field.x.values[index[:, 1]]], axis=1)
    np.testing.assert_allclose(coords, index * stride + (stride - 1) // 2 if plain else expected,
                               rtol=0, atol=1e-6)  # fmt: skip
    write_coefficients(field, tmp_path / "field.zarr")
    write_blocks(maps["orientation"], tmp_path / "maps.zarr", name="orientation")
    for store in ("field.zarr", "maps.zarr"):
        np.testing.assert_array_equal(_store_coords(tmp_path / store, index), coords)

    # GeoTIFF (field as Re/Im bands, and the map), read by rasterio
    for name, result in (("field", field), ("map", maps["orientation"])):
        write_geotiff(result, tmp_path / f"{name}.tif")
        centres = _geotiff_centres(tmp_path / f"{name}.tif", index, plain)
        np.testing.assert_allclose(centres, expected, rtol=0, atol=1e-6, err_msg=name)

    if kind == "geotiff":  # a scene with a CRS goes to GeoTIFF only
        with pytest.raises(ParameterError, match="write_geotiff"):
            write_ome_zarr(maps, tmp_path / "maps.ome.zarr")
        return
    # OME-Zarr read by ome-zarr-py (napari's convention), in the input's frame
    write_ome_zarr(maps, tmp_path / "maps.ome.zarr")
    centres = _ome_zarr_centres(tmp_path / "maps.ome.zarr", index)
    np.testing.assert_allclose(centres, expected, rtol=0, atol=1e-9)

    # OME-TIFF read by tifffile, in µm: a plain image's maps given its pixel size
    size = UM if plain else None
    write_ome_tiff(maps, tmp_path / "maps.ome.tif", pixel_size=size)
    centres = _ome_tiff_centres(tmp_path / "maps.ome.tif", index)
    np.testing.assert_allclose(centres, UM * expected if plain else expected, rtol=0, atol=1e-9)
    write_ome_tiff(maps, tmp_path / "bare.ome.tif")
    if plain:  # without a pixel size an OME-TIFF places nothing: no claim to check
        assert _ome_tiff_centres(tmp_path / "bare.ome.tif", index) is None


def test_a_plain_map_with_a_pixel_size_in_ome_zarr(inputs, tmp_path):
    """pixel_size= scales the plain image's cells' centres: stride 8 of 0.5 µm is 1.75 µm."""
    maps = {"orientation": orientation(xfskde.local_fskde(inputs["tiff"], order=4, stride=8))}
    write_ome_zarr(maps, tmp_path / "maps.ome.zarr", pixel_size=UM)
    np.testing.assert_allclose(_ome_zarr_centres(tmp_path / "maps.ome.zarr", np.zeros((1, 2))),
                               [[1.75, 1.75]], rtol=0, atol=1e-12)  # fmt: skip


# ----------------------------------------------------------------------------- labels


def _blocks(size: int) -> np.ndarray:
    """Two textures meeting at column 20 (a multiple of 4): cells of 4 never straddle it."""
    y, x = np.mgrid[0 : SHAPE[0], 0 : SHAPE[1]].astype(np.float64)
    rng = np.random.default_rng(1)
    stripes = np.where(x < 20, np.cos(2 * np.pi * x / size), np.cos(2 * np.pi * y / size))
    return (100 + 80 * stripes + 10 * rng.random(SHAPE)).astype(np.float32)


@pytest.mark.parametrize("kind", ["numpy", "ome-tiff"])
def test_labels_of_coarse_cells_sit_on_their_pixels_in_every_format(kind, tmp_path):
    pixels = _blocks(12)
    coords = {d: (d, UM * np.arange(n), {"units": "µm"}) for d, n in zip("yx", SHAPE, strict=True)}
    image = xr.DataArray(pixels, dims=("y", "x"), coords=coords if kind == "ome-tiff" else {})
    labels = xfskde.segment(image, 2, resolution=4, size=2, features=("fskde",))
    assert labels.shape == SHAPE and labels.attrs["resolution"] == 4
    values = labels.values
    # each 4×4 cell of the image's grid, anchored at its corner, is one label
    np.testing.assert_array_equal(values, np.repeat(np.repeat(values[::4, ::4], 4, 0), 4, 1))
    assert values[24, 10] != values[24, 30]  # the two textures, either side of column 20

    index = np.array([[0, 0], [SHAPE[0] - 1, SHAPE[1] - 1]])
    expected = np.stack(_world(kind, index[:, 0], index[:, 1]), axis=1)
    plain = kind == "numpy"
    write_blocks(labels, tmp_path / "labels.zarr", name="labels")
    stored = _store_coords(tmp_path / "labels.zarr", index)
    np.testing.assert_allclose(stored, index if plain else expected, rtol=0, atol=1e-9)
    write_geotiff(labels, tmp_path / "labels.tif")
    np.testing.assert_allclose(_geotiff_centres(tmp_path / "labels.tif", index, plain),
                               expected, rtol=0, atol=1e-9)  # fmt: skip
    maps = {"orientation": orientation(xfskde.local_fskde(image, order=4, stride=1))}
    write_ome_zarr(maps, tmp_path / "seg.ome.zarr", labels={"textures": labels})
    np.testing.assert_allclose(_ome_zarr_centres(tmp_path / "seg.ome.zarr", index, "textures"),
                               expected, rtol=0, atol=1e-9)  # fmt: skip
    write_ome_tiff(maps, tmp_path / "seg.ome.tif", labels={"textures": labels},
                   pixel_size=UM if plain else None)  # fmt: skip
    centres = _ome_tiff_centres(tmp_path / "seg.ome.tif", index, series=1)
    np.testing.assert_allclose(centres, UM * expected if plain else expected, rtol=0, atol=1e-9)
    np.testing.assert_array_equal(zarr.open_group(tmp_path / "seg.ome.zarr", mode="r")[
        "labels/textures/0"][...], values)  # fmt: skip
