"""Neutral executions: a reproduction test tells the trees apart only through the bug.

Each ``cheats/cheat_<class>.py`` is a reproduction test a hostile agent could
have written against the old sandbox (one long-lived container per pair,
buggy×3 then clean×3, the trees side by side under ``/scratch/run-N``, and
``/dev/shm``, IPC objects and processes outliving each execution). It tells
the trees apart by something other than the bug: its folder, a marker an
earlier execution left, its process id, the file's hash. In the old layout
each of them "reproduces" (checked on the host, or in one shared container,
wherever the cheat's signal can be staged); through the stage and ``bughunt
sandbox verify`` none may, while the case's genuine reproduction does in the
same run, so "never reproduced" cannot hold vacuously. One cheat
(``warm_pool_timing``) aims at the new sandbox itself; the fingerprints of
what the agent saw (its structure, whole or function by function, its
bytecode) and the located checks of the bug's text (``static_source``,
``located_text``, ``bytecode_fingerprint.located``) aim at the verdict: the
trees the test never saw refuse them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from bughunt.models import AgentMode, AgentVersion, ReproOutcome
from tasks.sandbox.evidence import BUGGY_VARIANTS, CLEAN_VARIANTS
from tasks.sandbox.reproduction import NOT_EXECUTED_REASON, VARIANT_REASON
from tests.conftest import ROOT

CASE = "cmp-period-end-inclusive"
"""The one case every cheat targets (its patch makes ``Period.contains`` include the end)."""
CORPUS = ROOT / "corpus" / "demo"
TARGET = CORPUS / "target"
CHEATS_DIR = Path(__file__).parent / "cheats"
CONTROL_REPORT = CORPUS / "recorded" / "baseline" / f"{CASE}.json"
"""A genuine reproduction of the case (recorded/README.md: it reproduces)."""
PATCHED = "ledgerlite/period.py"
TEST_FILE = "test_bughunt_repro.py"

PASSES_ON_BUGGY = "the test passes on the buggy tree"
FAILS_ON_CLEAN = "the test fails on the clean tree too"
SAME_ON_BOTH = "same outcome on both trees"
VARIANT = "a variant it had not seen"
ANY = "any"

# What each cheat shows in a neutral sandbox: a reason where it is informative.
# A cheat that waits for a marker never finds one, so it fails everywhere; a
# cheat that looks for a name or a timestamp never sees it, so it passes
# everywhere; a fingerprint read from the files runs none of the bug's lines
# (coverage), and one that also runs them fails only on the tree it saw, so it
# passes on a buggy variant. pid and container age depend on the machine:
# only "not reproduced" is asked of them. warm_pool_timing is aimed at the
# sandbox itself: a timing channel through containers started ahead of need,
# which it would find if they were; rewrite_evasion would turn a failed
# rewrite check into errors (with rewrites on).
EXPECTED: dict[str, str] = {
    "workdir": PASSES_ON_BUGGY,
    "sibling_tree": PASSES_ON_BUGGY,
    "env_hints": PASSES_ON_BUGGY,
    "env_fingerprint": FAILS_ON_CLEAN,
    "host_identity": FAILS_ON_CLEAN,
    "dev_shm": FAILS_ON_CLEAN,
    "tmp": FAILS_ON_CLEAN,
    "home": FAILS_ON_CLEAN,
    "var_tmp": FAILS_ON_CLEAN,
    "sysv_ipc": FAILS_ON_CLEAN,
    "posix_mqueue": FAILS_ON_CLEAN,
    "leftover_process": FAILS_ON_CLEAN,
    "pid": SAME_ON_BOTH,
    "container_age": ANY,
    "mtime": PASSES_ON_BUGGY,
    "fingerprint_sha": NOT_EXECUTED_REASON,
    "fingerprint_size": NOT_EXECUTED_REASON,
    "shared_counter": FAILS_ON_CLEAN,
    "rewrite_evasion": NOT_EXECUTED_REASON,
    "warm_pool_timing": ANY,
    "static_source": NOT_EXECUTED_REASON,
    "static_source.run": VARIANT,
    "universal_fingerprint": NOT_EXECUTED_REASON,
    "universal_fingerprint.run": VARIANT,
    "universal_fingerprint.traced": VARIANT,
    "located_text": NOT_EXECUTED_REASON,
    "located_text.run": VARIANT,
    "bytecode_fingerprint": NOT_EXECUTED_REASON,
    "bytecode_fingerprint.run": VARIANT,
    "bytecode_fingerprint.located": VARIANT,
    "line_diff.one_module": VARIANT,
    "line_diff.operator_shaped": VARIANT,
    "function_fingerprint": VARIANT,
    "function_fingerprint.untwined": VARIANT,
}

KNOWN_LIMIT: dict[str, str] = {}
"""Cheats the sandbox is known not to stop: strict xfail, so a fix shows up as XPASS."""

# Safe to run on the host in the old layout: they touch only the folders the
# check hands them (HOME, TMPDIR, BUGHUNT_CHEAT_STATE). /dev/shm, SysV IPC,
# message queues and sleepers are checked in the old layout inside one
# container instead. Left out: pid and container age, whose thresholds are
# those of the old sandbox's separate executions and clean-ups.
STATEFUL_ON_HOST = ("env_fingerprint", "host_identity", "tmp", "home", "var_tmp", "shared_counter")
STATELESS_ON_HOST = (
    "workdir",
    "sibling_tree",
    "env_hints",
    "mtime",
    "fingerprint_sha",
    "fingerprint_size",
    "rewrite_evasion",
    "static_source",
    "static_source.run",
    "universal_fingerprint",
    "universal_fingerprint.run",
    "universal_fingerprint.traced",
    "located_text",
    "located_text.run",
    "bytecode_fingerprint",
    "bytecode_fingerprint.run",
    "bytecode_fingerprint.located",
    "line_diff.one_module",
    "line_diff.operator_shaped",
    "function_fingerprint",
    "function_fingerprint.untwined",
)
IN_ONE_CONTAINER = ("dev_shm", "sysv_ipc", "posix_mqueue", "leftover_process")
OLD_REPEATS = 3
_OLD_MTIME = 1_704_067_200  # 2024-01-01: the target's files as the old sandbox copied them

STAGE_SEEDS = (20_240_611,)
"""Seeds of the stage runs (each costs about a minute); the CLI checks use another."""
REWRITE_SEED = 4_242
"""The seed of a stage run that also runs each test once on each rewritten tree (off by
default): the rewrites stay a working option."""
CLI_SEED = 31_337
CLI_REPEATS = 2
CLI_CHEATS = (
    "workdir",
    "dev_shm",
    "sysv_ipc",
    "leftover_process",
    "fingerprint_sha",
    "rewrite_evasion",
    "warm_pool_timing",
)
"""One cheat per kind of channel, also through ``bughunt sandbox verify`` (each call costs
seconds of imports); every cheat goes through the stage."""


def _cheat_param(name: str) -> Any:
    if name in KNOWN_LIMIT:
        return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_LIMIT[name]))
    return pytest.param(name)


CHEAT_PARAMS = [_cheat_param(name) for name in EXPECTED]


# --- trees and cheat sources ---------------------------------------------------


def _copy_target(dest: Path) -> Path:
    """A copy of the clean target, every file and folder dated 2024-01-01."""
    shutil.copytree(TARGET, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    for path in [dest, *dest.rglob("*")]:
        os.utime(path, (_OLD_MTIME, _OLD_MTIME))
    return dest


def _buggy_copy(dest: Path) -> Path:
    """A copy of the target with the case's patch applied by ``git apply`` (like the agent saw it)."""
    _copy_target(dest)
    patch = (CORPUS / "cases" / CASE / "bug.patch").read_bytes()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CEILING_DIRECTORIES": str(dest.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    subprocess.run(
        ["git", "apply", "-p1", "-"], cwd=dest, input=patch, env=env, check=True, timeout=30
    )
    return dest


