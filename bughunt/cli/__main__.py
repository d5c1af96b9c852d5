"""``python -m bughunt.cli``: the same as the ``bughunt`` command."""

from bughunt.cli import main

main()
