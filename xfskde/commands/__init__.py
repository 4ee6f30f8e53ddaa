"""Subcommands of the ``xfskde`` command line, one module each (see :mod:`xfskde.cli`)."""
