"""Local FS-KDE fields of a photograph: HOG-like cells, dense fields, densities and orientation.

On a crop of scikit-image's camera photograph (paper, section 2.3):

1. one FS-KDE per 8×8 cell (box window, stride 8) — HOG's cells without bins;
2. a dense field with a Gaussian window, and the cells as samples of the dense box field;
3. the density f(x, θ) at one pixel and its peak;
4. the dominant-orientation map (−arg F_1, the weighted circular mean of the gradient angles)
   and its coherence |F_1| / F_0 · H_0 / H_1;
5. the rot90 rule: rotating the image by 90° rotates every FS-KDE by −90°, exactly.

    python examples/local_fields.py [--size 192] [--plot [PNG]]
"""

from __future__ import annotations

import argparse

import numpy as np
import xarray as xr
from skimage import data

import xfskde
import xfskde.plot

ORDER = 8


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=192, help="side of the crop (default 192)")
    parser.add_argument(
        "--plot",
        nargs="?",
        const="local_fields.png",
        metavar="PNG",
        help="also save the image and its orientation map (default local_fields.png)",
    )
    args = parser.parse_args(argv)
    if not 16 <= args.size <= 512:
        parser.error("--size must be between 16 and 512 (the camera image is 512×512)")

    top = (512 - args.size) // 2  # the centre of the photograph: the cameraman
    pixels = data.camera()[top : top + args.size, top : top + args.size]
    image = xr.DataArray(pixels, dims=("y", "x"), name="camera")
    results: dict[str, float] = {}

    # 1. cells: box 8, stride 8; sample (i, j) is the cell of pixels [8i, 8i+8) x [8j, 8j+8)
    cells = image.fskde.coefficients(order=ORDER, window="box", size=8, stride=8)
    print(f"cells: {dict(cells.sizes)} {cells.dtype}; centres y = {cells.y.values[:3]} …")

    # 2. dense fields; the cells are the dense box-8 field sampled at the cell centres
    dense_box = xfskde.local_fskde(pixels, order=ORDER, window="box", size=8)
    results["cells_vs_dense"] = float(np.abs(dense_box[3::8, 3::8] - cells.values).max())
    dense = image.fskde.coefficients(order=ORDER, window="gaussian", size=3)
    print(f"dense gaussian field {dense.shape}; cells = dense box field at (8i+3, 8j+3) "
          f"to {results['cells_vs_dense']:.0e}")  # fmt: skip

    # 3. the density at one pixel, on a 5° grid
    theta = np.deg2rad(np.arange(-180, 180, 5.0))
    y, x = args.size // 2, 2 * args.size // 3  # on the tripod with the default crop
    f = xfskde.evaluate(dense.isel(y=y, x=x).values, theta)
    results["peak_degrees"] = float(np.rad2deg(theta[f.argmax()]))
    results["mean_weight"] = float(2 * np.pi * dense.isel(y=y, x=x, k=0).real)
    print(f"pixel ({y}, {x}): density peaks at {results['peak_degrees']:+.0f}° "
          f"(x right, y down, clockwise as displayed); mean |g| in the window "
          f"{results['mean_weight']:.1f} grey levels per pixel")  # fmt: skip

    # 4. dominant orientation and coherence (1 for a single direction, 0 for none)
    orientation = dense.fskde.dominant_orientation()
    H = xfskde.Cos2KKernel(ORDER).coefficients
    F0, F1 = dense.isel(k=0).real, np.abs(dense.isel(k=1))
    coherence = (F1 / F0.where(F0 > 0) * H[0] / H[1]).fillna(0.0)
    edges = coherence > 0.8
    results["coherent_fraction"] = float(edges.mean())
    vertical = np.abs(np.cos(orientation.where(edges))) > np.cos(np.deg2rad(20))
    print(f"coherence median {float(coherence.median()):.2f}; {100 * float(edges.mean()):.0f}% "
          f"of pixels above 0.8, of which {100 * float(vertical.sum() / edges.sum()):.0f}% "
          f"have a near-horizontal gradient (a vertical edge)")  # fmt: skip

    # 5. the rot90 rule
    rotated = xfskde.local_fskde(np.rot90(pixels), order=ORDER, window="gaussian", size=3)
    expected = xfskde.rotate(np.rot90(dense.values), -np.pi / 2)
    results["rot90_error"] = float(np.abs(rotated - expected).max() / np.abs(expected).max())
    print(f"rot90: |F(rot90(I)) − rotate(rot90(F), −90°)| / max|F| = {results['rot90_error']:.1e}")

    if args.plot:
        _plot(args.plot, pixels, orientation.values, coherence.values)
    return results


def _plot(path: str, pixels: np.ndarray, orientation: np.ndarray, coherence: np.ndarray) -> None:
    """The crop beside its orientation map: hue = orientation, brightness = coherence."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no figure (pip install 'xfskde[plot]')")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rgb = xfskde.plot.orientation_rgb(orientation, coherence, white=1.0)
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.5), constrained_layout=True)
    axes[0].imshow(pixels, cmap="gray")
    axes[0].set_title("camera (crop)")
    axes[1].imshow(rgb)
    axes[1].set_title("dominant orientation (hue) and coherence")
    for ax in axes:
        ax.set_axis_off()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
