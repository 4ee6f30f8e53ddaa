"""Segmentation labels as an indexed PNG (:func:`write_labels_png`, :func:`png_attrs`), and
pictures of maps as RGB PNGs (:func:`write_picture_png`).

For a photograph, a micrograph or a frame, the picture everybody opens: every pixel's value is
its label (0 the background, 1 … n the textures), and the file's palette gives each label the
colour it has in the library's pictures, in napari and in the GeoTIFF's colour table
(:mod:`xfskde._palette`), the background transparent. Image viewers show the colours; the
labels read back as the palette's indices, as label maps of vision data sets are stored
(``np.asarray(PIL.Image.open(path))``; scikit-image and imageio decode the colours instead).
The result's attrs — the fitted model among them — are kept as JSON in an ``iTXt`` chunk
named ``xfskde``, so that ``xfskde segment OTHER.png OUT.png --model LABELS.png`` labels other
pictures with the same textures (:func:`png_attrs`, :func:`xfskde.segmentation.read_model`).
An orientation map is written as the picture the library draws of it (``xfskde maps IMAGE
OUT.png``: hue the orientation, brightness the coherence), its parameters kept likewise.

A PNG is written whole, from memory, and holds at most 255 labels; pictures larger than
:data:`PNG_MAX_PIXELS` are refused, as image readers refuse or warn of them (write a GeoTIFF,
an OME-TIFF or a Zarr store). PIL (a dependency of scikit-image) writes and reads it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import xarray as xr

from .._palette import BACKGROUND_COLOUR, label_rgba_8bit
from .._scheduling import compute as compute_collections
from ..exceptions import DimensionError, ParameterError
from .omezarr import _jsonable

__all__ = [
    "PNG_MAX_PIXELS",
    "check_png_size",
    "png_attrs",
    "write_labels_png",
    "write_picture_png",
]

#: The most pixels a PNG is written with: PIL's ``Image.MAX_IMAGE_PIXELS`` (a 9459² picture),
#: beyond which PIL, and with it scikit-image, imageio and napari's readers, warn of a
#: decompression bomb (and refuse at twice it).
PNG_MAX_PIXELS = 89_478_485
#: The PNG text chunk that holds the result's attrs as JSON.
ATTRS_CHUNK = "xfskde"


def write_labels_png(labels: Any, path: str | os.PathLike, *, model: Any = None) -> Path:
    """Write segmentation labels as an indexed (palette) PNG whose values are the labels.

    Parameters
    ----------
    labels : xarray.DataArray or numpy.ndarray
        ``(y, x)`` integer labels in 0–255, as :func:`xfskde.segment` returns them (NumPy- or
        Dask-backed: computed here). The palette holds ``attrs["n_textures"]`` colours (else
        as many as the largest label); its attrs are written as JSON in the ``xfskde`` text
        chunk.
    path : str or path-like
        The file to write (replaced if it exists).
    model : TextureModel, optional
        The model that made labels which record none (NumPy labels, ``segment(array, n,
        return_model=True)``): its attrs are written with them, so that the PNG is a saved
        model (:func:`xfskde.segmentation.read_model`, ``--model``).

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    DimensionError
        For labels that are not 2-D, or of more than :data:`PNG_MAX_PIXELS` pixels.
    ParameterError
        For labels that are not integers in 0–255.
    """
    from PIL import Image

    attrs = {**(model.attrs() if model is not None else {}), **getattr(labels, "attrs", {})}
    shape = np.shape(labels)  # refused before a lazy result is computed
    if len(shape) != 2:
        raise DimensionError(f"labels must be (y, x) to be a PNG, got shape {shape}")
    check_png_size(shape, "the labels")
    (values,) = compute_collections([labels.data if isinstance(labels, xr.DataArray) else labels])
    values = np.asarray(values)
    low, high = (int(values.min()), int(values.max())) if values.size else (0, 0)
    if values.dtype.kind not in "ui" or not 0 <= low <= high <= 255:
        raise ParameterError(
            "labels must be integers in 0-255 to be a PNG's palette indices, got "
            f"{values.dtype} values {low}-{high}"
        )
    rgba = label_rgba_8bit(max(int(attrs.get("n_textures", high)), high), BACKGROUND_COLOUR)
    picture = Image.fromarray(values.astype(np.uint8))  # grey "L": its values, not a quantisation
    picture.putpalette(rgba[:, :3].astype(np.uint8).ravel().tolist())  # now "P", the same values
    return _saved(picture, path, attrs, transparency=bytes(rgba[:, 3].tolist()))


def write_picture_png(rgb: Any, path: str | os.PathLike, attrs: dict | None = None) -> Path:
    """Write a picture — ``(y, x, 3)`` RGB in [0, 1], as :func:`xfskde.plot.axial_rgb` draws
    an orientation map — as an 8-bit RGB PNG, ``attrs`` (how it was computed) kept as JSON in
    its ``xfskde`` text chunk.

    Parameters
    ----------
    rgb : array_like, shape (y, x, 3)
        The picture, read as float64 (a Dask array is computed); values beyond [0, 1] are
        clipped and NaN written as 0, then rounded to 0-255.
    path : str or path-like
        The file to write (replaced if it exists).
    attrs : dict, optional
        What to keep in the text chunk (JSON-able values); None (the default): ``{}``.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    DimensionError
        For an array that is not ``(y, x, 3)``, or of more than :data:`PNG_MAX_PIXELS` pixels.
    """
    from PIL import Image

    values = np.asarray(rgb, dtype=np.float64)
    if values.ndim != 3 or values.shape[2] != 3:
        raise DimensionError(f"a picture must be (y, x, 3) RGB, got shape {values.shape}")
    check_png_size(values.shape[:2])
    pixels = np.round(np.clip(np.nan_to_num(values), 0, 1) * 255).astype(np.uint8)
    return _saved(Image.fromarray(pixels), path, attrs or {})


def check_png_size(
    shape: tuple[int, ...],
    what: str = "the picture",
    remedy: str = "write a GeoTIFF (.tif), an OME-TIFF (.ome.tif) or a Zarr store (.zarr)",
) -> None:
    """Refuse a ``(y, x, ...)`` picture of more than :data:`PNG_MAX_PIXELS` pixels, saying
    ``what`` it is and the ``remedy``: the writers check it, and the command line before
    anything is computed.

    Parameters
    ----------
    shape : tuple of int
        The picture's shape; its first two entries are its rows and columns.
    what : str, optional
        What the picture is, opening the message; ``"the picture"`` by default.
    remedy : str, optional
        What to do instead, closing the message; by default the GeoTIFF, OME-TIFF and Zarr
        outputs.

    Raises
    ------
    DimensionError
        For a picture of more pixels.
    """
    if shape[0] * shape[1] > PNG_MAX_PIXELS:
        raise DimensionError(
            f"{what}: {shape[0]} x {shape[1]} pixels are more than image readers open as a PNG "
            f"({PNG_MAX_PIXELS} pixels): {remedy}"
        )


def _saved(picture: Any, path: str | os.PathLike, attrs: dict, **options: Any) -> Path:
    """``picture`` saved as a PNG at ``path``, ``attrs`` in its ``xfskde`` text chunk."""
    from PIL import PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_itxt(ATTRS_CHUNK, json.dumps(_jsonable(attrs)), zip=True)
    picture.save(path, format="PNG", pnginfo=info, **options)
    return Path(path)


def png_attrs(path: str | os.PathLike | BinaryIO) -> dict[str, Any]:
    """The attrs :func:`write_labels_png` kept in a PNG (its ``xfskde`` text chunk), from its
    path or its opened bytes; {} for a PNG without them.

    Parameters
    ----------
    path : str, path-like or binary file
        The PNG (any picture PIL opens; a text chunk is only a PNG's).

    Returns
    -------
    dict
        The attrs, as the JSON holds them.
    """
    from PIL import Image

    with Image.open(path) as picture:
        text = picture.info.get(ATTRS_CHUNK)  # written before the pixels: not decoded
        if text is None:  # a chunk after the pixels (a file saved again by another tool)
            text = getattr(picture, "text", {}).get(ATTRS_CHUNK)
    return {} if text is None else dict(json.loads(text))
