"""Writing a corpus folder: ``corpus.toml`` with its targets, and agents taken from another corpus.

Shared by ``corpus mutate`` and ``corpus import``: the corpora they write get
the command agents (with their folders and requirements files) and the
pairing of an existing corpus, so they are ready to run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from bughunt.errors import InputError
from bughunt.models import AgentMode, AgentVersion
from bughunt.safeio import CONFIG_LIMIT, copy_tree, read_input
from corpus import load_corpus


@dataclass(frozen=True, slots=True)
class AgentTables:
    """Command agents of a source corpus, to be copied into a new one."""

    root: Path
    """The source corpus's folder."""
    agents: list[AgentVersion]
    """Its command agents (paths absolute)."""
    pairing: tuple[str, str]
    """Baseline and candidate: the source's pairing when both are command agents."""


@dataclass(frozen=True, slots=True)
class TargetTable:
    """One ``[[targets]]`` entry to write."""

    name: str
    path: str
    test_command: list[str]
    oracle: list[str] = field(default_factory=list)
    """Empty: the default oracle."""


def check_out(out: Path) -> None:
    """The folder a corpus is written into must be new, or an empty folder."""
    if out.exists() and not out.is_dir():
        raise InputError(
            "is not a folder: the corpus is written into a new or empty folder", file=str(out)
        )
    if out.exists() and any(out.iterdir()):
        raise InputError("the corpus folder to write is not empty", file=str(out))


@contextmanager
def staged(out: Path) -> Iterator[Path]:
    """A new folder next to ``out`` to write a corpus into, moved into place whole.

    ``out`` must be new or an empty folder (:func:`check_out`). On success the
    folder is renamed to ``out`` (one ``rename``, replacing the empty folder),
    so a corpus is never seen half-written; on any failure it is removed and
    ``out`` is left as it was.
    """
    check_out(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        yield tmp
        tmp.chmod(0o755)  # mkdtemp's 0700 is for while it is being written
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def agent_tables(source: Path) -> AgentTables:
    """The command agents of corpus ``source``; an :class:`InputError` unless it has two."""
    corpus = load_corpus(source)
    command = [a for a in corpus.config.agents if a.mode is AgentMode.COMMAND and a.path]
    if len(command) < 2:
        raise InputError(
            "needs a corpus with at least two command agents to take the agents from",
            file=str(corpus.config_file),
        )
    names = {a.name for a in command}
    pairing = corpus.config.pairing
    if {pairing.baseline, pairing.candidate} <= names:
        pair = (pairing.baseline, pairing.candidate)
    else:
        pair = (command[0].name, command[1].name)
    return AgentTables(corpus.root, command, pair)


def corpus_name_of(text: str) -> str:
    """A corpus (or target) name made of ``text``: letters, digits, ``.``, ``_``, ``-``."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:80]
    return name if name and name[0].isalnum() else f"c{name}"[:80]


def toml_value(value: object) -> str:
    """A TOML value of a string, number, boolean, list or (inline) table."""
    # A TOML writer (tomli-w) would be one more locked dependency for the few shapes written
    # here: strings (JSON's escapes are TOML's), numbers, booleans, lists, inline tables.
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def write_corpus_toml(
    out: Path, name: str, targets: Sequence[TargetTable], agents: AgentTables
) -> None:
    """``out/corpus.toml`` (cases in ``cases/``), and the agents' folders copied into ``out``."""
    lines = [f"name = {toml_value(name)}", 'cases = "cases"']
    for t in targets:
        lines += ["", "[[targets]]", f"name = {toml_value(t.name)}", f"path = {toml_value(t.path)}"]
        lines.append(f"test_command = {toml_value(t.test_command)}")
        if t.oracle:
            lines.append(f"oracle = {toml_value(t.oracle)}")
    lines += ["", "[pairing]", f"baseline = {toml_value(agents.pairing[0])}"]
    lines.append(f"candidate = {toml_value(agents.pairing[1])}")
    for agent in agents.agents:
        lines += ["", "[[agents]]", *_agent_lines(out, agent, agents.root)]
    (out / "corpus.toml").write_text("\n".join(lines) + "\n")


def _agent_lines(out: Path, agent: AgentVersion, root: Path) -> list[str]:
    """One agent's table; its folder and requirements file copied under ``out``."""
    assert agent.path is not None
    folder = Path(agent.path)
    rel = folder.relative_to(root).as_posix()
    table = agent.model_dump(mode="json", exclude_none=True, exclude_defaults=True)
    table = {"name": agent.name, "family": agent.family, "mode": "command", **table, "path": rel}
    requirements = (agent.environment.requirements if agent.environment else None) or ""
    if requirements:  # inside the source corpus (its loader checked that): copied beside
        req = Path(requirements).relative_to(root)
        table["environment"]["requirements"] = req.as_posix()
        dest = out / req
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(read_input(root / req, limit=CONFIG_LIMIT, what="a requirements file"))
    if not (out / rel).exists():  # two agents may share a folder
        # Regular files, folders and links as links, never followed; a FIFO or a device in
        # the folder is refused by name (bughunt.safeio.copy_tree).
        copy_tree(folder, out / rel, exclude=("__pycache__",))
    return [f"{k} = {toml_value(v)}" for k, v in table.items()]
