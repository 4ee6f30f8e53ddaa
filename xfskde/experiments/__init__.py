"""The paper's experiments (section 5) as functions, each also reachable as
``xfskde experiment NAME`` (see :mod:`xfskde.commands.experiment`)."""
