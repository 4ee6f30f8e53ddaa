"""Regenerate every figure of the docs into docs/images/ (the paper's Figures 1–5, 7–9 and more).

    python docs/make_figures.py                    # all figures (several minutes)
    python docs/make_figures.py --quick            # small Monte Carlo and experiment sizes
    python docs/make_figures.py --only fig1,fig2   # some of them
    python docs/make_figures.py --out /tmp/figs    # somewhere else

Figures 4 and 5 compare a simulation of F1 canonicalization (eq. 9) under noise with the
expectation of Theorem 1 (section 4.2), computed by Monte Carlo in :func:`theorem1_expectation`.
Figures 7 and 8 come from :func:`xfskde.experiments.patches.patches_experiment`, Figure 9 from
:func:`xfskde.experiments.detection.detection_experiment`, both on their offline proxies.
``orientation_map`` and ``rose`` are the pictures of docs/plotting.md and docs/orientation.md:
scikit-image's camera photograph beside its axial orientation map (:func:`xfskde.plot.
orientation_map`), and rose diagrams of two regions of it (:func:`xfskde.plot.rose`).
``segmentation_dead_leaves`` and ``segmentation_random_textures``, the pictures of
docs/segmentation.md, segment examples/segmentation.py's images (256², seed 1) with colour only
and with colour + FS-KDE and draw them with :func:`xfskde.plot.segmentation`;
``segmentation_mosaics`` segments three held-out mosaics of real textures at the defaults;
``segmentation_slide`` a section of scikit-image's IHC image on glass with ``mask="auto"``,
``segmentation_fluorescence`` its stains as a fluorescence image with ``mask="fluorescence"``;
``segmentation_histology`` three H&E mosaics of tissue tiles from a folder you give
(``--histology DIR``, one tile per class, e.g. NCT-CRC-HE-100K's; made only when given).
``napari_maps``, the picture of docs/ome-zarr.md and docs/tissue.md, is napari's window with the
maps store of docs/tissue.md's slide open in it; it needs napari and napari-ome-zarr (``pip
install -e ".[napari]"``) and an X display (on a headless machine, Xvfb:
``xvfb-run -a python docs/make_figures.py --only napari_maps``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import xfskde
from xfskde import plot

IMAGES = Path(__file__).resolve().parent / "images"
DPI = 72
N_SAMPLES = 50  # angles per distribution in Figures 4 and 5
ORDER = 16  # their kernel order (untruncated, so Theorem 1's sum over k = -K..K is exact)


# --------------------------------------------------------------------------- Theorem 1
def theorem1_expectation(
    f1: float, sigma: np.typing.ArrayLike, order: int, *, n_draws: int = 20000, seed: int = 0
) -> np.ndarray:
    """Theorem 1's expectation, by Monte Carlo over ε, υ ~ N(0, σ²) (section 4.2).

    .. math:: E\\Big[\\sqrt{\\textstyle\\sum_{k=-K}^{K} \\big(2 B_k N \\sin\\big(\\tfrac k2
              \\arctan\\tfrac{B_1 \\epsilon}{|F_1| + B_1 \\upsilon}\\big)\\big)^2}\\Big]

    with :math:`B_k N = H_k` (eq. 4). It bounds :math:`E\\|\\tilde F - \\widetilde{\\tilde F}\\|`,
    the change that F1 canonicalization makes to a noisy FS-KDE, in the coefficient norm
    :math:`\\sqrt{\\sum_k |F_k|^2}` (which is ``xfskde.distance / sqrt(2π)``).

    Parameters
    ----------
    f1 : array_like
        |F_1| of the noise-free FS-KDE of N weights summing to N (so |F_1| <= H_1).
    sigma : array_like
        Noise levels σ: each of the N samples w e^{iθ} gets complex noise of standard deviation
        σ/√N per part, so the sums ε and υ of the theorem have standard deviation σ.
    order : int
        Kernel order K.
    n_draws : int
        Monte Carlo draws of (ε, υ) per σ.
    seed : int

    Returns
    -------
    numpy.ndarray, the broadcast shape of ``f1`` and ``sigma``
    """
    H = xfskde.Cos2KKernel(order, approximation="exact").coefficients  # H_k = B_k N, k = 0..K
    f1, sigma = np.broadcast_arrays(np.asarray(f1, np.float64), np.asarray(sigma, np.float64))
    rng = np.random.default_rng(seed)
    eps, ups = rng.standard_normal((2, n_draws))
    # B_1 ε with B_1 = H_1 / N: the N of B_1 meets the Σ of N noises of std σ/√N (std σ) ...
    # ... and the theorem's normalisation Σw = N; per unit of N the ratio is H_1 σ ε / (N |F_1|)
    s, a = sigma.reshape(-1, 1), f1.reshape(-1, 1)
    b1 = H[1] / N_SAMPLES
    angle = np.arctan(b1 * s * eps / (a + b1 * s * ups))  # (n_sigma, n_draws)
    k = np.arange(1, H.size)
    terms = (2 * H[1:] * np.sin(0.5 * k * angle[..., None])) ** 2  # k and -k give the same term
    return np.sqrt(2 * terms.sum(axis=-1)).mean(axis=-1).reshape(sigma.shape)


def _norm(F: np.ndarray) -> np.ndarray:
    """Theorem 1's coefficient norm sqrt(Σ_{k=-K}^{K} |F_k|²)."""
    return np.asarray(xfskde.distance(F, np.zeros_like(F))) / np.sqrt(2 * np.pi)


