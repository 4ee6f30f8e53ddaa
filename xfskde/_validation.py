"""Argument checks shared by the public functions.

Every check raises an error that names the offending parameter and says what to do, so that a
user sees, for example, ``order must be an integer >= 1, got 0.5`` rather than a NumPy traceback:
:class:`~xfskde.exceptions.ParameterError` (a ``ValueError``) for a bad value, ``TypeError`` for
a value of the wrong kind.
"""

from __future__ import annotations

import math
import numbers
import os
from typing import Any

import numpy as np

from .exceptions import ParameterError

__all__: list[str] = []


def _check_order(order: Any) -> int:
    """Return ``order`` as an int after checking it is an integer >= 1."""
    if isinstance(order, bool) or not isinstance(order, numbers.Integral | float | np.floating):
        raise TypeError(f"order must be an integer >= 1, got {order!r}")
    if isinstance(order, float | np.floating):
        if not np.isfinite(order) or order != int(order):
            raise ParameterError(f"order must be an integer >= 1, got {order!r}")
    order = int(order)
    if order < 1:
        raise ParameterError(f"order must be an integer >= 1, got {order}")
    return order


#: The σ in pixels beyond which a window wider than its image is refused: its padded block
#: (the image and 4σ around it) then holds 8192² pixels or more.
WIDEST_WINDOW = 1024


def physical_memory() -> int | None:
    """The machine's physical memory in bytes, where the system says it (POSIX), else None."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):
        return None


def check_within_image(
    shape: tuple[int, int],
    stride: int,
    sigma: float,
    size: Any,
    names: tuple[str, str],
    window: str | None = None,
) -> None:
    """Refuse an empty image of ``(height, width)`` ``shape``, a ``stride`` that places no
    sample on it (its first cell's centre, pixel (stride - 1) // 2, beyond the image: an empty
    result) and a window both wider than the image and than :data:`WIDEST_WINDOW` (σ ``sigma``
    px, from ``size``: every pixel would see all of it, and the halo padded around it grows as
    4σ — a size of 1e6 asked for petabytes; the default window on a 3 x 3 image is computed as
    on any other). ``names`` are the parameters' names as the caller knows them; ``window``,
    the window's kind, words the refusal in the window's own size (a box's side, a Gaussian's
    sigma, a disk's radius)."""
    height, width = shape
    if height == 0 or width == 0:
        raise ParameterError(
            f"the image is empty ({height} x {width} pixels): there is nothing to compute"
        )
    if (stride - 1) // 2 >= min(height, width):
        raise ParameterError(
            f"{names[0]} {stride} places no sample on this {height} x {width} image (the first "
            f"cell's centre is pixel {(stride - 1) // 2}): give a {names[0]} of at most "
            f"{2 * min(height, width)}"
        )
    bound = max(height, width, WIDEST_WINDOW)
    if sigma > bound:
        largest = float(size) * bound / sigma  # the size whose sigma is the bound
        largest_text = f"{math.floor(largest)}" if window == "box" else f"{largest:.4g}"
        shown = f"{float(size):g}" if isinstance(size, float | np.floating) else f"{size!r}"
        what = {
            "box": f"a box of side {shown} px",
            "gaussian": f"a gaussian of sigma {shown} px",
            "disk": f"a disk of radius {shown} px",
        }.get(window or "", "")
        raise ParameterError(
            f"{names[1]} {size!r} is a window wider than this {height} x {width} image"
            f"{f' ({what})' if what else ''}: every pixel would see all of it, and the padding "
            f"around the image grows with it; give a {names[1]} of at most {largest_text}"
        )


def _check_eps(eps: Any) -> float | None:
    """Return ``eps`` as a float in (0, 1), or None for no truncation."""
    if eps is None:
        return None
    try:
        value = float(eps)
    except (TypeError, ValueError):
        raise TypeError(f"eps must be a number in (0, 1) or None, got {eps!r}") from None
    if not (0.0 < value < 1.0):
        raise ParameterError(
            f"eps must lie strictly between 0 and 1 (for example 1e-5), got {eps!r}; "
            "use eps=None to keep every coefficient"
        )
    return value


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise ParameterError(
            f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}"
        )
    return value


def _check_positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float | np.floating) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be a positive integer, got {value!r}")
    value = int(value)
    if value < 1:
        raise ParameterError(f"{name} must be a positive integer, got {value}")
    return value


def _check_nonnegative_int(name: str, value: Any) -> int:
    """Return ``value`` as an int after checking it is an integer >= 0 (a bool is refused: it
    is no count of pixels; a whole float is taken, as :func:`_check_positive_int` takes it)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float | np.floating) and float(value).is_integer():
            value = int(value)
        else:
            raise TypeError(f"{name} must be an integer >= 0, got {value!r}")
    value = int(value)
    if value < 0:
        raise ParameterError(f"{name} must be an integer >= 0, got {value}")
    return value


def _check_level(level: Any) -> int:
    """Return a pyramid ``level`` as an int after checking it is an integer (not a bool, which
    was read as level 1); the caller checks it against the levels the image has."""
    if isinstance(level, bool) or not isinstance(level, numbers.Integral):
        raise TypeError(
            f"level must be an integer, a pyramid level (0: the full resolution), got {level!r}"
        )
    return int(level)


def _finite_array(name: str, values: Any, *, dtype: Any = np.float64) -> np.ndarray:
    """Convert to a floating array and refuse NaN or infinite entries, and values that are no
    real numbers (text, objects, complex numbers: a cast would drop their imaginary parts)."""
    raw = np.asarray(values)
    if raw.dtype.kind not in "biuf" and not (raw.dtype == object and raw.size == 0):
        kind = "complex" if raw.dtype.kind == "c" else f"{raw.dtype}"
        raise TypeError(f"{name} must be real numbers, got an array of {kind} values")
    arr = np.asarray(raw, dtype=dtype)
    if not np.all(np.isfinite(arr)):
        raise ParameterError(
            f"{name} contains NaN or infinite values; drop them or replace them before calling"
        )
    return arr
