"""Local FS-KDE fields of a photograph: HOG-like cells, dense fields, densities and orientation.

python examples/local_fields.py [--size 256]
"""

from __future__ import annotations

import argparse

import numpy as np
import xarray as xr
from skimage import data

import xfskde


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=256, help="crop of the camera image")
    args = parser.parse_args(argv)

    image = xr.DataArray(data.camera()[: args.size, : args.size], dims=("y", "x"), name="camera")

    # 1. one FS-KDE per 8x8 cell: the analogue of HOG's cells, 9 complex numbers each
    cells = image.fskde.coefficients(order=8, window="box", size=8, stride=8)
    print(f"cells: {dict(cells.sizes)} {cells.dtype}; cell centres y = {cells.y.values[:3]} ...")

    # 2. a dense field with a Gaussian window, and its density at 36 angles at one pixel
    dense = image.fskde.coefficients(order=8, window="gaussian", size=3)
    theta = np.linspace(-np.pi, np.pi, 36, endpoint=False)
    density = dense.isel(y=slice(100, 101), x=slice(120, 121)).fskde.density(theta)
    peak = float(theta[int(density.argmax("theta").squeeze())])
    print(f"pixel (100, 120): density peaks at {np.degrees(peak):.0f}°")

    # 3. dominant orientation (circular mean of the gradient angles) and its coherence
    orientation = dense.fskde.dominant_orientation()
    coherence = np.abs(dense.isel(k=1)) / np.abs(dense.isel(k=0)).clip(1e-12)
    print(f"median coherence {float(coherence.median()):.2f}")

    # 4. rotation: rotating the image by 90° rotates every FS-KDE by -90° (exactly)
    rotated = xfskde.local_fskde(np.rot90(image.values), order=8, window="gaussian", size=3)
    expected = xfskde.rotate(np.rot90(dense.values), -np.pi / 2)
    error = float(np.abs(rotated - expected).max() / np.abs(expected).max())
    print(f"rot90 equivariance error {error:.1e}")
    return {"equivariance_error": error, "peak_degrees": np.degrees(peak),
            "orientation_finite": float(np.isfinite(orientation).mean())}  # fmt: skip


if __name__ == "__main__":
    main()