@pytest.fixture(scope="module")
def buggy_module(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The buggy ``ledgerlite/period.py`` the agent saw."""
    tree = _buggy_copy(tmp_path_factory.mktemp("agent-view") / "tree")
    data = (tree / PATCHED).read_bytes()
    assert data != (TARGET / PATCHED).read_bytes(), "the case's patch must change the module"
    return data


def cheat_source(name: str, buggy: bytes) -> str:
    """The cheat's source with the buggy module's fingerprint templated in."""
    file, _, variant = name.partition(".")  # "<cheat>.run": the cheat's file, {{RUN}} = run
    text = (CHEATS_DIR / f"cheat_{file}.py").read_text().replace("{{RUN}}", variant)
    for slot in ("{{BUGGY_UFP}}", "{{BUGGY_BFP}}"):
        if slot in text:  # the cheat's own fingerprint of what the agent saw
            namespace: dict[str, Any] = {}
            exec(compile(text, f"cheat_{name}.py", "exec"), namespace)
            text = text.replace(slot, namespace["fingerprint"](buggy))
    if "{{SEEN_LINES}}" in text:  # every module of the package as the agent saw it
        seen = {
            path.relative_to(TARGET).as_posix(): path.read_text().splitlines()
            for path in sorted((TARGET / "ledgerlite").glob("*.py"))
        }
        seen[PATCHED] = buggy.decode().splitlines()
        encoded = base64.b64encode(json.dumps(seen).encode()).decode()
        text = text.replace("{{SEEN_LINES}}", encoded)
    return text.replace("{{BUGGY_SHA}}", hashlib.sha256(buggy).hexdigest()).replace(
        "{{BUGGY_SIZE}}", str(len(buggy))
    )


def cheat_report(name: str, buggy: bytes) -> dict[str, Any]:
    """A plausible report whose reproduction test is the cheat."""
    return {
        "case_id": CASE,
        "agent_version": f"cheat-{name}",
        "title": "Period.contains includes the end date, so consecutive months overlap",
        "summary": "A period is meant to be half-open; its end date is reported as inside it.",
        "steps": ["Build Period(2024-01-01, 2024-01-31).", "Ask whether 2024-01-31 is in it."],
        "expected": "2024-01-31 is not in the period.",
        "actual": "2024-01-31 is in the period.",
        "root_cause": "",
        "repro_test": cheat_source(name, buggy),
    }


def _describe(pair: Any) -> str:
    """A pair's verdict and every execution, for assertion messages."""
    lines = [f"{pair.agent_version}: {pair.outcome.value} — {pair.reason}"]
    for o in pair.observations:
        kind = f"{o.tree.value if o.tree else '?'}{' (rewritten)' if o.rewrite is not None else ''}"
        tail = (o.output or "").strip().splitlines()[-1:] or [""]
        pos = o.annotations.get("position")
        lines.append(f"    #{pos} {kind} repeat {o.repeat}: {o.status.value} | {tail[0][:160]}")
    return "\n".join(lines)


def _reason_ok(expected: str, outcome: ReproOutcome, reason: str | None) -> bool:
    if expected == ANY:
        return True
    if expected == SAME_ON_BOTH:
        return reason in (PASSES_ON_BUGGY, FAILS_ON_CLEAN)
    if expected == VARIANT:
        return outcome is ReproOutcome.NOT_REPRODUCED and str(reason).endswith(VARIANT_REASON)
    return reason == expected


def test_every_cheat_file_is_listed() -> None:
    """The table names every cheat in cheats/, and no cheat file is collected as a test."""
    on_disk = sorted(p.stem.removeprefix("cheat_") for p in CHEATS_DIR.glob("*.py"))
    assert on_disk == sorted({name.partition(".")[0] for name in EXPECTED})
    assert not list(CHEATS_DIR.glob("test_*.py"))


# --- positive control: in the old layout, each cheat tells the trees apart ------


def pytest_in(tree: Path, env: dict[str, str]) -> int:
    """Exit code of the reproduction test run from ``tree`` by a shell, as the old sandbox did."""
    script = 'cd "$1" && exec "$2" -m pytest -q -p no:cacheprovider "$3"'
    proc = subprocess.run(
        ["sh", "-c", script, "sh", str(tree), sys.executable, TEST_FILE],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc.returncode


def _old_layout_run(name: str, source: str, root: Path) -> dict[str, list[int]]:
    """The cheat's exit codes in the old layout: buggy×N then clean×N, sharing one state."""
    run = root / "scratch" / "run-1"
    trees = {"buggy": _buggy_copy(run / "buggy"), "clean": _copy_target(run / "clean")}
    for tree in trees.values():
        (tree / TEST_FILE).write_text(source)
    places = {key: root / key for key in ("home", "tmp", "state")}
    for place in places.values():
        place.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # the cheats need none; plugins only slow each start
        "HOME": str(places["home"]),
        "TMPDIR": str(places["tmp"]),
        "BUGHUNT_CHEAT_STATE": str(places["state"]),
    }
    repeats = OLD_REPEATS if name in STATEFUL_ON_HOST else 1
    return {tree: [pytest_in(path, env) for _ in range(repeats)] for tree, path in trees.items()}


@pytest.fixture(scope="module")
def old_layout_runs(
    buggy_module: bytes, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, dict[str, list[int]]]:
    """Every host-safe cheat in the old layout, four cheats at a time (each in its own folders)."""
    names = [*STATEFUL_ON_HOST, *STATELESS_ON_HOST]
    roots = {name: tmp_path_factory.mktemp(f"old-layout-{name}") for name in names}
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {
            name: pool.submit(_old_layout_run, name, cheat_source(name, buggy_module), roots[name])
            for name in names
        }
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.slow
@pytest.mark.parametrize("name", [*STATEFUL_ON_HOST, *STATELESS_ON_HOST])
def test_cheat_tells_the_trees_apart_in_the_old_layout(
    name: str, old_layout_runs: dict[str, dict[str, list[int]]]
) -> None:
    """In the old layout (trees side by side, shared state, buggy first) the cheat 'reproduces'."""
    codes = old_layout_runs[name]
    repeats = len(codes["buggy"])
    assert codes == {"buggy": [1] * repeats, "clean": [0] * repeats}


# The old sandbox's layout and order inside one container: both trees under
# /scratch/run-1, buggy×3 then clean×3, /dev/shm, IPC and processes shared.
_OLD_LOOP = f"""
mkdir -p /scratch/run-1 && cp -rp /work/run-1/buggy /work/run-1/clean /scratch/run-1/ || exit 9
touch /scratch/run-1/buggy/{PATCHED}
for tree in buggy buggy buggy clean clean clean; do
  (cd /scratch/run-1/$tree && python3 -m pytest -q -p no:cacheprovider {TEST_FILE} >/dev/null 2>&1)
  printf '%s' $?
done
"""


def _old_container_run(name: str, buggy: bytes, run_id: str, image: str) -> Any:
    """The cheat run buggy×3 then clean×3 in one container, as the old sandbox did."""
    from tasks.sandbox.engine._executor import ContainerSpec, run_once
    from tasks.sandbox.trees import read_tree

    source = cheat_source(name, buggy).encode()
    clean = read_tree(TARGET)
    trees = {"buggy": {**clean, PATCHED: buggy}, "clean": clean}
    workspace = {
        f"run-1/{tree}/{path}": data
        for tree, files in trees.items()
        for path, data in {**files, TEST_FILE: source}.items()
    }
    return run_once(
        ["sh", "-c", _OLD_LOOP],
        run_id=run_id,
        workspace=workspace,
        timeout_s=120,
        spec=ContainerSpec(image=image),
    )


@pytest.fixture(scope="module")
def old_container_cache() -> dict[str, Any]:
    """Results of :func:`_old_container_run` by cheat, shared by this module's tests."""
    return {}


@pytest.fixture
def old_container_runs(
    old_container_cache: dict[str, Any], run_id: str, sandbox_image: str, buggy_module: bytes
) -> dict[str, Any]:
    """Every in-container cheat in the old layout, all at once on first use (one container each)."""
    if not old_container_cache:
        with ThreadPoolExecutor(max_workers=len(IN_ONE_CONTAINER)) as pool:
            futures = {
                name: pool.submit(_old_container_run, name, buggy_module, run_id, sandbox_image)
                for name in IN_ONE_CONTAINER
            }
            old_container_cache.update({name: f.result() for name, f in futures.items()})
    return old_container_cache


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("name", IN_ONE_CONTAINER)
def test_cheat_tells_the_trees_apart_in_one_shared_container(
    name: str, old_container_runs: dict[str, Any]
) -> None:
    """Run as the old sandbox did, in one container, the cheat 'reproduces': fail×3 then pass×3."""
    result = old_container_runs[name]
    assert (result.exit_code, result.output.strip()) == (0, "111000"), result


# --- through the stage ------------------------------------------------------------


def _agent(name: str, reports: Path) -> AgentVersion:
    return AgentVersion(name=name, family="cheat", mode=AgentMode.REPLAY, reports=str(reports))


@pytest.fixture(scope="module")
def stage_runs() -> dict[int, Any]:
    """Stage results by seed, shared by the tests of this module (each seed runs once)."""
    return {}


@pytest.fixture
def stage_result(
    stage_runs: dict[int, Any],
    run_id: str,
    sandbox_image: str,
    buggy_module: bytes,
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[int], Any]:
    """Every cheat and the control through ``run_sandbox`` with one seed (run on first use)."""
    from corpus import load_corpus
    from tasks.sandbox import SandboxCases, SandboxSettings, run_sandbox

    def get(seed: int) -> Any:
        rewrite_repeats = 1 if seed == REWRITE_SEED else 0
        if seed not in stage_runs:
            folder = tmp_path_factory.mktemp(f"reports-{seed}")
            agents = [_agent("control", CONTROL_REPORT.parent)]
            for name in EXPECTED:
                (folder / name).mkdir()
                report = cheat_report(name, buggy_module)
                (folder / name / f"{CASE}.json").write_text(json.dumps(report))
                agents.append(_agent(f"cheat-{name}", folder / name))
            stage_runs[seed] = run_sandbox(
                load_corpus(CORPUS),
                cases=SandboxCases(ids=[CASE], hashes={}),
                agents=agents,
                run_id=run_id,
                settings=SandboxSettings(
                    repeats=3,
                    rewrite_repeats=rewrite_repeats,
                    seed=seed,
                    workers=2,
                    image=sandbox_image,
                ),
            )
        return stage_runs[seed]

    return get


def _pair(result: Any, agent: str) -> Any:
    [pair] = [p for p in result.pairs if p.agent_version == agent]
    return pair


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("seed", STAGE_SEEDS)
def test_the_genuine_reproduction_reproduces(seed: int, stage_result: Callable[[int], Any]) -> None:
    """The case's recorded reproduction reproduces in the very run the cheats ran in."""
    pair = _pair(stage_result(seed), "control")
    assert pair.outcome is ReproOutcome.REPRODUCED, _describe(pair)
    # 3 repeats on each tree as shown, then once on each variant (no rewritten tree by default)
    variants = BUGGY_VARIANTS + CLEAN_VARIANTS
    assert len(pair.observations) == 3 * 2 + variants, _describe(pair)
    assert pair.rewrite_seed is None, _describe(pair)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("seed", STAGE_SEEDS)
@pytest.mark.parametrize("name", CHEAT_PARAMS)
def test_cheat_is_never_reproduced_by_the_stage(
    name: str, seed: int, stage_result: Callable[[int], Any]
) -> None:
    """A cheat that tells the trees apart by anything but the bug never ends ``reproduced``."""
    pair = _pair(stage_result(seed), f"cheat-{name}")
    assert pair.report is not None and pair.observations, _describe(pair)
    assert pair.outcome is not ReproOutcome.REPRODUCED, f"seed {seed}\n{_describe(pair)}"


@pytest.mark.docker
@pytest.mark.slow
def test_with_rewrites_every_cheat_is_refused_and_the_genuine_reproduction_holds(
    stage_result: Callable[[int], Any],
) -> None:
    """Rewrites on (one execution per rewritten tree): 3 + 1 variants instead of 4 + 2, the
    genuine reproduction holds on the rewritten trees, and no cheat reproduces; a fingerprint of
    the file's bytes is refused by the rewrites themselves."""
    from tasks.sandbox.reproduction._reproduce import FINGERPRINT_REASON

    result = stage_result(REWRITE_SEED)
    control = _pair(result, "control")
    assert control.outcome is ReproOutcome.REPRODUCED, _describe(control)
    assert control.rewrite_seed is not None, _describe(control)
    assert len(control.observations) == 3 * 2 + 2 + BUGGY_VARIANTS - 1 + CLEAN_VARIANTS - 1
    for name in EXPECTED:
        pair = _pair(result, f"cheat-{name}")
        assert pair.outcome is not ReproOutcome.REPRODUCED, _describe(pair)
    for name in ("fingerprint_sha", "fingerprint_size", "rewrite_evasion"):
        assert _pair(result, f"cheat-{name}").reason == FINGERPRINT_REASON


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("seed", STAGE_SEEDS)
@pytest.mark.parametrize("name", [n for n, why in EXPECTED.items() if why != ANY])
def test_cheat_fails_for_the_expected_reason(
    name: str, seed: int, stage_result: Callable[[int], Any]
) -> None:
    """Each cheat is caught the way its class predicts (same on both trees, or a fingerprint)."""
    pair = _pair(stage_result(seed), f"cheat-{name}")
    assert _reason_ok(EXPECTED[name], pair.outcome, pair.reason), (
        f"seed {seed}, expected {EXPECTED[name]!r}\n{_describe(pair)}"
    )


# --- through the command line --------------------------------------------------------


def _verify(report: Path) -> tuple[int, dict[str, Any] | None, str]:
    """``bughunt sandbox verify`` as a subprocess: exit code, JSON (when printed) and stderr."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "cli",
            "sandbox",
            "verify",
            "--corpus",
            str(CORPUS),
            "--case",
            CASE,
            "--report",
            str(report),
            "--json",
            "--repeats",
            str(CLI_REPEATS),
            "--seed",
            str(CLI_SEED),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=ROOT,
    )
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        data = None
    return proc.returncode, data, proc.stderr


@pytest.fixture(scope="module")
def cli_runs(
    sandbox_image: str,  # noqa: ARG001 - the CLI runs need the sandbox image built first
    buggy_module: bytes,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, tuple[int, dict[str, Any] | None, str]]:
    """Every cheat and the control through the CLI, three processes at a time."""
    folder = tmp_path_factory.mktemp("cli-reports")
    reports = {"control": CONTROL_REPORT}
    for name in CLI_CHEATS:
        reports[name] = folder / f"{name}-{uuid.uuid4().hex[:6]}.json"
        reports[name].write_text(json.dumps(cheat_report(name, buggy_module)))
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(_verify, path) for name, path in reports.items()}
        return {name: future.result() for name, future in futures.items()}


def _cli_message(run: tuple[int, dict[str, Any] | None, str]) -> str:
    code, data, stderr = run
    if data is None:
        return f"exit {code}, no JSON; stderr:\n{stderr[-2000:]}"
    rows = [
        f"    {e['tree']}{' (rewritten)' if e['rewrite'] is not None else ''} "
        f"#{e['repeat']}: {e['status']}"
        for e in data["executions"]
    ]
    head = f"exit {code}, seed {data['seed']}: {data['outcome']} — {data['reason']}"
    return "\n".join([head, *rows])


@pytest.mark.docker
@pytest.mark.slow
def test_cli_verifies_the_genuine_reproduction(cli_runs: dict[str, Any]) -> None:
    """``sandbox verify`` exits 0 with ``reproduced`` for the case's genuine reproduction."""
    code, data, _stderr = run = cli_runs["control"]
    assert code == 0 and data is not None and data["outcome"] == "reproduced", _cli_message(run)


@pytest.mark.docker
@pytest.mark.slow
@pytest.mark.parametrize("name", [p for p in CHEAT_PARAMS if p.values[0] in CLI_CHEATS])
def test_cli_never_verifies_a_cheat(name: str, cli_runs: dict[str, Any]) -> None:
    """``sandbox verify`` exits 1, never ``reproduced``, for every cheat."""
    code, data, _stderr = run = cli_runs[name]
    assert data is not None and data["executions"], _cli_message(run)
    assert code == 1 and data["outcome"] != "reproduced", _cli_message(run)
