"""FS-KDEs of weighted angle sets: the paper's Figure 1 in numbers.

A weighted set of angles, its 20-bin histogram and its FS-KDE with 20 real numbers (order 9:
10 complex coefficients), before and after a 45° counter-clockwise rotation. The histogram
changes shape; the FS-KDE only rotates (eq. 2), its canonical form (eq. 9) does not change at
all, and the canonical distance (eq. 10 and the exact minimum over rotations) is zero.

    python examples/angle_sets.py            # prints the numbers
    python examples/angle_sets.py --plot     # also writes angle_sets.png (needs matplotlib)
"""

from __future__ import annotations

import argparse

import numpy as np

import xfskde

N_BINS = 20
PHI = np.pi / 4  # the rotation of Figure 1: 45° counter-clockwise


def _wrap(angles: np.ndarray) -> np.ndarray:
    """Angles in [-π, π)."""
    return (angles + np.pi) % (2 * np.pi) - np.pi


def _histogram(angles: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted 20-bin histogram on [-π, π), scaled like an FS-KDE (weight per radian, mean 1/N)."""
    counts, _ = np.histogram(_wrap(angles), N_BINS, range=(-np.pi, np.pi), weights=weights)
    return counts / (angles.size * 2 * np.pi / N_BINS)


def _angle_set(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two clusters of weighted angles, like Figure 1's."""
    angles = np.concatenate([rng.normal(0.3, 0.25, 30), rng.normal(2.4, 0.4, 20)])
    return angles, rng.uniform(0.2, 1.0, angles.size)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--plot",
        nargs="?",
        const="angle_sets.png",
        metavar="PNG",
        help="also save the figure (default angle_sets.png); needs matplotlib",
    )
    args = parser.parse_args(argv)

    rng = np.random.default_rng(1)
    angles, weights = _angle_set(rng)
    kernel = xfskde.Cos2KKernel.for_length(N_BINS // 2)  # the sharpest kernel with 10 coefficients
    params = {"order": kernel.order, "eps": kernel.eps}
    F = xfskde.fskde(angles, weights, **params)
    F_rot = xfskde.fskde(angles + PHI, weights, **params)
    print(f"kernel: order K = {kernel.order}, {kernel.length} complex coefficients")

    # Rotation: the FS-KDE only turns (eq. 2); the histogram changes shape (binning artefacts).
    theta = np.linspace(-np.pi, np.pi, 8 * N_BINS, endpoint=False)  # 45° = 20 grid steps
    step = round(PHI / (theta[1] - theta[0]))
    f, f_rot = xfskde.evaluate(F, theta), xfskde.evaluate(F_rot, theta)
    hist, hist_rot = _histogram(angles, weights), _histogram(angles + PHI, weights)
    shifts = (int(np.floor(PHI / (2 * np.pi / N_BINS))), int(np.ceil(PHI / (2 * np.pi / N_BINS))))
    hist_change = min(np.abs(np.roll(hist, s) - hist_rot).max() for s in shifts)
    results = {
        "rotation_error": float(np.abs(xfskde.rotate(F, PHI) - F_rot).max()),
        "density_shape_change": float(np.abs(np.roll(f, step) - f_rot).max() / f.max()),
        "histogram_shape_change": float(hist_change / hist.max()),
    }
    print(f"|rotate(F, 45°) − FS-KDE of the rotated set|        = {results['rotation_error']:.1e}")
    print(f"FS-KDE: largest change of shape after turning back   = "
          f"{results['density_shape_change']:.1e} of its peak")  # fmt: skip
    print(f"histogram: same, after the best whole-bin shift (of {shifts}) = "
          f"{results['histogram_shape_change']:.2f} of its peak")  # fmt: skip

    # Canonical forms (eq. 9): identical for every rotation of the set.
    C, C_rot = xfskde.canonicalize(F), xfskde.canonicalize(F_rot)
    results["canonical_change"] = float(np.abs(C - C_rot).max())
    print(f"F1-canonical forms differ by {results['canonical_change']:.1e}; "
          f"canonical F_0..F_2 = {np.round(C[:3], 4)}")  # fmt: skip

    # Distances: plain (Parseval) vs rotation invariant, to the rotated set and to another set.
    other, other_w = _angle_set(np.random.default_rng(2))
    G = xfskde.fskde(other + 1.0, other_w, **params)
    for name, target in (("rotated set", F_rot), ("another set", G)):
        plain = float(xfskde.distance(F, target))
        exact, angle = xfskde.canonical_distance(F, target, return_angle=True)
        fk = float(xfskde.canonical_distance(F, target, method="fk"))
        results[f"{name}: distance"] = plain
        results[f"{name}: canonical"] = float(exact)
        results[f"{name}: canonical fk"] = fk
        print(f"{name:12s}: distance {plain:.4f}, canonical {float(exact):.4f} "
              f"(best rotation {np.degrees(float(angle)):+.1f}°), eq. 10 {fk:.4f}")  # fmt: skip

    if args.plot:
        _plot(args.plot, angles, weights, (hist, hist_rot), (F, F_rot), kernel.length)
    return results


def _plot(path, angles, weights, hists, fskdes, length) -> None:
    """Figure 1: the set, its histogram and its FS-KDE, before (top) and after the rotation."""
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed: no figure (pip install 'xfskde[plot]')")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    theta = np.linspace(-np.pi, np.pi, 721)
    edges = np.linspace(-np.pi, np.pi, N_BINS + 1)
    fig, axes = plt.subplots(2, 3, figsize=(11, 5), constrained_layout=True)
    for row, shift in enumerate((0.0, PHI)):
        a = _wrap(angles + shift)
        axes[row, 0].vlines(a, 0, weights, color="k")
        axes[row, 0].set_title("weighted angles" + (" turned by 45°" if row else ""))
        axes[row, 1].bar(edges[:-1], hists[row], width=np.diff(edges), align="edge", alpha=0.7)
        axes[row, 1].set_title(f"{N_BINS}-bin histogram")
        axes[row, 2].plot(theta, xfskde.evaluate(fskdes[row], theta))
        axes[row, 2].set_title(f"FS-KDE, {2 * length} numbers")
        for ax in axes[row]:
            ax.set_xlim(-np.pi, np.pi)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
