"""The per-pixel functions of a coefficient field give each pixel the same value, bit for bit,
whatever the Dask chunking of the field: the promise of docs/xarray.md.

They once did not, by the last bits: a density was a matrix product (BLAS rounds a row
differently with the number of rows in the block: 4.7e-16 relative), and every rotation a NumPy
complex product, which rounds with fused multiply-adds for contiguous arrays and single
elements but not for strided ones, and is not commutative (``a * temporary`` is computed as
``temporary *= a`` once arrays pass 256 KiB): canonical forms of a complex128 field differed on
67-79 % of values under ordinary chunks, those of a complex64 field by 5.5e-8 on one-pixel
chunks, and the angles of the density's maximum and the canonical distances on a few pixels.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
import xarray as xr

import xfskde
from xfskde import canonical, density, fields


def _field(dtype: type) -> xr.DataArray:
    """A 48 x 40 field (1920 pixels: a complex128 block of it passes NumPy's 256 KiB)."""
    rng = np.random.default_rng(3)
    yy, xx = np.mgrid[:48, :40]
    image = np.sin(0.3 * xx + 0.2 * yy) + 0.5 * rng.random((48, 40))
    return xfskde.local_fskde(xr.DataArray(image.astype(dtype), dims=("y", "x")), order=8)


_ANGLES = np.linspace(0, 2 * np.pi, 12, endpoint=False)

#: name -> the function of a field (NumPy- or Dask-backed) whose values are compared
_MAPS: dict[str, Callable[[xr.DataArray], xr.DataArray]] = {
    "density": lambda F: fields.density(F, _ANGLES),
    "evaluate": lambda F: density.evaluate(F, 0.7),
    "argmax": lambda F: fields.dominant_orientation(F, method="argmax"),
    "mean": lambda F: fields.dominant_orientation(F, method="mean"),
    "canonical_distance": lambda F: canonical.canonical_distance(F, F.isel(y=3, x=2).values),
    "canonical_angle": lambda F: canonical.canonical_distance(
        F, F.isel(y=3, x=2).values, return_angle=True
    )[1],
    "canonical_distance_fk": lambda F: canonical.canonical_distance(
        F, F.isel(y=3, x=2).values, method="fk"
    ),
    "canonicalize": lambda F: fields.canonicalize(F, 1),
    "canonicalize_3": lambda F: fields.canonicalize(F, 3),
    "canonicalize_complex128": lambda F: fields.canonicalize(F.astype(np.complex128), 2),
    "canonicalize_angle": lambda F: canonical.canonicalize(F, 3, return_angle=True)[1],
    "rotate_per_pixel": lambda F: xfskde.rotate(F, 9.0 * np.abs(F.isel(k=1, drop=True))),
    "distance": lambda F: fields.distance(F, F.isel(y=3, x=2)),
    "orientation": lambda F: xfskde.orientation.orientation(F),
    "energy": lambda F: xfskde.energy(F),
    "coherence": lambda F: xfskde.coherence(F),
}


def _differ(a: np.ndarray, b: np.ndarray) -> int:
    return int((~((a == b) | (np.isnan(a) & np.isnan(b)))).sum())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(_MAPS))
def test_a_map_is_the_same_whatever_the_chunking(name: str, dtype: type) -> None:
    F = _field(dtype)
    func = _MAPS[name]
    expected = func(F).values  # the whole field at once, in NumPy
    chunkings = [{"y": 7, "x": 7}, {"y": (5, 13, 20, 10), "x": (9, 24, 7)}, {"y": -1, "x": -1}]
    for chunks in chunkings:
        got = func(F.chunk(chunks)).values
        assert got.dtype == expected.dtype
        assert np.array_equal(got, expected, equal_nan=True), (chunks, _differ(got, expected))
    corner = F.isel(y=slice(0, 6), x=slice(0, 8))  # one pixel per chunk
    got = func(corner.chunk({"y": 1, "x": 1})).values
    want = expected[:6, :8]
    assert np.array_equal(got, want, equal_nan=True), ("1 x 1", _differ(got, want))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_phasor_powers_of_one_phasor_are_those_of_many(dtype: type) -> None:
    """unit_phasor_powers of a single phasor rounded with fused multiply-adds (NumPy's loop
    for one element), of many without (its strided loop): 23419 of 45000 powers differed."""
    z = np.exp(-1j * np.random.default_rng(1).uniform(-3, 3, 5000)).astype(dtype)
    whole = density.unit_phasor_powers(z, 9)
    one = np.concatenate([density.unit_phasor_powers(z[i : i + 1], 9) for i in range(z.size)])
    assert whole.dtype == one.dtype == dtype
    assert np.array_equal(whole, one)


def test_numpy_functions_give_a_pixel_its_value_in_any_batch() -> None:
    """The NumPy faces too: a pixel's value is the same computed alone, among 7, or among all
    1920 (where BLAS and NumPy's 256 KiB temporaries took other paths)."""
    F = _field(np.float64).values.reshape(-1, 9)
    G = F[5]
    phi = np.linspace(-3, 3, F.shape[0])
    funcs = {
        "evaluate": lambda A, p: density.evaluate(A, _ANGLES),
        "mode_direction": lambda A, p: density.mode_direction(A),
        "rotate": lambda A, p: density.rotate(A, p),
        "canonicalize": lambda A, p: canonical.canonicalize(A, 4),
        "canonical_distance": lambda A, p: canonical.canonical_distance(A, G),
    }
    for name, func in funcs.items():
        whole = func(F, phi)
        for size in (1, 7):
            parts = np.concatenate(
                [func(F[i : i + size], phi[i : i + size]) for i in range(0, 98, size)]
            )
            assert np.array_equal(parts, whole[:98]), (name, size, _differ(parts, whole[:98]))
