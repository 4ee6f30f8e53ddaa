"""PIL pictures as the arrays their files' readers give.

``PIL.Image.open`` returns a picture whose raw samples are not always its values: a palette
picture (GIFs, quantised PNGs; mode ``"P"``) holds indices into a colour table, a CMYK one
(print JPEGs) its ink amounts, and a picture with an alpha channel holds its opacity as a last
channel; Pillow turns a TIFF by its Orientation tag as it loads it (and drops the tag), where
the TIFF's readers (tifffile, :func:`xfskde.open_image`) read it as stored. Every door of the
library that takes an array (:func:`xfskde.local_fskde`, :func:`xfskde.segment`,
:func:`xfskde.open_image`, the descriptors) reads a picture through this module, as
scikit-image and imageio read its file — and a file's reader reads it through this module
too where it decodes it with Pillow. PIL itself is never imported here: a picture is
recognised by its type's module.
"""

from __future__ import annotations

import sys
import warnings
import weakref
from typing import Any

import numpy as np

from .exceptions import DimensionError, ExifOrientationWarning, find_stack_level

__all__ = [
    "CONVERTED_MODES",
    "ORIENTATION_TAG",
    "animation",
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
#: PIL's modes of pictures whose samples are not light: read as RGB, as Pillow converts them
#: (a CMYK JPEG's ink amounts; Pillow's decoder already undoes Adobe's inverted CMYK).
CONVERTED_MODES = {"CMYK": "RGB"}
#: The formats whose frames are a film (Pillow's ``n_frames``), and what people call them.
_ANIMATED = {"GIF": "GIF", "PNG": "PNG (APNG)", "WEBP": "WebP"}

#: How to undo, on the values of a picture Pillow loaded as shown, each orientation (the
#: ``ImageOps.exif_transpose`` Pillow applied): the stored grid again, exactly.
_UNDO = {
    2: lambda a: a[:, ::-1], 3: lambda a: a[::-1, ::-1], 4: lambda a: a[::-1],
    5: lambda a: a.swapaxes(0, 1), 6: lambda a: np.rot90(a, 1),
    7: lambda a: a[::-1, ::-1].swapaxes(0, 1), 8: lambda a: np.rot90(a, -1),
}  # fmt: skip
#: The orientation Pillow applied to a picture as it loaded it (by ``id``, while it lives: a
#: PIL picture is not hashable), once its tag is gone; and the last picture warned of, with
#: the user's call it was warned in, so that one call reading it several times warns once.
_APPLIED_ON_LOAD: dict[int, int] = {}
_LAST_WARNED: list[tuple[int, int, int, int]] = []


def is_picture(image: Any) -> bool:
    """Whether ``image`` is a PIL picture (what ``PIL.Image.open`` returns), without importing
    PIL."""
    return type(image).__module__.startswith("PIL.") and hasattr(image, "mode")


def animation(picture: Any) -> str | None:
    """What an animated picture is (``"an animated GIF of 3 frames"``), or None for a picture
    of one frame (a camera's MPO, whose second picture is a preview, counts as one)."""
    kind = _ANIMATED.get(getattr(picture, "format", None) or "")
    frames = int(getattr(picture, "n_frames", 1) or 1)
    return f"an animated {kind} of {frames} frames" if kind and frames > 1 else None


def _orientation(picture: Any) -> int:
    """The orientation a picture's EXIF (a TIFF's own tag) records: 1 (as stored) without."""
    return int(picture.getexif().get(ORIENTATION_TAG, 1) or 1)


def _loaded(picture: Any) -> tuple[int, int]:
    """Load a picture's pixels; the orientation its file records, and the one Pillow applied
    as it loaded them (a TIFF's: Pillow then drops the tag), else 1."""
    key = id(picture)
    if key in _APPLIED_ON_LOAD:  # loaded turned by an earlier read: its tag is gone
        return _APPLIED_ON_LOAD[key], _APPLIED_ON_LOAD[key]
    recorded = _orientation(picture)
    picture.load()
    if recorded in _UNDO and _orientation(picture) != recorded:  # turned and its tag dropped
        _APPLIED_ON_LOAD[key] = recorded
        weakref.finalize(picture, _APPLIED_ON_LOAD.pop, key, None)
        return recorded, recorded
    return recorded, 1


def picture_values(picture: Any, *, warn: bool = True) -> tuple[np.ndarray, bool]:
    """A PIL picture's values as its file's readers give them (scikit-image, imageio,
    tifffile), and whether their last channel is an alpha.

    A palette picture (GIFs, many PNGs: mode ``"P"``) holds indices into its colour table,
    whose gradients and histograms would be those of arbitrary numbers: it is read as RGB, or
    RGBA where the table has a transparent entry. A CMYK picture (a print JPEG) is read as
    RGB, as Pillow converts it (``picture.convert("RGB")``). A picture whose orientation asks
    viewers to turn it is read as stored — a TIFF, which Pillow turns as it loads it, turned
    back — and ``warn`` says so (:func:`warn_if_turned`), once per call of the library however
    often the call reads it. An animated picture (a GIF, WebP or APNG of several frames) is
    refused: one frame is picked first.

    Raises
    ------
    DimensionError
        For an animated picture, with how to pick a frame.
    """
    film = animation(picture)
    if film is not None:
        raise DimensionError(
            f"the picture is {film} (at frame {picture.tell()}): pass one frame, "
            "picture.seek(i) then picture.copy(), or its file to open_image(path, plane={'t': i})"
        )
    turned, applied = _loaded(picture)
    if warn:  # a file's reader says it for the file (warn=False)
        _warn_once(picture, turned)
    mode = picture.mode
    if mode in _PALETTE_MODES:
        transparent = mode == "PA" or "transparency" in picture.info
        picture = picture.convert("RGBA" if transparent else _PALETTE_MODES[mode])
    elif mode in CONVERTED_MODES:
        picture = picture.convert(CONVERTED_MODES[mode])
    values = np.asarray(picture)
    if applied != 1:  # the stored grid, as the file's readers read it
        values = np.ascontiguousarray(_UNDO[applied](values))
    return values, picture.mode in _ALPHA_MODES


def _warn_once(picture: Any, turned: int) -> None:
    """:func:`warn_if_turned` for a picture, unless the same call of the library (the same
    line of the user's code, at the same instruction) has warned of it already: a call that
    reads it several times (:func:`xfskde.segment` fits, then labels) warns once."""
    if turned not in _TURNS:
        return
    level = find_stack_level()  # counted from here: the user's frame is that many - 1 up
    frame = sys._getframe(level - 1)
    call = (id(picture), turned, id(frame), frame.f_lasti)
    del frame
    if _LAST_WARNED == [call]:
        return
    name = getattr(picture, "filename", "") or f"the {picture.mode} picture"
    tag = "TIFF Orientation" if getattr(picture, "format", None) == "TIFF" else "EXIF orientation"
    warn_if_turned(name, turned, tag, "turn it first: ImageOps.exif_transpose")
    _LAST_WARNED[:] = [call]


def palette_indices(picture: Any) -> np.ndarray | None:
    """A palette picture's raw values, the indices into its colour table — where they are
    labels (an annotation tool's label PNG, a mask: index 0 the background) — or None for a
    picture of another mode."""
    if picture.mode not in _PALETTE_MODES:
        return None
    _, applied = _loaded(picture)
    values = np.asarray(picture)
    return np.ascontiguousarray(_UNDO[applied](values)) if applied != 1 else values


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
