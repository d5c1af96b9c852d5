"""``bughunt judge``: ``check`` (one probe call to a judge before trusting it with a night) and ``calibrate`` (cli/_calibrate.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from bughunt.errors import InputError
from bughunt.models import CallStatus, JudgeCall
from cli._calibrate import calibrate_command
from cli._common import JsonOpt, guarded, print_json
from judging.judges import (
    CHECK_EXPECTED,
    DEFAULT_JUDGE,
    CallTiming,
    JudgeConfig,
    build_judge,
    build_prompt,
    call_judge,
    check_request,
    load_judges,
)


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="judge",
        help="Check the configured judges and calibrate them against human labels (docs/judges.md).",
        no_args_is_help=True,
    )
    group.command("check")(check_command)
    group.command("calibrate")(calibrate_command)
    app.add_typer(group, name="judge")


def _configs(
    name: str,
    config: Path | None,
    base_url: str | None,
    model: str | None,
    api_key_env: str | None,
    family: str | None,
) -> list[JudgeConfig]:
    judges = load_judges(config)
    overrides: dict[str, Any] = {
        k: v
        for k, v in {"base_url": base_url, "model": model, "api_key_env": api_key_env}.items()
        if v is not None
    }
    known = name in judges.judges or name in judges.juries
    if not known and (base_url or model):
        # An ad-hoc OpenAI-compatible judge, e.g. a local server tried before configuring it.
        # At a --base-url it sends no key unless --api-key-env names one: a local endpoint
        # needs none, and OPENAI_API_KEY is not sent to an address it was not meant for.
        fields: dict[str, Any] = {"name": name, "backend": "openai", **overrides}
        if base_url and api_key_env is None:
            fields["api_key_env"] = ""
        fields["family"] = family or model or name
        return [JudgeConfig.model_validate(fields)]
    if family is not None:
        raise InputError(f"--family is for a judge that is not configured; {name!r} is")
    members = judges.resolve(name)
    if overrides:
        if len(members) != 1 or members[0].backend != "openai":
            kind = "a jury" if len(members) != 1 else f"a {members[0].backend} judge"
            raise InputError(
                f"--base-url, --model and --api-key-env apply to one openai judge; {name!r} is {kind}"
            )
        members = [JudgeConfig.model_validate({**members[0].model_dump(), **overrides})]
    return members


def _summary(cfg: JudgeConfig, call: JudgeCall) -> dict[str, Any]:
    return {
        "judge": cfg.name,
        "family": cfg.family,
        "backend": cfg.backend,
        "model": cfg.model,
        "base_url": cfg.base_url,
        "status": call.status.value,
        "winner": call.winner.value if call.winner is not None else None,
        "expected_winner": CHECK_EXPECTED.value,
        "rationale": call.rationale,
        "attempts": call.attempts,
        "latency_s": round(call.latency_s, 3) if call.latency_s is not None else None,
        "failure_reason": call.failure_reason,
        "prompt_hash": call.prompt_hash,
        "raw_answer": call.raw_answer,
    }


def _print_text(s: dict[str, Any]) -> None:
    where = (
        f", model {s['model']} at {s['base_url'] or 'the default endpoint'}" if s["model"] else ""
    )
    typer.echo(f"judge {s['judge']} (family {s['family']}, backend {s['backend']}{where})")
    typer.echo(f"  status:    {s['status']}")
    if s["winner"] is not None:
        typer.echo(f"  winner:    {s['winner']} (a working judge says {s['expected_winner']})")
        typer.echo(f"  rationale: {s['rationale']}")
    typer.echo(f"  attempts:  {s['attempts']}")
    if s["latency_s"] is not None:
        typer.echo(f"  latency:   {s['latency_s']:.3f} s")
    if s["failure_reason"]:
        typer.echo(f"  reason:    {s['failure_reason']}")
    if s["status"] != CallStatus.JUDGED.value and s["raw_answer"]:
        typer.echo(f"  answer:    {s['raw_answer'][:500]}")


@guarded
def check_command(  # noqa: PLR0913 - typer maps each parameter to a command-line option
    judge: Annotated[
        str, typer.Option("--judge", help="Judge (or jury: every member) to check.")
    ] = DEFAULT_JUDGE,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Override the endpoint of an openai judge.")
    ] = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Override the model of an openai judge.")
    ] = None,
    api_key_env: Annotated[
        str | None,
        typer.Option(
            "--api-key-env",
            help="Environment variable holding the API key (an ad-hoc judge at --base-url "
            "sends none unless this names one).",
        ),
    ] = None,
    family: Annotated[
        str | None, typer.Option("--family", help="Family of an ad-hoc judge (default: model).")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--judges-config",
            "--config",
            help="TOML with [judges.*] / [juries.*] (default ./pyproject.toml); --config is the "
            "older name.",
        ),
    ] = None,
    deadline: Annotated[
        float | None,
        typer.Option(
            "--deadline", min=0.1, help="Seconds for the call (default: the judge's, 90)."
        ),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Send one probe pair (a precise report against a vague one) to a judge and print
    the parsed answer, terminal status, attempts and latency. Exit 0 when the judge
    answered (judged), 1 when it did not. The probe call is not written to the ledger.
    With --base-url and --model, a judge name that is not configured is checked as an
    ad-hoc OpenAI-compatible judge."""
    members = _configs(judge, config, base_url, model, api_key_env, family)
    request = check_request()
    prompt = build_prompt(request)
    summaries: list[dict[str, Any]] = []
    for cfg in members:
        backend = build_judge(cfg)
        call = call_judge(
            backend,
            request,
            run_id="judge-check",
            prompt=prompt,
            timing=CallTiming(deadline_s=deadline if deadline is not None else cfg.deadline_s),
        )
        summaries.append(_summary(cfg, call))
    if as_json:
        print_json(summaries[0] if len(summaries) == 1 else {"jury": judge, "members": summaries})
    else:
        for s in summaries:
            _print_text(s)
    if any(s["status"] != CallStatus.JUDGED.value for s in summaries):
        raise typer.Exit(1)
