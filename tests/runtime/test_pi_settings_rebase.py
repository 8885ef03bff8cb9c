"""pi's ``.pi/settings.json`` resource entries, made absolute, mean what they meant relative to ``.pi/``."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tau.config.settings import pi_project_layer
from tau.context.settings_entries import SettingsEntries

PI = Path("/project/.pi")
TAU = "/project/.tau"

relative_paths = st.text(alphabet="abc/._- ", min_size=1, max_size=20).filter(
    lambda p: p.strip() and not p.strip().startswith(("/", "!", "+", "-"))
)


@given(relative_paths)
def test_a_rebased_path_entry_names_the_same_file_from_any_base(path: str) -> None:
    [rebased] = pi_project_layer({"skills": [path]}, PI)["skills"]
    assert SettingsEntries.parse([rebased], TAU).paths == SettingsEntries.parse([path], str(PI)).paths


@given(relative_paths, st.sampled_from(["+", "-"]))
def test_a_rebased_switch_matches_the_same_resources(path: str, sign: str) -> None:
    [rebased] = pi_project_layer({"prompts": [sign + path]}, PI)["prompts"]
    target = os.path.normpath(os.path.join(PI, path.strip()))
    original = SettingsEntries.parse([sign + path], str(PI)).enables(target)
    assert SettingsEntries.parse([rebased], TAU).enables(target, str(PI)) == original


@given(st.lists(st.one_of(st.text(max_size=30), st.integers(), st.none())))
def test_any_entries_rebase_without_error_and_keep_their_count(entries: list[object]) -> None:
    assert len(pi_project_layer({"extensions": entries}, PI)["extensions"]) == len(entries)
