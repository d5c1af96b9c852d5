"""Probe pair sets built by construction, so the truth of every pair is known (docs/judge-bias.md).

- **position**: near-identical pairs (quality difference 0–0.04, same words,
  same family); any consistent preference is a preference for a position.
- **gap**: a real quality difference (0.1 / 0.2 / 0.3 in turn); in every
  fourth pair the worse report is the longer one.
- **verbosity**: a report vs the same report padded to twice the words with
  the same information (same quality, same family).
- **self**: a report of the judge's family vs one of another family, in
  twins whose quality differences are mirror images, so quality cancels.

Every number is drawn from one seeded PCG64 stream and rounded to 4 decimals,
so a set is reproduced from its config alone; :meth:`ProbeSets.content_hash`
names it.
"""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from bughunt.hashing import hash_json
from bughunt.models import BugReport, ProbeKind
from judging.bias._sim_model import SimReport
from judging.bias._strategies import Side


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class ProbeItem(_Frozen):
    """One report of a probe pair, as a judge may see it."""

    label: str
    """What this report is (e.g. ``padded``, an agent version)."""
    family: str
    """Model family of its author (self-preference)."""
    words: int = Field(ge=1)
    """Word count as shown to the judge."""
    quality: float | None = Field(default=None, ge=0.0, le=1.0)
    """Quality in [0, 1] when known by construction; ``None`` for corpus reports."""
    report: BugReport | None = None
    """The report text, for real judges; ``None`` for simulated pairs."""

    def features(self) -> SimReport:
        """What the simulated judge reads; ``ValueError`` when the quality is unknown."""
        if self.quality is None:
            raise ValueError(
                f"report {self.label!r} has no known quality: a sim judge cannot score it"
            )
        return SimReport(self.quality, self.words, self.family)


class ProbePair(_Frozen):
    """Two reports whose relation is known by construction."""

    pair_id: str
    """Stable id inside its set (e.g. ``gap-007``); a sim judge seeds its draws with it."""
    kind: ProbeKind
    """Which probe set it belongs to."""
    a: ProbeItem
    """Side a."""
    b: ProbeItem
    """Side b."""
    better: Side | None = None
    """The side of higher quality, when there is a real gap (``gap`` pairs)."""
    favoured: Side | None = None
    """The side the probed bias would favour (the padded or the own-family report)."""
    case_id: str | None = None
    """Corpus case the reports come from, if any."""

    @property
    def better_side(self) -> Side:
        """The better side; ``ValueError`` when the pair has no known gap."""
        if self.better is None:
            raise ValueError(f"pair {self.pair_id} has no known better side")
        return self.better

    @property
    def favoured_side(self) -> Side:
        """The favoured side; ``ValueError`` when the pair has none."""
        if self.favoured is None:
            raise ValueError(f"pair {self.pair_id} has no favoured side")
        return self.favoured

    def item(self, side: Side) -> ProbeItem:
        """The report on ``side``."""
        return self.a if side is Side.A else self.b


class ProbeSetConfig(_Frozen):
    """Everything that decides a constructed probe set (recorded with every run)."""

    seed: int = 0
    """Seed of the PCG64 stream."""
    position: int = Field(default=40, ge=0)
    """Near-identical pairs."""
    gap: int = Field(default=60, ge=0)
    """Pairs with a real quality gap."""
    verbosity: int = Field(default=20, ge=0)
    """Report vs padded report."""
    self_preference: int = Field(default=40, ge=0)
    """Own family vs another family."""
    judge_family: str = "sim-a"
    """The family whose self-preference is probed."""
    other_family: str = "other"
    """The family of every other report (no judge belongs to it)."""
    max_position_gap: float = Field(default=0.04, ge=0.0, le=0.2)
    """Largest quality difference of a position pair."""
    gaps: tuple[float, ...] = (0.1, 0.2, 0.3)
    """Quality differences of the gap set, used in turn."""
    longer_worse_every: int = Field(default=4, ge=1)
    """Every n-th gap pair (here a quarter) has the worse report as the longer one."""
    length_ratio: float = Field(default=2.0, ge=1.0)
    """How many times longer the longer worse report and the padded report are."""
    max_self_gap: float = Field(default=0.1, ge=0.0, le=0.3)
    """Largest quality difference of a self pair (mirrored in its twin)."""


