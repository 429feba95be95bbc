import json

import pytest

from gpuknn import CorruptDataError, InvalidInputError
from gpuknn.errors import RunDirError
from gpuknn.model_selection.journal import Journal, line_checksum


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
    assert j.moved_to == tmp_path / "j.jsonl.1"
    assert Journal(path, {"a": 1}, resume=True).get("x") is None
    assert Journal(path.with_name("j.jsonl.1"), {"a": 1}, resume=True).get("x")["v"] == 1


def test_garbage_in_the_middle_is_an_error(tmp_path):
    path = tmp_path / "j.jsonl"
    Journal(path, {}).append("x", {"v": 1})
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "not json", lines[1]]) + "\n")
    with pytest.raises(CorruptDataError, match="line 2"):
        Journal(path, {}, resume=True)


# -- issue 18: data identity, checksums, foreign lines, rotation --------------------------------

ID_A = {"source": "A", "shapes": {"X": [10, 4]}, "sha256": "aa"}
ID_B = {"source": "B", "shapes": {"X": [10, 4]}, "sha256": "bb"}


def _journal_with_two_records(path, **kw):
    j = Journal(path, {"a": 1, "wm": 5}, identity=ID_A, **kw)
    j.append("x", {"v": 0.125, "scores": [0.5, 0.75]})
    j.append("y", {"v": 3})
    return j


def test_resume_with_other_data_is_refused_listing_keys_and_values(tmp_path):
    path = tmp_path / "j.jsonl"
    _journal_with_two_records(path)
    with pytest.raises(InvalidInputError, match="other data") as exc:
        Journal(path, {"a": 1, "wm": 5}, identity=ID_B, resume=True)
    msg = str(exc.value)
    assert "sha256" in msg and '"aa"' in msg and '"bb"' in msg and "source" in msg
    assert "shapes" not in msg  # equal keys are not listed
    with pytest.raises(InvalidInputError, match="other data"):
        Journal(path, {"a": 1, "wm": 5}, resume=True)  # no identity now: refused too
    assert Journal(path, {"a": 1, "wm": 5}, identity=ID_A, resume=True).get("y")["v"] == 3


def test_resume_lists_differing_settings_with_both_values(tmp_path):
    path = tmp_path / "j.jsonl"
    _journal_with_two_records(path)
    with pytest.raises(InvalidInputError, match=r"a \(journal: 1, now: 2\)"):
        Journal(path, {"a": 2, "wm": 5}, identity=ID_A, resume=True)
    with pytest.raises(InvalidInputError, match=r"new \(journal: \(absent\), now: 1\)"):
        Journal(path, {"a": 1, "wm": 5, "new": 1}, identity=ID_A, resume=True)


def test_ignored_settings_are_not_compared(tmp_path):
    path = tmp_path / "j.jsonl"
    _journal_with_two_records(path, ignore=["wm"])
    # ignored when the journal was written, or when it is resumed
    assert Journal(path, {"a": 1, "wm": 99}, identity=ID_A, resume=True).get("x")["v"] == 0.125
    path2 = tmp_path / "k.jsonl"
    _journal_with_two_records(path2)
    with pytest.raises(InvalidInputError, match="wm"):
        Journal(path2, {"a": 1, "wm": 99}, identity=ID_A, resume=True)
    j = Journal(path2, {"a": 1, "wm": 99}, identity=ID_A, resume=True, ignore=["wm"])
    assert j.get("y")["v"] == 3
    with pytest.raises(InvalidInputError, match="a"):  # but never the others
        Journal(path2, {"a": 2, "wm": 99}, identity=ID_A, resume=True, ignore=["wm"])


def test_every_line_has_a_checksum_and_records_come_back_without_it(tmp_path):
    path = tmp_path / "j.jsonl"
    _journal_with_two_records(path)
    for line in path.read_text().splitlines():
        obj = json.loads(line)
        assert obj["checksum"] == line_checksum(obj) and len(obj["checksum"]) == 16
    j = Journal(path, {"a": 1, "wm": 5}, identity=ID_A, resume=True)
    assert j.get("x") == {"key": "x", "v": 0.125, "scores": [0.5, 0.75]}


@pytest.mark.parametrize(
    "edit",
    [
        lambda text: text.replace('"scores": [0.5, 0.75]', '"scores": [0.5, 0.95]'),  # a number
        lambda text: text.replace('"v": 3', '"v": 4'),
        lambda text: text.replace('"key": "y"', '"key": "z"'),
    ],
)
def test_an_edited_record_fails_its_checksum(tmp_path, edit):
    path = tmp_path / "j.jsonl"
    _journal_with_two_records(path)
    text = path.read_text()
    edited = edit(text)
    assert edited != text
    path.write_text(edited)
    with pytest.raises(CorruptDataError, match=r"j\.jsonl: line [23] .*checksum"):
        Journal(path, {"a": 1, "wm": 5}, identity=ID_A, resume=True)
    assert path.read_text() == edited  # nothing repaired or rewritten


