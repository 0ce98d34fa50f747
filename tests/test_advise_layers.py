"""The adaptive comparisons keep their public names after moving into `iwlab.adaptive`.
(Import circles, in advise and everywhere else, are tests/test_imports.py's.)"""

from __future__ import annotations


def test_the_adaptive_comparisons_keep_their_public_names():
    import iwlab.adaptive as adaptive

    assert {"POLICIES", "policy_sets", "compare", "markdown"} <= set(dir(adaptive))
    assert sorted(adaptive.POLICIES) == ["ai", "fb", "le"]
