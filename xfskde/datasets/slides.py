"""Slides made from a real section: tissue on glass, as a scanner or a camera records it.

:func:`section_on_glass` lays scikit-image's immunohistochemistry image (installed with
scikit-image itself: no download) in an ellipse on grey-white glass with a little noise, as an
8-bit RGB image with the section's extent as its truth — the slide the tissue mask
(:func:`xfskde.masks.tissue_mask`) and segmentation with ``mask="auto"`` are shown and checked
on (docs/segmentation.md, "A section on glass"). :func:`section_in_fluorescence` is the same
section as a fluorescence camera would record it — its stains' concentrations as three
channels of photon counts on a dark background, with the camera's offset and noise — the
image ``method="fluorescence"`` is shown and checked on (docs/tissue.md).
"""

from __future__ import annotations

import numpy as np

__all__ = ["CAMERA_OFFSET", "GLASS_RGB", "section_in_fluorescence", "section_on_glass"]

#: The glass's mean colour (8-bit RGB): grey-white with a faint tint, as scanned glass is.
GLASS_RGB: tuple[int, int, int] = (236, 234, 238)
#: The fluorescence camera's offset (counts): what it reads without light.
CAMERA_OFFSET = 100


def section_on_glass(*, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """scikit-image's IHC section (``skimage.data.immunohistochemistry``, 512 × 512) inside an
    ellipse of half-axes 250 × 330 px centred on it (cut by its left and right edges), on glass
    of colour :data:`GLASS_RGB` with Gaussian noise of 3 levels per channel: a 576 × 768
    slide, the image at rows 32–544 and columns 128–640.

    Parameters
    ----------
    seed : int, optional
        Seed of the glass's noise (default 0).

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
    inside, section = _section()
    slide[_PLACE][inside] = data.immunohistochemistry()[inside]
    return slide, section


#: Where the 512 × 512 IHC image lies on the 576 × 768 slide.
_PLACE = np.s_[32:544, 128:640]


def _section() -> tuple[np.ndarray, np.ndarray]:
    """The section's pixels: of the IHC image (an ellipse of half-axes 250 × 330 centred on
    it) and of the slide it lies on at :data:`_PLACE`."""
    yy, xx = np.mgrid[0:512, 0:512]
    inside = ((yy - 256) / 250) ** 2 + ((xx - 256) / 330) ** 2 < 1
    section = np.zeros((576, 768), bool)
    section[_PLACE] = inside
    return inside, section


def section_in_fluorescence(
    *, seed: int = 0, brightness: float = 1.0, read_noise: float = 4.0
) -> tuple[np.ndarray, np.ndarray]:
    """The section of :func:`section_on_glass` as a fluorescence image: 16-bit counts of three
    channels on a dark background, 576 × 768, the section at the same place.

    The IHC image's stains are separated (``skimage.color.rgb2hed``) and each channel's
    expected photon count is a stain's concentration: channel 0 the haematoxylin's (the
    nuclei, as DAPI shows them; 2 500 counts at its 99th percentile), channel 1 the DAB's (the
    marker; 3 000), channel 2 the section's optical density, 1 − its grey level (tissue's
    autofluorescence, brightest in the dense parts, faint in the stroma; 400), each times
    ``brightness``; 5 counts of stray light everywhere. A pixel records :data:`CAMERA_OFFSET`
    plus a Poisson draw of its count plus Gaussian read noise of ``read_noise`` counts.

    Parameters
    ----------
    seed : int, optional
        Seed of the noise (default 0).
    brightness : float, optional
        The signal's scale (default 1; 0.02: a dim, short exposure, the nuclei at 50 counts).
    read_noise : float, optional
        The camera's read noise, in counts (default 4).

    Returns
    -------
    image : numpy.ndarray of uint16, shape (576, 768, 3)
    section : numpy.ndarray of bool, shape (576, 768)
        True on the section's pixels, as :func:`section_on_glass`'s.
    """
    from skimage import color, data

    rng = np.random.default_rng(seed)
    ihc = data.immunohistochemistry()
    stains = color.rgb2hed(ihc)
    density = 1 - ihc.mean(axis=-1) / 255
    channels = [(stains[..., 0], 2500.0), (stains[..., 2], 3000.0), (density, 400.0)]
    expected = np.zeros((576, 768, 3))
    inside, section = _section()
    for i, (plane, peak) in enumerate(channels):
        plane = np.clip(plane, 0, None)
        counts = plane / np.percentile(plane, 99) * peak * brightness
        expected[_PLACE][..., i][inside] = counts[inside]
    image = CAMERA_OFFSET + rng.poisson(expected + 5) + rng.normal(0, read_noise, expected.shape)
    return np.clip(image, 0, 65535).astype(np.uint16), section
