"""``xfskde experiment NAME``: the paper's experiments (section 5).

Each experiment is a module of :mod:`xfskde.experiments` that defines ``add_arguments(parser)``
and ``run(args)``; :data:`EXPERIMENTS` lists them.
"""

from __future__ import annotations

import argparse
import importlib

#: name on the command line -> module in xfskde.experiments
EXPERIMENTS = {
    "segmentation": "segmentation",
    "patches": "patches",
    "detection": "detection",
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "experiment",
        help="run one of the paper's experiments",
        description="Run one of the paper's experiments and print its table.",
    )
    inner = parser.add_subparsers(dest="experiment", metavar="NAME", required=True)
    for name, module_name in EXPERIMENTS.items():
        module = importlib.import_module(f"xfskde.experiments.{module_name}")
        # the docstring's first line, a sentence: the description, and (lower case, without
        # its full stop, as the other commands' lines) the line ``xfskde experiment --help``
        # lists it by
        summary = module.__doc__.strip().splitlines()[0]
        sub = inner.add_parser(
            name,
            help=summary[0].lower() + summary[1:].rstrip("."),
            description=f"{summary} Prints the table beside the paper's result.",
        )
        module.add_arguments(sub)
        sub.set_defaults(func=module.run)
