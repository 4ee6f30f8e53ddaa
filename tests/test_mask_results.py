"""Masks that are results and masks without foreground: a segmentation given as a mask is its
labels, NaN is never foreground, a mask with nothing to compute is refused before anything is
written, and a fluorescence image cleared to 0 outside its tissue is masked by its tissue."""

from __future__ import annotations

import numpy as np
import pytest
import tifffile
import xarray as xr

import xfskde
from xfskde.cli import main
from xfskde.exceptions import ParameterError
from xfskde.io import open_image
from xfskde.masks import resolve_mask, tissue_mask


def _ellipse(shape, centre, radii) -> np.ndarray:
    yy, xx = np.mgrid[0 : shape[0], 0 : shape[1]]
    return (yy - centre[0]) ** 2 / radii[0] ** 2 + (xx - centre[1]) ** 2 / radii[1] ** 2 < 1


@pytest.fixture(scope="module")
def slide(tmp_path_factory):
    """An H&E-like OME-TIFF of 1 µm pixels (256², tiles of 64²): a section of two stains, pink
    stripes on the left and purple diagonals on the right, on white glass; and its section."""
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:256, 0:256]
    section = _ellipse((256, 256), (128, 128), (90, 75))
    pink = np.where(np.sin(xx / 1.5)[..., None] > 0, [230, 150, 190], [190, 110, 150])
    purple = np.where(np.sin((xx + yy) / 2.5)[..., None] > 0, [120, 60, 150], [160, 100, 190])
    rgb = np.where(section[..., None], np.where((xx < 128)[..., None], pink, purple), 240)
    rgb = np.clip(rgb + rng.integers(-8, 8, rgb.shape), 0, 255).astype(np.uint8)
    path = tmp_path_factory.mktemp("slide") / "slide.ome.tif"
    metadata = {"axes": "YXS", "PhysicalSizeX": 1.0, "PhysicalSizeY": 1.0}
    tifffile.imwrite(path, rgb, photometric="rgb", metadata=metadata, tile=(64, 64))
    return path, section


@pytest.fixture(scope="module")
def results(slide, tmp_path_factory):
    """``xfskde segment`` of the slide, masked, as the OME-TIFF and the OME-Zarr it writes:
    abundances NaN outside the tissue, and ``labels/textures``."""
    folder = tmp_path_factory.mktemp("results")
    paths = {}
    for suffix in ("ome.tif", "ome.zarr"):
        paths[suffix] = folder / f"seg.{suffix}"
        args = ["segment", str(slide[0]), str(paths[suffix]), "--textures", "2", "--mask",
                "auto", "--size", "6", "--no-progress"]  # fmt: skip
        assert main(args) == 0
    return paths


def test_a_segmentation_given_as_a_mask_is_its_labels(slide, results):
    """Its OME-TIFF or OME-Zarr (2 abundance channels, NaN outside the tissue) as a mask is
    its label image: the labelled pixels (31 % of the slide), and with classes those of a
    texture; not every pixel (NaN taken for foreground: the glass too), nor a refusal of
    classes ("give one band of labels")."""
    image = open_image(slide[0])
    labels = np.asarray(open_image(results["ome.zarr"] / "labels" / "textures"))
    as_tiff = np.asarray(open_image(results["ome.tif"], series="labels/textures"))
    np.testing.assert_array_equal(as_tiff, labels)
    assert set(np.unique(labels)) == {0, 1, 2}
    assert 0.28 < (labels > 0).mean() < 0.34  # the section: 0.325 of the slide, and its edge
    for path in results.values():
        mask = resolve_mask(str(path), image)
        assert mask.shape == labels.shape
        np.testing.assert_array_equal(mask.values, labels > 0)
        for texture in (1, 2):
            chosen = resolve_mask(str(path), image, classes=[f"texture {texture}"])
            np.testing.assert_array_equal(chosen.values, labels == texture)
            assert 0.12 < chosen.values.mean() < 0.2  # each stain: half the section


