"""Judge throughput: the score stage against an endpoint that allows C requests in flight.

The endpoint (``benchmarks/_judge_server.py``, its own process) answers every
chat completion after a fixed latency L with at most C requests in flight, so
no client can do better than C / L calls per second. The score stage is
driven exactly as a night drives it: the ``openai`` judge (its pool of kept-alive
``http.client`` connections), strategy ``swap`` (two calls per pair), ``max_in_flight = C``,
no bias probes, no cache. The benchmark fails if a call is not ``judged``,
if the call count is off, or if the server ever saw more than C requests in
flight (the bound comes from configuration, not from luck).

A warm-up batch of C pairs opens the connections first; the figure is the
best of ``--rounds`` timed batches (these machines are noisy). Beside it, the
floor: C threads sending the same number of requests over bare
``http.client`` connections, no judge at all; what that loses against C / L
is the endpoint's and the loopback's own cost, not the judge's. To see where
the client's time goes, run it under ``py-spy record --gil`` (the calls run
on worker threads, which cProfile does not see).

Run: ``python -m benchmarks.judge_throughput [--calls 2000] [--concurrency 32]
[--latency-ms 50] [--rounds 3]``. Last line: achieved / limit.
"""

from __future__ import annotations

import argparse
import http.client
import json
import threading
import time
from collections.abc import Sequence

from benchmarks._judge_server import JudgeServer
from bughunt.models import BugReport, ReproOutcome, Strategy
from judging.judges import JudgeConfig, OpenAIJudge
from tasks.score import Matchup, ReportEvidence, ScoreSettings, score_stage

BASELINE, CANDIDATE = "baseline", "candidate"


def make_evidence(pairs: int, tag: str = "") -> list[ReportEvidence]:
    """Two small, distinct reports per case (baseline and candidate), both reproduced."""
    out = []
    for i in range(pairs):
        case = f"case-{tag}{i:05d}"
        for agent, family, extra in ((BASELINE, "alpha", ""), (CANDIDATE, "beta", " exactly")):
            report = BugReport(
                case_id=case,
                agent_version=agent,
                title=f"Period {i} contains its end date{extra}",
                summary=f"Period.contains returns True for the end date of period {i}.",
                steps=["python3 -m pytest -q test_bughunt_repro.py", "See it fail."],
                expected="The end date is not in the period.",
                actual="The end date is in the period.",
                root_cause="ledgerlite/period.py compares with <= instead of <.",
                repro_test=(
                    "from datetime import date\nfrom ledgerlite import Period\n\n\n"
                    f"def test_end_{i}():\n"
                    "    p = Period(date(2024, 1, 1), date(2024, 2, 1))\n"
                    "    assert date(2024, 2, 1) not in p\n"
                ),
            )
            out.append(
                ReportEvidence(
                    case_id=case,
                    agent_version=agent,
                    family=family,
                    report=report,
                    outcome=ReproOutcome.REPRODUCED,
                )
            )
    return out


def judge_for(server: JudgeServer) -> OpenAIJudge:
    """The ``openai`` backend pointed at the local endpoint (no key needed)."""
    config = JudgeConfig(
        name="bench",
        backend="openai",
        family="bench",
        model="bench-judge",
        base_url=server.base_url,
        api_key_env="",
    )
    return OpenAIJudge(config, max_connections=server.concurrency)


def bare_floor(server: JudgeServer, calls: int) -> float:
    """Seconds for ``calls`` requests from ``server.concurrency`` threads over bare
    ``http.client`` connections (one each, kept alive): the endpoint's own limit."""
    body = json.dumps({"model": "bench-judge", "messages": [{"role": "user", "content": "x"}]})
    left = iter(range(calls))
    lock = threading.Lock()

    def sender() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        try:
            while True:
                with lock:
                    if next(left, None) is None:
                        return
                conn.request("POST", "/v1/chat/completions", body=body)
                conn.getresponse().read()
        finally:
            conn.close()

    threads = [threading.Thread(target=sender) for _ in range(server.concurrency)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start


def run_batch(
    judge: OpenAIJudge, evidence: Sequence[ReportEvidence], concurrency: int, run_id: str
) -> float:
    """Seconds for the score stage on ``evidence``; raises unless every call was judged."""
    settings = ScoreSettings(strategy=Strategy.SWAP, max_in_flight=concurrency, probe_pairs=0)
    start = time.perf_counter()
    result = score_stage(
        evidence,
        Matchup(run_id, BASELINE, CANDIDATE),
        categories={},
        judges=[judge],
        settings=settings,
        cached=[],
    )
    elapsed = time.perf_counter() - start
    expected = len(evidence)  # two reports per pair, two calls per pair under swap
    statuses = result.health.calls_by_status
    if len(result.calls) != expected or statuses.get("judged", 0) != expected:
        raise SystemExit(f"expected {expected} judged calls, got {statuses}")
    return elapsed


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2_000, help="judge calls (2 per pair)")
    parser.add_argument("--concurrency", type=int, default=32, help="C: requests in flight")
    parser.add_argument("--latency-ms", type=float, default=50.0, help="L: server latency")
    parser.add_argument("--rounds", type=int, default=3, help="timed batches (best is kept)")
    args = parser.parse_args(argv)
    if args.calls < 2 or args.calls % 2:
        raise SystemExit("--calls must be an even number ≥ 2 (swap: two calls per pair)")
    c, latency_s = args.concurrency, args.latency_ms / 1000
    limit = c / latency_s
    with JudgeServer(c, latency_s) as server:
        judge = judge_for(server)
        run_batch(judge, make_evidence(c, "warm-"), c, "bench-warm-up")
        times = [
            run_batch(judge, make_evidence(args.calls // 2, f"r{r}-"), c, f"bench-{r}")
            for r in range(args.rounds)
        ]
        stats = server.stats()
        floor = args.calls / min(bare_floor(server, args.calls) for _ in range(2))
    if stats["max_in_flight"] > c:
        raise SystemExit(f"the server saw {stats['max_in_flight']} requests in flight (C = {c})")
    achieved = args.calls / min(times)
    print(f"calls per round:      {args.calls:,} (swap: {args.calls // 2:,} pairs), no probes")
    print(f"server:               C = {c} in flight, L = {args.latency_ms:g} ms")
    print(f"limit C / L:          {limit:,.1f} calls/s")
    print(
        f"bare HTTP floor:      {floor:,.1f} calls/s ({floor / limit:.2f} of the limit; no judge)"
    )
    print(f"score stage:          max_in_flight = {c}, openai judge (http.client, pool of {c})")
    print(f"server max in flight: {stats['max_in_flight']} (requests seen: {stats['requests']:,})")
    print(f"achieved:             {achieved:,.1f} calls/s (best of {args.rounds})")
    print(f"ratio achieved/limit: {achieved / limit:.2f}")


if __name__ == "__main__":
    main()
