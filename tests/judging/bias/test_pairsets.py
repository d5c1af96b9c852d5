"""Probe pair sets built by construction (issue item 3)."""

from __future__ import annotations

import pytest

from bughunt.models import ProbeKind
from judging.bias import ProbeSetConfig, ProbeSets, build_probe_sets


@pytest.fixture(scope="module")
def sets() -> ProbeSets:
    return build_probe_sets()


def test_default_sizes(sets: ProbeSets) -> None:
    """Defaults are 40 position, 60 gap, 20 verbosity, 40 self pairs."""
    sizes = (len(sets.position), len(sets.gap), len(sets.verbosity), len(sets.self_preference))
    assert sizes == (40, 60, 20, 40)


def test_sizes_are_configurable() -> None:
    """Each set's size comes from the config."""
    s = build_probe_sets(ProbeSetConfig(position=3, gap=5, verbosity=0, self_preference=7))
    assert (len(s.position), len(s.gap), len(s.verbosity), len(s.self_preference)) == (3, 5, 0, 7)


def test_reproducible_from_the_config(sets: ProbeSets) -> None:
    """The same config rebuilds the same sets and hash; another seed another hash."""
    again = build_probe_sets(sets.config)
    assert again == sets and again.content_hash() == sets.content_hash()
    assert build_probe_sets(ProbeSetConfig(seed=1)).content_hash() != sets.content_hash()
    assert ProbeSets.model_validate_json(sets.model_dump_json()) == sets


def test_position_pairs_are_near_identical(sets: ProbeSets) -> None:
    """Quality difference 0–0.04, same words, same family."""
    for p in sets.position:
        assert p.kind is ProbeKind.POSITION
        assert p.a.quality is not None and p.b.quality is not None
        assert abs(p.a.quality - p.b.quality) <= 0.04 + 1e-9
        assert p.a.words == p.b.words and p.a.family == p.b.family


def test_gap_pairs(sets: ProbeSets) -> None:
    """Gaps 0.1 / 0.2 / 0.3 in equal shares; in a quarter the worse report is the longer."""
    gaps, longer_worse = [], 0
    for p in sets.gap:
        better, worse = p.item(p.better_side), p.item(p.better_side.other)
        assert better.quality is not None and worse.quality is not None
        gaps.append(round(better.quality - worse.quality, 3))
        longer_worse += worse.words > better.words
        assert worse.words >= better.words
    assert sorted(set(gaps)) == [0.1, 0.2, 0.3]
    assert all(gaps.count(g) == 20 for g in (0.1, 0.2, 0.3))
    assert longer_worse == 15


def test_verbosity_pairs_double_the_words_only(sets: ProbeSets) -> None:
    """Padded report: same quality and family, twice the words; it is the favoured side."""
    for p in sets.verbosity:
        padded, plain = p.item(p.favoured_side), p.item(p.favoured_side.other)
        assert padded.label == "padded"
        assert padded.quality == plain.quality and padded.family == plain.family
        assert padded.words == 2 * plain.words


def test_self_pairs_have_mirrored_quality(sets: ProbeSets) -> None:
    """Own family vs another; quality differences come in mirrored twins."""
    diffs = []
    for p in sets.self_preference:
        own, other = p.item(p.favoured_side), p.item(p.favoured_side.other)
        assert own.family == "sim-a" and other.family == "other"
        assert own.quality is not None and other.quality is not None
        diffs.append(own.quality - other.quality)
    assert sorted(diffs) == pytest.approx(sorted(-d for d in diffs))


def test_sides_are_mixed(sets: ProbeSets) -> None:
    """The better / favoured report is not always on the same side."""
    assert {p.better for p in sets.gap} == {"a", "b"}
    assert {p.favoured for p in sets.self_preference} == {"a", "b"}


def test_unknown_quality_cannot_be_simulated() -> None:
    """A corpus item without quality refuses to become sim features."""
    from judging.bias import ProbeItem

    with pytest.raises(ValueError, match="no known quality"):
        ProbeItem(label="x", family="f", words=10).features()
