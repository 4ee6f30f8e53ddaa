"""The paper's experiments (section 5) as functions, each also reachable as
``xfskde experiment NAME`` (see :mod:`xfskde.commands.experiment`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any


class _IntList(argparse.Action):
    """An option of several integers, comma or space separated (``--lengths 4,8,16``,
    ``--lengths 4 8 16``, or both mixed), stored as one tuple; take it with ``nargs="+"``."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        words = [values] if isinstance(values, str) else list(values or ())
        numbers = []
        for word in words:
            for part in str(word).split(","):
                try:
                    numbers.append(int(part))
                except ValueError:
                    raise argparse.ArgumentError(
                        self,
                        f"takes integers, comma or space separated (4,8,16 or 4 8 16), got "
                        f"{word!r}",
                    ) from None
        setattr(namespace, self.dest, tuple(numbers))
