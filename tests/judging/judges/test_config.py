"""Judges and juries from pyproject.toml or a TOML file, and building their backends."""

from __future__ import annotations

from pathlib import Path

import pytest

from bughunt.errors import InputError
from judging.judges import (
    CommandJudge,
    JudgeConfig,
    JudgesConfig,
    OpenAIJudge,
    build_judge,
    load_judges,
)

PYPROJECT = """
[project]
name = "x"

[tool.bughunt]
ledger = ".bughunt/ledger.duckdb"

[tool.bughunt.judges.gpt]
backend = "openai"
family = "gpt"
base_url = "http://127.0.0.1:9/v1"
model = "gpt-x"
api_key_env = "MY_JUDGE_KEY"
required = true

[tool.bughunt.judges.local]
backend = "command"
family = "llama"
command = ["./judge.sh", "--strict"]

[tool.bughunt.juries.panel]
members = ["gpt", "local", "sim"]
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_without_configuration_the_sim_judge_exists(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No pyproject.toml in the working folder: only the built-in ``sim`` judge."""
    monkeypatch.chdir(tmp_path)
    config = load_judges()
    assert list(config.judges) == ["sim"]
    assert config.judge("sim").family == "sim" and config.judge("sim").backend == "sim"


def test_pyproject_tables_define_judges_and_juries(tmp_path: Path) -> None:
    """``[tool.bughunt.judges.NAME]`` and ``[tool.bughunt.juries.NAME]`` are read; names are table names."""
    config = load_judges(write(tmp_path, "pyproject.toml", PYPROJECT))
    gpt = config.judge("gpt")
    assert (gpt.name, gpt.backend, gpt.model, gpt.api_key_env, gpt.required) == (
        "gpt",
        "openai",
        "gpt-x",
        "MY_JUDGE_KEY",
        True,
    )
    assert config.judge("local").command == ["./judge.sh", "--strict"]
    assert [m.name for m in config.resolve("panel")] == ["gpt", "local", "sim"]
    assert [m.name for m in config.resolve("gpt")] == ["gpt"]


def test_a_separate_file_uses_top_level_tables(tmp_path: Path) -> None:
    """Any other TOML file holds ``[judges.NAME]`` and ``[juries.NAME]`` at the top level."""
    text = PYPROJECT.replace("tool.bughunt.", "").replace("[tool.bughunt]\n", "[x]\n")
    config = load_judges(write(tmp_path, "judges.toml", text))
    assert sorted(config.judges) == ["gpt", "local", "sim"]
    assert "panel" in config.juries


def test_a_jury_needs_members_of_different_families(tmp_path: Path) -> None:
    """Two members of one family are refused, naming the jury and both judges."""
    text = PYPROJECT.replace('family = "llama"', 'family = "gpt"')
    with pytest.raises(InputError, match=r"jury 'panel' has two judges of family 'gpt'"):
        load_judges(write(tmp_path, "pyproject.toml", text))


def test_a_jury_member_must_exist(tmp_path: Path) -> None:
    """An unknown member is refused with the list of known judges."""
    text = PYPROJECT.replace('"gpt", "local", "sim"', '"gpt", "ghost"')
    with pytest.raises(InputError, match="no judge named 'ghost'"):
        load_judges(write(tmp_path, "pyproject.toml", text))


@pytest.mark.parametrize(
    "table,field,message",
    [
        ('backend = "openai"\nfamily = "f"', "tool.bughunt.judges.bad", "needs 'model'"),
        ('backend = "command"\nfamily = "f"', "tool.bughunt.judges.bad", "needs 'command'"),
        ('backend = "magic"\nfamily = "f"', "tool.bughunt.judges.bad.backend", "'sim'"),
        ('backend = "sim"', "tool.bughunt.judges.bad.family", "Field required"),
        ('family = "f"\nmodle = "typo"', "tool.bughunt.judges.bad.modle", "Extra inputs"),
        ('family = "f"\nname = "other"', "tool.bughunt.judges.bad.name", "table name"),
    ],
)
def test_bad_judge_tables_name_the_file_and_field(
    tmp_path: Path, table: str, field: str, message: str
) -> None:
    """A bad table is an InputError naming the file and the field."""
    path = write(tmp_path, "pyproject.toml", f"[tool.bughunt.judges.bad]\n{table}\n")
    with pytest.raises(InputError) as info:
        load_judges(path)
    assert info.value.file == str(path) and info.value.field == field
    assert message in info.value.message


