"""``python -m absmc.cli``: as ``python -m absmc`` (:func:`absmc.cli.run`)."""

from absmc.cli import run

run()
