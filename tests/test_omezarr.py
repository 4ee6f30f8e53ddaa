"""write_ome_zarr: maps and labels as OME-NGFF 0.5 multiscale images, checked by two readers.

Every store written here is validated by ome-zarr-models (the NGFF 0.5 models) and read back by
ome-zarr-py's Reader; values are compared with independent references: NumPy's ``nanmean`` of
2×2 blocks, scipy's ``circmean`` of doubled angles, a ``Counter`` for label modes.
"""

from __future__ import annotations

import warnings
from collections import Counter

import dask
import dask.array as da
import numpy as np
import ome_zarr_models
import pytest
import tifffile
import xarray as xr
import zarr
from dask.callbacks import Callback
from ome_zarr.io import parse_url
from ome_zarr.reader import Reader
from ome_zarr_models.common.omero import Omero
from ome_zarr_models.v05.image import Image
from scipy.stats import circmean

import xfskde
from xfskde.exceptions import (
    DimensionError,
    ParameterError,
    StoreExistsError,
    StoreFormatError,
)
from xfskde.io import write_ome_zarr, write_ome_zarr_labels
from xfskde.orientation import coherence, energy, orientation

PIXEL = 0.25  # micrometres per input pixel


# ----------------------------------------------------------------------------- references


def _pad(a: np.ndarray, fill) -> np.ndarray:
    return np.pad(a, ((0, a.shape[0] % 2), (0, a.shape[1] % 2)), constant_values=fill)


