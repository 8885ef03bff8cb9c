"""Records whose JSON shape msgspec writes (``tau.ai.types.JsonRecord``) write pi 1.6's lines."""

from __future__ import annotations

import importlib
import pkgutil

import tau
from tau.ai.types import JsonRecord
from tau.compaction.file_ops import FileDetails
from tau.runtime.events import QueueUpdate, SessionInfoChanged, SummarizationRetryFinished
from tau.session.entries import (
    ContextEditEntry,
    LabelEntry,
    ModelChangeEntry,
    SessionInfoEntry,
    ThinkingLevelChangeEntry,
)
from tau.session.jsonl import dump_line
from tau.session.messages import BranchSummaryMessage, CompactionSummaryMessage


def _all_records() -> list[type[JsonRecord]]:
    for module in pkgutil.walk_packages(tau.__path__, "tau."):
        if module.name.startswith(("tau.session", "tau.runtime.events", "tau.compaction", "tau.ai.types")):
            importlib.import_module(module.name)
    found: list[type[JsonRecord]] = []
    pending: list[type[JsonRecord]] = [JsonRecord]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


def test_every_tagged_record_writes_the_type_it_reports() -> None:
    tagged = [cls for cls in _all_records() if cls.__struct_config__.tag_field == "type"]
    assert len(tagged) >= 15
    for cls in tagged:
        assert cls.__struct_config__.tag == cls.type, cls.__name__  # type: ignore[attr-defined]


def test_entries_write_pi_key_order_with_the_tree_fields_first() -> None:
    entry = ModelChangeEntry(id="a1", parent_id=None, timestamp="T", provider="p", model_id="m")
    assert dump_line(entry.to_json()) == (
        b'{"type":"model_change","id":"a1","parentId":null,"timestamp":"T","provider":"p","modelId":"m"}\n'
    )
    level = ThinkingLevelChangeEntry(id="a2", parent_id="a1", timestamp="T", thinking_level="high")
    assert dump_line(level.to_json()) == (
        b'{"type":"thinking_level_change","id":"a2","parentId":"a1","timestamp":"T","thinkingLevel":"high"}\n'
    )


def test_an_unset_optional_field_is_left_out_but_an_empty_one_is_written() -> None:
    assert LabelEntry(id="b", parent_id="a", timestamp="T", target_id="x").to_json() == {
        "type": "label",
        "id": "b",
        "parentId": "a",
        "timestamp": "T",
        "targetId": "x",
    }
    assert LabelEntry(id="b", parent_id="a", timestamp="T", target_id="x", label="").to_json()["label"] == ""
    assert "name" not in SessionInfoEntry(id="c", parent_id=None, timestamp="T").to_json()
    assert SessionInfoEntry(id="c", parent_id=None, timestamp="T", name="work").to_json()["name"] == "work"


def test_a_context_edit_that_hides_its_target_writes_a_null_replacement() -> None:
    entry = ContextEditEntry(id="d", parent_id="c", timestamp="T", target_id="x", replacement=None)
    assert dump_line(entry.to_json()).endswith(b'"targetId":"x","replacement":null}\n')


def test_events_write_camel_case_keys_after_the_type() -> None:
    assert dump_line(QueueUpdate(["a"], ["b"]).to_json()) == (
        b'{"type":"queue_update","steering":["a"],"followUp":["b"]}\n'
    )
    assert SessionInfoChanged().to_json() == {"type": "session_info_changed"}
    assert SummarizationRetryFinished().to_json() == {"type": "summarization_retry_finished"}


def test_file_details_write_both_lists_even_when_empty() -> None:
    assert FileDetails().to_json() == {"readFiles": [], "modifiedFiles": []}


def test_summary_messages_write_pi_shape_with_the_role_first() -> None:
    # pi 1.6's createBranchSummaryMessage / createCompactionSummaryMessage (core/messages.js)
    assert dump_line(BranchSummaryMessage("s", "e1", 5).to_json()) == (
        b'{"role":"branchSummary","summary":"s","fromId":"e1","timestamp":5}\n'
    )
    assert dump_line(CompactionSummaryMessage("s", 0, 0).to_json()) == (
        b'{"role":"compactionSummary","summary":"s","tokensBefore":0,"timestamp":0}\n'
    )
    assert BranchSummaryMessage("s", "e1").role == "branchSummary"
    assert CompactionSummaryMessage("s", 1).to_json()["timestamp"] > 0
