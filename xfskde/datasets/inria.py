"""The INRIA person data set (Dalal & Triggs, 2005) in its published layout (paper, section 5.2).

The archive ``INRIAPerson.tar`` unpacks to::

    INRIAPerson/
        Train/pos/  Train/neg/  Train/pos.lst  Train/neg.lst       full images
        Test/pos/   Test/neg/   Test/pos.lst   Test/neg.lst
        train_64x128_H96/pos/  (pos.lst)    normalised positives, 96 × 160 pixels
        test_64x128_H96/pos/   (pos.lst)    normalised positives, 70 × 134 pixels

Positives are the normalised crops, of which the central 64 × 128 window is the person (the
person is 96 pixels tall, hence "H96"). Negatives are random 64 × 128 windows of the person-free
images in ``Train/neg`` and ``Test/neg``: :data:`NEGATIVES_PER_IMAGE` (10, as Dalal & Triggs) per
image, drawn with a seeded generator. The paper uses the central 64 × 128 pixels of every image.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["NEGATIVES_PER_IMAGE", "WINDOW", "InriaPerson", "load_inria_person", "person_proxy"]

#: Detection window, (rows, columns).
WINDOW = (128, 64)
#: Random negative windows per negative image (Dalal & Triggs 2005).
NEGATIVES_PER_IMAGE = 10
_SUFFIXES = {".png", ".jpg", ".jpeg"}
_SPLITS = {"train": ("Train", "train_64x128_H96"), "test": ("Test", "test_64x128_H96")}


@dataclass(frozen=True)
class InriaPerson:
    """Windows of the INRIA person data set as grey float32 images in [0, 1].

    Attributes
    ----------
    X_train, X_test : numpy.ndarray of float32, shape (n, 128 + 2 margin, 64 + 2 margin)
        The windows; with ``margin > 0`` each carries that much context on every side and the
        detection window is its centre.
    y_train, y_test : numpy.ndarray of int8, shape (n,)
        1 for a person, 0 for background.
    margin : int
        Context pixels around the 64 × 128 window.
    root : pathlib.Path or None
        The data set folder that was read (None for :func:`person_proxy`).
    """

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    margin: int
    root: Path | None


def _read_grey(path: Path) -> np.ndarray:
    """One image as float32 grey in [0, 1]; a file that cannot be decoded names itself."""
    import skimage.color
    import skimage.io
    import skimage.util

    try:
        image = skimage.io.imread(path)
    except Exception as error:  # imageio/PIL raise many types for a broken file
        raise OSError(f"cannot read image {path}: {error}") from error
    if image.ndim == 3:
        if image.shape[-1] == 4:
            image = skimage.color.rgba2rgb(image)
        image = skimage.color.rgb2gray(image[..., :3])
    if image.ndim != 2:
        raise OSError(f"{path} is not a grey or colour image (shape {image.shape})")
    return skimage.util.img_as_float32(image)


def _listed(folder: Path, listing: Path) -> list[Path]:
    """Files named in a ``.lst`` file: paths relative to the list, its parent, or by name."""
    files = []
    for line in listing.read_text().splitlines():
        line = line.strip()
        if not line:
            continue
        name = Path(line)
        candidates = [listing.parent / name, listing.parent.parent / name, folder / name.name]
        found = next((c for c in candidates if c.is_file()), None)
        if found is None:
            raise OSError(f"{listing} lists {line!r}, which is not in {folder}")
        files.append(found)
    return files


def _images(folder: Path) -> list[Path]:
    """Images of a folder: those of ``<folder>.lst`` when present, else every PNG/JPG, sorted."""
    if not folder.is_dir():
        raise OSError(
            f"INRIA person folder {folder} is missing: root must be the unpacked INRIAPerson "
            "folder with Train/neg, Test/neg, train_64x128_H96/pos and test_64x128_H96/pos"
        )
    listing = folder.parent / f"{folder.name}.lst"
    if listing.is_file():
        files = _listed(folder, listing)
    else:
        files = sorted(p for p in folder.iterdir() if p.suffix.lower() in _SUFFIXES)
    if not files:
        raise OSError(f"INRIA person folder {folder} holds no PNG/JPG images")
    return files


def _centre(image: np.ndarray, shape: tuple[int, int], path: Path) -> np.ndarray:
    """The central ``shape`` window; a smaller image is reflect-padded (context only)."""
    rows, cols = shape
    h, w = image.shape
    if h < WINDOW[0] or w < WINDOW[1]:
        raise OSError(
            f"{path} is {w}×{h} pixels: a normalised positive must be at least "
            f"{WINDOW[1]}×{WINDOW[0]} (train 96×160, test 70×134)"
        )
    pad_r, pad_c = max(0, (rows - h + 1) // 2), max(0, (cols - w + 1) // 2)
    if pad_r or pad_c:
        image = np.pad(image, ((pad_r, pad_r), (pad_c, pad_c)), mode="reflect")
        h, w = image.shape
    top, left = (h - rows) // 2, (w - cols) // 2
    return image[top : top + rows, left : left + cols]


def _negatives(
    files: list[Path], shape: tuple[int, int], per_image: int, rng: np.random.Generator
) -> list[np.ndarray]:
    rows, cols = shape
    windows = []
    for path in files:
        image = _read_grey(path)
        h, w = image.shape
        if h < rows or w < cols:
            raise OSError(f"negative image {path} is {w}×{h}, smaller than a {cols}×{rows} window")
        tops = rng.integers(0, h - rows + 1, per_image)
        lefts = rng.integers(0, w - cols + 1, per_image)
        windows.extend(image[t : t + rows, c : c + cols] for t, c in zip(tops, lefts, strict=True))
    return windows


def _split(
    root: Path, split: str, shape, per_image: int, max_images: int | None, rng
) -> tuple[np.ndarray, np.ndarray]:
    full, normalised = _SPLITS[split]
    positives = _images(root / normalised / "pos")[:max_images]
    negatives = _images(root / full / "neg")[:max_images]
    pos = [_centre(_read_grey(p), shape, p) for p in positives]
    neg = _negatives(negatives, shape, per_image, rng)
    X = np.stack(pos + neg).astype(np.float32, copy=False)
    y = np.concatenate([np.ones(len(pos), np.int8), np.zeros(len(neg), np.int8)])
    return X, y


def load_inria_person(
    root: str | Path,
    *,
    negatives_per_image: int = NEGATIVES_PER_IMAGE,
    margin: int = 0,
    max_images: int | None = None,
    seed: int = 0,
) -> InriaPerson:
    """Read the INRIA person data set (section 5.2) into 64 × 128 grey windows.

    Parameters
    ----------
    root : str or pathlib.Path
        The unpacked ``INRIAPerson`` folder (see the module docstring for its layout). A folder's
        ``.lst`` file (``pos.lst`` next to ``pos/``), when present, chooses and orders its images.
    negatives_per_image : int, optional
        Random windows cut from each negative image (default 10, as Dalal & Triggs).
    margin : int, optional
        Context pixels kept on every side of each window (default 0), so that a rotation of the
        window and a crop of its centre has no edge artefacts (the paper's footnote in section
        5.2). Test positives (70 × 134) are reflect-padded where the margin exceeds them.
    max_images : int, optional
        Read only the first ``max_images`` positive and negative files of each split.
    seed : int, optional
        Seed of the negative windows' positions (default 0).

    Returns
    -------
    InriaPerson
        Training and testing windows, positives first.

    Raises
    ------
    OSError
        When a folder is missing or empty, a listed file is absent, or an image cannot be read
        or is too small; the message names the path.
    ValueError
        For a bad ``negatives_per_image``, ``margin`` or ``max_images``.
    """
    root = Path(root)
    if not root.is_dir():
        raise OSError(f"INRIA person root {root} is not a folder: download and unpack it first")
    if int(negatives_per_image) != negatives_per_image or negatives_per_image < 1:
        raise ValueError(f"negatives_per_image must be a positive int, got {negatives_per_image}")
    if int(margin) != margin or margin < 0:
        raise ValueError(f"margin must be a non-negative int, got {margin}")
    if max_images is not None and (int(max_images) != max_images or max_images < 1):
        raise ValueError(f"max_images must be None or a positive int, got {max_images}")
    shape = (WINDOW[0] + 2 * margin, WINDOW[1] + 2 * margin)
    rng = np.random.default_rng(seed)
    X_train, y_train = _split(root, "train", shape, negatives_per_image, max_images, rng)
    X_test, y_test = _split(root, "test", shape, negatives_per_image, max_images, rng)
    return InriaPerson(X_train, y_train, X_test, y_test, margin, root)


#: Backgrounds of the proxy: (module, name); training and testing never share a photograph.
PROXY_BACKGROUNDS = {
    "train": (("skimage", "camera"), ("skimage", "astronaut"), ("skimage", "coffee"),
              ("skimage", "chelsea"), ("skimage", "brick"), ("skimage", "grass"),
              ("sklearn", "china.jpg")),
    "test": (("skimage", "rocket"), ("skimage", "gravel"), ("skimage", "moon"),
             ("skimage", "immunohistochemistry"), ("sklearn", "flower.jpg")),
}  # fmt: skip
#: Height and width of a pasted digit (the figure is 96 pixels tall, like INRIA's "H96").
PROXY_FIGURE = (96, 40)


def _proxy_backgrounds(split: str) -> list[np.ndarray]:
    import skimage.color
    import skimage.data
    import skimage.util
    from sklearn.datasets import load_sample_images

    samples = None
    images = []
    for module, name in PROXY_BACKGROUNDS[split]:
        if module == "skimage":
            image = getattr(skimage.data, name)()
        else:
            samples = samples or load_sample_images()
            image = samples.images[samples.filenames.index(next(
                f for f in samples.filenames if f.endswith(name)))]  # fmt: skip
        if image.ndim == 3:
            image = skimage.color.rgb2gray(image[..., :3])
        images.append(skimage.util.img_as_float32(image))
    return images


def _paste(background: np.ndarray, digit: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Blend an upscaled, smoothed 8 × 8 digit into the centre of a window (±4 px, ±10 % size)."""
    import scipy.ndimage
    import skimage.transform

    scale = rng.uniform(0.9, 1.1)
    h, w = (round(s * scale) for s in PROXY_FIGURE)
    framed = np.pad(digit / 16.0, 1)  # a blank border: the figure fades out, no pasted rectangle
    alpha = skimage.transform.resize(framed, (h, w), order=3, mode="constant")
    alpha = np.clip(scipy.ndimage.gaussian_filter(alpha, 1.5), 0, 1) * rng.uniform(0.6, 1.0)
    rows, cols = background.shape
    top = (rows - h) // 2 + int(rng.integers(-4, 5))
    left = (cols - w) // 2 + int(rng.integers(-4, 5))
    region = background[top : top + h, left : left + w]
    ink = np.clip(region.mean() + rng.choice((-0.5, 0.5)), 0.0, 1.0)  # dark or bright figure
    out = background.copy()
    out[top : top + h, left : left + w] = region * (1 - alpha) + ink * alpha
    return out


