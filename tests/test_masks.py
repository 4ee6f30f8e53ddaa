"""Foreground masks: tissue on glass, signal on nothing, and the blocks the engine skips."""

from __future__ import annotations

import dask.array as da
import numpy as np
import pytest
import tifffile
import xarray as xr

from xfskde.datasets import random_textures, texture_mosaic
from xfskde.exceptions import DimensionError, MaskWarning, ParameterError
from xfskde.io import open_image
from xfskde.lazy import map_haloed
from xfskde.masks import background_blocks, mask_samples, resolve_mask, tissue_mask


def _slide(shape=(1024, 1536), seed=0) -> tuple[np.ndarray, np.ndarray]:
    """An H&E-like RGB slide: pink-purple blobs of tissue on near-white glass, a black border
    of scanner padding; and its true tissue."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0 : shape[0], 0 : shape[1]]
    tissue = ((yy - 400) ** 2 / 300**2 + (xx - 500) ** 2 / 350**2 < 1) | (
        (yy - 700) ** 2 / 200**2 + (xx - 1200) ** 2 / 250**2 < 1
    )
    glass = np.array([242, 240, 244], float) + rng.normal(0, 3, (*shape, 3))
    stain = np.array([190, 110, 170], float) + rng.normal(0, 20, (*shape, 3))
    rgb = np.where(tissue[..., None], stain, glass)
    rgb[:, :40] = 0  # the scanner's black padding
    return np.clip(rgb, 0, 255).astype(np.uint8), tissue


def test_brightfield_mask_finds_the_tissue(tmp_path):
    rgb, tissue = _slide()
    path = tmp_path / "slide.ome.tif"
    with tifffile.TiffWriter(path) as tif:
        tif.write(rgb, tile=(256, 256), subifds=2, photometric="rgb",
                  metadata={"PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5})  # fmt: skip
        tif.write(rgb[::2, ::2], tile=(256, 256), subfiletype=1, photometric="rgb")
        tif.write(rgb[::4, ::4], tile=(256, 256), subfiletype=1, photometric="rgb")
    mask = tissue_mask(path, max_side=512, margin=0)
    assert mask.attrs["method"] == "brightfield" and mask.attrs["source_level"] == 2
    assert mask.shape == (256, 384) and mask.attrs["mask_of"] == [1024, 1536]
    truth = tissue[::4, ::4]
    agreement = (mask.values == truth).mean()
    assert agreement > 0.99, agreement
    assert not mask.values[:, :10].any()  # the black padding is not tissue
    assert mask.x.attrs["units"] == "µm"  # the level's coordinates
    # an image already opened is masked from its file's low level, not read whole
    from xfskde import open_image

    again = tissue_mask(open_image(path), max_side=512, margin=0)
    np.testing.assert_array_equal(again.values, mask.values)


def _section(glass_share: float, seed: int = 1, tint=(238, 236, 240), shading: float = 0.0):
    """An H&E-like section (pink stroma, saturation 0.26, with purple nuclei, 0.6) in a centred
    disk of 1 - ``glass_share`` of a 512² slide, on noisy glass of ``tint`` darkened by
    ``shading`` toward the corners; and its true tissue."""
    from skimage.draw import ellipse

    rng, n = np.random.default_rng(seed), 512
    nuclei = np.zeros((n, n), bool)
    for _ in range(400):
        cy, cx = rng.integers(0, n, 2)
        nuclei[ellipse(cy, cx, rng.integers(3, 7), rng.integers(3, 7), shape=(n, n))] = True
    stroma = np.array([230, 170, 200]) + rng.normal(0, 8, (n, n, 3))
    nucleus = np.array([110, 60, 150]) + rng.normal(0, 12, (n, n, 3))
    section = np.where(nuclei[..., None], nucleus, stroma)
    radius = np.sqrt((1 - glass_share) * n * n / np.pi)
    yy, xx = np.mgrid[0:n, 0:n]
    tissue = (yy - n / 2) ** 2 + (xx - n / 2) ** 2 < radius**2
    corners = ((yy - n / 2) ** 2 + (xx - n / 2) ** 2) / (n / 2) ** 2
    glass = np.array(tint) * (1 - shading * corners)[..., None] + rng.normal(0, 3, (n, n, 3))
    slide = np.where(tissue[..., None], section, glass)
    return np.clip(slide, 0, 255).astype(np.uint8), tissue


@pytest.mark.parametrize("glass_share", [0.1, 0.3, 0.9])
def test_faint_tissue_is_tissue_whatever_the_glass_share(glass_share):
    """The brightfield mask is what is not glass: with little glass, Otsu's threshold of the
    saturation fell between the stroma and the nuclei and left out 91 % of the tissue."""
    slide, tissue = _section(glass_share)
    mask = tissue_mask(slide, margin=0).values
    assert mask[tissue].mean() > 0.99 and mask[~tissue].mean() < 1e-3


@pytest.mark.parametrize(("tint", "shading"), [((230, 236, 244), 0.08), ((242, 236, 226), 0.12)])
def test_tinted_or_shaded_glass_is_glass(tint, shading):
    slide, tissue = _section(0.6, seed=3, tint=tint, shading=shading)
    mask = tissue_mask(slide, margin=0).values
    assert mask[tissue].mean() > 0.99 and mask[~tissue].mean() < 1e-3


def test_the_stroma_of_a_real_section_is_tissue():
    """scikit-image's immunohistochemistry section (no glass): Otsu's threshold of the
    saturation kept the brown epithelium only (46 % of the section) and left out the blue
    stroma and its nuclei; now 73 % is kept, all of the brown, and the blue nuclei."""
    from skimage import data

    section = data.immunohistochemistry()
    mask = tissue_mask(section, margin=0).values
    r, b = section[..., 0].astype(int), section[..., 2].astype(int)
    brown, nuclei = r > b + 40, (b > r + 25) & (b < 170)
    assert mask.mean() > 0.7
    assert mask[brown].mean() > 0.99 and mask[nuclei].mean() > 0.9


def test_pale_stroma_is_tissue_by_its_texture_and_glass_seams_are_not():
    """scikit-image's IHC section in an ellipse on glass whose scan tiles (128 px) differ by up
    to 8 grey levels, as a scanner's stitching leaves them: colour alone left 28 % of the
    section out (its stroma is nearly colourless between the blue nuclei: 27 % of its pixels
    are less saturated than 0.05); the stroma is rough where glass is smooth. Over 5 × 5 pixels
    the gaps between its nuclei were smooth too and 9 % was left out; with the wider windows
    of a mask at the image's resolution 4 %, its white lumens. Neither the seams nor a ring
    around the section are taken."""
    from skimage import data
    from skimage.transform import resize

    rng = np.random.default_rng(0)
    height, width = 640, 896
    steps = rng.integers(-8, 9, (height // 128 + 1, width // 128 + 1, 1))
    seams = np.kron(steps, np.ones((128, 128, 1)))[:height, :width]
    glass = np.array([236, 234, 238]) + seams + rng.normal(0, 3, (height, width, 3))
    slide = glass.clip(0, 255).astype(np.uint8)
    yy, xx = np.mgrid[0:512, 0:512]
    section = ((yy - 256) / 250) ** 2 + ((xx - 256) / 330) ** 2 < 1
    slide[64:576, 192:704][section] = data.immunohistochemistry()[section]
    truth = np.zeros((height, width), bool)
    truth[64:576, 192:704] = section
    for max_side, left_out, taken in ((2048, 0.06, 0.0005), (224, 0.06, 0.005)):
        mask = tissue_mask(slide, margin=0, max_side=max_side).values
        up = resize(mask.astype(float), truth.shape, order=0) > 0.5
        assert (truth & ~up).sum() / truth.sum() < left_out  # 0.038, 0.042 (5 px: 0.091, 0.042)
        assert (~truth & up).sum() / (~truth).sum() < taken  # 0.0001, 0.0042 (the cells' edge)


def test_a_section_running_off_the_image_keeps_its_stroma():
    """A region read from a slide, the section running off its edges and glass in its corners
    only (14 %): the glass's roughness over the wider windows was read on its pixels near the
    section too, whose windows hold tissue, and the stroma's gaps stayed holes (11.7 % of the
    section left out; 15.3 % over 5 × 5 pixels alone). It is read on the glass whose whole
    window is glass: 4.0 %, and none of the glass taken."""
    from skimage import data
    from skimage.draw import disk

    n = 512
    section = np.zeros((n, n), bool)
    section[disk((n / 2, n / 2), 273.9, shape=section.shape)] = True
    glass = np.array([238, 236, 240]) + np.random.default_rng(1).normal(0, 3, (n, n, 3))
    glass = glass.clip(0, 255).astype(np.uint8)
    slide = np.where(section[..., None], data.immunohistochemistry(), glass)
    mask = tissue_mask(slide, margin=0).values
    assert (section & ~mask).sum() / section.sum() < 0.06  # 0.040 (0.117, 0.153 before)
    assert (~section & mask).sum() < 1e-4 * (~section).sum()


def test_an_rgba_slide_with_transparent_pixels_is_masked_as_a_slide(tmp_path):
    """An 8-bit RGBA PNG of a section on glass, transparent down its left edge: open_image
    reads it as float RGB with NaN there, which "auto" took for something other than a slide
    once it looked at the dtype (the glass then foreground: 83 % of it), and the NaN entered
    the roughness filters' running sums along every row (no pixel of those rows was rough:
    28 % of the section left out). Read in the dtype it was stored in, and the roughness of
    the pixels present: as the RGB slide is masked."""
    from PIL import Image

    from xfskde.datasets import section_on_glass

    slide, on = section_on_glass()
    alpha = np.full((576, 768), 255, np.uint8)
    alpha[:, :64] = 0
    Image.fromarray(np.dstack([slide, alpha])).save(tmp_path / "slide.png")
    rgb = tissue_mask(slide, margin=0)
    for source in (tmp_path / "slide.png", open_image(tmp_path / "slide.png")):
        mask = tissue_mask(source, margin=0)
        assert mask.attrs["method"] == "brightfield"
        assert mask.values[~on].mean() < 1e-4  # 1 pixel of the section's rim
        assert mask.values[on].mean() > 0.93  # 0.961 (0.721 through the NaN)
        assert (mask.values != rgb.values).mean() < 1e-3  # 45 pixels, next to the strip


def test_grey_tissue_on_glass_is_what_is_not_bright_and_smooth():
    """A grey slide has no saturation: Otsu's threshold of the darkness, which it used, split
    the tissue's own grey levels and left out 10 % of a mosaic of real textures in an ellipse
    on glass, 35 % of the IHC section in grey. The glass is modelled as in colour, bright and
    smooth: tissue is darker or rougher (0.01 % and 0.8 % left out: the section's white
    lumens; 0.1 % and 15 % with the roughness over 5 × 5 pixels alone, where the stroma's gaps
    between its nuclei are smooth); an RGB image without colour goes the same way."""
    from skimage import data
    from skimage.transform import resize

    n = 512
    yy, xx = np.mgrid[:n, :n]
    tissue = ((yy - n / 2) / (0.4 * n)) ** 2 + ((xx - n / 2) / (0.35 * n)) ** 2 < 1
    rng = np.random.default_rng(0)
    glass = (236 + rng.normal(0, 3, (n, n))).clip(0, 255)
    for section, left_out in (
        (texture_mosaic((n, n), n_regions=3, seed=1003)[0], 0.005),  # Otsu: 0.102
        (resize(data.immunohistochemistry().mean(axis=-1) / 255, (n, n)), 0.03),  # 0.348
    ):
        grey = np.where(tissue, np.asarray(section) * 255, glass).astype(np.uint8)
        for image in (grey, np.repeat(grey[..., None], 3, axis=-1)):
            mask = tissue_mask(image, method="brightfield", margin=0)
            assert mask.attrs["measure"] == "darkness"
            assert (tissue & ~mask.values).sum() / tissue.sum() < left_out
            assert (~tissue & mask.values).sum() / (~tissue).sum() < 1e-3


def test_an_image_without_glass_is_tissue_throughout_however_pale():
    """Glass is smooth. An image of tissue without glass — scikit-image's IHC image, a field of
    view — has a bright, colourless mode all the same, its pale stroma, which the mask took
    for glass: 27 % of the IHC image was left out, 33 % in grey, and of grey random textures
    60–99 %. Their mode varies over 5 × 5 pixels (standard deviation 0.026 of the brightest
    pixel, where glass scanned with noise varies by 0.007): tissue throughout."""
    from skimage import data

    ihc = data.immunohistochemistry()
    grey = (np.asarray(random_textures((256, 256), seed=3)[0]).mean(axis=-1) * 255).astype(np.uint8)
    for image, measure in ((ihc, "saturation"), (ihc.mean(axis=-1).astype(np.uint8), "darkness"),
                           (grey, "darkness")):  # fmt: skip
        mask = tissue_mask(image, method="brightfield", margin=0)
        assert mask.attrs["measure"] == measure
        assert mask.values.mean() > 0.99  # 0.732, 0.670, 0.013 before
        assert np.isnan(mask.attrs["threshold"])  # no glass


def test_a_grey_micrograph_stored_as_rgb_is_masked_by_its_darkness():
    """An RGB image without colour (a grey brightfield micrograph saved as RGB, R = G = B, with
    a little noise) has no saturation to threshold: the brightfield mask found no tissue at
    all ("the mask has no foreground" from segment(..., mask="auto")). It now thresholds the
    darkness, as for a grey image, and says so; a stained slide keeps the saturation."""
    import xfskde
    from xfskde.datasets import dead_leaves

    rgb, tissue = _slide()
    grey = rgb.mean(axis=-1)  # the same slide, its stain turned grey: darker than the glass
    noise = np.random.default_rng(1).normal(0, 1, (*grey.shape, 3))
    colourless = np.clip(grey[..., None] + noise, 0, 255).astype(np.uint8)
    for image, measure in ((rgb, "saturation"), (colourless, "darkness")):
        mask = tissue_mask(image, max_side=512, margin=0)
        assert mask.attrs["method"] == "brightfield" and mask.attrs["measure"] == measure
        step = -(-tissue.shape[1] // mask.shape[1])  # the block-averaging factor
        truth = tissue[step // 2 :: step, step // 2 :: step]
        found = mask.values[: truth.shape[0], : truth.shape[1]]
        assert (found == truth[: found.shape[0], : found.shape[1]]).mean() > 0.98
        assert not mask.values[:, :10].any()  # the black padding is not tissue
    # and segment(..., mask="auto") of a grey texture stored as RGB labels it, not the glass
    leaves, _ = dead_leaves((256, 256), seed=3)
    yy, xx = np.mgrid[:256, :256]
    inside = (yy - 128) ** 2 + (xx - 128) ** 2 < 100**2
    grey = np.where(inside, leaves.mean(-1) * 0.7, 0.95)
    labels = np.asarray(xfskde.segment(np.repeat(np.round(grey * 255).astype(np.uint8)[..., None],
                                                 3, -1), 3, mask="auto"))  # fmt: skip
    assert (labels[inside] > 0).mean() > 0.95 and (labels[~inside] == 0).mean() > 0.9


def test_the_mask_of_a_plane_or_a_later_image_is_read_from_its_own_low_level(tmp_path):
    """A plane of a pyramidal z-stack, or the second image of a multi-scene OME-TIFF, gets its
    mask from the low-resolution level of that plane / image — not from the first image's
    pyramid, and not by reading the full-resolution plane whole."""
    from xfskde import open_image

    (first, tissue_a), (second, tissue_b) = _slide(seed=0), _slide(seed=1)
    second, tissue_b = second[::-1], tissue_b[::-1]  # the other plane's tissue elsewhere
    stack, scenes = tmp_path / "stack.ome.tif", tmp_path / "scenes.ome.tif"
    meta = {"PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5}
    with tifffile.TiffWriter(stack) as tif:
        planes = np.stack([first, second])
        tif.write(planes, tile=(256, 256), subifds=2, photometric="rgb",
                  metadata={"axes": "ZYXS", **meta})  # fmt: skip
        for step in (2, 4):
            tif.write(planes[:, ::step, ::step], tile=(256, 256), subfiletype=1,
                      photometric="rgb")  # fmt: skip
    with tifffile.TiffWriter(scenes, ome=True) as tif:
        tif.write(first[:64, :64], photometric="rgb", metadata={"Name": "label", **meta})
        tif.write(second, tile=(256, 256), subifds=2, photometric="rgb",
                  metadata={"Name": "slide", **meta})  # fmt: skip
        for step in (2, 4):
            tif.write(second[::step, ::step], tile=(256, 256), subfiletype=1, photometric="rgb")
    for image in (open_image(stack, plane={"z": 1}), open_image(scenes, series="slide")):
        mask = tissue_mask(image, max_side=512, margin=0)
        assert mask.attrs["source_level"] == 2 and "downsampled_by" not in mask.attrs
        assert mask.shape == (256, 384) and mask.attrs["mask_of"] == [1024, 1536]
        assert (mask.values == tissue_b[::4, ::4]).mean() > 0.99  # this plane's tissue
        assert (mask.values == tissue_a[::4, ::4]).mean() < 0.9  # not the first one's
    plane0 = tissue_mask(open_image(stack, plane={"z": 0}), max_side=512, margin=0)
    assert (plane0.values == tissue_a[::4, ::4]).mean() > 0.99


def test_a_slide_s_levels_are_read_once_for_its_mask(tmp_path, monkeypatch):
    """tissue_mask read a slide's pyramid from its headers three times (is the image a whole
    level; which level fits; the full size), which over HTTP is requests each time: once."""
    import xfskde.masks

    slide, _ = _slide(seed=0)
    path = tmp_path / "slide.ome.tif"
    with tifffile.TiffWriter(path) as tif:
        tif.write(slide, tile=(256, 256), subifds=1, photometric="rgb",
                  metadata={"axes": "YXS", "PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5})  # fmt: skip
        tif.write(slide[::4, ::4], tile=(256, 256), subfiletype=1, photometric="rgb")
    calls = []
    levels = xfskde.masks.image_levels
    monkeypatch.setattr(
        xfskde.masks, "image_levels", lambda *a, **k: calls.append(a) or levels(*a, **k)
    )
    for given in (open_image(path), str(path)):
        calls.clear()
        mask = tissue_mask(given, max_side=512, margin=0)
        assert mask.attrs["source_level"] == 1 and len(calls) == 1, calls


def test_nonzero_mask_of_a_scene_with_nodata():
    values = np.zeros((300, 400), np.uint16)
    values[50:250, 100:380] = 1000 + np.arange(280, dtype=np.uint16)
    values[100:120, 150:170] = 0  # a hole inside: filled as small
    image = xr.DataArray(values, dims=("y", "x"), attrs={"_FillValue": 0})
    mask = tissue_mask(image, margin=0, min_fraction=0.01)
    assert mask.attrs["method"] == "nonzero"
    expected = values > 0
    expected[100:120, 150:170] = True
    np.testing.assert_array_equal(mask.values, expected)


@pytest.mark.parametrize(
    ("brightness", "read_noise", "clipped"),
    [(1.0, 4.0, False), (0.02, 4.0, False), (1.0, 15.0, False), (1.0, 4.0, True)],
)
def test_the_fluorescence_mask_finds_a_section_on_a_dark_background(
    brightness, read_noise, clipped
):
    """Signal on a dark background, whatever its brightness (a dim exposure: the nuclei 50
    counts above the background), the camera's noise, or an offset subtracted and the
    background's noise clipped at zero: the whole section, and of the background only the
    pixels next to it that its bright edge's blur reaches. Each channel's background level is
    read at the camera's offset (and the stray light)."""
    from scipy import ndimage

    from xfskde.datasets import section_in_fluorescence
    from xfskde.datasets.slides import CAMERA_OFFSET

    image, section = section_in_fluorescence(brightness=brightness, read_noise=read_noise)
    if clipped:
        image = np.clip(image.astype(np.int32) - CAMERA_OFFSET - 5, 0, None).astype(np.uint16)
    mask = tissue_mask(image, method="fluorescence", margin=0)
    assert mask.attrs["method"] == mask.attrs["method_asked"] == "fluorescence"
    found = mask.values
    assert found[section].mean() > 0.99
    assert found[~section].mean() < 0.025
    distance = ndimage.distance_transform_edt(~section)
    assert distance[found & ~section].max() <= 6  # the blur of the edge, no more
    # clipped: the mean of the noise's positive half, σ / √(2π) = 1.8, once smoothed
    level = 4.6 / np.sqrt(2 * np.pi) if clipped else CAMERA_OFFSET + 5
    np.testing.assert_allclose(mask.attrs["background_level"], level, atol=1.0)
    assert len(mask.attrs["threshold"]) == 3
    levels = mask.attrs["background_level"]
    assert all(t > b for t, b in zip(mask.attrs["threshold"], levels, strict=True))


