"""record.filetext: a file's text kept as pieces, edited line by line, gives the bytes of a full rewrite."""

from hypothesis import given, settings
from hypothesis import strategies as st

from sentinel_memory.record.filetext import MAX_PIECES, FileText

ids = st.text(alphabet="0123456789abcdef", min_size=1, max_size=2)
lines = st.dictionaries(ids, st.sampled_from(["x", "yy", "zzz"]), max_size=10)


def line(rid: str, body: str) -> bytes:
    return f'{{"id": "{rid}", "lesson": "{body}"}}\n'.encode()


def rewrite(state: dict[str, str]) -> bytes:
    return b"".join(line(rid, state[rid]) for rid in sorted(state))


@settings(max_examples=200, deadline=None)
@given(lines, st.lists(st.dictionaries(ids, st.none() | st.sampled_from(["x", "yy", "zzz", "w"]), max_size=5),
                       max_size=40))
def test_edits_give_the_bytes_of_a_full_rewrite_and_never_fall_back(start, edits):
    """Each edit inserts, replaces or removes lines; the text equals the sorted lines every time,
    the earlier text is left as it was, and no valid edit needs the caller to start afresh."""
    state = dict(start)
    text = FileText(rewrite(state), sorted(state))
    for cuts in edits:
        before, before_bytes = text, text.bytes()
        current = dict(state)
        text = text.edited({rid: None if body is None else line(rid, body) for rid, body in cuts.items()},
                           lambda rid, current=current: line(rid, current[rid]))
        assert text is not None, "a valid edit must not fall back to a full rewrite"
        for rid, body in cuts.items():
            if body is None:
                state.pop(rid, None)
            else:
                state[rid] = body
        assert text.bytes() == rewrite(state) and len(text) == len(rewrite(state))
        assert b"".join(text.buffers()) == text.bytes()
        assert text.ids == sorted(state)
        assert before.bytes() == before_bytes and before.ids is None, "the old text keeps its bytes, not its ids"
        assert len(text.pieces) <= MAX_PIECES


def test_a_line_that_is_not_where_the_ids_say_is_refused():
    """If the caller's idea of a line does not match the text, the edit says so (None) rather
    than cutting the wrong bytes."""
    text = FileText(line("a", "x") + line("b", "x"), ["a", "b"])
    assert text.edited({"b": line("b", "new")}, lambda rid: line(rid, "stale")) is None
    stale_b = lambda rid: line(rid, "x" if rid == "a" else "stale")  # noqa: E731
    assert text.edited({"0": line("0", "new"), "b": line("b", "new")}, stale_b) is None  # the 2nd cut fails
    assert text.ids == ["a", "b"] and text.bytes() == line("a", "x") + line("b", "x"), "a refused edit changes nothing"
    assert text.edited({"c": line("c", "x")}, lambda rid: line(rid, "x")).bytes() == rewrite({k: "x" for k in "abc"})
