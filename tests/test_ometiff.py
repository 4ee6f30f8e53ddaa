"""write_ome_tiff and ``xfskde maps|segment IN OUT.ome.tif``: maps and labels as one pyramidal
OME-TIFF, checked by two readers.

Every file written here is read by tifffile (pixels, series, pyramid levels, TIFF tags) and its
OME-XML is parsed and validated against the OME 2016-06 schema by ome-types, a reader that
shares no code with the writer; its levels are compared with the OME-Zarr image that
write_ome_zarr writes of the same maps, read with zarr.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import tifffile
import xarray as xr
import zarr

import xfskde
from xfskde._palette import label_rgba_8bit
from xfskde.cli import main
from xfskde.exceptions import ParameterError, StoreExistsError
from xfskde.io import write_ome_tiff, write_ome_zarr
from xfskde.io.ometiff import copy_ome_zarr_to_tiff
from xfskde.orientation import coherence, energy, orientation
from xfskde.segmentation import read_model

ome_types = pytest.importorskip("ome_types")

PIXEL = 0.5  # micrometres per input pixel
STRIDE = 4


def _same_model(a, b) -> None:
    assert a.spec == b.spec and a.scales == b.scales and a.weights == b.weights
    assert a.pixel_size == b.pixel_size and a.value_range == b.value_range
    np.testing.assert_array_equal(a.endmembers, b.endmembers)  # exact floats


def _slide(shape=(300, 360), seed=0) -> xr.DataArray:
    """Stripes at 30° left and 120° right, with noise, on a 0.5 µm grid (µm coords)."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0 : shape[0], 0 : shape[1]].astype(np.float32)

    def stripes(deg):
        a = np.deg2rad(deg)
        return np.sin(2 * np.pi / 9 * (-xx * np.sin(a) + yy * np.cos(a)))

    pixels = np.where(xx < shape[1] / 2, stripes(30), stripes(120)) + rng.normal(0, 0.3, shape)
    coords = {"y": PIXEL * np.arange(shape[0]), "x": PIXEL * np.arange(shape[1])}
    image = xr.DataArray(pixels.astype(np.float32), dims=("y", "x"), coords=coords)
    for dim in ("y", "x"):
        image[dim].attrs["units"] = "µm"
    return image


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Maps (with a NaN corner) and labels of a slide, as an OME-TIFF and as an OME-Zarr."""
    folder = tmp_path_factory.mktemp("ometiff")
    image = _slide()
    field = xfskde.local_fskde(image, order=8, window="gaussian", size=3, stride=STRIDE)
    maps = {"orientation": orientation(field), "coherence": coherence(field),
            "energy": energy(field)}  # fmt: skip
    maps["energy"][:5, :7] = np.nan  # a corner without a value
    labels = {"textures": xr.DataArray(
        (image.values > 0).astype(np.uint8) + 1, dims=("y", "x"), coords=image.coords)}  # fmt: skip
    path = write_ome_tiff(maps, folder / "maps.ome.tif", labels=labels, coarsest=20, tile=32)
    write_ome_zarr(maps, folder / "maps.ome.zarr", labels=labels, coarsest=20)
    return path, zarr.open_group(folder / "maps.ome.zarr", mode="r"), maps


def test_series_levels_and_values_are_the_ome_zarr_image(written):
    path, group, maps = written
    with tifffile.TiffFile(path) as tif:
        assert tif.is_ome and len(tif.series) == 2
        image, labels = tif.series
        assert image.axes == "CYX" and image.dtype == np.float32 and labels.dtype == np.uint8
        levels = [level.asarray() for level in image.levels]
        label_levels = [level.asarray() for level in labels.levels]
        page = image.levels[0].pages[0]
        assert page.is_tiled and page.tilewidth == 32 and page.compression == 8  # deflate
        resolution = page.tags["XResolution"].value
        unit = page.tags["ResolutionUnit"].value
    paths = [d["path"] for d in group.attrs["ome"]["multiscales"][0]["datasets"]]
    assert len(levels) == len(paths) >= 3  # 75 x 90 cells down to 20 or fewer
    for level, name in zip(levels, paths, strict=True):
        np.testing.assert_array_equal(level, group[name][:])  # NaN where NaN
    assert np.isnan(levels[0][2, :5, :7]).all() and np.isfinite(levels[0][2, 5:]).all()
    np.testing.assert_array_equal(levels[0][1], maps["coherence"].values.astype(np.float32))
    label_group = group["labels"]["textures"]
    assert len(label_levels) == len(paths)
    for level, name in zip(label_levels, paths, strict=True):
        np.testing.assert_array_equal(level, label_group[name][:])
    # pixels per centimetre for readers of the TIFF tags only: 2 µm cells, 5000 per cm
    assert unit == 3 and resolution[0] / resolution[1] == pytest.approx(1e4 / (STRIDE * PIXEL))


def test_the_ome_xml_is_valid_and_says_names_and_sizes(written):
    """ome-types, an independent reader, validates the OME-XML against the schema."""
    path, _, _ = written
    with tifffile.TiffFile(path) as tif:
        ome_types.validate_xml(tif.ome_metadata)
    ome = ome_types.from_tiff(path)
    image, labels = ome.images
    assert [c.name for c in image.pixels.channels] == ["orientation", "coherence", "energy"]
    assert image.pixels.size_c == 3 and image.pixels.type.value == "float"
    assert image.pixels.physical_size_x == image.pixels.physical_size_y == STRIDE * PIXEL
    assert image.pixels.physical_size_x_unit.value == "µm"
    assert labels.name == "labels/textures" and labels.pixels.type.value == "uint8"
    assert labels.pixels.physical_size_x == PIXEL  # the labels are on the input's pixels


def test_refusals_and_a_failed_write_leave_nothing(tmp_path, monkeypatch):
    maps = {"coherence": coherence(xfskde.local_fskde(_slide((64, 64)), order=4, stride=4))}
    path = write_ome_tiff(maps, tmp_path / "a.ome.tif")
    with pytest.raises(StoreExistsError, match="overwrite=True"):
        write_ome_tiff(maps, path)
    with pytest.raises(ParameterError, match="local file"):
        write_ome_tiff(maps, "s3://bucket/maps.ome.tif")
    for tile in (8, 20, True):
        with pytest.raises(ParameterError, match="tile"):
            write_ome_tiff(maps, tmp_path / "b.ome.tif", tile=tile)
    pytest.importorskip("rioxarray")  # a place an OME-TIFF cannot record: refused
    scene = maps["coherence"].rio.write_crs("EPSG:32632")
    with pytest.raises(ParameterError, match="write_geotiff"):
        write_ome_tiff({"coherence": scene}, tmp_path / "c.ome.tif")

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(tifffile.TiffWriter, "write", broken)
    with pytest.raises(OSError, match="disk full"):
        write_ome_tiff(maps, tmp_path / "d.ome.tif")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.ome.tif"]  # no temp, no partial


def test_the_commands_write_their_ome_zarr_image_as_one_file(tmp_path, capsys):
    """``xfskde maps|segment SLIDE OUT.ome.tif``: the levels of OUT.ome.zarr of the same
    command, in µm; --resume is refused (a file is written whole), as is an existing file."""
    pixels = np.round(255 * np.clip(_slide((256, 320)).values * 0.3 + 0.5, 0, 1)).astype(np.uint8)
    slide = tmp_path / "slide.ome.tif"
    tifffile.imwrite(slide, pixels, ome=True, metadata={"axes": "YX", "PhysicalSizeX": PIXEL,
                                                          "PhysicalSizeY": PIXEL})  # fmt: skip
    field = ["--stride", "8", "--size", "4", "--no-progress"]
    segment = ["--textures", "2", "--sample", "2000", "--no-progress"]
    for command, options in (("maps", field), ("segment", segment)):
        for out in ("out.ome.tif", "out.ome.zarr"):
            assert main([command, str(slide), str(tmp_path / f"{command}-{out}"), *options]) == 0
        assert "OME-TIFF pyramid" in capsys.readouterr().out
        group = zarr.open_group(tmp_path / f"{command}-out.ome.zarr", mode="r")
        with tifffile.TiffFile(tmp_path / f"{command}-out.ome.tif") as tif:
            series = [[level.asarray() for level in s.levels] for s in tif.series]
            # the textures in their colours (the OME-Zarr image's, napari's), every level
            pages = [level.pages[0] for s in tif.series for level in s.levels]
            maps = [page.colormap for page in pages if page.photometric == 3]  # palette
            assert len(maps) == (len(tif.series[1].levels) if command == "segment" else 0)
            for colormap in maps:
                np.testing.assert_array_equal(colormap[:, :3].T, label_rgba_8bit(2)[:, :3] * 257)
                assert colormap.shape == (3, 256) and not colormap[:, 3:].any()
        stored = [[g[d["path"]][:] for d in g.attrs["ome"]["multiscales"][0]["datasets"]]
                  for g in ([group] + ([group["labels"]["textures"]] if "labels" in group
                                       else []))]  # fmt: skip
        assert len(series) == len(stored) == (2 if command == "segment" else 1)
        for got, expected in zip(series, stored, strict=True):
            for a, b in zip(got, expected, strict=True):
                np.testing.assert_array_equal(a, b)
        size = ome_types.from_tiff(tmp_path / f"{command}-out.ome.tif").images[0].pixels
        assert size.physical_size_x == (8 * PIXEL if command == "maps" else PIXEL)
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp left
        out = str(tmp_path / f"{command}-out.ome.tif")
        ome = ome_types.from_tiff(out)  # the attrs as key-value pairs, the schema's way
        pairs = {m.k: m.value for a in ome.structured_annotations.map_annotations
                 for m in a.value.ms}  # fmt: skip
        if command == "maps":
            assert pairs["stride"] == "8" and pairs["kernel"] == "cos^2K"
        else:
            assert pairs["n_textures"] == "2" and "endmembers" in pairs
        capsys.readouterr()
        assert main(["info", out]) == 0  # what the file records, said by xfskde info
        said = [line.split(None, 1) for line in capsys.readouterr().out.splitlines() if line]
        recorded = [value for key, *value in said if key == "xfskde"]
        if command == "maps":
            assert any(value[0].startswith("xfskde maps: ") for value in recorded), recorded
        else:
            model = r"labels/textures: \d+ key-value pairs, the texture model of 2 textures"
            assert any(re.fullmatch(model, value[0]) for value in recorded), recorded
        if command == "segment":  # the model, read back as from the OME-Zarr image
            model = read_model(out)
            _same_model(model, read_model(tmp_path / "segment-out.ome.zarr"))
            again = tmp_path / "again.zarr"
            assert main(["segment", str(slide), str(again), "--model", out, "--no-progress"]) == 0
            np.testing.assert_array_equal(xfskde.io.open_blocks(again).values,
                                          series[1][0])  # fmt: skip
            # the labels read back by name, with the slide's pixel size and coordinates
            labels = xfskde.open_image(out, series="labels/textures")
            np.testing.assert_array_equal(labels.values, series[1][0])
            assert labels.attrs["source_series"] == 1 and labels.dims == ("y", "x")
            np.testing.assert_allclose(labels.x.values, xfskde.open_image(slide).x.values)
            capsys.readouterr()
        assert main([command, str(slide), out, *options, "--resume"]) == 2
        assert main([command, str(slide), out, *options]) == 2
        err = capsys.readouterr().err
        assert "written whole" in err and "--overwrite" in err


def test_an_existing_ome_zarr_image_is_copied(tmp_path, written):
    _, group, _ = written
    path = copy_ome_zarr_to_tiff(group.store.root, tmp_path / "copy.ome.tif", tile=64)
    with tifffile.TiffFile(path) as tif:
        assert [len(s.levels) for s in tif.series] == [len(group["labels"]["textures"].attrs[
            "ome"]["multiscales"][0]["datasets"])] * 2  # fmt: skip
        np.testing.assert_array_equal(tif.series[1].asarray(), group["labels/textures/0"][:])


def test_a_relative_path_is_written_where_it_names(tmp_path, monkeypatch):
    """The temporary OME-Zarr image goes beside the file by an absolute path (a cluster's
    workers resolve none of the client's working directory), and is gone afterwards."""
    from xfskde.io.ometiff import temporary_ome_zarr

    monkeypatch.chdir(tmp_path)
    with temporary_ome_zarr("out/rel.ome.tif") as store:
        assert store.is_absolute() and store.parent == tmp_path / "out"
    # what a killed run leaves (the store beside the file, a partial file) is cleared
    (tmp_path / "out" / ".rel.ome.tif.ome.zarr" / "0").mkdir(parents=True)
    (tmp_path / "out" / "rel.ome.tif.partial").write_bytes(b"half")
    maps = {"coherence": coherence(xfskde.local_fskde(_slide((64, 64)), order=4, stride=4))}
    write_ome_tiff(maps, "out/rel.ome.tif")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["rel.ome.tif"]


def test_open_image_places_the_cells_where_they_were(written):
    """OME-TIFF has no translation: the first cell's centre is kept as xfskde.origin pairs,
    and open_image reads them, so the maps come back on their own coordinates, and each level
    where the OME-Zarr's transforms put it."""
    path, group, maps = written
    level0 = xfskde.open_image(path)
    for dim in ("y", "x"):
        np.testing.assert_allclose(level0[dim].values, maps["coherence"][dim].values, rtol=0,
                                   atol=1e-9)  # fmt: skip
    assert level0.x.attrs["units"] == "µm"
    level1 = xfskde.open_image(path, level=1)
    transforms = group.attrs["ome"]["multiscales"][0]["datasets"][1]["coordinateTransformations"]
    scale, shift = transforms[0]["scale"][-1], transforms[1]["translation"][-1]
    np.testing.assert_allclose(level1.x.values, shift + scale * np.arange(level1.sizes["x"]))
    with tifffile.TiffFile(path) as tif:  # no origin where there is none: the labels
        pairs = dict(xfskde.io.images.ome_pairs(tif.ome_metadata, "xfskde.origin"))
    assert pairs["labels/textures"] == {}  # every image listed, in order
    assert pairs["xfskde maps"] == {"y": repr(0.75), "x": repr(0.75)}  # pixel 1.5 at stride 4