def ref_mean2(a: np.ndarray) -> np.ndarray:
    """NumPy's nanmean of every 2×2 block (NaN-padded to even sides)."""
    p = _pad(a.astype(np.float64), np.nan)
    blocks = p.reshape(p.shape[0] // 2, 2, p.shape[1] // 2, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN blocks
        return np.nanmean(blocks, axis=(1, 3))


def ref_axial2(a: np.ndarray) -> np.ndarray:
    """scipy's circular mean of the doubled angles of every 2×2 block, halved, in [0, π)."""
    p = _pad(a.astype(np.float64), np.nan)
    out = np.full((p.shape[0] // 2, p.shape[1] // 2), np.nan)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            block = p[2 * i : 2 * i + 2, 2 * j : 2 * j + 2].ravel()
            block = block[np.isfinite(block)]
            if block.size:
                out[i, j] = circmean(2 * block, high=2 * np.pi) / 2 % np.pi
    return out


def ref_mode2(a: np.ndarray) -> np.ndarray:
    """The most common label of every 2×2 block, ties to the first in TL, TR, BL, BR order
    (Counter.most_common keeps insertion order among equal counts); odd sides repeat the edge."""
    p = np.pad(a, ((0, a.shape[0] % 2), (0, a.shape[1] % 2)), mode="edge")
    out = np.zeros((p.shape[0] // 2, p.shape[1] // 2), a.dtype)
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            block = p[2 * i : 2 * i + 2, 2 * j : 2 * j + 2].ravel().tolist()
            out[i, j] = Counter(block).most_common(1)[0][0]
    return out


def axial_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = np.mod(a - b, np.pi)
    return np.minimum(d, np.pi - d)


# ----------------------------------------------------------------------------- fixtures


def _image(shape=(256, 200), coords=True) -> xr.DataArray:
    """Gratings of varying direction plus noise: orientations all over [0, π)."""
    rng = np.random.default_rng(1)
    y, x = np.mgrid[0 : shape[0], 0 : shape[1]].astype(np.float64)
    alpha = np.pi * (x / shape[1] + y / (2 * shape[0]))
    pixels = np.cos(0.8 * (x * np.cos(alpha) + y * np.sin(alpha))) + 0.3 * rng.random(shape)
    c = {"y": np.arange(shape[0]), "x": np.arange(shape[1])} if coords else {}
    return xr.DataArray(pixels.astype(np.float32), dims=("y", "x"), coords=c, name="img")


@pytest.fixture(scope="module")
def field() -> xr.DataArray:
    return xfskde.local_fskde(_image(), order=8, window="box", size=8, stride=8)


@pytest.fixture(scope="module")
def maps(field) -> dict[str, xr.DataArray]:
    return {
        "orientation": orientation(field),
        "coherence": coherence(field),
        "energy": energy(field),
    }


@pytest.fixture(scope="module")
def segmentation() -> xr.DataArray:
    """Integer labels at every input pixel: blocky regions with scattered noise (ties)."""
    rng = np.random.default_rng(2)
    y, x = np.mgrid[0:256, 0:200]
    labels = ((y // 40 + x // 30) % 4).astype(np.uint8)
    noise = rng.random(labels.shape) < 0.3
    labels[noise] = rng.integers(0, 6, noise.sum())
    return xr.DataArray(
        labels, dims=("y", "x"), coords={"y": np.arange(256), "x": np.arange(200)}, name="seg"
    )


def _validate(store) -> Image:
    """ome-zarr-models accepts the store as an NGFF 0.5 image (labels included), and its omero."""
    group = zarr.open_group(store, mode="r")
    image = Image.from_zarr(group)
    assert isinstance(ome_zarr_models.open_ome_zarr(group), Image)
    Omero.model_validate(group.attrs["ome"]["omero"])
    return image


def _nodes(path) -> tuple:
    """ome-zarr-py's reading: the image node and the label nodes, by name."""
    nodes = list(Reader(parse_url(str(path)))())
    image = nodes[0]
    labels = {n.metadata.get("name"): n for n in nodes[1:] if n.data}
    return image, labels


def _levels(node) -> list[np.ndarray]:
    return [np.asarray(d) for d in node.data]


# ----------------------------------------------------------------------------- the pyramid


def test_stride8_maps_and_labels_two_readers(tmp_path, field, maps, segmentation):
    path = tmp_path / "maps.ome.zarr"
    group = write_ome_zarr(
        maps, path, pixel_size=PIXEL, chunks=8, coarsest=8,
        labels={"segmentation": segmentation},
    )  # fmt: skip
    assert isinstance(group, zarr.Group)
    image = _validate(path)
    assert image.labels.label_paths == ["segmentation"]

    node, labels = _nodes(path)
    levels = _levels(node)
    # 32×25 -> 16×13 -> 8×7: levels until the longer side is <= 8
    assert [a.shape for a in levels] == [(3, 32, 25), (3, 16, 13), (3, 8, 7)]
    assert all(a.dtype == np.float32 for a in levels)
    assert node.metadata["channel_names"] == ["orientation", "coherence", "energy"]
    expected = np.stack([m.values for m in maps.values()]).astype(np.float32)
    np.testing.assert_array_equal(levels[0], expected)  # level 0 is the maps, exactly
    for level in (1, 2):
        below = levels[level - 1].astype(np.float64)
        for c in (1, 2):  # coherence and energy: NaN-aware means of 2×2 blocks
            np.testing.assert_allclose(levels[level][c], ref_mean2(below[c]), rtol=1e-6)
        # orientation: the doubled-angle mean; a plain mean is far off somewhere
        ref = ref_axial2(below[0])
        assert np.isfinite(levels[level][0]).all() and np.isfinite(ref).all()
        assert axial_distance(levels[level][0], ref).max() < 1e-5
        assert ((levels[level][0] >= 0) & (levels[level][0] < np.pi)).all()
    assert axial_distance(levels[1][0], ref_mean2(levels[0][0])).max() > 0.5

    # transforms: the first sample of the stride-8 map sits at pixel 3.5 (its cell's centre)
    assert float(field.y[0]) == float(field.x[0]) == 3.5 and field.attrs["stride"] == 8
    transforms = node.metadata["coordinateTransformations"]
    for level, (scale, first) in enumerate([(8, 3.5), (16, 7.5), (32, 15.5)]):
        assert transforms[level] == [
            {"type": "scale", "scale": [1.0, scale * PIXEL, scale * PIXEL]},
            {"type": "translation", "translation": [0.0, first * PIXEL, first * PIXEL]},
        ]
        # the centre of a coarse sample is the mean of the level-0 centres it covers
        block = 2**level
        assert first == pytest.approx(float(field.y[:block].mean()))
    assert [a.get("unit") for a in node.metadata["axes"]] == [None, "micrometer", "micrometer"]

    # display: angles 0..π, coherence 0..1, energy from percentiles of the coarsest level
    limits = node.metadata["contrast_limits"]
    assert limits[0] == [0.0, pytest.approx(np.pi)] and limits[1] == [0.0, 1.0]
    coarse_energy = levels[2][2][np.isfinite(levels[2][2])]
    assert limits[2] == pytest.approx(np.percentile(coarse_energy, [0.5, 99.5]).tolist())
    channels = zarr.open_group(path, mode="r").attrs["ome"]["omero"]["channels"]
    assert channels[2]["window"]["min"] == pytest.approx(coarse_energy.min())
    assert channels[0]["lut"] == "spectrum.lut"
    assert len({ch["color"] for ch in channels}) == 3

    # the labels: as many levels, modes of 2×2 blocks, their own (stride-1) grid
    label_node = labels["segmentation"]
    label_levels = _levels(label_node)
    assert [a.shape for a in label_levels] == [(256, 200), (128, 100), (64, 50)]
    np.testing.assert_array_equal(label_levels[0], segmentation.values)
    np.testing.assert_array_equal(label_levels[1], ref_mode2(segmentation.values))
    np.testing.assert_array_equal(label_levels[2], ref_mode2(ref_mode2(segmentation.values)))
    assert label_levels[1].dtype == np.uint8
    label_transforms = label_node.metadata["coordinateTransformations"]
    assert label_transforms[1] == [
        {"type": "scale", "scale": [2 * PIXEL, 2 * PIXEL]},
        {"type": "translation", "translation": [0.5 * PIXEL, 0.5 * PIXEL]},
    ]
    ome = zarr.open_group(path / "labels" / "segmentation", mode="r").attrs["ome"]
    assert ome["image-label"]["source"]["image"] == "../../"
    # labels that are not a segmentation's (no n_textures attr) name no colours: the
    # viewer's own; a segmentation's are in test_segmentation's OME-Zarr command test
    assert "colors" not in ome["image-label"] and not label_node.metadata["color"]


def test_transforms_follow_the_coordinates(tmp_path):
    """Any regular grid: scale = spacing, translation = first coordinate (no pixel size: no
    unit, transforms in input pixels); coarser levels centred on their blocks."""
    values = np.arange(12 * 10, dtype=np.float32).reshape(12, 10)
    m = xr.DataArray(
        values, dims=("y", "x"), coords={"y": 10 + 3 * np.arange(12), "x": 5.5 + 2 * np.arange(10)}
    )
    write_ome_zarr(m.rename("values"), tmp_path / "a.zarr", coarsest=6)
    _validate(tmp_path / "a.zarr")
    node, _ = _nodes(tmp_path / "a.zarr")
    assert [a.get("unit") for a in node.metadata["axes"]] == [None, None, None]
    assert node.metadata["coordinateTransformations"] == [
        [{"type": "scale", "scale": [1.0, 3.0, 2.0]},
         {"type": "translation", "translation": [0.0, 10.0, 5.5]}],
        [{"type": "scale", "scale": [1.0, 6.0, 4.0]},
         {"type": "translation", "translation": [0.0, 11.5, 6.5]}],
    ]  # fmt: skip
    assert node.metadata["channel_names"] == ["values"]


def test_odd_sides_and_nan(tmp_path):
    rng = np.random.default_rng(3)
    values = rng.random((9, 5)).astype(np.float32)
    values[0:2, 0:2] = np.nan  # a block of NaN stays NaN
    values[4, 1] = np.nan  # NaN samples are left out of their block's mean
    write_ome_zarr(xr.DataArray(values, dims=("y", "x"), name="v"), tmp_path / "o.zarr", coarsest=2)
    _validate(tmp_path / "o.zarr")
    levels = _levels(_nodes(tmp_path / "o.zarr")[0])
    assert [a.shape for a in levels] == [(1, 9, 5), (1, 5, 3), (1, 3, 2), (1, 2, 1)]
    ref = values.astype(np.float64)
    for level in levels[1:]:
        ref = ref_mean2(ref)
        np.testing.assert_allclose(level[0], ref, rtol=1e-6)
    assert np.isnan(levels[1][0, 0, 0]) and levels[1][0, 4, 2] == values[8, 4]  # lone corner


@pytest.mark.parametrize(
    ("name", "attrs", "axial", "expected"),
    [
        ("orientation", {}, None, 0.0),  # xfskde's name: axial
        ("orientation", {"units": "deg"}, None, np.pi / 2),  # not radians: plain
        ("angle", {}, None, np.pi / 2),  # unknown: plain mean
        ("angle", {"orientation_convention": "x right, y down"}, None, 0.0),  # orientation()'s
        ("angle", {}, ["angle"], 0.0),  # named by the caller
        ("orientation", {}, (), np.pi / 2),  # axial=() turns detection off
    ],
)
def test_axial_channels(tmp_path, name, attrs, axial, expected):
    # every 2×2 block holds 0.05 and π - 0.05: one axis near 0, whose plain mean is π/2
    values = np.tile(np.array([[0.05, np.pi - 0.05], [np.pi - 0.05, 0.05]]), (2, 2))
    m = xr.DataArray(values.astype(np.float32), dims=("y", "x"), name=name, attrs=attrs)
    write_ome_zarr(m, tmp_path / "a.zarr", coarsest=2, axial=axial)
    level1 = _levels(_nodes(tmp_path / "a.zarr")[0])[1][0]
    assert axial_distance(level1, expected).max() < 1e-6
    assert ((level1 >= 0) & (level1 < np.pi)).all()
    recorded = zarr.open_group(tmp_path / "a.zarr", mode="r").attrs["ome"]["multiscales"][0]
    assert recorded["metadata"]["axial_channels"] == ([name] if expected == 0.0 else [])


def test_perpendicular_axes_have_no_mean(tmp_path):
    values = np.array([[0.0, np.pi / 2], [np.pi / 2, 0.0]], np.float32)
    m = xr.DataArray(values, dims=("y", "x"), name="orientation")
    write_ome_zarr(m, tmp_path / "a.zarr", coarsest=1)
    assert np.isnan(_levels(_nodes(tmp_path / "a.zarr")[0])[1]).all()


def test_input_forms_name_the_channels(tmp_path, maps):
    stacked = xr.concat(list(maps.values()), dim="c").assign_coords(c=list(maps))
    expected = stacked.values.astype(np.float32)
    names, swapped = list(maps), [1, 0, 2]
    forms = [
        ("dict", maps, names, expected),
        ("dataset", xr.Dataset(maps), names, expected),
        ("cyx", stacked, names, expected),
        ("yxc", stacked.transpose("y", "x", "c"), names, expected),
        # a stack's attrs are those of its first map (here coherence's, units "1"): the
        # orientation channel is recognised by its name
        (
            "cyx, coherence first",
            stacked.isel(c=swapped).assign_attrs(maps["coherence"].attrs),
            [names[j] for j in swapped],
            expected[swapped],
        ),
    ]
    for i, (label, form, channel_names, values) in enumerate(forms):
        path = tmp_path / f"{i}.zarr"
        write_ome_zarr(form, path, coarsest=64)
        _validate(path)
        node, _ = _nodes(path)
        assert node.metadata["channel_names"] == channel_names, label
        np.testing.assert_array_equal(_levels(node)[0], values)
        axial = zarr.open_group(path, mode="r").attrs["ome"]["multiscales"][0]["metadata"]
        assert axial["axial_channels"] == ["orientation"], label
    band = xr.DataArray(np.zeros((2, 4, 3)), dims=("band", "y", "x"))
    write_ome_zarr(band, tmp_path / "band.zarr")
    assert _nodes(tmp_path / "band.zarr")[0].metadata["channel_names"] == ["band0", "band1"]
    write_ome_zarr(np.ones((4, 3)), tmp_path / "plain.zarr")
    assert _nodes(tmp_path / "plain.zarr")[0].metadata["channel_names"] == ["map"]


class _LargestResult(Callback):
    """Records the largest array any task returned."""

    def __init__(self):
        super().__init__()
        self.largest = 0

    def _posttask(self, key, result, dsk, state, worker_id):
        self.largest = max(self.largest, getattr(result, "nbytes", 0))


def test_dask_input_is_written_blockwise_and_equals_numpy(tmp_path):
    rng = np.random.default_rng(4)
    values = rng.random((3, 512, 384)).astype(np.float32)
    values[1, 100:140, 50:90] = np.nan
    eager = xr.DataArray(values, dims=("c", "y", "x"), coords={"c": ["a", "b", "orientation"]})
    lazy = eager.chunk({"c": 1, "y": 37, "x": 29})  # odd, ragged chunks
    write_ome_zarr(eager, tmp_path / "eager.zarr", chunks=64, coarsest=64)
    with _LargestResult() as watch, dask.config.set(scheduler="threads"):
        write_ome_zarr(lazy, tmp_path / "lazy.zarr", chunks=64, coarsest=64)
    # no task ever held more than a few chunks (one channel of 512×384 is 768 KiB)
    assert 0 < watch.largest <= 4 * 128 * 128 * 4
    a, b = _levels(_nodes(tmp_path / "eager.zarr")[0]), _levels(_nodes(tmp_path / "lazy.zarr")[0])
    assert [x.shape for x in a] == [(3, 512, 384), (3, 256, 192), (3, 128, 96), (3, 64, 48)]
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)
    level0 = zarr.open_group(tmp_path / "lazy.zarr", mode="r")["0"]
    assert level0.chunks == (3, 64, 64) and level0.dtype == np.float32
    assert np.isnan(level0.fill_value)


def test_chunks_follow_dask_input(tmp_path):
    m = xr.DataArray(da.zeros((300, 260), chunks=(128, 96), dtype=np.float64), dims=("y", "x"))
    write_ome_zarr(m.rename("z"), tmp_path / "a.zarr", coarsest=100)
    group = zarr.open_group(tmp_path / "a.zarr", mode="r")
    assert group["0"].chunks == (1, 128, 96) and group["2"].shape == (1, 75, 65)
    assert group["2"].chunks == (1, 75, 65)


def test_existing_store_is_refused_unless_overwrite(tmp_path, maps):
    path = tmp_path / "maps.zarr"
    write_ome_zarr(maps["coherence"], path)
    with pytest.raises(StoreExistsError):
        write_ome_zarr(maps["energy"], path)
    assert _nodes(path)[0].metadata["channel_names"] == ["coherence"]  # untouched
    write_ome_zarr(maps["energy"], path, overwrite=True)
    node, _ = _nodes(path)
    assert node.metadata["channel_names"] == ["energy"]
    np.testing.assert_array_equal(_levels(node)[0][0], maps["energy"].values)
    afile = tmp_path / "file"
    afile.write_text("x")
    with pytest.raises(FileExistsError):  # StoreExistsError is one
        write_ome_zarr(maps["energy"], afile)
    write_ome_zarr(maps["energy"], afile, overwrite=True)
    _validate(afile)


def test_zarr_store_objects(maps):
    store = zarr.storage.MemoryStore()
    group = write_ome_zarr(maps, store, coarsest=16)
    image = _validate(store)
    assert len(image.datasets[0]) == 2
    np.testing.assert_array_equal(group["0"][1], maps["coherence"].values)
    with pytest.raises(StoreExistsError):
        write_ome_zarr(maps, store)


def test_pixel_size_from_attrs(tmp_path):
    def scale(attrs, **kwargs):
        m = xr.DataArray(np.zeros((4, 4), np.float32), dims=("y", "x"), name="m", attrs=attrs)
        path = tmp_path / f"s{len(list(tmp_path.iterdir()))}.zarr"
        write_ome_zarr(m, path, **kwargs)
        multiscale = zarr.open_group(path, mode="r").attrs["ome"]["multiscales"][0]
        units = [a.get("unit") for a in multiscale["axes"]]
        return multiscale["datasets"][0]["coordinateTransformations"][0]["scale"], units

    assert scale({"mpp": 0.5}) == ([1.0, 0.5, 0.5], [None, "micrometer", "micrometer"])
    assert scale({"pixel_size": [500, 250], "pixel_size_units": "nm"})[0] == [1.0, 0.5, 0.25]
    assert scale({"mpp": 0.5}, pixel_size=2.0)[0] == [1.0, 2.0, 2.0]  # the argument wins
    assert scale({}) == ([1.0, 1.0, 1.0], [None, None, None])


def test_the_recorded_scale_of_the_coordinates_is_not_called_a_pixel_size(tmp_path):
    """The root's xfskde.pixel_size_um was [1.0, 1.0] for maps of a 0.5 µm slide (µm per
    unit of their coordinates, already µm), beside a source_pixel_size_um of 0.5: it is now
    named for what it holds, and stores that name it the old way still take labels."""
    pixels = np.random.default_rng(1).random((32, 32)).astype(np.float32)
    path = tmp_path / "slide.ome.tif"
    tifffile.imwrite(path, pixels, metadata={"PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5})
    image = xfskde.open_image(path).rename("m")
    write_ome_zarr(image, tmp_path / "um.zarr")
    block = zarr.open_group(tmp_path / "um.zarr", mode="r").attrs["xfskde"]
    assert "pixel_size_um" not in block and block["um_per_coordinate"] == [1.0, 1.0]
    assert block["attrs"]["source_pixel_size_um"] == [0.5, 0.5]
    # maps in input pixels: µm per pixel; a store of before names it pixel_size_um
    plain = xr.DataArray(pixels, dims=("y", "x"), name="m")
    write_ome_zarr(plain, tmp_path / "old.zarr", pixel_size=0.5)
    root = zarr.open_group(tmp_path / "old.zarr", mode="r+")
    block = dict(root.attrs["xfskde"])
    assert block["um_per_coordinate"] == [0.5, 0.5]
    block["pixel_size_um"] = block.pop("um_per_coordinate")
    root.update_attributes({"xfskde": block})
    labels = xr.DataArray((pixels > 0.5).astype(np.uint8), dims=("y", "x"), name="bright")
    group = write_ome_zarr_labels(labels, tmp_path / "old.zarr", chunks=32)
    scale = group.attrs["ome"]["multiscales"][0]["datasets"][0]["coordinateTransformations"]
    assert scale[0]["scale"] == [0.5, 0.5]


def test_labels_added_to_an_existing_image(tmp_path, maps, segmentation):
    path = tmp_path / "maps.zarr"
    write_ome_zarr(maps, path, pixel_size=PIXEL, coarsest=8)
    group = write_ome_zarr_labels(segmentation, path, name="segmentation")
    assert group.attrs["ome"]["multiscales"][0]["axes"][0]["unit"] == "micrometer"
    image = _validate(path)
    assert image.labels.label_paths == ["segmentation"]
    mask = (segmentation > 2).rename("mask")  # booleans become uint8
    write_ome_zarr_labels(mask, path)
    assert _validate(path).labels.label_paths == ["segmentation", "mask"]
    _, labels = _nodes(path)
    assert set(labels) == {"segmentation", "mask"}
    levels = _levels(labels["mask"])
    assert len(levels) == 3 and levels[0].dtype == np.uint8
    np.testing.assert_array_equal(levels[1], ref_mode2(mask.values.astype(np.uint8)))
    transforms = labels["segmentation"].metadata["coordinateTransformations"]
    assert transforms[0][0]["scale"] == [PIXEL, PIXEL]  # the recorded pixel size
    with pytest.raises(StoreExistsError):
        write_ome_zarr_labels(mask, path)
    write_ome_zarr_labels(mask.astype(np.int32) * 7, path, name="mask", overwrite=True)
    assert _levels(_nodes(path)[1]["mask"])[0].max() == 7
    with pytest.raises(StoreFormatError):
        write_ome_zarr_labels(mask, zarr.storage.MemoryStore())
    with pytest.raises(FileNotFoundError):
        write_ome_zarr_labels(mask, tmp_path / "nowhere.zarr")


def test_refused_inputs_write_nothing(tmp_path, field, maps, segmentation):
    path = tmp_path / "x.zarr"
    bad = {
        "complex": (field, {}),
        "two grids": ({"a": maps["energy"], "b": maps["energy"][:-1]}, {}),
        "georeferenced": (
            maps["energy"].assign_coords(spatial_ref=xr.Variable((), 0, {"crs_wkt": "..."})),
            {},
        ),
        "irregular": (maps["energy"].assign_coords(y=np.r_[0, 2, 3, 7 : 7 + 29]), {}),
        "float labels": (maps, {"labels": {"s": segmentation.astype(float)}}),
        "unknown axial": (maps, {"axial": ["angle"]}),
        "coarsest": (maps, {"coarsest": 0}),
        "labels list": (maps, {"labels": [segmentation]}),
        "4-d": (xr.DataArray(np.zeros((2, 2, 3, 3)), dims=("t", "c", "y", "x")), {}),
    }
    errors = {"two grids": DimensionError, "4-d": DimensionError}
    for label, (value, kwargs) in bad.items():
        with pytest.raises(errors.get(label, ParameterError)):
            write_ome_zarr(value, path, **kwargs)
        assert not path.exists(), label


def test_a_failed_write_leaves_nothing(tmp_path):
    def explode(block):
        raise RuntimeError("boom")

    data = da.zeros((64, 64), chunks=32, dtype=np.float32).map_blocks(explode, dtype=np.float32)
    with pytest.raises(RuntimeError, match="boom"):
        write_ome_zarr(xr.DataArray(data, dims=("y", "x"), name="m"), tmp_path / "f.zarr")
    assert not (tmp_path / "f.zarr").exists()


# ------------------------------------------------------------------------ resuming, remote


def _maps_of(values: np.ndarray) -> xr.DataArray:
    """A (y, x) map in 32 x 32 Dask blocks."""
    y, x = np.arange(values.shape[0]), np.arange(values.shape[1])
    data = da.from_array(values, chunks=32)
    return xr.DataArray(data, dims=("y", "x"), name="energy", coords={"y": y, "x": x})


def test_an_interrupted_write_resumes_only_its_missing_blocks(tmp_path, monkeypatch):
    import xfskde.io.stores as stores

    values = np.random.default_rng(5).random((96, 128)).astype(np.float32)
    store = tmp_path / "maps.ome.zarr"
    real = stores._write_block
    written = []

    def dies_after_five(*args, **kwargs):
        if len(written) == 5:
            raise RuntimeError("killed")
        written.append(args[3:5])
        return real(*args, **kwargs)

    monkeypatch.setattr(stores, "_write_block", dies_after_five)
    with dask.config.set(scheduler="synchronous"), pytest.raises(RuntimeError, match="killed"):
        write_ome_zarr(_maps_of(values), store, chunks=32, coarsest=32)
    status = xfskde.io.store_status(store)
    assert (status["complete"], status["blocks_done"], status["blocks_total"]) == (False, 5, 12)
    assert "ome" not in zarr.open_group(store, mode="r").attrs  # not an image until complete
    with pytest.raises(xfskde.exceptions.StoreParametersError):  # other maps: not mixed in
        write_ome_zarr(_maps_of(values[:64]), store, chunks=32, coarsest=32, resume=True)
    written.clear()
    monkeypatch.setattr(stores, "_write_block", lambda *a, **k: written.append(a) or real(*a, **k))
    write_ome_zarr(_maps_of(values), store, chunks=32, coarsest=32, resume=True)
    assert len(written) == 7  # only the missing blocks of level 0
    _validate(store)
    image, _ = _nodes(store)
    level0, level1 = _levels(image)[:2]
    np.testing.assert_array_equal(level0[0], values)
    np.testing.assert_allclose(level1[0], ref_mean2(values), rtol=1e-6)
    assert xfskde.io.store_status(store)["complete"]
    assert xfskde.verify_store(store).whole
    # resuming a complete store does nothing; with other maps it is refused, not kept as
    # if they were these (it returned the old image, and `segment --resume` said it wrote)
    written.clear()
    write_ome_zarr(_maps_of(values), store, chunks=32, coarsest=32, resume=True)
    assert written == []
    other = _maps_of(values).assign_attrs(window="box")  # maps of another window
    with pytest.raises(xfskde.exceptions.StoreParametersError, match="window"):
        write_ome_zarr(other, store, chunks=32, coarsest=32, resume=True)
    with pytest.raises(xfskde.exceptions.StoreParametersError, match="shape"):
        write_ome_zarr(_maps_of(values[:64]), store, chunks=32, coarsest=32, resume=True)
    assert written == [] and xfskde.io.store_status(store)["complete"]


def test_maps_written_to_a_url():
    values = np.random.default_rng(6).random((70, 90)).astype(np.float32)
    url = "memory://xfskde-omezarr/maps.ome.zarr"
    write_ome_zarr(_maps_of(values), url, chunks=32, coarsest=32, overwrite=True)
    group = zarr.open_group(url, mode="r")
    assert isinstance(ome_zarr_models.open_ome_zarr(group), Image)
    np.testing.assert_array_equal(np.asarray(group["0"][0]), values)
    assert xfskde.io.store_status(url)["complete"]


def test_maps_in_micrometres_keep_their_unit(tmp_path):
    """Maps of an image that records its pixel size have coords in µm: the axes are too."""
    values = np.random.default_rng(7).random((40, 50)).astype(np.float32)
    um = {"units": "µm"}
    y, x = ("y", 0.5 * np.arange(40) + 1.75, um), ("x", 0.5 * np.arange(50) + 1.75, um)
    maps = xr.DataArray(values, dims=("y", "x"), name="energy", coords={"y": y, "x": x})
    write_ome_zarr(maps, tmp_path / "m.ome.zarr", coarsest=16)
    image = _validate(tmp_path / "m.ome.zarr")
    multiscale = image.ome_attributes.multiscales[0]
    assert [a.unit for a in multiscale.axes] == [None, "micrometer", "micrometer"]
    scale, shift = multiscale.datasets[0].coordinateTransformations
    assert list(scale.scale) == [1.0, 0.5, 0.5] and list(shift.translation) == [0.0, 1.75, 1.75]
    with pytest.raises(ParameterError, match="drop pixel_size"):
        write_ome_zarr(maps, tmp_path / "n.ome.zarr", pixel_size=0.25)


def test_a_stack_of_maps_says_each_channel_its_units(tmp_path, maps):
    """Maps with their own units (rad, 1, 1/pixel) stacked into one (c, y, x) array: the array
    claims no one unit for all (the first map's "rad" was read by xarray as the unit of the
    coherence and the energy), and says each channel's; what the maps share is kept."""
    for i, form in enumerate((maps, xr.Dataset(maps))):
        path = tmp_path / f"{i}.zarr"
        write_ome_zarr(form, path, coarsest=64)
        attrs = xr.open_zarr(path)["0"].attrs
        assert "units" not in attrs and "orientation_convention" not in attrs
        assert attrs["channel_units"] == ["rad", "1", maps["energy"].attrs["units"]]
        assert attrs["channel_long_names"] == [maps[n].attrs["long_name"] for n in maps]
        assert attrs["long_name"] == "orientation, coherence, energy"
        assert attrs["stride"] == 8 and attrs["window"] == "box"  # the field's, shared
    one = tmp_path / "one.zarr"  # one map: its own attrs, as they are
    write_ome_zarr({"coherence": maps["coherence"]}, one, coarsest=64)
    attrs = xr.open_zarr(one)["0"].attrs
    assert attrs["units"] == "1" and "channel_units" not in attrs
