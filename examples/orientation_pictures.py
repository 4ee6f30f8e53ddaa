"""Pictures of orientation: axial colour maps with a colour-wheel legend, and rose diagrams.

From the local FS-KDE field (paper, section 2.3; eq. 1), with xfskde.plot:

1. concentric rings: at polar angle φ from the centre the rings run at φ + 90°, so the
   orientation map (hue = ω over [0, π), xfskde.plot.axial_rgb) shows there the colour the
   wheel legend shows at φ + 90° — every colour of the wheel once round each half-ring;
2. a thin bright line: its two flanks have opposite gradients (θ and θ + π); the axial map
   gives both one colour, a hue of the gradient direction gives them opposite ones;
3. scikit-image's camera photograph: rose diagrams (xfskde.plot.rose) of two regions — the
   density of the region's *mean* coefficients, which is the FS-KDE of all its gradients since
   the FS-KDE is linear — the tripod's leg (one axis) and the grass (nearly isotropic).

    python examples/orientation_pictures.py [--size 128] [--plot [PNG]]
"""

from __future__ import annotations

import argparse

import numpy as np
import xarray as xr
from skimage import data

import xfskde
from xfskde.orientation import coherence, orientation

ORDER = 8
KERNEL = xfskde.Cos2KKernel(ORDER)
#: Regions of the camera photograph, in pixels (the field's coordinates).
LEG = {"y": slice(392, 456), "x": slice(340, 380)}
GRASS = {"y": slice(330, 480), "x": slice(420, 505)}


def axial_degrees(d: np.ndarray) -> np.ndarray:
    """|angle differences| modulo 180°, in degrees in [0, 90]."""
    return np.abs(np.mod(np.rad2deg(d) + 90, 180) - 90)


def hue_degrees(rgb_a: np.ndarray, rgb_b: np.ndarray) -> np.ndarray:
    """The gap between two colours' hues, as an axial angle in degrees (hue 1 = 180°)."""
    from matplotlib.colors import rgb_to_hsv

    gap = np.abs(rgb_to_hsv(rgb_a)[..., 0] - rgb_to_hsv(rgb_b)[..., 0]) % 1.0
    return 180 * np.minimum(gap, 1 - gap)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=128, help="side of the rings (default 128)")
    parser.add_argument(
        "--plot",
        nargs="?",
        const="orientation_pictures.png",
        metavar="PNG",
        help="also save the pictures (default orientation_pictures.png)",
    )
    args = parser.parse_args(argv)
    if not 64 <= args.size <= 512:
        parser.error("--size must be between 64 and 512")
    try:
        from xfskde import plot

        plot.axial_rgb([0.0], [1.0])
    except ImportError:
        print("matplotlib is not installed: no pictures (pip install 'xfskde[plot]')")
        return {}
    results: dict[str, float] = {}

    # 1. rings: the map's colour at polar angle φ is the wheel's at φ + 90°
    n, period = args.size, 12.0
    y, x = np.mgrid[0:n, 0:n].astype(np.float64) - (n - 1) / 2  # y down the rows
    radius, phi = np.hypot(x, y), np.arctan2(y, x)  # φ as displayed: clockwise from +x
    rings = np.cos(2 * np.pi * radius / period)
    F = xfskde.local_fskde(rings, order=ORDER, window="gaussian", size=2)
    omega, C = orientation(F), coherence(F, KERNEL)
    ring = (radius > 2 * period) & (radius < n / 2 - 12)
    colours = plot.axial_rgb(omega, C)
    wheel = plot.axial_rgb(phi + np.pi / 2, np.ones_like(phi))  # the wheel's rim at φ + 90°
    results["rings_orientation_error_degrees"] = float(
        np.median(axial_degrees(omega - phi - np.pi / 2)[ring])
    )
    results["rings_hue_gap_degrees"] = float(np.median(hue_degrees(colours, wheel)[ring]))
    results["rings_median_coherence"] = float(np.median(C[ring]))
    print(f"rings ({n}×{n}, period {period:g} px): orientation = polar angle + 90° to "
          f"{results['rings_orientation_error_degrees']:.2f}° (median), so the map's hue is the "
          f"wheel's at φ + 90° to {results['rings_hue_gap_degrees']:.2f}°; median coherence "
          f"{results['rings_median_coherence']:.2f}")  # fmt: skip

    # 2. a thin line: one colour on both flanks (axial), opposite ones (gradient direction)
    line = np.zeros((48, 48))
    line[:, 23:25] = 1.0
    G = xfskde.local_fskde(line, order=ORDER, window="gaussian", size=1.5)
    axial = plot.axial_rgb(orientation(G), coherence(G, KERNEL))
    direction = plot.orientation_rgb(-np.angle(G[..., 1]), np.ones(G.shape[:2]), white=1.0)
    results["line_axial_flank_gap_degrees"] = float(hue_degrees(axial[24, 21], axial[24, 26]))
    gap = hue_degrees(direction[24, 21], direction[24, 26])  # over 180° here means 360° of hue
    results["line_direction_flank_gap_degrees"] = float(2 * gap)
    print(f"thin line: its flanks' hues differ by {results['line_axial_flank_gap_degrees']:.1f}° "
          f"on the axial map, by {results['line_direction_flank_gap_degrees']:.0f}° of the hue "
          "circle when the hue is the gradient direction")  # fmt: skip

    # 3. rose diagrams of two regions of the camera photograph, from their mean coefficients
    camera = xr.DataArray(data.camera(), dims=("y", "x"), name="camera")
    field = camera.fskde.coefficients(order=ORDER, window="gaussian", size=3)
    for name, region in (("leg", LEG), ("grass", GRASS)):
        mean = field.sel(region).values.astype(np.complex128).mean(axis=(0, 1))
        results[f"{name}_orientation_degrees"] = float(np.rad2deg(orientation(mean[None])[0]))
        results[f"{name}_coherence"] = float(coherence(mean[None], KERNEL)[0])
        print(f"camera, {name} {region['y'].start}:{region['y'].stop} × "
              f"{region['x'].start}:{region['x'].stop}: mean-coefficient orientation "
              f"{results[f'{name}_orientation_degrees']:.1f}°, coherence "
              f"{results[f'{name}_coherence']:.2f}")  # fmt: skip

    if args.plot:
        _plot(args.plot, rings, F, camera, field)
    return results


def _plot(path: str, rings: np.ndarray, F: np.ndarray, camera, field) -> None:
    """The rings and their map with the wheel; the camera's map; the leg's rose diagram."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from xfskde import plot

    fig = plt.figure(figsize=(15, 4.2), layout="constrained")
    grid = fig.add_gridspec(1, 5, width_ratios=[1, 1, 0.45, 1, 1])
    rings_ax, map_ax = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
    plot.orientation_map(rings, F, (rings_ax, map_ax), kernel=KERNEL,
                         legend=fig.add_subplot(grid[0, 2]))  # fmt: skip
    rings_ax.set_title("rings")
    map_ax.set_title("orientation (hue), coherence (brightness)")
    camera_ax = fig.add_subplot(grid[0, 3])
    plot.orientation_map(camera, field, camera_ax, legend=False)
    camera_ax.set_title("camera")
    rose_ax = fig.add_subplot(grid[0, 4], projection="polar")
    plot.rose(field, LEG, rose_ax, color="0.25")
    rose_ax.set_title("rose of the tripod's leg", fontsize=10)
    rose_ax.set_yticklabels([])
    rose_ax.legend(fontsize=6, loc="upper center", bbox_to_anchor=(0.5, -0.06))
    fig.savefig(path, dpi=72)
    plt.close(fig)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
