"""``python -m cli``: the same as the ``bughunt`` command."""

from cli import main

main()
