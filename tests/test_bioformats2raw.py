"""An OME-Zarr store in NGFF's bioformats2raw layout — what ``bioformats2raw`` writes of a
microscope's file, the conversion the docs recommend — opens as a multi-series file does:
series 0 by default, ``series=`` / ``--series`` by index or name (the OME-XML's ``Image
Name``, else the series' multiscale ``name``), and ``xfskde info`` lists the series. It was
refused with "is a Zarr group with arrays []", which named none of the series groups that
open fine."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tifffile
import zarr
from ome_zarr.format import FormatV04, FormatV05
from ome_zarr.writer import write_image

import xfskde
from xfskde.cli import main
from xfskde.exceptions import ImageReadError, ParameterError
from xfskde.io.images import image_levels

RNG = np.random.default_rng(7)
FIRST = RNG.integers(0, 4000, (3, 256, 256), dtype=np.uint16)
SECOND = RNG.integers(0, 4000, (2, 128, 96), dtype=np.uint16)
OMERO = {
    "channels": [
        {"label": n, "color": "FFFFFF", "window": {"start": 0, "end": 4000, "min": 0, "max": 65535}}
        for n in ("DAPI", "CD3", "CD8")
    ]
}


def _metadata_xml() -> str:
    """The OME-XML bioformats2raw writes beside the series: one Image per series, in order."""
    ome = tifffile.OmeXml()
    ome.addimage("uint16", FIRST.shape, (3, 1, 1, 256, 256, 1), axes="CYX", Name="overview",
                 PhysicalSizeX=0.5, PhysicalSizeY=0.5)  # fmt: skip
    ome.addimage("uint16", SECOND.shape, (2, 1, 1, 128, 96, 1), axes="CYX", Name="scene 2")
    return ome.tostring()


def _store(path, *, version=4, xml=True, listed=True):
    """A bioformats2raw store of two series: ``0`` (3 channels, 0.5 µm, 2 levels) and ``1``
    (2 channels, 2 µm, 1 level), written by ome-zarr-py, with the ``OME`` group's ``series``
    list and ``METADATA.ome.xml`` (or without them)."""
    fmt, zarr_format = (FormatV04(), 2) if version == 4 else (FormatV05(), 3)
    root = zarr.open_group(path, mode="w", zarr_format=zarr_format)
    layout = {"bioformats2raw.layout": 3}
    root.attrs.update(layout if version == 4 else {"ome": {"version": "0.5", **layout}})
    units = {"y": "micrometer", "x": "micrometer"}
    write_image(FIRST, root.create_group("0"), axes="cyx", fmt=fmt, scale_factors=[2],
                scale={"c": 1, "y": 0.5, "x": 0.5}, axes_units=units, omero=OMERO,
                name="first", storage_options={"chunks": (1, 128, 128)})  # fmt: skip
    write_image(SECOND, root.create_group("1"), axes="cyx", fmt=fmt, scale_factors=[],
                scale={"c": 1, "y": 2.0, "x": 2.0}, axes_units=units,
                name="second")  # fmt: skip
    meta = root.create_group("OME")
    if listed:
        series = {"series": ["0", "1"]}
        meta.attrs.update(series if version == 4 else {"ome": {"version": "0.5", **series}})
    if xml:
        (path / "OME" / "METADATA.ome.xml").write_text(_metadata_xml())
    return path


@pytest.mark.parametrize("version", [4, 5])
def test_the_first_series_by_default_another_by_index_or_name(tmp_path, version):
    path = _store(tmp_path / "slide.ome.zarr", version=version)
    first = xfskde.open_image(path)
    assert first.dims == ("c", "y", "x") and first["c"].values.tolist() == ["DAPI", "CD3", "CD8"]
    np.testing.assert_array_equal(first.values, FIRST)
    assert first.attrs["source_pixel_size_um"] == [0.5, 0.5]
    assert "source_series" not in first.attrs
    group = zarr.open_group(path / "0", mode="r")
    datasets = (group.attrs.get("ome") or dict(group.attrs))["multiscales"][0]["datasets"]
    stored = group[datasets[1]["path"]][...]  # ome-zarr-py's level 1
    np.testing.assert_array_equal(xfskde.open_image(path, level=1).values, stored)
    for series in (1, "scene 2", -1):
        second = xfskde.open_image(path, series=series)
        np.testing.assert_array_equal(second.values, SECOND)
        assert second.attrs["source_series"] == 1
        assert second.attrs["source_pixel_size_um"] == [2.0, 2.0]
    assert [level.shape for level in image_levels(path, series="scene 2")] == [SECOND.shape]
    assert [level.shape for level in image_levels(path)] == [FIRST.shape, (3, 128, 128)]
    with pytest.raises(ParameterError) as refused:
        xfskde.open_image(path, series=2)
    assert str(refused.value) == f"{path} has no series 2; its series are 0 'overview', 1 'scene 2'"


def test_the_series_are_read_as_ome_zarr_py_reads_them(tmp_path):
    from ome_zarr.io import parse_url
    from ome_zarr.reader import Reader

    path = _store(tmp_path / "slide.ome.zarr")
    node = next(iter(Reader(parse_url(str(path / "1")))()))
    np.testing.assert_array_equal(xfskde.open_image(path, series=1).values, node.data[0])


def test_without_ome_xml_or_series_list_the_groups_and_their_names(tmp_path):
    """No OME group's series list: the groups 0, 1, ...; no METADATA.ome.xml: each series
    named by its multiscale's name."""
    path = _store(tmp_path / "bare.ome.zarr", xml=False, listed=False)
    np.testing.assert_array_equal(xfskde.open_image(path, series="second").values, SECOND)
    with pytest.raises(ParameterError, match="its series are 0 'first', 1 'second'"):
        xfskde.open_image(path, series="overview")