class ProbeSets(_Frozen):
    """The four probe sets of one run, with the config that rebuilds them."""

    config: ProbeSetConfig
    """How they were built."""
    position: tuple[ProbePair, ...]
    """Near-identical pairs."""
    gap: tuple[ProbePair, ...]
    """Pairs with a real quality gap."""
    verbosity: tuple[ProbePair, ...]
    """Report vs padded report."""
    self_preference: tuple[ProbePair, ...]
    """Own family vs another family."""

    def all(self) -> tuple[ProbePair, ...]:
        """Every pair, set by set."""
        return self.position + self.gap + self.verbosity + self.self_preference

    def content_hash(self) -> str:
        """sha256 of the sets' canonical JSON: same config, same hash, any machine."""
        return hash_json(self.model_dump(mode="json"))


def _r(x: float) -> float:
    return round(float(x), 4)


def _item(label: str, family: str, words: int, quality: float) -> ProbeItem:
    return ProbeItem(label=label, family=family, words=words, quality=_r(quality))


def _place(
    rng: np.random.Generator, x: ProbeItem, y: ProbeItem
) -> tuple[ProbeItem, ProbeItem, Side]:
    """Put ``x`` on a random side; returns (a, b, side of x)."""
    if rng.random() < 0.5:
        return x, y, Side.A
    return y, x, Side.B


def build_probe_sets(config: ProbeSetConfig | None = None) -> ProbeSets:
    """Build the four probe sets from ``config`` (defaults 40 / 60 / 20 / 40 pairs)."""
    cfg = config or ProbeSetConfig()
    rng = np.random.Generator(np.random.PCG64(cfg.seed))
    fam = cfg.other_family

    def words() -> int:
        return int(rng.integers(120, 601))

    position: list[ProbePair] = []
    for i in range(cfg.position):
        q, d, w = _r(rng.uniform(0.3, 0.7)), _r(rng.uniform(0.0, cfg.max_position_gap)), words()
        a, b, _ = _place(rng, _item("higher", fam, w, q + d), _item("lower", fam, w, q))
        position.append(ProbePair(pair_id=f"position-{i:03d}", kind=ProbeKind.POSITION, a=a, b=b))

    gap: list[ProbePair] = []
    for i in range(cfg.gap):
        d = cfg.gaps[i % len(cfg.gaps)]
        q, w = _r(rng.uniform(0.1, 0.9 - d)), words()
        longer = (i + 1) % cfg.longer_worse_every == 0
        worse_words = round(w * cfg.length_ratio) if longer else w
        better = _item("better", fam, w, q + d)
        worse = _item("worse", fam, worse_words, q)
        a, b, side = _place(rng, better, worse)
        gap.append(ProbePair(pair_id=f"gap-{i:03d}", kind=ProbeKind.GAP, a=a, b=b, better=side))

    verbosity: list[ProbePair] = []
    for i in range(cfg.verbosity):
        q, w = _r(rng.uniform(0.3, 0.7)), words()
        padded = _item("padded", fam, round(w * cfg.length_ratio), q)
        a, b, side = _place(rng, padded, _item("original", fam, w, q))
        verbosity.append(
            ProbePair(
                pair_id=f"verbosity-{i:03d}", kind=ProbeKind.VERBOSITY, a=a, b=b, favoured=side
            )
        )

    selfp: list[ProbePair] = []
    for i in range(cfg.self_preference):
        if i % 2 == 0:  # draw a twin; the odd pair mirrors it
            q, w = _r(rng.uniform(0.2, 0.7)), words()
            d = _r(rng.uniform(0.0, cfg.max_self_gap)) if i + 1 < cfg.self_preference else 0.0
            own_q, other_q = q + d, q
        else:
            own_q, other_q = other_q, own_q
        own = _item("own", cfg.judge_family, w, own_q)
        a, b, side = _place(rng, own, _item("other", fam, w, other_q))
        selfp.append(
            ProbePair(pair_id=f"self-{i:03d}", kind=ProbeKind.SELF, a=a, b=b, favoured=side)
        )
    return ProbeSets(
        config=cfg,
        position=tuple(position),
        gap=tuple(gap),
        verbosity=tuple(verbosity),
        self_preference=tuple(selfp),
    )
