"""The outcome summary in words, for people (the JSON form is the model itself)."""

from __future__ import annotations

from tasks.outcomes._summary import OutcomeSummary


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def render_summary(summary: OutcomeSummary) -> str:
    """Plain text: rates with intervals and bounds, counts, every disputed variant, every unscored case.

    Record text (notes, ids, sources) is printed as given; callers that render
    HTML or Markdown must escape it.
    """
    s = summary
    lines: list[str] = []
    if s.pass_rate is None:
        lines.append(f"pass rate: none — {s.null_reasons.get('pass_rate', 'no decided case')}")
    else:
        decided = s.cases.pass_ + s.cases.fail
        ci = s.pass_rate_ci
        ci_text = f" (95% CI {_pct(ci[0])}–{_pct(ci[1])})" if ci else ""
        lines.append(
            f"pass rate: {_pct(s.pass_rate)}{ci_text}, {s.cases.pass_} of {decided} decided cases"
        )
    if s.pass_rate_bounds is not None and (
        s.pass_rate is None or s.pass_rate_bounds != (s.pass_rate, s.pass_rate)
    ):
        lo, hi = s.pass_rate_bounds
        lines.append(
            f"  bounds: {_pct(lo)} if every disputed and mixed case failed, "
            f"{_pct(hi)} if every one passed"
        )
    if s.observation_pass_rate is None:
        lines.append(
            "observation pass rate: none — "
            + s.null_reasons.get("observation_pass_rate", "no decided observation")
        )
    else:
        lines.append(f"observation pass rate: {_pct(s.observation_pass_rate)}")
    c, o = s.cases, s.observations
    lines.append(
        f"cases: {c.total} total — {c.pass_} pass, {c.fail} fail, {c.mixed} mixed, "
        f"{c.disputed} disputed, {c.unscored} unscored"
    )
    lines.append(
        f"records: {o.records} given, {o.kept} observations kept, {o.replays} replays, "
        f"{o.annotation_variants} annotation variants, {o.conflicting_records} conflicting, "
        f"{o.unknown} unknown"
    )
    if s.disputed:
        lines.append("")
        lines.append(f"disputed identities ({len(s.disputed)}): no side is picked")
        for d in s.disputed:
            lines.append(f"  {d.identity} (case {', '.join(d.case_ids)})")
            for v in d.variants:
                note = f" note={v.note!r}" if v.note is not None else ""
                extra = "".join(
                    f" {name}={value}"
                    for name, value in (
                        ("run", v.run_id),
                        ("agent", v.agent_version),
                        ("kind", v.kind),
                        ("hash", v.case_hash),
                    )
                    if value is not None
                )
                lines.append(
                    f"    - {v.status.value}{extra}{note} from {v.source or 'unknown source'}"
                )
    if s.unscored:
        lines.append("")
        lines.append(f"unscored cases ({len(s.unscored)}):")
        for u in s.unscored:
            lines.append(f"  {u.case_id}: {u.reason}")
    return "\n".join(lines)