def test_info_lists_the_series_and_the_commands_read_the_one_picked(tmp_path, capsys):
    path = _store(tmp_path / "slide.ome.zarr")
    assert main(["info", str(path)]) == 0
    said = capsys.readouterr().out
    assert "format    OME-Zarr 0.4, bioformats2raw layout (Zarr v2)" in said, said
    assert ("series    2: 0 'overview', 1 'scene 2' (the first is read; --series N|NAME reads "
            "another)") in said  # fmt: skip
    assert "channels  DAPI, CD3, CD8" in said
    out = tmp_path / "maps.zarr"
    argv = ["maps", str(path), str(out), "--series", "scene 2", "--channels", "1",
            "--stride", "4", "--no-progress"]  # fmt: skip
    assert main(argv) == 0
    recorded = zarr.open_group(out, mode="r").attrs["xfskde"]["attrs"]
    assert recorded["source_series"] == 1 and json.loads(recorded["source_channels"]) == [1]
    assert recorded["source_pixel_size_um"] == [2.0, 2.0]
    assert xfskde.open_image(out).shape == (3, 32, 24)


def test_a_group_of_images_names_them(tmp_path):
    """A plain group of OME-Zarr images (no bioformats2raw attr) says which to open, where it
    said 'arrays []'."""
    root = zarr.open_group(tmp_path / "collection.zarr", mode="w", zarr_format=2)
    for name in ("left", "right"):
        write_image(SECOND, root.create_group(name), axes="cyx", fmt=FormatV04(),
                    scale_factors=[])  # fmt: skip
    path = tmp_path / "collection.zarr"
    with pytest.raises(ImageReadError) as refused:
        xfskde.open_image(path)
    assert str(refused.value) == (
        f"{path} is a Zarr group of the OME-Zarr images ['left', 'right'], not one: open one "
        f"of them (e.g. '{path}/left')"
    )
    np.testing.assert_array_equal(xfskde.open_image(path / "right").values, SECOND)


def test_a_plate_names_a_fields_image(tmp_path):
    """An HCS plate (bioformats2raw writes one of a screen) is no one image: the refusal names
    its first field's image, which opens."""
    from ome_zarr.writer import write_plate_metadata, write_well_metadata

    path = tmp_path / "plate.ome.zarr"
    root = zarr.open_group(path, mode="w", zarr_format=2)
    root.attrs["bioformats2raw.layout"] = 3
    write_plate_metadata(root, ["B"], ["3"], ["B/3"], fmt=FormatV04())
    well = root.create_group("B").create_group("3")
    write_well_metadata(well, ["0"], fmt=FormatV04())
    write_image(SECOND, well.create_group("0"), axes="cyx", fmt=FormatV04(), scale_factors=[])
    with pytest.raises(ImageReadError) as refused:
        xfskde.open_image(path)
    assert str(refused.value) == (
        f"{path} is an OME-Zarr plate (wells of fields, an image each), not one image: open "
        f"one field's image (e.g. '{path}/B/3/0')"
    )
    np.testing.assert_array_equal(xfskde.open_image(path / "B" / "3" / "0").values, SECOND)
