"""PIL pictures as the arrays their files' readers give.

``PIL.Image.open`` returns a picture whose raw samples are not always its values: a palette
picture (GIFs, quantised PNGs; mode ``"P"``) holds indices into a colour table, and a picture
with an alpha channel holds its opacity as a last channel. Every door of the library that
takes an array (:func:`xfskde.local_fskde`, :func:`xfskde.segment`, :func:`xfskde.open_image`)
reads a picture through this module, as scikit-image and imageio read its file. PIL itself is
never imported here: a picture is recognised by its type's module.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .exceptions import ExifOrientationWarning, find_stack_level

__all__ = [
    "ORIENTATION_TAG",
    "is_picture",
    "palette_indices",
    "picture_values",
    "pixels",
    "transparent_as_nan",
    "warn_if_turned",
]

#: The EXIF (and TIFF) tag of a picture's orientation, and what its values other than 1 ask a
#: viewer to do.
ORIENTATION_TAG = 0x0112
_TURNS = {
    2: "mirrored left to right", 3: "turned 180°", 4: "mirrored top to bottom",
    5: "mirrored along its main diagonal", 6: "turned 90° clockwise",
    7: "mirrored along its other diagonal", 8: "turned 90° counter-clockwise",
}  # fmt: skip

#: PIL's modes of a palette picture (its values are indices into a colour table) and the mode
#: image readers decode each to; and the modes whose last channel is an alpha (opacity).
_PALETTE_MODES = {"P": "RGB", "PA": "RGBA"}
_ALPHA_MODES = ("RGBA", "RGBa", "LA", "La")


def is_picture(image: Any) -> bool:
    """Whether ``image`` is a PIL picture (what ``PIL.Image.open`` returns), without importing
    PIL."""
    return type(image).__module__.startswith("PIL.") and hasattr(image, "mode")


def picture_values(picture: Any, *, warn: bool = True) -> tuple[np.ndarray, bool]:
    """A PIL picture's values as its file's readers give them (scikit-image, imageio), and
    whether their last channel is an alpha.

    A palette picture (GIFs, many PNGs: mode ``"P"``) holds indices into its colour table,
    whose gradients and histograms would be those of arbitrary numbers: it is read as RGB, or
    RGBA where the table has a transparent entry. A picture whose EXIF orientation asks
    viewers to turn it is read as stored, and ``warn`` says so (:func:`warn_if_turned`)."""
    if warn:  # a file's reader says it for the file (warn=False)
        turned = int(picture.getexif().get(ORIENTATION_TAG, 1) or 1)
        name = getattr(picture, "filename", "") or f"the {picture.mode} picture"
        warn_if_turned(name, turned, "EXIF orientation", "turn it first: ImageOps.exif_transpose")
    mode = picture.mode
    if mode in _PALETTE_MODES:
        transparent = mode == "PA" or "transparency" in picture.info
        picture = picture.convert("RGBA" if transparent else _PALETTE_MODES[mode])
    return np.asarray(picture), picture.mode in _ALPHA_MODES


def palette_indices(picture: Any) -> np.ndarray | None:
    """A palette picture's raw values, the indices into its colour table — where they are
    labels (an annotation tool's label PNG, a mask: index 0 the background) — or None for a
    picture of another mode."""
    return np.asarray(picture) if picture.mode in _PALETTE_MODES else None


def pixels(image: Any) -> np.ndarray:
    """An image's values as a NumPy array: ``np.asarray``, but a PIL picture as its file's
    readers read it (:func:`picture_values`: a palette picture as RGB), and without its alpha
    channel (``"RGBA"``, ``"LA"``: cut-outs, screenshots): unchanged where every pixel is
    opaque, else as float32 with NaN at the transparent pixels (alpha 0), the pixels that are
    not there, as :func:`xfskde.open_image` reads such a file."""
    if not is_picture(image):
        return np.asarray(image)
    values, alpha = picture_values(image)
    if not alpha:
        return values
    if values[..., -1].all():  # opaque: the colours as they are
        colour = values[..., :-1]
    else:
        colour = transparent_as_nan(values, -1, None)
    return np.ascontiguousarray(colour[..., 0] if colour.shape[-1] == 1 else colour)


def transparent_as_nan(
    block: np.ndarray, axis: int, nodata: float | int | None, index: int = -1
) -> np.ndarray:
    """A block's colour channels (all but the alpha, channel ``index`` along ``axis``: the
    last, or the first extra sample of a multispectral TIFF) as float32, NaN where the alpha
    is 0 and where every colour channel equals ``nodata``."""
    colour = np.delete(block, index, axis=axis)
    out = colour.astype(np.float32)
    missing = np.take(block, index, axis=axis) == 0
    if nodata is not None:
        missing |= np.all(colour == nodata, axis=axis)
    np.copyto(out, np.float32(np.nan), where=np.expand_dims(missing, axis))
    return out


def warn_if_turned(name: str, turned: int, tag: str, remedy: str) -> None:
    """Say that a picture whose orientation tag asks viewers to turn or mirror it (``turned``,
    2-8) is read as stored, and what to do (:class:`~xfskde.exceptions.ExifOrientationWarning`);
    nothing for 1 (as stored) or no tag."""
    if turned not in _TURNS:
        return
    warnings.warn(
        f"{name} says viewers show it {_TURNS[turned]} ({tag} {turned}); its pixels are read "
        "as stored, as scikit-image and tifffile read them, so results and angles are those "
        f"of the stored grid: to work on the picture as it is shown, {remedy}",
        ExifOrientationWarning,
        stacklevel=find_stack_level(),
    )
