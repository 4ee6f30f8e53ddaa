"""PIL pictures as the arrays their files' readers give.

``PIL.Image.open`` returns a picture whose raw samples are not always its values: a palette
picture (GIFs, quantised PNGs; mode ``"P"``) holds indices into a colour table, and a picture
with an alpha channel holds its opacity as a last channel. Every door of the library that
takes an array (:func:`xfskde.local_fskde`, :func:`xfskde.segment`, :func:`xfskde.open_image`)
reads a picture through this module, as scikit-image and imageio read its file. PIL itself is
never imported here: a picture is recognised by its type's module.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["is_picture", "picture_values", "pixels"]

#: PIL's modes of a palette picture (its values are indices into a colour table) and the mode
#: image readers decode each to; and the modes whose last channel is an alpha (opacity).
_PALETTE_MODES = {"P": "RGB", "PA": "RGBA"}
_ALPHA_MODES = ("RGBA", "RGBa", "LA", "La")


def is_picture(image: Any) -> bool:
    """Whether ``image`` is a PIL picture (what ``PIL.Image.open`` returns), without importing
    PIL."""
    return type(image).__module__.startswith("PIL.") and hasattr(image, "mode")


def picture_values(picture: Any) -> tuple[np.ndarray, bool]:
    """A PIL picture's values as its file's readers give them (scikit-image, imageio), and
    whether their last channel is an alpha.

    A palette picture (GIFs, many PNGs: mode ``"P"``) holds indices into its colour table,
    whose gradients and histograms would be those of arbitrary numbers: it is read as RGB, or
    RGBA where the table has a transparent entry."""
    mode = picture.mode
    if mode in _PALETTE_MODES:
        transparent = mode == "PA" or "transparency" in picture.info
        picture = picture.convert("RGBA" if transparent else _PALETTE_MODES[mode])
    return np.asarray(picture), picture.mode in _ALPHA_MODES


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
    colour, opacity = values[..., :-1], values[..., -1]
    colour = colour[..., 0] if colour.shape[-1] == 1 else colour
    if opacity.all():
        return np.ascontiguousarray(colour)
    out = colour.astype(np.float32)
    out[opacity == 0] = np.nan
    return out