def test_a_fluorescence_slide_is_masked_on_its_low_level_without_a_ring(tmp_path):
    """A pyramidal OME-TIFF of 2 × 2 sections, masked on its level of 4-px cells: the signal
    is not smoothed there (a cell is a mean already), so no ring of background around the
    sections (smoothed over a mask pixel, 8.5 % of the background was taken: bright nuclei's
    blur)."""
    from xfskde.datasets import section_in_fluorescence

    image = np.concatenate([np.concatenate([section_in_fluorescence(seed=2 * i + j)[0]
                                            for j in range(2)], axis=1)
                            for i in range(2)])  # fmt: skip
    section = np.tile(section_in_fluorescence()[1], (2, 2))
    cyx = np.ascontiguousarray(np.moveaxis(image, -1, 0))
    path = tmp_path / "slide.ome.tif"
    with tifffile.TiffWriter(path) as tif:
        tif.write(cyx, subifds=2, tile=(256, 256),
                  metadata={"axes": "CYX", "PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5})  # fmt: skip
        for f in (2, 4):  # a pyramid by averaging, as scanners' software writes one
            coarse = cyx.reshape(3, 1152 // f, f, 1536 // f, f).mean(axis=(2, 4))
            tif.write(coarse.astype(np.uint16), subfiletype=1, tile=(256, 256))
    mask = tissue_mask(path, method="fluorescence", max_side=512, margin=0)
    assert mask.attrs["source_level"] == 2 and mask.shape == (288, 384)
    found = np.repeat(np.repeat(mask.values, 4, axis=0), 4, axis=1)
    assert found[section].mean() > 0.99
    assert found[~section].mean() < 0.02  # the cells the section's edge crosses: 1.0 %


@pytest.mark.parametrize("share", [0.2, 0.4])
def test_a_stitched_fluorescence_slide_s_zero_padding_is_not_its_background(share):
    """Zeros in every channel over an area are padding: taken for the dark background, they
    put its level at 0 and all of the real background above it (all of it taken, with a
    fifth of the image padded)."""
    from xfskde.datasets import section_in_fluorescence

    image, section = section_in_fluorescence()
    width = int(share * image.shape[1])
    image[:, :width] = 0
    mask = tissue_mask(image, method="fluorescence", margin=0)
    found, inner = mask.values, np.arange(image.shape[1]) >= width
    assert found[section & inner].mean() > 0.99
    assert found[~section & inner].mean() < 0.025 and not found[:, :width].any()
    assert all(100 < level < 110 for level in mask.attrs["background_level"])


def test_a_fluorescence_channel_of_noise_adds_nothing_and_one_of_nuclei_is_enough():
    """Each channel against its own background: a channel of camera noise only finds no
    foreground, and nuclei alone (DAPI) are closed into one tissue with the dark cytoplasm
    between them."""
    from xfskde.datasets import section_in_fluorescence

    image, section = section_in_fluorescence()
    nuclei = xr.DataArray(image[..., 0], dims=("y", "x"))
    alone = tissue_mask(nuclei, method="fluorescence", margin=0).values
    assert alone[section].mean() > 0.99 and alone[~section].mean() < 0.025
    noise = np.random.default_rng(5).normal(100, 4, section.shape).astype(np.uint16)
    noisy = xr.DataArray(np.dstack([image[..., 0], noise]), dims=("y", "x", "c"))
    with_noise = tissue_mask(noisy, method="fluorescence", margin=0).values
    # 5 noises above its level, about one speck of noise in an image this size rises (the
    # smoothed noise's peaks): alone it is dropped as small, next to the tissue it joins it
    assert (with_noise != alone).sum() <= 10
    assert not tissue_mask(noise, method="fluorescence").values.any()
    assert not tissue_mask(np.full((64, 64), 100, np.uint16), method="fluorescence").values.any()
    assert not tissue_mask(np.full((64, 64), np.nan), method="fluorescence").values.any()


def test_auto_does_not_take_a_fluorescence_image_for_a_slide():
    """``"auto"`` never guesses fluorescence (a field of view inside the tissue would lose its
    dimmest tissue): a 16-bit image's mask is its data, here all of it."""
    from xfskde.datasets import section_in_fluorescence

    image, _ = section_in_fluorescence()
    with pytest.warns(MaskWarning, match="mask='fluorescence'"):
        mask = tissue_mask(image)
    assert mask.attrs["method"] == "nonzero" and mask.values.all()


def _composite(counts: np.ndarray) -> np.ndarray:
    """A fluorescence image as a viewer exports it: 8-bit RGB, each channel stretched from
    its 0.5th to its 99.8th percentile."""
    low, high = np.percentile(counts, [0.5, 99.8], axis=(0, 1))
    return (np.clip((counts - low) / (high - low), 0, 1) * 255).astype(np.uint8)


@pytest.mark.parametrize("brightness", [0.1, 0.02])
def test_auto_warns_of_a_fluorescence_composite_taken_for_a_slide(brightness):
    """A fluorescence image exported as 8-bit RGB is taken for a brightfield slide, which
    finds no glass and takes all of it for tissue, its dark background (48 %) included:
    a warning names the method to ask for, and that method finds the section."""
    from xfskde.datasets import section_in_fluorescence

    counts, section = section_in_fluorescence(brightness=brightness)
    composite = _composite(counts)
    with pytest.warns(MaskWarning, match=r"found no glass.*4\d% of it a dark background.*"
                                         r"mask='fluorescence'"):  # fmt: skip
        taken = tissue_mask(composite, margin=0)
    assert taken.attrs["method"] == "brightfield" and taken.values.all()
    found = tissue_mask(composite, method="fluorescence", margin=0).values
    assert found[section].mean() > 0.99 and found[~section].mean() < 0.03


def test_auto_does_not_warn_of_brightfield_without_glass_nor_of_a_right_mask():
    """No warning where the stain is the darker half (scikit-image's IHC field of view and
    crops of it, whose pale parts the fluorescence rule takes for a signal), inside a
    fluorescence section (no background), nor where the brightfield rule left a black
    background out already (a bright composite: its background below the padding's level)."""
    import warnings

    from skimage import data

    from xfskde.datasets import section_in_fluorescence

    ihc = data.immunohistochemistry()
    bright, section = section_in_fluorescence(brightness=1.0)
    images = [ihc, ihc[78:437, 56:357], ihc[119:418, 221:496], ihc[1:238, 46:181]]
    for brightness in (1.0, 0.1, 0.02):
        images.append(
            _composite(section_in_fluorescence(brightness=brightness)[0])[150:450, 250:550]
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", MaskWarning)
        for image in images:
            assert tissue_mask(image).values.mean() > 0.99
        right = tissue_mask(_composite(bright), margin=0).values
    assert right[section].mean() > 0.99 and right[~section].mean() < 0.01


def test_a_method_named_as_the_mask_is_that_method_s_mask():
    """mask="brightfield" (--mask brightfield) takes a 16-bit RGB slide as a slide: the mask of
    the 8-bit slide, to the pixel; "fluorescence" and "nonzero" likewise name theirs."""
    from xfskde.datasets import section_on_glass

    slide, _ = section_on_glass()
    wide = slide.astype(np.uint16) * 257
    np.testing.assert_array_equal(resolve_mask("brightfield", wide).values,
                                  tissue_mask(slide).values)  # fmt: skip
    assert resolve_mask("brightfield", wide).attrs["method_asked"] == "brightfield"
    assert resolve_mask("nonzero", wide).values.all()
    assert resolve_mask("fluorescence", wide).attrs["method"] == "fluorescence"


def test_auto_warns_only_where_it_finds_no_background(monkeypatch):
    """The warning names the method to ask for where "auto" masks an image by its data and
    all of it is data; not for a method named, a scene with nodata, or a scene with a CRS
    (all of a scene may be data). segment() makes the mask once: one warning."""
    import warnings

    import xfskde
    import xfskde.masks
    from xfskde.datasets import section_in_fluorescence

    image, _ = section_in_fluorescence()
    scene = np.full((64, 64), 1000, np.uint16)
    scene[:8] = 0  # nodata
    crs = xr.DataArray(0, attrs={"crs_wkt": "EPSG:32633"})
    grid = {"spatial_ref": crs, "y": np.arange(64.0)[::-1] * 10, "x": np.arange(64.0) * 10}
    located = xr.DataArray(np.full((64, 64), 1000, np.uint16), dims=("y", "x"), coords=grid)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MaskWarning)
        tissue_mask(image, method="nonzero")
        tissue_mask(scene)
        tissue_mask(located)
    made = []
    monkeypatch.setattr(xfskde.masks, "tissue_mask",
                        lambda *a, **k: made.append(1) or tissue_mask(*a, **k))  # fmt: skip
    with pytest.warns(MaskWarning) as caught:
        xfskde.segment(image[::2, ::2], 2, mask="auto")
    assert len(made) == 1 and len([w for w in caught if w.category is MaskWarning]) == 1
    assert caught[0].filename == __file__  # the caller's line


def test_large_images_are_averaged_down():
    image = xr.DataArray(da.ones((5000, 3000), chunks=1000, dtype=np.float32), dims=("y", "x"))
    mask = tissue_mask(image, max_side=1000)
    assert mask.shape == (1000, 600) and mask.values.all()


@pytest.mark.parametrize("kind", ["uint8", "uint16", "float32 with NaN"])
def test_an_image_is_averaged_down_as_xarray_coarsens_it(kind):
    """The image a mask is found on, when it has no low-resolution level: each cell's mean of
    its finite values (NaN ignored; the last row and column of cells over the pixels there),
    the cells' centres as coordinates, the attrs kept: xarray's ``coarsen(boundary="pad")
    .mean()`` of the float32 image, for NumPy and Dask images in chunks that cut cells."""
    from xfskde.masks import _small

    rng = np.random.default_rng(3)
    if kind == "float32 with NaN":
        values = rng.random((1003, 701, 3), dtype=np.float32)
        values[100:140, 200:260, 1] = np.nan
        values[:7, :7] = np.nan  # a whole cell missing: NaN
    else:
        top = np.iinfo(kind).max
        values = rng.integers(0, top, (1003, 701, 3), endpoint=True).astype(kind)
    coords = {"y": 0.25 * np.arange(1003) + 10, "x": 0.25 * np.arange(701), "c": ["r", "g", "b"]}
    image = xr.DataArray(values, dims=("y", "x", "c"), coords=coords, attrs={"source": "a"})
    expected = image.astype(np.float32).coarsen(y=7, x=7, boundary="pad").mean()
    for data in (values, da.from_array(values, chunks=(250, 300, 3))):
        small = _small(image.copy(data=data), max_side=150)  # factor 7
        assert small.attrs == {"source": "a", "downsampled_by": 7} and small.dtype == np.float32
        np.testing.assert_allclose(small.values, expected.values, rtol=1e-6, atol=0)
        assert np.isnan(small.values[0, 0]).all() == (kind == "float32 with NaN")
        for name in ("y", "x"):
            np.testing.assert_allclose(small[name].values, expected[name].values)
        assert list(small["c"].values) == ["r", "g", "b"]


def test_a_numpy_or_dask_image_has_a_tissue_mask():
    """tissue_mask(numpy_image) failed with "expected str, bytes or os.PathLike object, not
    ndarray" (and resolve_mask("auto", array) with it): an array is read as open_image labels
    it, (y, x) or (y, x, c)."""
    noise = np.random.default_rng(1).normal(0, 12, (96, 128, 3))
    slide = np.full((200, 300, 3), 235, np.uint8)  # glass
    slide[50:146, 100:228] = np.clip(np.array([200, 110, 170]) + noise, 0, 255)  # eosin pink
    expected = np.zeros((200, 300), bool)
    expected[50:146, 100:228] = True
    for image in (slide, da.from_array(slide, chunks=100)):
        mask = tissue_mask(image, margin=0)
        assert mask.shape == (200, 300) and mask.attrs["method"] == "brightfield"
        assert (mask.values == expected).mean() > 0.98
    assert resolve_mask("auto", slide).shape == (200, 300)


def test_bad_arguments():
    with pytest.raises(ParameterError, match="method"):
        tissue_mask(np.zeros((4, 4)), method="otsu")
    with pytest.raises(ParameterError, match="max_side"):
        tissue_mask(xr.DataArray(np.zeros((4, 4)), dims=("y", "x")), max_side=0)


def test_background_blocks_by_extent():
    mask = xr.DataArray(np.zeros((10, 20), bool), dims=("y", "x"))
    mask[2, 15] = True  # covers image rows 20..30, columns 150..160 of a 100 x 200 image
    skip = background_blocks(mask, (100, 200))
    assert not skip((0, 32), (128, 192)) and not skip((16, 24), (152, 153))
    assert skip((0, 20), (0, 200)) and skip((30, 100), (0, 200)) and skip((0, 100), (0, 150))


def test_skipped_blocks_are_not_read():
    reads = set()

    def read(block, block_info=None):
        reads.add(tuple(block_info[None]["chunk-location"]))
        return block

    image = da.ones((256, 256), chunks=64).map_blocks(read, dtype=float)
    mask = xr.DataArray(np.zeros((4, 4), bool), dims=("y", "x"))
    mask[0, 0] = True  # only the first block is foreground

    def ones(block, *, image_shape, src_origin, rows, cols, block_id):
        return np.ones((rows[1] - rows[0], cols[1] - cols[0]))

    out = map_haloed(ones, image, halo=4, dtype=float, name="t",
                     skip=background_blocks(mask, (256, 256)))  # fmt: skip
    values = out.compute(scheduler="synchronous")
    assert values[:64, :64].all() and not values[64:].any() and not values[:, 64:].any()
    assert reads == {(0, 0), (0, 1), (1, 0), (1, 1)}  # the block and its neighbours' halos


@pytest.mark.parametrize("mask_shape", [(64, 48), (1000, 1500), (2999, 4001), (1, 1)])
@pytest.mark.parametrize("stride", [1, 4])
def test_each_sample_takes_the_mask_pixel_under_its_centre(mask_shape, stride):
    """_grid.mask_at_samples (a coarse mask repeated over the samples in each of its pixels)
    against the rule itself, sample by sample, for masks coarser and finer than the image."""
    from xfskde._grid import mask_at_samples

    mask = np.random.default_rng(0).random(mask_shape) > 0.5
    image = (1000, 1500)
    rows, cols = (3, 1000 // stride), (0, 1500 // stride - 7)
    got = mask_at_samples(mask, image, stride, rows, cols)
    o = (stride - 1) // 2
    expected = np.array([[mask[min(int((i * stride + o + 0.5) * mask_shape[0] / image[0]),
                                   mask_shape[0] - 1),
                               min(int((j * stride + o + 0.5) * mask_shape[1] / image[1]),
                                   mask_shape[1] - 1)]
                          for j in range(*cols)] for i in range(*rows)])  # fmt: skip
    np.testing.assert_array_equal(got, expected)
    assert mask_at_samples(mask, image, stride, (5, 5), cols).shape == (0, cols[1])


def test_mask_samples_on_a_stride_grid():
    mask = xr.DataArray(np.zeros((4, 4), bool), dims=("y", "x"))
    mask[1, 2] = True  # image pixels 25..50 x 50..75 of a 100 x 100 image
    result = da.zeros((25, 25, 3), chunks=(10, 10, 3))  # stride 4, offset 1: pixels 1, 5, ...
    inside = mask_samples(mask, result, (100, 100), 4).compute()  # samples at 4 i + 1
    assert inside.shape == (25, 25, 1)
    pixels = np.arange(25) * 4 + 1
    expected = ((pixels[:, None] >= 25) & (pixels[:, None] < 50)) & (
        (pixels[None, :] >= 50) & (pixels[None, :] < 75)
    )
    np.testing.assert_array_equal(inside[..., 0], expected)


def test_resolve_mask_forms(tmp_path):
    image = xr.DataArray(np.zeros((8, 8)), dims=("y", "x"))
    assert resolve_mask(None, image) is None and resolve_mask("none", image) is None
    drawn = np.zeros((4, 4), np.uint8)
    drawn[1:3, 1:3] = 255
    tifffile.imwrite(tmp_path / "mask.tif", drawn)
    from_file = resolve_mask(str(tmp_path / "mask.tif"), image)
    np.testing.assert_array_equal(from_file.values, drawn > 0)
    np.testing.assert_array_equal(resolve_mask(drawn, image).values, drawn > 0)


def test_a_mask_given_as_nested_lists_is_an_array_mask():
    """``segment(image, n, mask=[[False, True], ...])`` failed with "cannot read the mask list
    (TypeError ...)": rows of booleans or numbers are the array NumPy reads from them; QuPath's
    features (a list of mappings with a "type") are still polygons."""
    import xfskde

    image = xr.DataArray(np.zeros((8, 8)), dims=("y", "x"))
    drawn = np.zeros((4, 4), bool)
    drawn[1:3, 1:3] = True
    for listed in (drawn.tolist(), drawn.astype(int).tolist(), tuple(map(list, drawn))):
        np.testing.assert_array_equal(resolve_mask(listed, image).values, drawn)
    with pytest.raises(ParameterError, match="rows of equal length"):
        resolve_mask([[1, 0], [1]], image)
    with pytest.raises(ParameterError, match="booleans or numbers, one per pixel; got items"):
        resolve_mask([["a", "b"], ["c", "d"]], image)
    square = {"type": "Polygon", "coordinates": [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]]}
    features = [{"type": "Feature", "geometry": square, "properties": {}}]
    assert resolve_mask(features, image).values[:4, :4].all()
    photo, _ = random_textures((32, 32), seed=1)
    half = np.zeros((32, 32), bool)
    half[:, 16:] = True
    labels = xfskde.segment(photo, 2, size=2, mask=half.tolist())
    np.testing.assert_array_equal(labels, xfskde.segment(photo, 2, size=2, mask=half))
    assert not np.asarray(labels)[:, :16].any() and np.asarray(labels)[:, 16:].all()


def test_a_palette_mask_is_read_by_its_indices_not_its_colours(tmp_path, capsys):
    """A mask drawn as a palette PNG (an annotation tool's labels: index 0 the background, here
    white; index 1 red) was read by its colours, any non-zero channel foreground: white was
    foreground, and the whole image was segmented. Its indices are its labels."""
    from PIL import Image

    import xfskde
    from xfskde.cli import main

    image = xr.DataArray(np.zeros((8, 8)), dims=("y", "x"))
    indices = np.zeros((8, 8), np.uint8)
    indices[:, :4] = 1
    drawn = Image.fromarray(indices)
    drawn.putpalette([255, 255, 255, 255, 0, 0])  # background white, foreground red
    drawn.save(tmp_path / "mask.png")
    with Image.open(tmp_path / "mask.png") as read:
        assert read.mode == "P"
        np.testing.assert_array_equal(resolve_mask(read, image).values, indices > 0)
    np.testing.assert_array_equal(resolve_mask(str(tmp_path / "mask.png"), image).values,
                                  indices > 0)  # fmt: skip
    photo, _ = xfskde.datasets.random_textures((64, 64), seed=1)
    tifffile.imwrite(tmp_path / "photo.tif", np.round(photo * 255).astype(np.uint8))
    big = Image.fromarray(np.kron(indices, np.ones((8, 8), np.uint8)))
    big.putpalette([255, 255, 255, 255, 0, 0])
    big.save(tmp_path / "big.png")
    argv = ["segment", str(tmp_path / "photo.tif"), str(tmp_path / "labels.zarr"), "--textures",
            "2", "--size", "4", "--mask", str(tmp_path / "big.png"), "--no-progress"]  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    labels = xfskde.io.open_blocks(tmp_path / "labels.zarr").values
    assert not labels[:, 32:].any() and labels[:, :32].all()


@pytest.mark.parametrize("command", ["segment", "maps"])
def test_a_mask_missing_or_damaged_is_named_as_the_mask_not_the_image(tmp_path, capsys, command):
    """A mistyped ``--mask`` path was reported as the image being damaged ("cannot read
    photo.tif (FileNotFoundError: no such image: …/mask.tif): the file is damaged, truncated
    …"), and so was a mask store whose chunk cannot be decoded: the user checked the image.
    Each names the mask now."""
    import zarr

    from xfskde.cli import main

    photo, _ = random_textures((64, 64), seed=1)
    tifffile.imwrite(tmp_path / "photo.tif", np.round(photo * 255).astype(np.uint8))
    store = zarr.create_array(tmp_path / "mask.zarr", shape=(64, 64), chunks=(32, 32),
                              dtype="uint8")  # fmt: skip
    store[:] = 1
    (tmp_path / "mask.zarr" / "c" / "1" / "1").write_bytes(b"not a chunk")
    out = str(tmp_path / "out.zarr")
    for mask, said in [("typo.tif", "no such mask: "), ("autp", "no such mask: "),
                       ("mask.zarr", "cannot read the mask ")]:  # fmt: skip
        argv = [command, str(tmp_path / "photo.tif"), out, "--mask", str(tmp_path / mask),
                "--no-progress", "--overwrite"]  # fmt: skip
        if command == "segment":
            argv += ["--textures", "2"]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert said + str(tmp_path / mask) in err, err
        assert "photo.tif" not in err and "the file is damaged" not in err, err
        if mask == "autp":  # a method mistyped: the methods named
            assert "(a mask is a file, or one of 'auto', 'brightfield', 'fluorescence'" in err


# ------------------------------------------------------------------------- consumers' mask=


def test_masked_field_equals_the_unmasked_inside_and_has_no_value_outside():
    import xfskde

    rgb, tissue = _slide((512, 768), seed=1)
    grey = rgb.mean(axis=-1).astype(np.float32)
    image = xr.DataArray(grey, dims=("y", "x"))
    mask = xr.DataArray(tissue[::8, ::8], dims=("y", "x"))  # at 1/8 of the resolution
    params = {"order": 4, "window": "gaussian", "size": 3.0, "stride": 4}
    plain = xfskde.local_fskde(image, **params)
    eager = xfskde.local_fskde(image, **params, mask=mask)
    inside = mask.values[(np.arange(128) * 4 + 1) * 64 // 512][
        :, (np.arange(192) * 4 + 1) * 96 // 768
    ]
    np.testing.assert_array_equal(eager.values[inside], plain.values[inside])
    assert np.isnan(eager.values[~inside]).all()  # not computed: NaN, not "no gradient"
    assert np.isnan(eager.fskde.energy().values[~inside]).all()  # and so are the maps
    assert eager.attrs["mask"] == "an array" and 0.2 < eager.attrs["mask_foreground"] < 0.6
    for chunks in (64, 128, {"y": 96, "x": 160}):
        lazy = xfskde.local_fskde(image.chunk(chunks), **params, mask=mask)
        np.testing.assert_array_equal(lazy.values, eager.values)
    # a NumPy image and a NumPy mask: the same values, as a NumPy array
    np.testing.assert_array_equal(
        xfskde.local_fskde(grey, **params, mask=mask.values), eager.values
    )


def test_tiles_of_glass_inside_a_computed_block_are_not_computed(monkeypatch):
    """The core's tiles with no foreground sample are NaN without a call to the core."""
    import xfskde
    from xfskde import _core

    calls = []
    real = _core.fskde_tile

    def spy(*args):
        calls.append(args[6:10])  # the tile's sample ranges a, b, c, d
        return real(*args)

    monkeypatch.setattr(_core, "fskde_tile", spy)
    grey = np.random.default_rng(0).random((1024, 1024)).astype(np.float32)
    params = {"order": 4, "window": "box", "size": 8, "stride": 8}
    xfskde.local_fskde(grey, **params)
    everything = len(calls)
    calls.clear()
    mask = np.zeros((8, 8), bool)
    mask[0, 0] = True  # image rows and columns 0 .. 127 only
    masked = xfskde.local_fskde(grey, **params, mask=mask)
    assert everything >= 4 and 0 < len(calls) < everything
    assert all(a * 8 < 128 and c * 8 < 128 for a, b, c, d in calls)  # only tiles with tissue
    assert np.isfinite(masked[:16, :16]).all() and masked[:16, :16].any()
    assert np.isnan(masked[16:]).all() and np.isnan(masked[:, 16:]).all()


def test_auto_mask_of_a_slide_skips_its_glass(tmp_path):
    import xfskde

    rgb, _ = _slide((1024, 1536), seed=2)
    path = tmp_path / "slide.tif"
    tifffile.imwrite(path, rgb, tile=(128, 128), photometric="rgb")
    image = xfskde.open_image(path, chunks=128)
    params = {"order": 4, "window": "gaussian", "size": 3.0, "stride": 4}
    everything = xfskde.local_fskde(image, **params)
    masked = xfskde.local_fskde(image, **params, mask="auto")
    assert masked.attrs["mask"].startswith("auto: tissue_mask, brightfield")
    graph = masked.data.__dask_graph__()
    skipping = [layer for name, layer in graph.layers.items() if "skipping" in name]
    tasks = list(skipping[0].values())
    skipped = sum(isinstance(t, tuple) and t[0] is np.full for t in tasks)
    assert 0.25 * len(tasks) < skipped < len(tasks), (skipped, len(tasks))  # glass: skipped
    values, reference = masked.values, everything.values
    nonzero = np.abs(values).sum(-1) > 0
    assert 0.2 < nonzero.mean() < 0.7
    np.testing.assert_array_equal(values[nonzero], reference[nonzero])


def test_a_mask_made_for_the_whole_slide_is_cut_to_a_crop(tmp_path):
    """A crop of an opened slide gets its own tissue mask (not the whole file's), and a mask of
    the whole slide given to a crop is cut to the crop by their µm coordinates; without
    coordinates to place it, it is refused rather than laid over the wrong extent."""
    import xfskde

    rgb, _ = _slide((1024, 1536), seed=2)
    path = tmp_path / "slide.ome.tif"
    with tifffile.TiffWriter(path) as tif:
        tif.write(
            rgb,
            tile=(128, 128),
            photometric="rgb",
            subifds=2,
            metadata={"axes": "YXS", "PhysicalSizeX": 0.5, "PhysicalSizeY": 0.5},
        )
        for step in (2, 4):
            tif.write(rgb[::step, ::step], tile=(128, 128), photometric="rgb", subfiletype=1)
    image = xfskde.open_image(path)
    whole = tissue_mask(image, max_side=400)
    assert whole.shape == (256, 384) and whole.attrs["source_level"] == 2
    crop = image[200:600, 300:900]
    own = tissue_mask(crop, max_side=400)
    assert own.attrs["mask_of"] == [400, 600] and own.shape == (200, 300)  # halved
    cut = resolve_mask(whole, crop)
    assert cut.attrs["mask_of"] == [400, 600]
    np.testing.assert_array_equal(cut.values, whole.values[50:150, 75:225])
    bare = xr.DataArray(np.asarray(crop.values), dims=crop.dims)  # no coordinates
    with pytest.raises(ParameterError, match="mask made for this image"):
        resolve_mask(whole, bare)


def test_a_mask_of_another_aspect_or_extent_is_refused_not_stretched(tmp_path):
    """A mask of its own pixels was stretched over the image whatever its shape: a 24 x 12
    mask over a 384 x 384 image (another image's, or another extent's) skipped the wrong
    half. A mask must be the image at one scale (a side one pixel off, from rounding a
    downsample, is fine); one with coordinates in the image's CRS and unit is placed by them
    (a land mask of a larger area, at half the resolution, cut to the scene), and background
    beyond its extent where it covers only part of the image
    (:func:`test_a_mask_in_the_scenes_crs_over_part_of_it_is_background_beyond_it`); one in
    another CRS is reprojected onto the image's grid
    (:func:`test_a_mask_in_another_crs_is_reprojected_onto_the_scene`)."""
    import rioxarray  # noqa: F401  (the rio accessor: the test extra installs it)

    import xfskde

    image = xr.DataArray(np.zeros((384, 384), np.uint8), dims=("y", "x"))
    for shape in ((12, 12), (13, 12), (768, 768), (384, 384)):
        resolve_mask(np.ones(shape, bool), image)
    wide = xr.DataArray(np.zeros((1000, 1500), np.uint8), dims=("y", "x"))
    resolve_mask(np.ones((31, 47), bool), wide)  # 1000 / 32 and 1500 / 32, rounded
    for shape in ((24, 12), (12, 24), (12, 13 + 2)):
        with pytest.raises(ParameterError, match=r"not this image's 384 x 384 at one scale"):
            resolve_mask(np.ones(shape, bool), image)
    with pytest.raises(ParameterError, match="at one scale"):
        xfskde.local_fskde(image, order=2, mask=np.ones((24, 12), bool))

    def scene(shape, y0, x0, step, crs="EPSG:32632"):
        y, x = y0 - step * (np.arange(shape[0]) + 0.5), x0 + step * (np.arange(shape[1]) + 0.5)
        grid = xr.DataArray(np.zeros(shape, np.uint8), dims=("y", "x"), coords={"y": y, "x": x})
        return grid.rio.write_crs(crs)

    field = scene((128, 192), 5.0e6, 4.0e5, 10.0)  # 1280 x 1920 m
    land = scene((200, 300), 5.0e6 + 200, 4.0e5 - 400, 20.0)  # larger, 20 m pixels
    land.values[:, : 20 + 48] = 1  # land west of x = 4e5 + 960, the scene's middle
    cut = resolve_mask(land, field)
    assert cut.shape == (64, 96) and cut.values[:, :48].all() and not cut.values[:, 48:].any()
    assert "mask_covers" not in cut.attrs


def test_a_mask_in_the_scenes_crs_over_part_of_it_is_background_beyond_it(tmp_path):
    """A raster mask in the scene's CRS cut to an area of interest (the western half of the
    scene and beyond, at 20 m over a 10 m scene) was refused ("pass a mask that covers the
    whole image"), though a mask in another CRS was reprojected with background outside its
    extent. It is now read as GDAL and QGIS read a raster past its edges: background beyond
    it, recorded as the share it covers; the field is computed over its foreground only, from
    the GeoTIFF as from the DataArray. One that misses the scene is still refused."""
    import rioxarray  # noqa: F401  (the rio accessor: the test extra installs it)

    import xfskde

    def grid(shape, y0, x0, step, values=0):
        y, x = y0 - step * (np.arange(shape[0]) + 0.5), x0 + step * (np.arange(shape[1]) + 0.5)
        out = xr.DataArray(np.full(shape, values, np.uint8), dims=("y", "x"),
                           coords={"y": y, "x": x})  # fmt: skip
        return out.rio.write_crs("EPSG:32632")

    rng = np.random.default_rng(0)
    field = grid((128, 192), 5.0e6, 4.0e5, 10.0)  # 1280 x 1920 m
    field.values[:] = rng.integers(0, 255, field.shape)
    # the western 960 m of the scene and 400 m west of it, the southern 1000 m and 200 m south
    half = grid((60, 68), 5.0e6 - 280, 4.0e5 - 400, 20.0, values=1)
    placed = resolve_mask(half, field)
    assert placed.shape == (64, 96) and placed.attrs["mask_covers"] == 0.3906  # 50 / 64 x 1 / 2
    # rows: the top 280 m (14 px at 20 m) background; columns: east of x = 4e5 + 960 m
    expected = np.zeros((64, 96), bool)
    expected[14:, :48] = True
    np.testing.assert_array_equal(placed.values, expected)
    np.testing.assert_allclose(placed.y.values, field.y.values[::2] - 5.0)
    np.testing.assert_allclose(placed.x.values, field.x.values[::2] + 5.0)
    half.rio.to_raster(tmp_path / "aoi.tif")
    for mask in (half, str(tmp_path / "aoi.tif")):
        out = xfskde.local_fskde(field, order=2, window="box", size=5, stride=4, mask=mask)
        computed = ~np.isnan(out.isel(k=0).values)
        inside = (out.y.values[:, None] < 5.0e6 - 280) & (out.x.values[None, :] < 4.0e5 + 960)
        np.testing.assert_array_equal(computed, inside)
    beyond = grid((20, 20), 5.0e6, 4.0e5 + 5000, 20.0, values=1)  # east of the scene
    with pytest.raises(ParameterError, match="does not overlap this image along x"):
        resolve_mask(beyond, field)
    # finer than the scene, off its grid: extended at its own 5 m (500 x 500 m of the scene's
    # 1280 x 1920 m); one pixel has no size of its own to extend it by
    fine = grid((100, 100), 5.0e6 - 302.5, 4.0e5 + 97.5, 5.0, values=1)
    placed = resolve_mask(fine, field)
    assert placed.shape == (257, 385) and placed.values.sum() == 100 * 100
    assert placed.attrs["mask_covers"] == pytest.approx(1e4 / (257 * 385), rel=1e-3)
    one = grid((1, 1), 5.0e6 - 600, 4.0e5 + 600, 1000.0, values=1)
    with pytest.raises(ParameterError, match="pixel size along y is unknown"):
        resolve_mask(one, field)


@pytest.mark.parametrize("side", [384, 5000])
def test_a_mask_in_another_crs_is_reprojected_onto_the_scene(side):
    """A land cover in WGS 84 over a UTM scene (ESA WorldCover's tiles are in EPSG:4326) is
    reprojected onto the scene's grid by nearest neighbour, as rioxarray's reproject_match
    does it — on a grid coarsened to at most 2048 pixels a side for a larger scene (5000²: 3 ×
    3 cells) —, and its classes chosen before. Until 2026-11-30 it was refused ("reproject it
    first"), and one of the scene's shape in another CRS was taken pixel for pixel."""
    import dask.array as da
    import rioxarray  # noqa: F401
    from pyproj import Transformer
    from rasterio.enums import Resampling

    step = 10.0 * 384 / side
    y = 5.0e6 - step * (np.arange(side) + 0.5)
    x = 6.0e5 + step * (np.arange(side) + 0.5)
    scene = xr.DataArray(da.zeros((side, side), np.uint8, chunks=2048), dims=("y", "x"),
                         coords={"y": y, "x": x}).rio.write_crs("EPSG:32632")  # fmt: skip
    west, north = Transformer.from_crs(32632, 4326, always_xy=True).transform(5.99e5, 5.0001e6)
    res = 5e-5  # about 4-6 m
    lon = west + res * (np.arange(900) + 0.5)
    lat = north - res * (np.arange(600) + 0.5)
    classes = np.where(
        (lon[None, :] - lon[0]) ** 2 + (lat[:, None] - lat[0]) ** 2 < 0.0007, 40, 10
    ).astype(np.uint8)  # a quarter-disk of cropland, the rest trees
    cover = xr.DataArray(classes, dims=("y", "x"), coords={"y": lat, "x": lon})
    cover = cover.rio.write_crs("EPSG:4326")
    mask = resolve_mask(cover, scene, classes=["40"])
    factor = -(-side // 2048)
    grid = scene.isel(y=slice(None, None, factor), x=slice(None, None, factor))
    reference = cover.rio.reproject(
        "EPSG:32632", shape=(grid.sizes["y"], grid.sizes["x"]),
        transform=scene.rio.transform(recalc=True) * scene.rio.transform().scale(factor),
        resampling=Resampling.nearest,
    )  # fmt: skip
    np.testing.assert_array_equal(mask.values, reference.values == 40)
    assert mask.attrs["reprojected_from"] == "EPSG:4326"
    assert 0.05 < mask.values.mean() < 0.95  # the disk's edge crosses the scene


def test_a_mask_in_microns_is_placed_on_an_image_in_micrometres():
    """Units are compared as lengths: "um" is "µm" (placed), "mm" is not (refused)."""
    centres = np.arange(64) * 0.5 + 0.25
    image = xr.DataArray(np.zeros((64, 64)), dims=("y", "x"), coords={"y": centres, "x": centres})
    image.x.attrs["units"] = "µm"
    mask = xr.DataArray(np.ones((32, 32), bool), dims=("y", "x"),
                        coords={"y": np.arange(32) + 0.5, "x": np.arange(32) + 0.5})  # fmt: skip
    mask.x.attrs["units"] = "um"
    assert resolve_mask(mask, image).shape == (32, 32)
    mask.x.attrs["units"] = "mm"
    with pytest.raises(ParameterError, match="in mm and the image's in µm"):
        resolve_mask(mask, image)


def test_the_pixels_of_some_classes_of_a_label_image(tmp_path, capsys):
    """``--mask labels.tif --mask-classes 2`` (``resolve_mask(..., classes=["2"])``): a label
    image — a classifier's or land cover's, xfskde's own — masks the pixels of those labels,
    ``"texture 2"`` naming label 2 of xfskde's labels as their regions do; a class it does
    not hold is refused naming those it does, and so are a colour mask, a mask of fractions
    and a method (which has no classes). Until 2026-11-30 classes were for GeoJSON only."""
    import zarr

    from xfskde.cli import main

    image, truth = random_textures((384, 384), seed=5)
    labels = (truth + 1).astype(np.uint8)  # 1, 2, 3
    tifffile.imwrite(tmp_path / "image.tif", (image * 255).astype(np.uint8))
    tifffile.imwrite(tmp_path / "labels.tif", labels)
    image = open_image(image)
    two = resolve_mask(str(tmp_path / "labels.tif"), image, classes=["2"])
    np.testing.assert_array_equal(two.values, labels == 2)
    assert two.attrs["classes"] == ["2"]
    both = resolve_mask(labels, image, classes=["1", "texture 3"])
    np.testing.assert_array_equal(both.values, labels != 2)
    for classes in (["2"], ["texture 2"]):
        out = tmp_path / f"{classes[0]}.zarr"
        argv = ["segment", str(tmp_path / "image.tif"), str(out), "--textures", "2",
                "--mask", str(tmp_path / "labels.tif"), "--mask-classes", classes[0]]  # fmt: skip
        assert main(argv) == 0
        stored = zarr.open_array(str(out / "labels"), mode="r")[...]
        np.testing.assert_array_equal(stored > 0, labels == 2)
        assert xfskde_attrs(out)["mask_classes"] == classes[0]
    capsys.readouterr()
    argv[2], argv[-1] = str(tmp_path / "7.zarr"), "7"
    assert main(argv) == 2
    assert "holds no pixel of class '7': its values are 1, 2, 3" in capsys.readouterr().err
    with pytest.raises(ParameterError, match="has 3 channels: give one band of labels"):
        resolve_mask(xr.DataArray(np.dstack([labels] * 3), dims=("y", "x", "c")), image,
                     classes=["2"])  # fmt: skip
    with pytest.raises(ParameterError, match="holds fractions"):
        resolve_mask(labels / 3, image, classes=["2"])
    with pytest.raises(ParameterError, match="the mask 'auto' has no classes"):
        resolve_mask("auto", image, classes=["2"])
    with pytest.raises(ParameterError, match="a whole number, or 'texture N'"):
        resolve_mask(labels, image, classes=["forest"])


def xfskde_attrs(store) -> dict:
    return open_image(store).attrs


# ------------------------------------------------------------- placing a mask, naming dims


def _north_up(shape=(64, 64), seed=7) -> xr.DataArray:
    """A float image whose y runs down, as every GeoTIFF's does (pixel centres, 1 unit)."""
    values = np.random.default_rng(seed).random(shape).astype(np.float32)
    y, x = shape[0] - 0.5 - np.arange(shape[0]), np.arange(shape[1]) + 0.5
    return xr.DataArray(values, dims=("y", "x"), coords={"y": y, "x": x})


def _computed_rows(field: xr.DataArray) -> np.ndarray:
    """The y coordinates of the field's rows that were computed (not NaN: inside the mask)."""
    computed = ~np.isnan(field.isel(k=0).values).all(axis=1)
    return field.y.values[computed]


def test_a_mask_with_coordinates_is_placed_by_them_not_by_position(tmp_path):
    """A mask of the image's shape was laid over it pixel for pixel whatever its coordinates:
    a mask with ascending y (a netCDF's, an array built with np.arange) over an image with
    descending y (a GeoTIFF's) computed the mirror image of its foreground, without a word.
    A DataArray mask with coordinates is placed by them at any resolution — its rows and
    columns put in the image's order — and refused where they do not cover the image; a mask
    without them (a NumPy array) is placed by position. A tissue mask made of the image's
    shape is turned alike."""
    import xfskde

    image = _north_up()
    params = {"order": 4, "window": "box", "size": 8, "stride": 8}
    up = np.arange(64) + 0.5
    north = (up[:, None] >= 32) & (up[None, :] >= 0)  # foreground where y >= 32, ascending
    mask = xr.DataArray(north, dims=("y", "x"), coords={"y": up, "x": up})
    mask.to_netcdf(tmp_path / "mask.nc", engine="scipy")  # as a mask file is read back
    with xr.open_dataarray(tmp_path / "mask.nc", engine="scipy") as read:
        stored = read.load()
    for given in (mask, stored):
        placed = resolve_mask(given, image)
        np.testing.assert_array_equal(placed.values, north[::-1])
        np.testing.assert_array_equal(placed.y.values, image.y.values)
        field = xfskde.local_fskde(image, **params, mask=given)
        np.testing.assert_array_equal(_computed_rows(field), [60.0, 52.0, 44.0, 36.0])
    # at half the resolution, x running the other way too: foreground where x < 16
    coarse = np.arange(32) * 2 + 1.0
    west = np.zeros((32, 32), bool)
    west[:, -8:] = True  # the last columns of a descending x: x < 16
    half = xr.DataArray(west, dims=("y", "x"), coords={"y": coarse, "x": coarse[::-1]})
    placed = resolve_mask(half, image)
    np.testing.assert_array_equal(placed.values, west[:, ::-1])
    field = xfskde.local_fskde(image, **params, mask=half)
    computed = ~np.isnan(field.isel(k=0).values).all(axis=0)
    np.testing.assert_array_equal(field.x.values[computed], [4.0, 12.0])
    # coordinates that cover only part of the image: refused, not laid over it
    shifted = mask.assign_coords(y=up + 32)
    with pytest.raises(ParameterError, match="covers the whole image"):
        resolve_mask(shifted, image)
    # a NumPy mask has no coordinates: its first row is the image's first row (y = 63.5)
    field = xfskde.local_fskde(image, **params, mask=north)
    np.testing.assert_array_equal(_computed_rows(field), [28.0, 20.0, 12.0, 4.0])
    # a tissue mask of the image's shape, made on the image upside down, is turned back
    data = image.where(image.y >= 32, 0)  # zero (background) where y < 32
    flipped = tissue_mask(data.isel(y=slice(None, None, -1)), method="nonzero", margin=0)
    np.testing.assert_array_equal(resolve_mask(flipped, data).values, north[::-1])


@pytest.mark.filterwarnings("ignore::xfskde.exceptions.PixelAspectWarning")  # degrees at 60° N
@pytest.mark.parametrize("names", [("lat", "lon"), ("row", "col")])
def test_a_mask_on_an_image_whose_dims_are_not_named_y_and_x(names):
    """The image functions read a (lat, lon) or (row, col) image by position, but its mask
    failed with a bare KeyError: 'y' (an array or "auto", for coefficients and segment), and
    a DataArray mask of the image's own dims was refused ("a mask needs dims y and x"). They
    give what the image named (y, x) gives; a mask of the image's dims transposed is laid
    over it as its dims say."""
    import xfskde

    image = _north_up((64, 48)).where(lambda a: a.x >= 16, 0)  # no data west of x = 16
    named = image.rename(y=names[0], x=names[1])
    params = {"order": 4, "window": "box", "size": 8, "stride": 8}
    drawn = np.zeros((64, 48), bool)
    drawn[:40, 8:] = True
    as_dataarray = xr.DataArray(drawn, dims=names, coords={names[0]: image.y.values,
                                                           names[1]: image.x.values})  # fmt: skip
    for mask, reference in (
        (drawn, drawn),
        ("auto", "auto"),
        (as_dataarray, as_dataarray.rename({names[0]: "y", names[1]: "x"})),
        (as_dataarray.T, as_dataarray.rename({names[0]: "y", names[1]: "x"})),
    ):
        field = xfskde.local_fskde(named, **params, mask=mask)
        expected = xfskde.local_fskde(image, **params, mask=reference)
        np.testing.assert_array_equal(field.values, expected.values)
        assert 0.3 < float(np.isnan(field.values[..., 0]).mean()) < 0.7  # a mask, not none
    np.testing.assert_array_equal(resolve_mask(as_dataarray.T, named).values, drawn)
    on_yx = as_dataarray.rename({names[0]: "y", names[1]: "x"})
    np.testing.assert_array_equal(resolve_mask(on_yx.T, image).values, drawn)  # (x, y)
    labels = xfskde.segment(named, 2, size=4, sample=2000, mask=drawn)
    assert not np.asarray(labels)[40:].any() and np.asarray(labels)[:40, 8:].all()
    with pytest.raises(DimensionError, match=rf"dims y and x \(or the image's, {names[0]}"):
        resolve_mask(xr.DataArray(drawn, dims=("a", "b")), named)


def test_a_mask_file_is_recorded_by_its_absolute_path_however_it_was_named(tmp_path, monkeypatch):
    """A mask file named relatively in Python was recorded as typed: a store begun with
    mask="mask.png" was refused on resume with the same file named absolutely (another
    mask, said the resume), and the same relative name in another folder, another file,
    passed as a new version of it. The record is the file's absolute path, as the command
    line's; a resume naming it either way finishes the store, another file is refused."""
    from PIL import Image

    import xfskde
    from xfskde.exceptions import StoreParametersError

    image = xr.DataArray(np.random.default_rng(0).random((64, 64), np.float32), dims=("y", "x"))
    for folder, start in (("a", 0), ("b", 32)):
        (tmp_path / folder).mkdir()
        keep = np.zeros((64, 64), np.uint8)
        keep[start : start + 32] = 255
        Image.fromarray(keep).save(tmp_path / folder / "mask.png")
    params = dict(order=2, window="box", size=4, stride=4)
    monkeypatch.chdir(tmp_path / "a")
    field = xfskde.local_fskde(image.chunk(32), **params, mask="mask.png")
    assert field.attrs["mask"] == str(tmp_path / "a" / "mask.png")
    store = tmp_path / "field.zarr"
    xfskde.write_coefficients(field, store)
    again = xfskde.local_fskde(image.chunk(32), **params, mask=str(tmp_path / "a" / "mask.png"))
    xfskde.write_coefficients(again, store, resume=True)  # the same file: resumed
    monkeypatch.chdir(tmp_path / "b")
    other = xfskde.local_fskde(image.chunk(32), **params, mask="mask.png")
    with pytest.raises(StoreParametersError, match=r"with the mask .*a/mask\.png, not .*b/mask"):
        xfskde.write_coefficients(other, store, resume=True)


def test_one_class_given_as_a_string_or_a_number_is_that_class_not_its_characters():
    """``classes="40"`` was taken as the sequence of its characters: the labels 4 and 0 —
    the background among them — were the foreground, and 40 was not. One class may now be
    given alone, as its name or its number; numbers in a list are their names."""
    labels = np.zeros((8, 8), np.uint8)
    labels[:4, :4], labels[4:, 4:] = 40, 4
    image = xr.DataArray(np.zeros((8, 8), np.float32), dims=("y", "x"))
    expected = labels == 40
    for classes in ("40", 40, np.uint8(40), ["40"], [40]):
        np.testing.assert_array_equal(resolve_mask(labels, image, classes=classes).values,
                                      expected)  # fmt: skip
    both = resolve_mask(labels, image, classes=[40, "4"]).values
    np.testing.assert_array_equal(both, labels > 0)
    with pytest.raises(ParameterError, match=r"^classes are names or whole numbers .* got 4.5$"):
        resolve_mask(labels, image, classes=[4.5])
