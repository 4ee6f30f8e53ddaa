"""The ``.fskde`` xarray accessor: the thin top of the package.

``DataArray.fskde`` composes the plain functions below it and holds no numerics and no state:
on an image it computes coefficient fields (:func:`xfskde.local_fskde`) and segmentations
(:func:`xfskde.segment`); on a coefficient field (dims ``y, x, k``) it evaluates, canonicalizes,
rotates and compares FS-KDEs per pixel (:mod:`xfskde.fields`), maps the orientation, coherence
and energy of the structures (:mod:`xfskde.orientation`) and writes Zarr stores
(:func:`xfskde.write_coefficients`). Every method keeps the field's dims, coords and attrs and
stays lazy on Dask-backed arrays. The constructor never raises: a method used on the wrong kind
of array says so.
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import xarray as xr

from . import fields
from . import orientation as _orientation
from ._labels import COLOR_DIMS
from .api import local_fskde
from .exceptions import ParameterError
from .io import write_coefficients
from .segmentation import segment

__all__ = ["FskdeAccessor"]


@xr.register_dataarray_accessor("fskde")
class FskdeAccessor:
    """``DataArray.fskde``: FS-KDE operations on images and on coefficient fields.

    On an image: :meth:`coefficients`, :meth:`segment`. On a coefficient field (dims ``y, x, k``):
    :meth:`density`, :meth:`canonicalize`, :meth:`rotate`, :meth:`distance`,
    :meth:`dominant_orientation`, :meth:`orientation`, :meth:`coherence`, :meth:`energy`,
    :meth:`to_zarr`. Each keeps the field's dims, coords and attrs
    and stays lazy on Dask-backed arrays.
    """

    def __init__(self, obj: xr.DataArray):
        self._obj = obj

    def coefficients(self, **params: Any) -> xr.DataArray:
        """Local FS-KDE of this image (section 2.3); parameters as :func:`xfskde.local_fskde`.

        The colour dim is found by name (:func:`xfskde._labels.image_dims`), so ``channel_axis``
        is not taken.

        Parameters
        ----------
        **params
            Keywords of :func:`xfskde.local_fskde`, but ``channel_axis`` (refused).

        Returns
        -------
        xarray.DataArray
            The complex ``(y, x, k)`` field.
        """
        if "channel_axis" in params:
            raise ParameterError(
                "channel_axis is not used for DataArrays: the colour dim is found by name "
                f"(one of {COLOR_DIMS}); rename it instead, e.g. .rename({{'dim_2': 'band'}})"
            )
        return local_fskde(self._obj, **params)

    def density(self, theta: Any) -> xr.DataArray:
        """The density :math:`f(x, \\theta)` (eq. 1) → dims (y, x, theta).

        Parameters
        ----------
        theta : float or 1-D array_like
            Angles in radians; they become the float ``theta`` coord. See
            :func:`xfskde.fields.density`.

        Returns
        -------
        xarray.DataArray
            Real, dims ``(y, x, theta)``: float32 for a complex64 field, else float64 (lazy
            and computed alike).
        """
        return fields.density(self._obj, theta)

    def canonicalize(self, ell: int = 1) -> xr.DataArray:
        """F_ℓ-canonical form of every pixel's FS-KDE (eq. 9; section 4.3).

        Parameters
        ----------
        ell : int, optional
            The level (default 1: F_1 canonicalization); see :func:`xfskde.fields.canonicalize`.

        Returns
        -------
        xarray.DataArray
            The canonical field, dims ``(y, x, k)``, of the field's dtype (complex64 stays
            complex64).
        """
        return fields.canonicalize(self._obj, ell)

    def rotate(self, phi: float) -> xr.DataArray:
        """Rotate every FS-KDE by ``phi`` radians (eq. 2): :math:`F_k e^{-ik\\phi}`.

        Parameters
        ----------
        phi : float
            One angle for every pixel (per-pixel angles: :func:`xfskde.rotate` with a DataArray
            on the field's dims).

        Returns
        -------
        xarray.DataArray
            The rotated field, dims ``(y, x, k)``, of the field's dtype (complex64 stays
            complex64).
        """
        return fields.rotate(self._obj, phi)

    def distance(self, other: xr.DataArray | np.ndarray) -> xr.DataArray:
        """Parseval distance (section 2.2) per pixel to ``other`` → dims (y, x).

        Parameters
        ----------
        other : xarray.DataArray or numpy.ndarray
            One FS-KDE (1-D along k, e.g. ``F.isel(y=3, x=2)``) or a field on the same grid;
            see :func:`xfskde.fields.distance`.

        Returns
        -------
        xarray.DataArray
            Real, dims ``(y, x)``: float32 when the field and ``other`` are complex64, else
            float64.
        """
        return fields.distance(self._obj, other)

    def dominant_orientation(
        self, method: Literal["mean", "argmax"] = "mean", n_angles: int | None = None
    ) -> xr.DataArray:
        """Dominant gradient angle per pixel → dims (y, x), radians in [-π, π).

        Parameters
        ----------
        method : {"mean", "argmax"}, optional
            ``"mean"`` (default): -arg F_1; ``"argmax"``: the angle of the density's maximum.
        n_angles : int, optional
            Angles ``"argmax"`` samples (at least 2ℓ; default max(64, 4ℓ)). See
            :func:`xfskde.fields.dominant_orientation`.

        Returns
        -------
        xarray.DataArray
            The angles, dims ``(y, x)``, float64 for any field (float32 holds no [-π, π)).
        """
        return fields.dominant_orientation(self._obj, method=method, n_angles=n_angles)

    def orientation(self) -> xr.DataArray:
        """Axial orientation of the structures (along edges and fibres) per pixel, in [0, π).

        From F_2 (doubled angles); clockwise on screen, 0 = horizontal. See
        :func:`xfskde.orientation.orientation`.

        Returns
        -------
        xarray.DataArray
            The angles in radians, dims ``(y, x)``.
        """
        return _orientation.orientation(fields.check_field(self._obj))

    def coherence(self, kernel: Any = None) -> xr.DataArray:
        """Coherence of the gradient axes per pixel, in [0, 1]: (|F_2| / H_2) / (F_0 / H_0).

        Parameters
        ----------
        kernel : Cos2KKernel or float, optional
            The kernel the field was computed with, or its H_2/H_0; default: read from the
            field's attrs. See :func:`xfskde.orientation.coherence`.

        Returns
        -------
        xarray.DataArray
            Dims ``(y, x)``.
        """
        return _orientation.coherence(fields.check_field(self._obj), kernel)

    def energy(self, image_units: str | None = None) -> xr.DataArray:
        """Energy per pixel: the window's mean gradient magnitude F_0 / H_0.

        Parameters
        ----------
        image_units : str, optional
            The units of the image's values (the result's ``units`` is ``"{image_units}/pixel"``);
            default: those the field records, else ``"1/pixel"``. See
            :func:`xfskde.orientation.energy`.

        Returns
        -------
        xarray.DataArray
            Dims ``(y, x)``, its ``units`` attr as above.
        """
        return _orientation.energy(fields.check_field(self._obj), image_units)

    def segment(self, n_textures: int, **kwargs: Any) -> xr.DataArray:
        """Texture segmentation (ORTSEG, section 5.3) of this image.

        Parameters
        ----------
        n_textures : int
            The number of textures; ``**kwargs`` are those of :func:`xfskde.segment`.

        Returns
        -------
        xarray.DataArray
            What :func:`xfskde.segment` returns: uint8 labels ``(y, x)``, or ``(labels, model)``
            with ``return_model=True``.
        """
        return segment(self._obj, n_textures, **kwargs)

    def to_zarr(self, store: Any, *, resume: bool = False, **kwargs: Any) -> Any:
        """Write this field to a Zarr v3 store.

        Parameters
        ----------
        store : str, pathlib.Path, URL or zarr store
            Where to write (a path for work on a cluster: tasks open it themselves).
        resume : bool, optional
            Finish an interrupted write (default False); ``**kwargs`` are those of
            :func:`xfskde.write_coefficients`.

        Returns
        -------
        int or dask.array.Array
            What :func:`xfskde.write_coefficients` returns.
        """
        return write_coefficients(fields.check_field(self._obj), store, resume=resume, **kwargs)
