"""``python -m absmc``: the command line (as the ``absmc`` script)."""

from absmc.cli import run

run()
