"""The judge cache: ``cache stats``, ``cache clear``, ``cache prune``, ``cache adopt`` (docs/judges.md#cache).

No judge call is ever deleted: clearing and pruning record which answers the
cache no longer reuses, and the calls stay in ``judge_calls`` as history.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from bughunt.models import CacheInvalidation
from bughunt.spans import parse_span
from cli._common import (
    JsonOpt,
    JudgesConfigOpt,
    LedgerOpt,
    console,
    guarded,
    print_json,
    print_rows,
)
from ledger import Ledger

CACHE_HELP = "The judge cache: what it holds, and clearing, pruning or adopting its answers."

cache_app = typer.Typer(help=CACHE_HELP, no_args_is_help=True)

JudgeFilterOpt = Annotated[
    str | None,
    typer.Option(
        "--judge", help="Only this judge's answers (default: every judge's).", show_default=False
    ),
]
ModelFilterOpt = Annotated[
    str | None,
    typer.Option(
        "--model", help="Only this model's answers (default: every model's).", show_default=False
    ),
]

LEGACY = "(before 0016: not reused until adopted)"
"""What ``cache stats`` shows for the model of calls recorded before the key had one."""


def register(app: typer.Typer) -> None:
    app.add_typer(cache_app, name="cache")


def _when(value: datetime) -> str:
    return value.strftime("%Y-%m-%d %H:%M:%S")


def _whose(judge: str | None, model: str | None) -> str:
    parts = [f"judge {judge}" if judge else "every judge", f"model {model}" if model else ""]
    return ", ".join(p for p in parts if p)


@cache_app.command("stats")
@guarded
def stats(ledger: LedgerOpt = None, as_json: JsonOpt = False) -> None:
    """Per judge, model and endpoint: the answers the cache may reuse, the oldest and the newest.

    An answer is a call the judge itself answered (`judged`), not cleared or
    pruned since. Calls recorded before the cache key had a model and endpoint
    (ledger migration 0016) are listed last, without them: they are not reused
    until `bughunt cache adopt` vouches for them.
    """
    from tasks.score.judge_cache import cache_stats

    groups = cache_stats(Ledger(ledger))
    if as_json:
        print_json([g.model_dump(mode="json") for g in groups])
        return
    print_rows(
        [
            {
                "judge": g.judge,
                "model": g.model if g.model is not None else LEGACY,
                "endpoint": g.endpoint or "",
                "answers": g.answers,
                "oldest (UTC)": _when(g.oldest),
                "newest (UTC)": _when(g.newest),
            }
            for g in groups
        ],
        title="judge cache",
    )


@cache_app.command("clear")
@guarded
def clear(
    judge: JudgeFilterOpt = None,
    model: ModelFilterOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Stop reusing every cached judge answer so far (of one judge or model, or all).

    The calls stay in judge_calls (they are history): the ledger records that
    answers recorded before now are no longer reused, and the next run sends
    those pairs again.
    """
    from flows.ledger_writes import invalidate_cache
    from tasks.score.judge_cache import invalidation

    store = Ledger(ledger)
    row = invalidation(CacheInvalidation.CLEAR, judge=judge, model=model)
    dropped = invalidate_cache(store, row)
    console.print(
        f"cleared the judge cache of {_whose(judge, model)}: {dropped} answer(s) no longer "
        f"reused; the calls stay in judge_calls ({store.path})",
        markup=False,
    )


@cache_app.command("prune")
@guarded
def prune(
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than", help="Answers recorded longer ago than this, e.g. 30d or 12h."
        ),
    ],
    judge: JudgeFilterOpt = None,
    model: ModelFilterOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Stop reusing cached judge answers older than an age (of one judge or model, or all).

    As `cache clear`, for the answers recorded before now less --older-than:
    the calls stay, and the next run sends those pairs again.
    """
    from flows.ledger_writes import invalidate_cache
    from tasks.score.judge_cache import invalidation

    age = parse_span(older_than, field="--older-than")
    store = Ledger(ledger)
    row = invalidation(CacheInvalidation.PRUNE, judge=judge, model=model, older_than=age)
    dropped = invalidate_cache(store, row)
    console.print(
        f"pruned the judge cache of {_whose(judge, model)}: {dropped} answer(s) recorded before "
        f"{_when(row.recorded_before)} UTC no longer reused; the calls stay in judge_calls "
        f"({store.path})",
        markup=False,
    )


@cache_app.command("adopt")
@guarded
def adopt(
    judge: Annotated[str, typer.Option("--judge", help="The judge whose older calls to adopt.")],
    judges_config: JudgesConfigOpt = None,
    ledger: LedgerOpt = None,
) -> None:
    """Reuse a judge's calls from before ledger migration 0016 as its configured model's answers.

    The calls were recorded before the cache key had a model; adopting them
    reuses them as answers of the model and endpoint the judge is configured
    with now. Run it only if the judge had that model and endpoint when those
    calls were made: the ledger cannot tell, and you vouch for it. The
    adoption is recorded; a judge's calls are adopted once (`cache clear
    --judge` takes them back).
    """
    from flows.ledger_writes import adopt_cache

    store = Ledger(ledger)
    done = adopt_cache(store, judge, judges_config)
    if done.adoption is None:
        console.print(
            f"judge {judge} has no call from before the cache key had a model; nothing adopted",
            markup=False,
        )
        return
    console.print(
        f"adopted {done.answers} answer(s) of judge {judge} as model {done.adoption.model} at "
        f"{done.adoption.endpoint} ({store.path})",
        markup=False,
    )