def test_an_edited_header_fails_its_checksum(tmp_path):
    path = tmp_path / "j.jsonl"
    _journal_with_two_records(path)
    path.write_text(path.read_text().replace('"sha256": "aa"', '"sha256": "bb"', 1))
    with pytest.raises(CorruptDataError, match="line 1 .*checksum"):
        Journal(path, {"a": 1, "wm": 5}, identity=ID_B, resume=True)


@pytest.mark.parametrize(
    "line, what",
    [
        ('{"foo": 1}', 'no string "key"'),
        ('{"key": "z", "v": 1}', "no checksum"),  # missing checksum
        ('{"key": 3, "checksum": "0"}', 'no string "key"'),
        ("[1, 2]", "not a journal record"),
        ('"text"', "not a journal record"),
        ('{"journal": 2, "settings": {}}', "not a journal record"),
    ],
)
def test_valid_json_of_a_foreign_shape_is_corrupt_data_with_file_and_line(tmp_path, line, what):
    path = tmp_path / "j.jsonl"
    _journal_with_two_records(path)
    lines = path.read_text().splitlines()
    for at in (2, len(lines) + 1):  # in the middle, and as the last line (not torn: valid JSON)
        path.write_text("\n".join(lines[: at - 1] + [line] + lines[at - 1 :]) + "\n")
        with pytest.raises(CorruptDataError) as exc:
            Journal(path, {"a": 1, "wm": 5}, identity=ID_A, resume=True)
        assert f"j.jsonl: line {at} " in str(exc.value) and what in str(exc.value)
        assert not isinstance(exc.value, KeyError)


def test_only_a_torn_last_line_is_dropped(tmp_path):
    path = tmp_path / "j.jsonl"
    _journal_with_two_records(path)
    good = path.read_text()
    path.write_text(good + '{"key": "w", "v": 1, "chec')  # killed mid-write
    j = Journal(path, {"a": 1, "wm": 5}, identity=ID_A, resume=True)
    assert j.get("w") is None and j.get("y")["v"] == 3
    assert path.read_text() == good  # the torn tail is gone, the rest kept
    j.append("w", {"v": 2})
    assert Journal(path, {"a": 1, "wm": 5}, identity=ID_A, resume=True).get("w")["v"] == 2
    # the same torn text before the last line is an error, not silently dropped
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:2] + ['{"key": "w", "v": 1, "chec'] + lines[2:]) + "\n")
    with pytest.raises(CorruptDataError, match="line 3 is not valid JSON"):
        Journal(path, {"a": 1, "wm": 5}, identity=ID_A, resume=True)


def test_a_complete_last_line_without_newline_is_kept(tmp_path):
    path = tmp_path / "j.jsonl"
    _journal_with_two_records(path)
    path.write_text(path.read_text().rstrip("\n"))
    j = Journal(path, {"a": 1, "wm": 5}, identity=ID_A, resume=True)
    assert j.get("y")["v"] == 3
    j.append("z", {"v": 1})
    assert len(path.read_text().splitlines()) == 4


def test_an_old_journal_without_checksums_is_refused_clearly(tmp_path):
    path = tmp_path / "j.jsonl"
    path.write_text('{"journal": 1, "settings": {"a": 1}}\n{"key": "x", "v": 1}\n')
    before = path.read_bytes()
    with pytest.raises(CorruptDataError, match="older version of gpuknn"):
        Journal(path, {"a": 1}, resume=True)
    assert path.read_bytes() == before
    j = Journal(path, {"a": 1})  # a fresh start keeps it aside
    assert j.moved_to.read_bytes() == before


def test_rotation_never_overwrites_an_earlier_journal(tmp_path):
    path = tmp_path / "j.jsonl"
    contents = []
    for run in range(4):
        j = Journal(path, {"run": run}, identity=ID_A)
        for i in range(run + 1):
            j.append(f"part{i}", {"v": run})
        contents.append(path.read_bytes())
    assert path.read_bytes() == contents[3]
    for run in range(3):  # .1 is the first run, .2 the second, ... all byte for byte
        assert (tmp_path / f"j.jsonl.{run + 1}").read_bytes() == contents[run]
    assert not (tmp_path / "j.jsonl.4").exists()
    # a free name is taken even when the numbering has a gap or a file sits on .1
    (tmp_path / "j.jsonl.2").unlink()
    j = Journal(path, {"run": 4})
    assert j.moved_to == tmp_path / "j.jsonl.2" and j.moved_to.read_bytes() == contents[3]
    assert (tmp_path / "j.jsonl.1").read_bytes() == contents[0]


def test_resume_without_a_journal_starts_one(tmp_path):
    path = tmp_path / "sub" / "j.jsonl"
    j = Journal(path, {"a": 1}, identity=ID_A, resume=True)
    assert j.get("x") is None and j.moved_to is None and path.exists()


def test_write_failures_are_run_dir_errors_with_path_and_cause(tmp_path, monkeypatch):
    import errno
    import os

    path = tmp_path / "j.jsonl"
    j = Journal(path, {"a": 1})
    real_fsync = os.fsync

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(RunDirError) as exc:
        j.append("x", {"v": 1})
    assert isinstance(exc.value, OSError) and exc.value.errno == errno.ENOSPC
    assert str(exc.value) == f"{path}: No space left on device"
    monkeypatch.setattr(os, "fsync", real_fsync)
