"""``python -m absmc.cli``."""

from absmc.cli import main

main()
