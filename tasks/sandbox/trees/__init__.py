"""A case's trees in memory (path → bytes): the clean tree read from the corpus's target, the
buggy tree with the case's patch applied by ``git apply``, and a tree moved under a folder."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bughunt.lazy import lazy_names

if TYPE_CHECKING:
    from tasks.sandbox.trees._trees import (
        Files as Files,
        apply_patch as apply_patch,
        prefixed as prefixed,
        read_tree as read_tree,
    )


__getattr__ = lazy_names(globals())
