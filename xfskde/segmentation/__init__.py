"""Texture segmentation by unmixing local features (ORTSEG with cos^2K FS-KDEs, section 5.3).

* :mod:`.features`: local colour histograms, filter-bank spectral histograms (:mod:`._bank`),
  gradient-angle histograms and FS-KDE densities, one window for all.
* :mod:`.defaults`: the rule that chooses the settings of ``segment(image, n)`` from the image.
* :mod:`.unmixing`: pure texture features and exact per-pixel abundances on the simplex.
* :mod:`.model`: :func:`segment`, :func:`fit_textures` and :class:`TextureModel`, blockwise
  for NumPy, Dask and xarray images.
* :mod:`.saved`: :func:`read_model`, the model a stored result records.
"""

from .features import FEATURE_GROUPS, FeatureSpec
from .model import DEFAULT_WEIGHTS, TextureModel, fit_textures, segment
from .saved import read_model
from .unmixing import abundances, fit_endmembers

__all__ = [
    "DEFAULT_WEIGHTS",
    "FEATURE_GROUPS",
    "FeatureSpec",
    "TextureModel",
    "abundances",
    "fit_endmembers",
    "fit_textures",
    "read_model",
    "segment",
]
