"""Texture segmentation of a dead-leaves image: colour alone fails, colour + FS-KDE succeeds,
and ``segment(image, 3)`` with no settings chooses its own and says which.

Run ``python examples/segmentation.py [--size 192] [--out segmentation.png]``; with
``--dataset random_textures`` it segments the random-texture data set instead (where colour is
enough), with ``--dataset mosaic`` a grey mosaic of real textures (brick, grass, gravel; where
neither paper setting works and the automatic one does). With ``--tiles DIR`` it segments a
colour mosaic of your own labelled tiles instead (one tile per class, named ``CLASS-*.tif`` as
NCT-CRC-HE-100K's H&E tiles are, or in ``CLASS/`` folders; ``--classes TUM,STR,ADI`` picks three,
default the first three; shown at half their resolution). The pictures in docs/segmentation.md
are made by docs/make_figures.py, with xfskde.plot.segmentation.
"""

from __future__ import annotations

import argparse

import xfskde
from xfskde.datasets import class_tiles, dead_leaves, random_textures, texture_mosaic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=192, help="image side (default 192)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--dataset", choices=("dead_leaves", "random_textures", "mosaic"), default="dead_leaves"
    )
    parser.add_argument("--tiles", default=None, help="a folder of labelled tiles to mosaic")
    parser.add_argument("--classes", default=None, help="three classes of --tiles, A,B,C")
    parser.add_argument("--out", default=None, help="save input, truth and results as a PNG")
    args = parser.parse_args(argv)

    if args.tiles:  # a colour mosaic of your own tiles, at half their resolution
        tiles = class_tiles(args.tiles)
        names = args.classes.split(",") if args.classes else list(tiles)[:3]
        image, truth = texture_mosaic(
            (args.size, args.size), textures=tuple(tiles[n] for n in names), color=True,
            normalize=None, scale=0.5, layout="voronoi", seed=args.seed,
        )  # fmt: skip
        print(f"mosaic of {', '.join(names)} from {args.tiles}")
    else:
        make = {"dead_leaves": dead_leaves, "random_textures": random_textures,
                "mosaic": texture_mosaic}[args.dataset]  # fmt: skip
        image, truth = make((args.size, args.size), seed=args.seed)
    results = {}
    methods = {"colour only": ("color",), "colour + FS-KDE": ("color", "fskde")}
    for name, features in methods.items():
        labels = xfskde.segment(image, 3, features=features, size=4, n_coefficients=8)
        results[name] = labels
        print(f"{name:16} Rand index {xfskde.rand_index(truth, labels):.3f}")
    labels, model = xfskde.segment(image, 3, return_model=True)  # every setting chosen
    results["automatic"] = labels
    print(f"{'automatic':16} Rand index {xfskde.rand_index(truth, labels):.3f}")
    spec, f = model.spec, model.resolution  # the window and stride are in cells of f × f px
    fit = spec.size if model.fit_size is None else model.fit_size  # the labels' is spec.size
    print(f"  chose features {','.join(spec.features)}, window sigma {fit * f:g} px (labels "
          f"{spec.size * f:g} px), stride {spec.stride * f} px, resolution {f}; "
          f"{model.choices['size']}")  # fmt: skip
    if args.out:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        panels = {"input": image, "ground truth": truth, **results}
        fig, axes = plt.subplots(1, len(panels), figsize=(3 * len(panels), 3.5))
        for ax, (title, data) in zip(axes, panels.items(), strict=True):
            grey = data.ndim == 2 and title == "input"
            cmap = "gray" if grey else (None if data.ndim == 3 else "viridis")
            ax.imshow(data, cmap=cmap, interpolation="nearest")
            ax.set_title(title)
            ax.axis("off")
        fig.tight_layout()
        fig.savefig(args.out, dpi=72)
        print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
