"""The record contract (docs/contract.md §3): normalisation, limits, ids and the line format."""

import hashlib
import json
import unicodedata

import pytest

from sentinel_memory.errors import InvalidInput
from sentinel_memory.record.records import Entry, prepare, record_id, to_line


def sha16(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_log_id_is_sha256_prefix_of_topic_plus_missing_context():
    """A log's id is the first 16 hex chars of SHA-256 over topic + missing_context."""
    draft = prepare("payment", "VAT 계산이 국가별로 다름", "세율 파일 확인")
    assert draft.id == sha16("payment" + "VAT 계산이 국가별로 다름")


def test_principle_id_is_sha256_prefix_of_topic_plus_lesson():
    """A principle's id is computed from topic + lesson, so re-saving the same principle upserts."""
    draft = prepare("payment", "", "국가별 세율 확인", type="principle")
    assert draft.id == sha16("payment" + "국가별 세율 확인")
    assert draft.id == record_id("principle", "payment", "ignored", "국가별 세율 확인")


def test_values_are_trimmed_and_nfc_normalised_before_the_id():
    """Decomposed Korean (as macOS file names give it) and stray spaces get the same id as NFC text."""
    nfd = unicodedata.normalize("NFD", "결제")
    a = prepare(f"  {nfd} \n", f" {nfd} 모듈 ", "lesson")
    b = prepare("결제", "결제 모듈", "lesson")
    assert (a.id, a.topic, a.missing_context) == (b.id, "결제", "결제 모듈")


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"topic": "   "}, "topic"),
        ({"lesson": ""}, "lesson"),
        ({"missing_context": " \t"}, "missing_context"),
        ({"topic": "가" * 22}, "topic"),  # 66 bytes
        ({"missing_context": "x" * 1025}, "missing_context"),
        ({"lesson": "한" * 342}, "lesson"),  # 1,026 bytes
        ({"ask_next_time": "y" * 513}, "ask_next_time"),
        ({"type": "note"}, "type"),
        ({"lesson": 42}, "lesson"),
    ],
)
def test_invalid_input_names_the_field_and_says_nothing_was_saved(kwargs, field):
    """Each rule violation raises one sentence naming the field and saying nothing was saved."""
    args = {"topic": "auth", "missing_context": "m", "lesson": "l", **kwargs}
    with pytest.raises(InvalidInput) as err:
        prepare(**args)
    assert field in str(err.value) and "Nothing was saved" in str(err.value)


def test_limit_message_gives_the_size_and_the_limit():
    """The message says how big the value is and what the limit is, in UTF-8 bytes."""
    with pytest.raises(InvalidInput, match=r"lesson is 1,100 bytes in UTF-8; the limit is 1,024"):
        prepare("auth", "m", "x" * 1100)


def test_limits_are_inclusive():
    """Values exactly at the byte limits are accepted."""
    draft = prepare("가" * 21 + "a", "m" * 1024, "한" * 341 + "a", "q" * 512)
    assert len(draft.topic.encode()) == 64


def test_principle_may_have_empty_missing_context_and_truncates_ask_next_time():
    """A principle's merged questions are cut to 512 bytes at a character boundary, never an error."""
    draft = prepare("payment", "", "원칙", ask_next_time="질문" * 200, type="principle")
    stored = draft.ask_next_time.encode("utf-8")
    assert len(stored) <= 512 and stored.decode("utf-8") == draft.ask_next_time
    assert draft.ask_next_time.startswith("질문질문")


def test_redaction_happens_before_limits_and_id():
    """A credential is replaced before the id is computed and the stored value is what is limited."""
    fake = "ghp_" + "A1b2" * 9
    draft = prepare("auth", f"token {fake} was needed", "use the vault")
    assert fake not in draft.missing_context and "[REDACTED]" in draft.missing_context
    assert draft.id == sha16("auth" + draft.missing_context)
    assert draft.redactions == 1


def test_line_keeps_korean_and_escapes_unicode_line_separators():
    """Korean is written as itself; U+2028, U+2029 and U+0085 are escaped so line readers cannot split."""
    record = {"meta": {"created": "t"}, "lesson": "줄\u2028바꿈\u2029끝\u0085", "id": "x", "type": "log",
              "topic": "t", "missing_context": "m", "ask_next_time": ""}
    line = to_line(record)
    assert "줄" in line and "\u2028" not in line and "\u2029" not in line and "\u0085" not in line
    assert json.loads(line)["lesson"] == "줄\u2028바꿈\u2029끝\u0085"
    assert list(json.loads(line)) == ["id", "type", "topic", "missing_context", "lesson", "ask_next_time", "meta"]


def test_unknown_fields_are_kept_after_the_known_ones():
    """Fields another tool added survive a rewrite, after the contract's keys."""
    entry = Entry.of({"extra": 1, "id": "a", "type": "log", "meta": {"x": 1, "created": "c"}})
    assert list(entry.record) == ["id", "type", "meta", "extra"]
    assert list(entry.record["meta"]) == ["created", "x"]


def test_drafts_compare_by_their_fields_and_a_snapshot_shows_no_bytes():
    """The record's classes compare, hash and show as the dataclasses they were did (values.py): two
    drafts of the same text are equal and one set holds them once; a snapshot's repr names its
    records, not the bytes it was read from, which may be megabytes; a snapshot is not hashed."""
    from sentinel_memory.record.records import prepare
    from sentinel_memory.record.snapshot import parse

    one, two = prepare("auth", "m", "l", "", "log"), prepare("auth", "m", "l", "", "log")
    assert one == two and len({one, two}) == 1 and one != prepare("auth", "m", "other", "", "log")
    assert one.as_dict()["lesson"] == "l" and repr(one).startswith("Draft(id=")
    data = (b'{"id":"a","type":"log","topic":"t","missing_context":"m","lesson":"' + b"x" * 5000 + b'"}\n')
    snap = parse(data)
    assert "records=" in repr(snap) and "xxxx" in repr(snap) and "raw_bytes" not in repr(snap)
    with pytest.raises(TypeError):
        hash(snap)  # mutable: compared, not hashed