def _distribution(kind: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """N weighted angles with mean angle 0 and Σw = N: one peak (large |F1|) or two opposite."""
    if kind == "large":
        angles = rng.vonmises(0.0, 4.0, N_SAMPLES)
    else:  # two opposite peaks of nearly equal mass: |F1| small
        angles = np.concatenate([rng.vonmises(0.0, 6.0, N_SAMPLES // 2),
                                 rng.vonmises(np.pi, 6.0, N_SAMPLES - N_SAMPLES // 2)])  # fmt: skip
    weights = rng.uniform(0.5, 1.5, N_SAMPLES)
    mean = np.angle(np.sum(weights * np.exp(1j * angles)))
    return angles - mean, weights * N_SAMPLES / weights.sum()


def _noisy(angles, weights, sigma, rng, n_trials):
    """FS-KDEs of n_trials noisy versions (Theorem 1's model), weights rescaled to Σ = N."""
    z = weights * np.exp(1j * angles)
    noise = rng.standard_normal((2, n_trials, z.size)) * sigma / np.sqrt(z.size)
    noisy = z + noise[0] + 1j * noise[1]
    w = np.abs(noisy)
    w *= z.size / w.sum(axis=-1, keepdims=True)
    return xfskde.fskde(np.angle(noisy), w, order=ORDER)


def simulate_canonicalization(angles, weights, sigmas, *, n_trials: int = 200, seed: int = 0):
    """Mean ||F − F̃|| and ||F̃ − canonical(F̃)|| (and their std) over noisy versions."""
    rng = np.random.default_rng(seed)
    F = xfskde.fskde(angles, weights, order=ORDER)
    rows = []
    for sigma in sigmas:
        Fn = _noisy(angles, weights, sigma, rng, n_trials)
        noise = _norm(Fn - F)
        canon = _norm(Fn - xfskde.canonicalize(Fn))
        rows.append((noise.mean(), noise.std(), canon.mean(), canon.std()))
    return F, np.array(rows)


# ----------------------------------------------------------------------------- figures
def _save(fig, out: Path, name: str) -> Path:
    path = out / f"{name}.png"
    fig.savefig(path, dpi=DPI)
    import matplotlib.pyplot as plt

    plt.close(fig)
    return path


def fig1(out: Path, quick: bool) -> Path:
    """A weighted angle set, its 20-bin histogram and 20-number FS-KDE, before/after 45°."""
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(1)
    angles = np.concatenate([rng.normal(0.3, 0.25, 30), rng.normal(2.4, 0.4, 20)])
    weights = rng.uniform(0.2, 1.0, angles.size)
    kernel = xfskde.Cos2KKernel.for_length(10)  # 10 complex coefficients = 20 numbers
    fig, axes = plt.subplots(2, 3, figsize=(9, 6), subplot_kw={"projection": "polar"})
    for row, phi in enumerate((0.0, np.pi / 4)):
        a = angles + phi
        axes[row, 0].vlines(a, 0, weights, color="k", linewidth=1)
        axes[row, 0].set_title("weighted angles" + (", turned 45°" if row else ""))
        F = xfskde.fskde(a, weights, order=kernel.order, eps=kernel.eps)
        plot.polar(F, axes[row, 1], angles=a, weights=weights, bins=20, color="none", fill=False)
        axes[row, 1].set_title("20-bin histogram")
        plot.polar(F, axes[row, 2], color="tab:blue")
        axes[row, 2].set_title(f"FS-KDE, 20 numbers (K = {kernel.order})")
    for ax in axes.flat:
        ax.set_yticklabels([])
    fig.tight_layout()
    return _save(fig, out, "fig1")


def fig2(out: Path, quick: bool) -> Path:
    """The cos^2K kernel for K = 4, 8, 16, 32."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    plot.kernel((4, 8, 16, 32), ax)
    ax.legend()
    fig.tight_layout()
    return _save(fig, out, "fig2")


def fig4(out: Path, quick: bool) -> Path:
    """K = 64 truncated to ℓ non-zero coefficients, against the exact kernel."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(8, 5), sharex=True, sharey=True)
    for ax, length in zip(axes.flat, (33, 17, 12, 8), strict=True):
        plot.kernel((64,), ax, color="0.6", linewidth=3)
        plot.kernel((64,), ax, length=length, color="tab:red")
        ax.set_title(f"ℓ = {length} of 65 coefficients")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, out, "fig4")


def _canonical_figure(out: Path, quick: bool, kind: str, name: str) -> Path:
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(5)
    angles, weights = _distribution(kind, rng)
    sigmas = np.linspace(0, 20, 6 if quick else 11)
    F, sim = simulate_canonicalization(angles, weights, sigmas, n_trials=50 if quick else 400)
    f1 = abs(F[1])
    bound = theorem1_expectation(f1, sigmas, ORDER, n_draws=2000 if quick else 20000)
    fig = plt.figure(figsize=(9, 9))
    ax_a = fig.add_subplot(3, 2, 1, projection="polar")
    ax_b = fig.add_subplot(3, 2, 2, projection="polar")
    ax_c, ax_d = fig.add_subplot(3, 2, 3), fig.add_subplot(3, 2, 4)
    ax_e = fig.add_subplot(3, 1, 3)
    plot.polar(F, ax_a, color="k")
    ax_a.set_title(f"(a) f, |F1| = {f1:.3f} (H1 = {xfskde.Cos2KKernel(ORDER).coefficients[1]:.3f})")
    noisy_rng = np.random.default_rng(7)
    shown = _noisy(angles, weights, 5.0, noisy_rng, 2)
    for Fn in shown:
        plot.polar(Fn, ax_b, fill=False)
    ax_b.set_title("(b) two noisy versions, σ = 5")
    for ax in (ax_a, ax_b):
        ax.set_yticklabels([])
    ax_c.errorbar(sigmas, sim[:, 0], sim[:, 1], marker="o", ms=3, capsize=2)
    ax_c.set(title="(c) ‖F − F̃‖", xlabel="σ")
    ax_d.errorbar(sigmas, sim[:, 2], sim[:, 3], marker="o", ms=3, capsize=2, label="simulation")
    ax_d.plot(sigmas, bound, "k--", label="Theorem 1")
    ax_d.set(title="(d) ‖F̃ − canonical(F̃)‖", xlabel="σ")
    ax_d.legend(fontsize=8)
    phi = np.linspace(-np.pi, np.pi, 361)
    ax_e.plot(np.degrees(phi), _norm(F - xfskde.rotate(F, phi[:, None])), "k", linewidth=2.5,
              label="‖F − F_φ‖")  # fmt: skip
    for i, Fn in enumerate(shown):
        (line,) = ax_e.plot(np.degrees(phi), _norm(F - xfskde.rotate(Fn, phi[:, None])),
                            linewidth=1, label=f"‖F − F̃_φ‖, noisy {i + 1}")  # fmt: skip
        ax_e.axhline(_norm(F - xfskde.canonicalize(Fn)), color=line.get_color(), linestyle=":")
    ax_e.set(title="(e) rotation distances; dotted: ‖F − canonical(F̃)‖", xlabel="φ (degrees)")
    ax_e.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, out, name)


def fig5(out: Path, quick: bool) -> Path:
    """F1 canonicalization of a distribution with a large |F1|."""
    return _canonical_figure(out, quick, "large", "fig5")


def fig6(out: Path, quick: bool) -> Path:
    """F1 canonicalization of a distribution with a small |F1|."""
    return _canonical_figure(out, quick, "small", "fig6")


def _auc_figure(out: Path, quick: bool, rotate: bool, name: str) -> Path:
    import matplotlib.pyplot as plt

    try:
        from xfskde.experiments.patches import patches_experiment
    except ImportError as error:
        raise RuntimeError(
            f"{name} needs xfskde.experiments.patches.patches_experiment: {error}"
        ) from error
    lengths = (4, 8, 16) if quick else (4, 6, 8, 10, 12, 16, 20, 24, 32)
    rows = patches_experiment(pairs=400 if quick else 4000, lengths=lengths, rotate=rotate)
    fig, ax = plt.subplots(figsize=(7, 4))
    for descriptor in dict.fromkeys(r["descriptor"] for r in rows):
        sel = [r for r in rows if r["descriptor"] == descriptor]
        if len(sel) == 1:
            ax.axhline(sel[0]["auc"], color="0.5", linestyle=":", label=f"{descriptor} (all)")
        else:
            ax.plot([r["length"] for r in sel], [r["auc"] for r in sel], marker="o", ms=3,
                    label=descriptor)  # fmt: skip
    turned = "random rotations" if rotate else "upright"
    ax.set(xlabel="descriptor length", ylabel="ROC AUC", title=f"keypoint pairs (proxy), {turned}")
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return _save(fig, out, name)


def fig7(out: Path, quick: bool) -> Path:
    """Keypoint matching AUC against length, upright patches (proxy)."""
    return _auc_figure(out, quick, False, "fig7")


def fig8(out: Path, quick: bool) -> Path:
    """Keypoint matching AUC against length, randomly rotated patches (proxy)."""
    return _auc_figure(out, quick, True, "fig8")


def fig9(out: Path, quick: bool) -> Path:
    """Detection accuracy against length per 8×8 block, upright and ±15° (proxy)."""
    import matplotlib.pyplot as plt

    from xfskde.experiments.detection import detection_experiment

    lengths = (4, 8, 16) if quick else (4, 8, 16, 32, 64)
    sizes = {"n_train": 200, "n_test": 100} if quick else {"n_train": 1000, "n_test": 600}
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for rotate, style in ((False, "-"), (True, "--")):
        rows = detection_experiment(lengths=lengths, rotate=rotate, **sizes)
        for i, descriptor in enumerate(dict.fromkeys(r["descriptor"] for r in rows)):
            sel = [r for r in rows if r["descriptor"] == descriptor]
            label = f"{descriptor}, {'±15°' if rotate else 'upright'}"
            x, y = [r["length"] for r in sel], [r["accuracy"] for r in sel]
            ax.plot(x, y, style, marker="o", ms=4, color=f"C{i}", label=label)
    ax.axhline(0.5, color="0.7", linewidth=0.8)
    ax.set_xscale("log", base=2)
    ax.set(xlabel="length per 8×8 block", ylabel="test accuracy",
           title="detection (proxy): upright (solid) and ±15° rotations (dashed)")  # fmt: skip
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return _save(fig, out, "fig9")


def _camera_field():
    """scikit-image's camera photograph and its field (K = 8, Gaussian window σ = 3), labelled."""
    import xarray as xr
    from skimage import data

    image = xr.DataArray(data.camera(), dims=("y", "x"), name="camera")
    return image, image.fskde.coefficients(order=8, window="gaussian", size=3)


#: The regions of the rose figure: (label, {"y": slice, "x": slice}) in pixels.
ROSE_REGIONS = (
    ("A: tripod's right leg", {"y": slice(392, 456), "x": slice(340, 380)}),
    ("B: grass", {"y": slice(330, 480), "x": slice(420, 505)}),
)


def _save_rgb(fig, out: Path, name: str) -> Path:
    """Save as an opaque RGB PNG, compressed hard: colour maps of textures are large files."""
    import io

    import matplotlib.pyplot as plt
    from PIL import Image

    buffer = io.BytesIO()
    fig.savefig(buffer, dpi=DPI, format="png", facecolor="white")
    plt.close(fig)
    path = out / f"{name}.png"
    Image.open(buffer).convert("RGB").save(path, optimize=True)
    return path


def orientation_map(out: Path, quick: bool) -> Path:
    """The camera photograph, its axial orientation (hue) and coherence (brightness), the wheel."""
    import matplotlib.pyplot as plt

    image, field = _camera_field()
    fig = plt.figure(figsize=(8.6, 3.8), layout="constrained")
    grid = fig.add_gridspec(1, 3, width_ratios=[1, 1, 0.42])
    panels = fig.add_subplot(grid[0, 0]), fig.add_subplot(grid[0, 1])
    plot.orientation_map(image, field, panels, legend=fig.add_subplot(grid[0, 2]))
    panels[0].set_title("camera (scikit-image)", fontsize=9)
    panels[1].set_title("orientation ω (hue), coherence (brightness)", fontsize=9)
    return _save_rgb(fig, out, "orientation_map")


def rose(out: Path, quick: bool) -> Path:
    """Two regions of the camera photograph and the rose diagrams of their mean coefficients."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    image, field = _camera_field()
    fig = plt.figure(figsize=(10, 4.2), layout="constrained")
    ax_image = fig.add_subplot(1, 3, 1)
    ax_image.imshow(image.values, cmap="gray")
    ax_image.set_axis_off()
    ax_image.set_title("two regions", fontsize=9)
    for i, (name, region) in enumerate(ROSE_REGIONS):
        y, x = region["y"], region["x"]
        corner, width, height = (x.start - 0.5, y.start - 0.5), x.stop - x.start, y.stop - y.start
        for colour, linewidth in (("black", 3.5), ("white", 1.5)):
            ax_image.add_patch(Rectangle(corner, width + 1, height + 1, fill=False,
                                         edgecolor=colour, linewidth=linewidth))  # fmt: skip
        ax_image.text(x.start, y.start - 8, name[0], color="white", fontsize=11, weight="bold")
        ax = fig.add_subplot(1, 3, 2 + i, projection="polar")
        plot.rose(field, region, ax, color="0.25")
        ax.set_title(name, fontsize=9)
        ax.set_yticklabels([])
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.08))
    return _save_rgb(fig, out, "rose")


# ------------------------------------------------------------------------- segmentation
#: The segmentations of docs/segmentation.md: (title, features) as in examples/segmentation.py.
SEGMENTATION_METHODS = (("colour only", ("color",)), ("colour + FS-KDE", ("color", "fskde")))


def _matched(labels: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """The labels renumbered so that label i + 1 is the one that overlaps truth class i most.

    The segmentation's numbering is arbitrary (k-means); matched to the truth's (Hungarian
    assignment on the overlap counts), one colour means one texture in every panel. Labels left
    unmatched (more textures than classes) follow; 0 stays the background.
    """
    from scipy.optimize import linear_sum_assignment

    classes, found = np.unique(truth), np.unique(labels[labels > 0])
    overlap = np.array([[np.sum((labels == f) & (truth == c)) for c in classes] for f in found])
    rows, cols = linear_sum_assignment(-overlap)
    lut = np.zeros(int(labels.max()) + 1, dtype=np.int64)
    lut[found[rows]] = cols + 1
    rest = np.setdiff1d(found, found[rows])
    lut[rest] = classes.size + 1 + np.arange(rest.size)
    return lut[labels]


def _segmentation_figure(out: Path, quick: bool, make, name: str) -> Path:
    """Input and truth, then per method its labels and their boundaries against the truth's.

    Drawn with :func:`xfskde.plot.segmentation` (labels as categorical colours, boundaries by
    scikit-image's ``find_boundaries``) and :func:`xfskde.plot.label_rgb` for the truth, whose
    classes 0 .. 2 become labels 1 .. 3; each segmentation is renumbered to match the truth.
    """
    import matplotlib.pyplot as plt

    size = 128 if quick else 256  # examples/segmentation.py --size 256
    image, truth = make((size, size), seed=1)
    fig = plt.figure(figsize=(9.4, 5.3), layout="constrained")
    grid = fig.add_gridspec(2, 4, width_ratios=[1, 1, 1, 0.55])
    panels = [[fig.add_subplot(grid[r, c]) for c in range(3)] for r in range(2)]
    for row, (title, features) in zip(panels, SEGMENTATION_METHODS, strict=True):
        labels = xfskde.segment(image, 3, features=features, size=4, n_coefficients=8)
        score = xfskde.rand_index(truth, labels)
        first = row is panels[0]
        legend = fig.add_subplot(grid[:, 3]) if first else False
        plot.segmentation(image, _matched(labels, truth), truth=truth, legend=legend,
                          ax=(row[0] if first else None, row[1], row[2]))  # fmt: skip
        row[1].set_title(f"{title}: labels (Rand {score:.2f})", fontsize=9)
        row[2].set_title(f"{title}: boundaries", fontsize=9)
    panels[0][0].set_title(f"input ({make.__name__.replace('_', ' ')})", fontsize=9)
    panels[1][0].imshow(plot.label_rgb(truth + 1), interpolation="nearest")
    panels[1][0].set_title("ground truth", fontsize=9)
    for ax in (a for row in panels for a in row):
        ax.set_xticks([])
        ax.set_yticks([])
    return _save_rgb(fig, out, name)


def segmentation_dead_leaves(out: Path, quick: bool) -> Path:
    """Dead leaves (docs/segmentation.md): colour alone fails, colour + FS-KDE succeeds."""
    from xfskde.datasets import dead_leaves

    return _segmentation_figure(out, quick, dead_leaves, "segmentation_dead_leaves")


def segmentation_random_textures(out: Path, quick: bool) -> Path:
    """Random textures (docs/segmentation.md): colour alone is enough."""
    from xfskde.datasets import random_textures

    return _segmentation_figure(out, quick, random_textures, "segmentation_random_textures")


#: Held-out mosaics of docs/segmentation.md's picture: (layout, transform, seed).
SEGMENTATION_MOSAICS = (
    ("voronoi", "both", 1000),
    ("blobs", "rescale", 1000),
    ("stripes", "perspective", 1000),  # a texture whose look drifts: 2x larger across it
)


def _mosaic_rows(out: Path, name: str, rows) -> Path:
    """One segmented mosaic per row: the input titled ``title``, the labels of
    ``segment(image, 3)`` with every setting chosen (renumbered to the truth's) and their
    boundaries against the truth's; ``rows`` yields (title, image, truth)."""
    import matplotlib.pyplot as plt

    rows = list(rows)
    fig = plt.figure(figsize=(8.2, 2.8 * len(rows)), layout="constrained")
    grid = fig.add_gridspec(len(rows), 4, width_ratios=[1, 1, 1, 0.5])
    for r, (title, image, truth) in enumerate(rows):
        labels = np.asarray(xfskde.segment(image, 3))
        score = xfskde.rand_index(truth, labels)
        axes = [fig.add_subplot(grid[r, c]) for c in range(3)]
        legend = fig.add_subplot(grid[:, 3]) if r == 0 else False
        plot.segmentation(image, _matched(labels, truth), truth=truth, legend=legend, ax=axes)
        axes[0].set_title(title, fontsize=9)
        axes[1].set_title(f"segment(image, 3): Rand {score:.3f}", fontsize=9)
        axes[2].set_title("boundaries", fontsize=9)
        for ax in axes:
            ax.set_xticks([])
            ax.set_yticks([])
    return _save_rgb(fig, out, name)


def segmentation_mosaics(out: Path, quick: bool) -> Path:
    """Held-out mosaics of real textures (docs/segmentation.md): ``segment(image, 3)`` with
    every setting chosen, its labels and their boundaries against the truth's, one mosaic per
    row (512², :data:`SEGMENTATION_MOSAICS`)."""
    from xfskde.datasets import texture_mosaic

    size = 128 if quick else 512
    rows = (
        (f"{layout}, {transform} (seed {seed})",
         *texture_mosaic((size, size), layout=layout, transform=transform, seed=seed))
        for layout, transform, seed in SEGMENTATION_MOSAICS
    )  # fmt: skip
    return _mosaic_rows(out, "segmentation_mosaics", rows)


def segmentation_slide(out: Path, quick: bool) -> Path:
    """A section on glass (docs/segmentation.md, Background and masks): scikit-image's IHC
    image in an ellipse on grey-white glass (:func:`xfskde.datasets.section_on_glass`),
    ``segment(slide, 3, mask="auto")``, drawn with
    :func:`xfskde.plot.segmentation` (the background, label 0, in grey)."""
    import matplotlib.pyplot as plt

    from xfskde.datasets import section_on_glass

    slide = section_on_glass()[0]
    if quick:
        slide = slide[::2, ::2]
    labels = np.asarray(xfskde.segment(slide, 3, mask="auto"))
    plot.segmentation(slide, labels, image_cmap="gray")
    fig = plt.gcf()
    fig.set_size_inches(10.5, 3.2)
    return _save_rgb(fig, out, "segmentation_slide")


def segmentation_fluorescence(out: Path, quick: bool) -> Path:
    """A fluorescence section (docs/segmentation.md, Background and masks): the IHC section's
    stains as a camera's counts on a dark background
    (:func:`xfskde.datasets.section_in_fluorescence`), ``segment(image, 3,
    mask="fluorescence")``, drawn with :func:`xfskde.plot.segmentation` (the channels
    stretched as napari shows them)."""
    import matplotlib.pyplot as plt

    from xfskde.datasets import section_in_fluorescence

    image = section_in_fluorescence()[0]
    if quick:
        image = image[::2, ::2]
    labels = np.asarray(xfskde.segment(image, 3, mask="fluorescence"))
    plot.segmentation(image, labels)
    fig = plt.gcf()
    fig.set_size_inches(10.5, 3.2)
    return _save_rgb(fig, out, "segmentation_fluorescence")


#: H&E mosaics of docs/segmentation.md's picture: (classes, layout, transform, side, seed), as
#: in benchmarks/bench_segmentation.py's histology set (tiles at half their resolution).
SEGMENTATION_HISTOLOGY = (
    (("STR", "TUM", "MUC"), "voronoi", "both", 1024, 4002),
    (("MUS", "NORM", "TUM"), "stripes", None, 1024, 4005),
    (("NORM", "DEB", "ADI"), "blobs", "rotate", 768, 4001),
)
#: The folder of tissue tiles given with ``--histology``.
HISTOLOGY_TILES: Path | None = None


def segmentation_histology(out: Path, quick: bool) -> Path:
    """H&E mosaics (docs/segmentation.md): ``segment(image, 3)`` at the defaults on
    :data:`SEGMENTATION_HISTOLOGY`, made from the tiles of ``--histology`` (read by
    :func:`xfskde.datasets.class_tiles`)."""
    from xfskde.datasets import class_tiles, texture_mosaic

    if HISTOLOGY_TILES is None:
        raise SystemExit("segmentation_histology needs --histology DIR (a folder of H&E tiles)")
    tiles = class_tiles(HISTOLOGY_TILES)
    rows = (
        (f"{', '.join(names)}: {layout}",
         *texture_mosaic((256, 256) if quick else (side, side),
                         textures=tuple(tiles[n] for n in names), layout=layout,
                         transform=transform, normalize=None, scale=0.5, seed=seed, color=True))
        for names, layout, transform, side, seed in SEGMENTATION_HISTOLOGY
    )  # fmt: skip
    return _mosaic_rows(out, "segmentation_histology", rows)


# ------------------------------------------------------------------------------- napari
def _tissue_slide(path: Path) -> None:
    """docs/tissue.md's slide: two sections of fibres (30° and 120°) on glass, 0.5 µm pixels."""
    import tifffile

    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:1024, 0:1536].astype(np.float32)
    left = (yy - 500) ** 2 / 380**2 + (xx - 450) ** 2 / 330**2 < 1
    right = (yy - 520) ** 2 / 330**2 + (xx - 1130) ** 2 / 300**2 < 1

    def fibres(angle_deg):
        a = np.deg2rad(angle_deg)
        return np.sin(2 * np.pi / 9 * (-xx * np.sin(a) + yy * np.cos(a)))

    stain = np.where(left, fibres(30), fibres(120))[..., None] * np.array([40, 30, 35])
    stain += np.array([190, 110, 170]) + rng.normal(0, 12, (1024, 1536, 3))
    glass = np.array([242, 240, 244]) + rng.normal(0, 3, (1024, 1536, 3))
    slide = np.where((left | right)[..., None], stain, glass).clip(0, 255).astype(np.uint8)
    meta = {"PhysicalSizeX": 0.5, "PhysicalSizeXUnit": "µm",
            "PhysicalSizeY": 0.5, "PhysicalSizeYUnit": "µm"}  # fmt: skip
    with tifffile.TiffWriter(path) as tif:
        tif.write(slide, tile=(256, 256), subifds=2, photometric="rgb", metadata=meta)
        for step in (2, 4):
            tif.write(slide[::step, ::step], tile=(256, 256), subfiletype=1, photometric="rgb")


def napari_maps(out: Path, quick: bool) -> Path:
    """napari's window with docs/tissue.md's maps store open in it, as docs/tissue.md says."""
    try:
        import napari
        import napari_ome_zarr  # noqa: F401  (the reader; napari finds it by its name)
    except ImportError as error:
        raise RuntimeError(
            f'napari_maps needs napari and napari-ome-zarr (pip install -e ".[napari]"): {error}'
        ) from error
    if sys.platform.startswith("linux") and not os.environ.get("DISPLAY"):
        raise RuntimeError(
            "napari_maps needs an X display; on a headless machine run it under Xvfb: "
            "xvfb-run -a python docs/make_figures.py --only napari_maps"
        )
    import zarr
    from PIL import Image

    from xfskde.cli import main as xfskde_main

    with tempfile.TemporaryDirectory() as tmp:
        slide, store = Path(tmp) / "slide.ome.tif", Path(tmp) / "slide-maps.ome.zarr"
        _tissue_slide(slide)
        options = "--stride 8 --size 6 --window gaussian --mask auto --no-progress".split()
        status = xfskde_main(["maps", str(slide), str(store), *options])  # as docs/tissue.md says
        if status:
            raise RuntimeError(f"xfskde maps exited with status {status}")
        viewer = napari.Viewer(show=False)
        try:
            viewer.window.resize(1280, 760)
            levels = [xfskde.open_image(slide, level=i).data for i in range(3)]
            viewer.add_image(levels, rgb=True, multiscale=True, scale=(0.5, 0.5), units="µm",
                             name="slide")  # fmt: skip
            orientation, coherence, energy = viewer.open(store, plugin="napari-ome-zarr")
            # napari-ome-zarr 0.10 reads the scale, not the translation: the maps' first
            # sample, the centre of the first 8 × 8 cell, is at 1.75 µm, not 0
            datasets = zarr.open_group(store, mode="r").attrs["ome"]["multiscales"][0]["datasets"]
            translation = datasets[0]["coordinateTransformations"][1]["translation"][1:]
            for layer in (orientation, coherence, energy):
                layer.translate = translation
            orientation.colormap = "twilight"  # cyclic: 0 and π, one axis, one colour
            coherence.colormap = "gray"
            viewer.canvas.grid.enabled = True  # slide | orientation, coherence | energy
            scale_bar = viewer.canvas.overlays.scale_bar
            scale_bar.visible, scale_bar.gridded, scale_bar.position = True, True, "bottom_left"
            viewer.layers.selection.active = orientation
            viewer.reset_view()
            viewer.scene.camera.zoom *= 1.45  # reset_view leaves wide margins around each grid cell
            shot = viewer.screenshot(canvas_only=False, flash=False)
        finally:
            viewer.close()
    path = out / "napari_maps.png"
    picture = Image.fromarray(shot[..., :3])
    picture.save(path, optimize=True)
    if path.stat().st_size > 300_000:  # the slide's noise: a palette keeps it small
        picture.quantize(256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    return path


FIGURES: dict[str, Callable[[Path, bool], Path]] = {
    "fig1": fig1, "fig2": fig2, "fig4": fig4, "fig5": fig5, "fig6": fig6,
    "fig7": fig7, "fig8": fig8, "fig9": fig9,
    "orientation_map": orientation_map, "rose": rose, "napari_maps": napari_maps,
    "segmentation_dead_leaves": segmentation_dead_leaves,
    "segmentation_random_textures": segmentation_random_textures,
    "segmentation_mosaics": segmentation_mosaics,
    "segmentation_slide": segmentation_slide,
    "segmentation_fluorescence": segmentation_fluorescence,
    "segmentation_histology": segmentation_histology,
}  # fmt: skip


def main(argv: list[str] | None = None) -> list[Path]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for tests")
    parser.add_argument("--only", default=",".join(FIGURES), help="comma-separated figures")
    parser.add_argument("--out", type=Path, default=IMAGES, help="folder (docs/images)")
    parser.add_argument(
        "--histology", type=Path, default=None,
        help="a folder of H&E tiles (one per class) for segmentation_histology",
    )  # fmt: skip
    args = parser.parse_args(argv)
    global HISTOLOGY_TILES
    HISTOLOGY_TILES = args.histology
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    if args.histology is None and args.only == parser.get_default("only"):
        names.remove("segmentation_histology")  # all figures but the one that needs tiles
    unknown = sorted(set(names) - set(FIGURES))
    if unknown:
        parser.error(f"--only: unknown figures {unknown}; choose among {list(FIGURES)}")
    import matplotlib

    matplotlib.use("Agg")
    args.out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name in names:
        start = time.perf_counter()
        paths.append(FIGURES[name](args.out, args.quick))
        print(f"wrote {paths[-1]} ({time.perf_counter() - start:.1f} s)", flush=True)
    return paths


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