def _proxy_split(split, n, shape, digits, labels, positive_digit, rng):
    backgrounds = _proxy_backgrounds(split)
    parity = 0 if split == "train" else 1  # every other digit sample: no writer's 1 in both
    instances = np.arange(parity, len(labels), 2)
    ones = instances[labels[instances] == positive_digit]
    others = instances[labels[instances] != positive_digit]
    X, y = [], []
    rows, cols = shape
    for i in range(n):
        bg = backgrounds[int(rng.integers(len(backgrounds)))]
        top = int(rng.integers(0, bg.shape[0] - rows + 1))
        left = int(rng.integers(0, bg.shape[1] - cols + 1))
        window = bg[top : top + rows, left : left + cols]
        positive = i % 2 == 0
        if positive:
            window = _paste(window, digits[rng.choice(ones)], rng)
        elif i % 4 == 1:  # half of the negatives hold a distractor: another digit
            window = _paste(window, digits[rng.choice(others)], rng)
        window = window + rng.normal(0.0, 0.02, window.shape)
        X.append(np.clip(window, 0.0, 1.0))
        y.append(int(positive))
    return np.stack(X).astype(np.float32), np.array(y, np.int8)


def person_proxy(
    n_train: int = 600,
    n_test: int = 400,
    *,
    margin: int = 16,
    positive_digit: int = 1,
    seed: int = 0,
) -> InriaPerson:
    """An offline stand-in for INRIA person: upright figures against photographic clutter.

    Every window is a 64 × 128 crop (plus ``margin`` context) of a grey photograph that ships
    with scikit-image or scikit-learn (:data:`PROXY_BACKGROUNDS`; training and testing use
    different photographs). Positives hold an upright handwritten ``positive_digit``
    (scikit-learn's ``load_digits``, 8 × 8) upscaled to a 96 × 40 figure (±10 %), smoothed
    (Gaussian, σ = 1.5 px), blended dark or bright with a random contrast into the centre (±4 px),
    like INRIA's 96-pixel-tall people. Half the negatives are plain background, half hold another
    digit as a distractor, so "something was pasted" does not give the answer away: the classifier
    must recognise the figure's upright shape from its local orientation statistics, which is
    what Figure 9 probes. Training and testing use the even and odd digit samples, so no
    handwritten instance is in both. Gaussian noise (σ = 0.02) is added; positives and negatives
    alternate.

    Parameters
    ----------
    n_train, n_test : int, optional
        Windows per split, >= 4 (default 600 and 400).
    margin : int, optional
        Context pixels on every side of the 64 × 128 window, >= 0 (default 16: 96 × 160, the
        size of INRIA's training positives, room for a ±15° rotation without edge artefacts).
    positive_digit : int, optional
        The digit 0..9 that plays the person (default 1).
    seed : int, optional
        Seed of every random choice (crops, figures, contrasts, noise; default 0).

    Returns
    -------
    InriaPerson
        ``root`` is None.

    Raises
    ------
    ValueError
        For ``n_train`` or ``n_test`` below 4, a negative ``margin``, and a
        ``positive_digit`` outside 0..9.
    """
    from sklearn.datasets import load_digits

    for name, value in (("n_train", n_train), ("n_test", n_test)):
        if int(value) != value or value < 4:
            raise ValueError(f"{name} must be an int >= 4, got {value}")
    if int(margin) != margin or margin < 0:
        raise ValueError(f"margin must be a non-negative int, got {margin}")
    if positive_digit not in range(10):
        raise ValueError(f"positive_digit must be one of 0..9, got {positive_digit}")
    digits = load_digits()
    shape = (WINDOW[0] + 2 * margin, WINDOW[1] + 2 * margin)
    rng = np.random.default_rng(seed)
    split = {}
    for name, n in (("train", n_train), ("test", n_test)):
        split[name] = _proxy_split(
            name, int(n), shape, digits.images, digits.target, positive_digit, rng
        )
    return InriaPerson(*split["train"], *split["test"], int(margin), None)