def test_maps_masked_by_a_segmentation_have_values_on_its_tissue_only(slide, results, tmp_path):
    """``xfskde maps --mask seg.ome.tif`` computes the section (the cells on its labels), not
    the glass: the maps' values cover the labels' share of the slide, not all of it."""
    labels = np.asarray(open_image(results["ome.tif"], series="labels/textures")) > 0
    out = tmp_path / "maps.ome.zarr"
    assert main(["maps", str(slide[0]), str(out), "--stride", "4", "--size", "3",
                 "--mask", str(results["ome.tif"]), "--no-progress"]) == 0  # fmt: skip
    coherence = np.asarray(open_image(out))[1]  # (c, y, x)
    valued = np.isfinite(coherence)
    assert valued.shape == (64, 64)
    # each 4 x 4 cell is sampled at its pixel (4 i + 1, 4 j + 1): the label there
    np.testing.assert_array_equal(valued, labels[1::4, 1::4])
    assert 0.28 < valued.mean() < 0.34


def test_nan_is_never_a_mask_s_foreground(slide, tmp_path):
    """A float mask whose background is NaN (probabilities, abundances) is its finite non-zero
    pixels, whatever its channels: one or two channels, the same 0.32 of the slide (two were
    read as all foreground)."""
    section = _ellipse((128, 128), (64, 64), (44, 38))
    plane = np.where(section, np.float32(0.8), np.float32(np.nan))
    one, two = tmp_path / "one.tif", tmp_path / "two.tif"
    tifffile.imwrite(one, plane)
    tifffile.imwrite(two, np.stack([plane, 1 - plane]), photometric="minisblack",
                     metadata={"axes": "CYX"})  # fmt: skip
    image = open_image(slide[0])
    for path in (one, two):
        mask = resolve_mask(str(path), image)
        np.testing.assert_array_equal(mask.values, section)
        assert round(float(mask.values.mean()), 3) == 0.32
    nan_or_zero = np.stack([np.where(section, 0.0, np.nan), np.where(section, 0.3, np.nan)], -1)
    array = xr.DataArray(nan_or_zero, dims=("y", "x", "c"))
    np.testing.assert_array_equal(resolve_mask(array, image).values, section)


def test_a_mask_without_foreground_is_refused_before_anything_is_computed(slide, tmp_path):
    """A mask with no foreground — an empty mask file, an array, foreground only between the
    samples of a coarse stride — is refused in one line by local_fskde (NumPy, DataArray, the
    accessor), as by segment, not computed into a field of NaN."""
    empty = tmp_path / "empty.tif"
    tifffile.imwrite(empty, np.zeros((64, 64), np.uint8))
    image = open_image(slide[0])
    with pytest.raises(
        ParameterError,
        match=r"the mask .*empty\.tif has no foreground over "
        r"this image: there is nothing to compute",
    ):
        xfskde.local_fskde(image, order=4, size=3, stride=4, mask=str(empty))
    with pytest.raises(ParameterError, match="no foreground"):
        xfskde.local_fskde(np.asarray(image)[..., 0], order=4, size=3, mask=np.zeros((8, 8)))
    with pytest.raises(ParameterError, match="no foreground"):
        image.fskde.coefficients(order=4, size=3, stride=4, mask=str(empty))
    dot = np.zeros((256, 256), bool)
    dot[1, 1] = True  # between the samples of stride 8 (pixels 3, 11, ...), one of stride 4
    with pytest.raises(
        ParameterError,
        match=r"the mask has no foreground over this image at "
        r"the samples of stride 8 \(it has some only",
    ):
        xfskde.local_fskde(image, order=4, size=3, stride=8, mask=dot)
    field = xfskde.local_fskde(image, order=4, size=3, stride=4, mask=dot)  # sample (0, 0)
    assert np.isfinite(np.asarray(field)).all(axis=-1).sum() == 1


