"""The colours of segmentation labels, one palette for every face that shows labels.

Label ``i`` (1, 2, ...) always gets the ``i``-th colour, whichever labels are present, and label
0 (the background) none. The same colours are used by the pictures of :mod:`xfskde.plot`, the
colour table of a labels GeoTIFF (:func:`xfskde.io.write_geotiff`: what QGIS and GDAL show),
the ``colors`` of an NGFF label image (:mod:`xfskde.io.omezarr`: what napari shows) and the
``omero`` colours of the abundance channels beside it (texture ``i``'s abundance in label
``i``'s colour; in an OME-TIFF, its ``Channel Color``), so a texture has one colour wherever
its labels or its abundance are opened. The names of the labels, :func:`label_names`, are one
list too: ``"background"`` for 0, ``"texture i"`` for label ``i``, as the NGFF label image's
``properties`` and the labels GeoTIFF's category names and attribute table give them.

The colours: matplotlib's "tab10" without its grey, then the light halves of "tab20" without
theirs (greys would read as the background); further labels get hues spaced by the golden angle,
alternately bright and darker, so that neighbouring labels stay far apart for any number.

This module is a foundation: it needs NumPy and the standard library only (no matplotlib).
"""

from __future__ import annotations

import colorsys

import numpy as np

__all__ = [
    "BACKGROUND_COLOUR",
    "LABEL_COLOURS",
    "label_hex",
    "label_name",
    "label_names",
    "label_palette",
    "label_rgba_8bit",
]

#: Colours of labels 1, 2, ... (hex RGB), before the golden-angle hues.
LABEL_COLOURS = (
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
    "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94", "#f7b6d2",
    "#dbdb8d", "#9edae5",
)  # fmt: skip

#: The neutral colour of the background (label 0) in pictures: a light grey no texture colour is
#: close to.
BACKGROUND_COLOUR = (0.85, 0.85, 0.85)

#: The golden angle as a fraction of the hue circle: successive hues as far apart as can be.
_GOLDEN = 0.618033988749895


def label_palette(n: int) -> np.ndarray:
    """RGB in [0, 1] of labels 0 .. n: float64 ``(n + 1, 3)``; row 0 (the background) is 0.

    Labels beyond :data:`LABEL_COLOURS` get hues ``0.1 + j * golden`` (mod 1) at saturation
    0.75 and value 0.9 or 0.65 (alternately), ``j`` counting from the first such label.
    """
    listed = [[int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in LABEL_COLOURS]
    extra = [
        colorsys.hsv_to_rgb((0.1 + j * _GOLDEN) % 1.0, 0.75, 0.65 if j % 2 else 0.9)
        for j in range(max(n - len(listed), 0))
    ]
    colours = np.asarray([*listed, *extra], dtype=np.float64)[: max(n, 0)]
    return np.concatenate([np.zeros((1, 3)), colours.reshape(-1, 3)])


def label_rgba_8bit(n: int, background: tuple[float, float, float] = (0.0, 0.0, 0.0)) -> np.ndarray:
    """:func:`label_palette` as 0-255 RGBA ``(n + 1, 4)`` ints, as GDAL colour tables and NGFF
    ``colors`` hold them (the listed colours are their hex values exactly): the labels opaque,
    label 0 ``background`` (RGB in [0, 1]) and transparent."""
    rgb = label_palette(n)
    rgb[0] = background
    alpha = np.full((n + 1, 1), 255)
    alpha[0] = 0
    return np.concatenate([np.round(rgb * 255).astype(int), alpha], axis=1)


def label_hex(n: int) -> list[str]:
    """:func:`label_palette` of labels 1 .. n as ``"RRGGBB"`` hex text (upper case, no ``#``),
    as OME-NGFF ``omero`` channels hold a colour: the 8-bit values of
    :func:`label_rgba_8bit`."""
    return ["".join(f"{int(v):02X}" for v in row[:3]) for row in label_rgba_8bit(n)[1:]]


def label_names(n: int) -> list[str]:
    """The names of labels 0 .. n of a segmentation of ``n`` textures: ``"background"``, then
    ``"texture 1"`` .. ``"texture n"``, as an NGFF label image's ``properties`` and a labels
    GeoTIFF's category names (what QGIS and ``gdalinfo`` show) hold them."""
    return [label_name(i) for i in range(max(int(n), 0) + 1)]


def label_name(label: int) -> str:
    """The name of one label value: ``"background"`` for 0, else ``"texture i"`` (the names
    of :func:`label_names`, of a GeoJSON's polygons, a picture's legend, the abundances'
    ``texture`` coordinate)."""
    return "background" if int(label) == 0 else f"texture {int(label)}"
