import json

import pytest

from gpuknn import CorruptDataError, InvalidInputError
from gpuknn.model_selection.journal import Journal


def test_append_and_resume(tmp_path):
    path = tmp_path / "j.jsonl"
    j = Journal(path, {"a": 1})
    j.append("x", {"v": [1, 2]})
    j.append("y", {"v": 3})
    again = Journal(path, {"a": 1}, resume=True)
    assert again.get("x")["v"] == [1, 2] and again.get("y")["v"] == 3
    assert again.get("z") is None


def test_torn_last_line_is_ignored_and_repaired(tmp_path):
    path = tmp_path / "j.jsonl"
    j = Journal(path, {"a": 1})
    j.append("x", {"v": 1})
    with open(path, "a") as fh:
        fh.write('{"key": "y", "v"')  # a run killed mid-write
    again = Journal(path, {"a": 1}, resume=True)
    assert again.get("x")["v"] == 1 and again.get("y") is None
    again.append("y", {"v": 2})
    lines = path.read_text().splitlines()
    assert [json.loads(line).get("key") for line in lines[1:]] == ["x", "y"]


def test_other_settings_refuse_to_resume(tmp_path):
    path = tmp_path / "j.jsonl"
    Journal(path, {"a": 1, "b": 2})
    with pytest.raises(InvalidInputError, match="differing: a"):
        Journal(path, {"a": 5, "b": 2}, resume=True)


def test_fresh_start_keeps_the_old_journal(tmp_path):
    path = tmp_path / "j.jsonl"
    Journal(path, {"a": 1}).append("x", {"v": 1})
    j = Journal(path, {"a": 1})
    assert j.get("x") is None
    assert (tmp_path / "j.jsonl.old").exists()


def test_garbage_in_the_middle_is_an_error(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"journal": 1, "settings": {}}\nnot json\n{"key": "x"}\n')
    with pytest.raises(CorruptDataError, match="line 2"):
        Journal(path, {}, resume=True)