@pytest.mark.parametrize("command", ["maps", "coefficients"])
def test_the_commands_refuse_a_mask_without_foreground_and_write_nothing(
    slide, tmp_path, capsys, command
):
    """``xfskde maps`` and ``coefficients`` with a mask without foreground: one line naming the
    mask, exit 2, no store (a complete store of NaN was written, exit 0, "1 of 1 blocks
    computed")."""
    empty = tmp_path / "empty.tif"
    tifffile.imwrite(empty, np.zeros((64, 64), np.uint8))
    out = tmp_path / f"{command}.zarr"
    code = main([command, str(slide[0]), str(out), "--stride", "8", "--mask", str(empty),
                 "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.count("\n") == 1 and f"the mask {empty} has no foreground" in err


def _cleared_section(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """A 16-bit fluorescence image (1024²) whose outside was cleared to 0, and its tissue: a
    homogeneous stain, uniform or normal, or nuclei bright on a dim cytoplasm."""
    rng = np.random.default_rng(0)
    tissue = _ellipse((1024, 1024), (512, 512), (350, 300))
    yy, xx = np.mgrid[0:1024, 0:1024]
    signal = {
        "uniform": rng.integers(0, 4000, tissue.shape),
        "normal": rng.normal(2000, 600, tissue.shape),
        "nuclei": np.where(np.sin(xx / 4) * np.sin(yy / 4) > 0.5, 3000, 300)
        + rng.normal(0, 30, tissue.shape),
    }[kind]
    return np.clip(signal * tissue, 0, 65535).astype(np.uint16), tissue


@pytest.mark.parametrize("kind", ["uniform", "normal", "nuclei"])
def test_the_fluorescence_mask_of_an_image_cleared_outside_is_its_tissue(kind):
    """An image whose outside is exactly 0 (QuPath's or Fiji's "clear outside"): the zeros
    are its background, its tissue all that is not 0 (the zeros were taken for a scanner's
    padding and the background's level read off the tissue: none of a homogeneous stain
    found)."""
    image, tissue = _cleared_section(kind)
    mask = tissue_mask(image, method="fluorescence", margin=0)
    found = mask.values
    assert found[tissue].mean() > 0.999 and not found[~tissue].any()
    assert mask.attrs["background_level"] == [0.0] and mask.attrs["threshold"] == [0.0]


def test_a_fluorescence_section_cleared_outside_and_a_padded_one(tmp_path):
    """The section of section_in_fluorescence cleared to 0 outside (as a file): all of it,
    none of the outside; the same image padded with zeros on all four sides, as a stitched
    slide is (straight edges: padding, not a cleared outside), keeps its camera background's
    level, and its background is left out."""
    from xfskde.datasets import section_in_fluorescence

    image, section = section_in_fluorescence()
    cleared = np.where(section[..., None], image, 0).astype(np.uint16)
    path = tmp_path / "cleared.ome.tif"
    metadata = {"axes": "CYX", "PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5}
    tifffile.imwrite(path, np.moveaxis(cleared, -1, 0), photometric="minisblack",
                     metadata=metadata)  # fmt: skip
    found = tissue_mask(path, method="fluorescence", margin=0).values
    assert found[section].mean() > 0.999 and not found[~section].any()
    framed = image.copy()
    framed[:60], framed[-60:], framed[:, :80], framed[:, -80:] = 0, 0, 0, 0
    inner = np.zeros(section.shape, bool)
    inner[60:-60, 80:-80] = True
    mask = tissue_mask(framed, method="fluorescence", margin=0)
    assert mask.values[section & inner].mean() > 0.99
    assert mask.values[~section & inner].mean() < 0.05 and not mask.values[~inner].any()
    assert all(100 < level < 110 for level in mask.attrs["background_level"])


def test_coefficients_say_which_blocks_the_mask_left_uncomputed(slide, tmp_path, capsys):
    """``xfskde coefficients`` of a mask that leaves blocks out counts them as ``xfskde info``
    does — filled, not computed — not as computed (16 of 16 said "computed", info 12 and 4
    skipped)."""
    half = np.zeros((256, 256), np.uint8)
    half[:, :100] = 1  # the left 100 columns: blocks of 64 px in columns 0 and 1 only
    path = tmp_path / "half.tif"
    tifffile.imwrite(path, half)
    out = tmp_path / "half.zarr"
    assert main(["coefficients", str(slide[0]), str(out), "--stride", "4", "--size", "3",
                 "--chunks", "64", "--mask", str(path), "--no-progress"]) == 0  # fmt: skip
    said = capsys.readouterr().out
    status = xfskde.io.store_status(out)
    assert status["blocks_total"] == 16 and status["blocks_skipped"] == 8
    assert ("16 of 16 blocks written in " in said
            and "(the store's 8 outside the mask filled, not computed)" in said), said  # fmt: skip
