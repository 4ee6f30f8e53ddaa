"""``xfskde demo``: the local FS-KDE of scikit-image's camera photograph, to Zarr and a PNG."""

from __future__ import annotations

import argparse
from pathlib import Path

from ..api import local_fskde
from ..io import write_coefficients
from ..plot import orientation_rgb


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="compute the FS-KDE of a sample photograph and draw its orientation map",
        description="Compute the local FS-KDE (K = 8, Gaussian window sigma = 3) of "
        "scikit-image's camera photograph, write the coefficients to OUTPUT/camera.zarr and a "
        "picture of the image beside its dominant-orientation map to OUTPUT/camera.png.",
    )
    parser.add_argument("--output", default="xfskde-demo", help="folder to write to")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import numpy as np
    import xarray as xr
    from skimage import data

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    image = xr.DataArray(data.camera(), dims=("y", "x"), name="camera")
    field = local_fskde(image, order=8, window="gaussian", size=3)
    store = out / "camera.zarr"
    write_coefficients(field, store, overwrite=True)
    F = field.values
    coherence = np.abs(F[..., 1]) / np.maximum(np.abs(F[..., 0]), 1e-12)
    rgb = orientation_rgb(-np.angle(F[..., 1]), coherence)
    png = out / "camera.png"
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        from skimage import io as skio

        grey = np.repeat(data.camera()[..., None], 3, axis=-1)
        skio.imsave(png, np.concatenate([grey, (rgb * 255).astype(np.uint8)], axis=1))
    else:
        fig, axes = plt.subplots(1, 2, figsize=(10, 5.2), constrained_layout=True)
        axes[0].imshow(data.camera(), cmap="gray")
        axes[0].set_title("camera (scikit-image)")
        axes[1].imshow(rgb)
        axes[1].set_title("orientation (hue), coherence (brightness)")
        for ax in axes:
            ax.set_axis_off()
        fig.savefig(png, dpi=80)
        plt.close(fig)
    print(f"wrote {store} {tuple(field.shape)} {field.dtype} and {png}")
    return 0
