"""`PORTER_FULL_CORPUS=1`: the corpus variants (and the few slow training variants) the default run leaves out.

A corpus test that covers several near-identical variants of one architecture (a second network built by the same
class with more blocks, a file whose conversion repeats a sibling's) keeps one or two of them in the default run;
the others are skipped unless the variable is set, each naming the default test that keeps its mechanism
(tests/README.md, "Where the time goes")."""

import os

import pytest

FULL_CORPUS = os.environ.get("PORTER_FULL_CORPUS", "") not in ("", "0")


def full_corpus_only(covered_by):
    """A mark that skips a variant unless PORTER_FULL_CORPUS=1; `covered_by`: what the default run checks instead."""
    return pytest.mark.skipif(not FULL_CORPUS, reason=f"PORTER_FULL_CORPUS=1 runs this variant; default: {covered_by}")