def test_bad_toml_and_missing_files_name_the_file(tmp_path: Path) -> None:
    """Unreadable configuration is a clear error, never a silent default."""
    with pytest.raises(InputError, match="invalid TOML"):
        load_judges(write(tmp_path, "j.toml", "[judges.x\n"))
    with pytest.raises(InputError, match="not found"):
        load_judges(tmp_path / "missing.toml")


def test_an_unknown_judge_lists_the_known_ones() -> None:
    """Asking for a judge that does not exist names the ones that do."""
    with pytest.raises(InputError, match="known judges: sim"):
        JudgesConfig().judge("gpt")


def test_an_openai_judge_reads_its_key_from_the_named_variable() -> None:
    """The key comes from the environment variable the config names, never from the file."""
    cfg = JudgeConfig(name="gpt", backend="openai", family="gpt", model="m", api_key_env="MY_KEY")
    judge = build_judge(cfg, {"MY_KEY": "sk-secret-value"})
    assert isinstance(judge, OpenAIJudge)
    assert "sk-secret-value" not in repr(judge)
    assert (judge.name, judge.family, judge.required) == ("gpt", "gpt", False)


def test_a_missing_key_variable_is_a_clear_error() -> None:
    """An unset key variable names the variable and how to do without one."""
    cfg = JudgeConfig(name="gpt", backend="openai", family="gpt", model="m", api_key_env="MY_KEY")
    with pytest.raises(InputError, match=r"MY_KEY is not set.*api_key_env = \"\""):
        build_judge(cfg, {})
    no_key = cfg.model_copy(update={"api_key_env": ""})
    assert isinstance(build_judge(no_key, {}), OpenAIJudge)


def test_a_command_judge_is_built_from_its_argv() -> None:
    """A command judge keeps its argument vector and required flag."""
    cfg = JudgeConfig(name="c", backend="command", family="f", command=["x", "y"], required=True)
    judge = build_judge(cfg, {})
    assert isinstance(judge, CommandJudge) and judge.argv == ["x", "y"] and judge.required


def test_the_default_sim_judge_answers_under_the_contract() -> None:
    """The built-in ``sim`` judge is built without configuration and ends judged."""
    from bughunt.models import CallStatus
    from judging.judges import call_judge
    from tests.judging.judges.helpers import request

    judge = build_judge(JudgesConfig().judge("sim"), {})
    call = call_judge(judge, request(), run_id="r")
    assert (call.status, call.judge, call.family, call.attempts) == (
        CallStatus.JUDGED,
        "sim",
        "sim",
        1,
    )
    assert call.winner is not None


def test_sim_parameters_and_seed_come_from_the_table(tmp_path: Path) -> None:
    """``seed`` and ``sim_params`` configure the simulated judge; a bad parameter is refused."""
    path = write(
        tmp_path,
        "j.toml",
        '[judges.fair]\nbackend = "sim"\nfamily = "sim-b"\nseed = 7\n'
        "[judges.fair.sim_params]\nb_pos = 0.0\nb_len = 0.0\n",
    )
    judge = build_judge(load_judges(path).judge("fair"), {})
    assert judge.family == "sim-b"
    assert getattr(judge, "seed") == 7 and getattr(judge, "params").b_pos == 0.0  # noqa: B009
    bad = JudgeConfig(name="x", family="f", sim_params={"nonsense": 1.0})
    with pytest.raises(InputError, match="nonsense"):
        build_judge(bad, {})
