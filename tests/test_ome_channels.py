"""Channel names and pixel sizes as OME files give them, in part or with repeats.

* Unnamed channels picked with ``channels=[2, 0]`` keep the file's indices as their ``c``
  coordinate, as named ones keep their names (they were renumbered 0, 1).
* A channel name given twice, or names given for some channels only, dropped every name
  ("3 unnamed channels"): the names given are kept (an unnamed channel is named by its
  index), and picking a repeated name is refused in one line.
* OME pixel sizes in picometres (``pm``) were dropped; ``PhysicalSizeX`` without
  ``PhysicalSizeY`` (which the OME schema does not default: pixels need not be square) was
  dropped without a word, now with a warning naming the missing one.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tifffile
import zarr

import xfskde
from xfskde.exceptions import ParameterError
from xfskde.io._location import micrometres

RNG = np.random.default_rng(5)
PLANES = RNG.integers(0, 4000, (3, 64, 64), dtype=np.uint16)


def _ome(path, channel, **sizes):
    metadata = {"axes": "CYX", "PhysicalSizeX": 0.325, "PhysicalSizeY": 0.325, **sizes}
    if channel is not None:
        metadata["Channel"] = channel
    tifffile.imwrite(path, PLANES, photometric="minisblack", metadata=metadata)
    return path


def test_unnamed_channels_keep_the_files_indices(tmp_path):
    path = _ome(tmp_path / "unnamed.ome.tif", None)
    picked = xfskde.open_image(path, channels=[2, 0])
    assert picked.dims == ("c", "y", "x")
    assert picked["c"].values.tolist() == [2, 0]  # was [0, 1]
    np.testing.assert_array_equal(picked.values, PLANES[[2, 0]])
    assert picked.attrs["source_channels"] == "[2, 0]"
    # named channels keep their names alike
    named = _ome(tmp_path / "named.ome.tif", {"Name": ["DAPI", "CD3", "CD8"]})
    assert xfskde.open_image(named, channels=[2, 0])["c"].values.tolist() == ["CD8", "DAPI"]


def test_a_repeated_name_is_kept_and_not_picked_by(tmp_path):
    path = _ome(tmp_path / "dup.ome.tif", {"Name": ["DAPI", "CD3", "DAPI"]})
    image = xfskde.open_image(path)
    assert image["c"].values.tolist() == ["DAPI", "CD3", "DAPI"]  # was no names at all
    cd3 = xfskde.open_image(path, channels=["CD3"])
    np.testing.assert_array_equal(cd3.values, PLANES[[1]])
    with pytest.raises(ParameterError) as refused:
        xfskde.open_image(path, channels=["DAPI"])
    message = str(refused.value)
    assert message == (
        "channels: 'DAPI' names 2 channels of this image (indices 0, 2); pick one by its index"
    )
    second = xfskde.open_image(path, channels=[2])
    np.testing.assert_array_equal(second.values, PLANES[[2]])
    assert second["c"].values.tolist() == ["DAPI"]


def test_names_given_for_some_channels_are_kept(tmp_path):
    path = _ome(tmp_path / "partial.ome.tif", [{"Name": "DAPI"}, {}, {"Name": "CD8"}])
    image = xfskde.open_image(path)
    assert image["c"].values.tolist() == ["DAPI", "1", "CD8"]  # the unnamed one: its index
    np.testing.assert_array_equal(xfskde.open_image(path, channels=["CD8"]).values, PLANES[[2]])
    np.testing.assert_array_equal(xfskde.open_image(path, channels=["1"]).values, PLANES[[1]])


def test_omero_labels_given_for_some_channels_are_kept(tmp_path):
    from ome_zarr.format import FormatV04
    from ome_zarr.writer import write_image

    path = tmp_path / "partial.ome.zarr"
    root = zarr.open_group(path, mode="w", zarr_format=2)
    window = {"start": 0, "end": 4000, "min": 0, "max": 65535}
    channels = [{"label": "DAPI", "color": "0000FF", "window": window},
                {"color": "00FF00", "window": window},
                {"label": "CD8", "color": "FF0000", "window": window}]  # fmt: skip
    write_image(PLANES, root, axes="cyx", fmt=FormatV04(), scale_factors=[2],
                omero={"channels": channels})  # fmt: skip
    image = xfskde.open_image(path)
    assert image["c"].values.tolist() == ["DAPI", "1", "CD8"]
    np.testing.assert_array_equal(xfskde.open_image(path, channels=["CD8"]).values, PLANES[[2]])


def test_picometres_are_read(tmp_path):
    path = _ome(tmp_path / "pm.ome.tif", None, PhysicalSizeX=325000.0, PhysicalSizeXUnit="pm",
                PhysicalSizeY=650000.0, PhysicalSizeYUnit="pm")  # fmt: skip
    image = xfskde.open_image(path)
    np.testing.assert_allclose(image.attrs["source_pixel_size_um"], [0.65, 0.325])
    np.testing.assert_allclose(image["x"].values[:3], [0.0, 0.325, 0.65])
    assert image["x"].attrs["units"] == "µm"
    # OME's symbols that differ by case only: petametre and megametre are not pm and mm
    assert micrometres(2.0, "pm") == pytest.approx(2e-6)
    assert micrometres(1.0, "Pm") == 1e21 and micrometres(1.0, "Mm") == 1e12
    assert micrometres(1.0, "mm") == 1e3


def test_physical_size_x_without_y_is_not_read_and_says_so(tmp_path):
    path = tmp_path / "x-only.ome.tif"
    tifffile.imwrite(path, PLANES, photometric="minisblack",
                     metadata={"axes": "CYX", "PhysicalSizeX": 0.5})  # fmt: skip
    with pytest.warns(UserWarning) as caught:
        image = xfskde.open_image(path)
    said = [str(w.message) for w in caught if "PhysicalSize" in str(w.message)]
    assert said == [
        "x-only.ome.tif: its OME-XML gives PhysicalSizeX (0.5 µm) but no PhysicalSizeY, which "
        "OME does not default: its pixel size is not read (pixels may not be square); add "
        "PhysicalSizeY to its OME-XML (tifffile's tiffcomment) to read it"
    ]
    assert "source_pixel_size_um" not in image.attrs
    assert image["x"].values[:3].tolist() == [0, 1, 2]
    # both given: no warning
    both = _ome(tmp_path / "both.ome.tif", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert xfskde.open_image(both).attrs["source_pixel_size_um"] == [0.325, 0.325]


def test_a_model_is_not_given_a_repeated_name_s_channel(tmp_path):
    """A model takes its channels by name from an image of other order or more channels; one
    whose name the image gives twice is not known: refused (it took the first, silently)."""
    from xfskde.datasets import section_in_fluorescence
    from xfskde.segmentation import fit_textures

    counts, _ = section_in_fluorescence(seed=0)
    cyx = np.moveaxis(counts, -1, 0)
    names = ["DAPI", "marker", "autofluorescence"]
    fitted_on = tmp_path / "fitted.ome.tif"
    tifffile.imwrite(fitted_on, cyx, metadata={"axes": "CYX", "Channel": {"Name": names}})
    model = fit_textures(xfskde.open_image(fitted_on), 2, mask="fluorescence", sample=2000)
    repeated = tmp_path / "repeated.ome.tif"
    tifffile.imwrite(repeated, cyx[[0, 1, 2, 0]],
                     metadata={"axes": "CYX", "Channel": {"Name": [*names, "DAPI"]}})  # fmt: skip
    with pytest.raises(ParameterError) as refused:
        model.predict(xfskde.open_image(repeated))
    assert str(refused.value) == (
        "the image's channels are DAPI, marker, autofluorescence, DAPI: DAPI names more than "
        "one, so the model's channels (DAPI, marker, autofluorescence) are not taken by name; "
        "pick them by index (channels= of open_image, --channels 0,1)"
    )
    picked = xfskde.open_image(repeated, channels=[0, 1, 2])  # by index: the model's
    np.testing.assert_array_equal(
        model.predict(picked).values, model.predict(xfskde.open_image(fitted_on)).values
    )
