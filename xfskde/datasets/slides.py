"""Brightfield slides made from a real section: tissue on glass, as a scanner writes it.

:func:`section_on_glass` lays scikit-image's immunohistochemistry image (installed with
scikit-image itself: no download) in an ellipse on grey-white glass with a little noise, as an
8-bit RGB image with the section's extent as its truth — the slide the tissue mask
(:func:`xfskde.masks.tissue_mask`) and segmentation with ``mask="auto"`` are shown and checked
on (docs/segmentation.md, "A section on glass").
"""

from __future__ import annotations

import numpy as np

__all__ = ["GLASS_RGB", "section_on_glass"]

#: The glass's mean colour (8-bit RGB): grey-white with a faint tint, as scanned glass is.
GLASS_RGB: tuple[int, int, int] = (236, 234, 238)


def section_on_glass(*, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """scikit-image's IHC section (``skimage.data.immunohistochemistry``, 512 × 512) inside an
    ellipse of half-axes 250 × 330 px centred on it (cut by its left and right edges), on glass
    of colour :data:`GLASS_RGB` with Gaussian noise of 3 levels per channel: a 576 × 768
    slide, the image at rows 32–544 and columns 128–640.

    Parameters
    ----------
    seed : int
        Seed of the glass's noise.

    Returns
    -------
    slide : numpy.ndarray of uint8, shape (576, 768, 3)
    section : numpy.ndarray of bool, shape (576, 768)
        True on the section's pixels (51 % of the slide), False on the glass.
    """
    from skimage import data

    rng = np.random.default_rng(seed)
    glass = np.array(GLASS_RGB) + rng.normal(0, 3, (576, 768, 3))
    slide = glass.clip(0, 255).astype(np.uint8)
    yy, xx = np.mgrid[0:512, 0:512]
    inside = ((yy - 256) / 250) ** 2 + ((xx - 256) / 330) ** 2 < 1
    slide[32:544, 128:640][inside] = data.immunohistochemistry()[inside]
    section = np.zeros((576, 768), bool)
    section[32:544, 128:640] = inside
    return slide, section
