"""RunDirectory: checks before writing, the lock, atomic files, file-system faults (issue 18)."""

import errno
import json
import os
import subprocess
import sys
import textwrap

import pytest

from gpuknn.cli import rundir as rundir_mod
from gpuknn.cli.rundir import LOCK_NAME, RunDirectory
from gpuknn.errors import GpuknnError, RunDirError

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _oserror(code):
    return OSError(code, os.strerror(code))


# -- RunDirError ------------------------------------------------------------------------------


def test_run_dir_error_is_a_gpuknn_error_and_an_oserror(tmp_path):
    exc = RunDirError(tmp_path / "x", _oserror(errno.ENOSPC))
    assert isinstance(exc, GpuknnError) and isinstance(exc, OSError)
    assert exc.errno == errno.ENOSPC and exc.strerror == "No space left on device"
    assert exc.filename == str(tmp_path / "x") and exc.path == str(tmp_path / "x")
    assert str(exc) == f"{tmp_path / 'x'}: No space left on device"
    assert str(RunDirError("p", "some reason")) == "p: some reason"
    assert str(RunDirError("p", "r", "custom message")) == "custom message"


# -- check(): nothing written ----------------------------------------------------------------


def test_check_accepts_new_and_existing_directories_and_writes_nothing(tmp_path):
    RunDirectory(tmp_path / "a" / "b" / "c").check()
    assert list(tmp_path.iterdir()) == []
    RunDirectory(tmp_path).check()


def test_a_file_as_out_is_refused(tmp_path):
    f = tmp_path / "results.txt"
    f.write_text("keep me")
    with pytest.raises(RunDirError, match="exists and is not a directory") as exc:
        RunDirectory(f).check()
    assert exc.value.errno == errno.ENOTDIR and exc.value.path == str(f)
    with pytest.raises(RunDirError):
        with RunDirectory(f):
            pass
    assert f.read_text() == "keep me"


def test_out_under_a_file_is_refused(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(RunDirError, match="is not a directory") as exc:
        RunDirectory(f / "sub" / "run").check()
    assert exc.value.path == str(f) and exc.value.errno == errno.ENOTDIR


@pytest.mark.skipif(IS_ROOT, reason="root bypasses permissions (simulated below)")
def test_a_read_only_directory_is_refused(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        for target in (ro, ro / "run"):
            with pytest.raises(RunDirError, match="Permission denied") as exc:
                RunDirectory(target).check()
            assert exc.value.errno == errno.EACCES
    finally:
        ro.chmod(0o755)


def test_not_writable_is_refused_simulated(tmp_path, monkeypatch):
    monkeypatch.setattr(rundir_mod.os, "access", lambda *a, **k: False)
    with pytest.raises(RunDirError, match="Permission denied") as exc:
        RunDirectory(tmp_path / "new").check()
    assert exc.value.errno == errno.EACCES and exc.value.path == str(tmp_path)
    with pytest.raises(RunDirError, match="Permission denied"):
        RunDirectory(tmp_path).check()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS, errno.ENOSPC])
def test_mkdir_failure_is_a_run_dir_error(tmp_path, monkeypatch, code):
    def fail(self, *a, **k):
        raise OSError(code, os.strerror(code), str(self))

    monkeypatch.setattr(rundir_mod.Path, "mkdir", fail)
    with pytest.raises(RunDirError) as exc:
        with RunDirectory(tmp_path / "run"):
            pass
    assert exc.value.errno == code and os.strerror(code) in str(exc.value)
    assert str(tmp_path / "run") in str(exc.value)


# -- the lock ----------------------------------------------------------------------------------


def test_enter_creates_the_directory_and_holds_the_lock(tmp_path):
    out = tmp_path / "a" / "run"
    with RunDirectory(out) as rd:
        assert out.is_dir() and rd.locked
        assert (out / LOCK_NAME).read_text().strip() == str(os.getpid())
        with pytest.raises(RunDirError, match=f"is in use by another gpuknn run \\(pid {os.getpid()}\\)"):
            with RunDirectory(out):
                pass
    assert not rd.locked
    with RunDirectory(out):  # released: free again
        pass


@pytest.mark.parametrize("exc_type", [RuntimeError, KeyboardInterrupt])
def test_the_lock_is_released_on_exceptions(tmp_path, exc_type):
    with pytest.raises(exc_type):
        with RunDirectory(tmp_path):
            raise exc_type()
    with RunDirectory(tmp_path) as rd:
        assert rd.locked


HOLDER = textwrap.dedent("""
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\\n".encode())
    print("locked", flush=True)
    sys.stdin.read()  # hold the lock until stdin closes
""")


@pytest.fixture
def other_process_holds_lock(tmp_path):
    """A second process holding DIR/.lock as another gpuknn run would."""
    out = tmp_path / "run"
    out.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out / LOCK_NAME)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout.readline().strip() == "locked"
        yield out, proc.pid
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
        proc.stdout.close()


def test_a_second_process_gets_a_clear_message(other_process_holds_lock):
    out, pid = other_process_holds_lock
    with pytest.raises(RunDirError) as exc:
        with RunDirectory(out):
            pass
    assert str(exc.value).startswith(f"{out} is in use by another gpuknn run (pid {pid})")
    assert (out / LOCK_NAME).read_text().strip() == str(pid)  # the holder's pid not clobbered


# -- journal, atomic writes, figures -----------------------------------------------------------


def test_use_outside_the_with_block_is_an_error(tmp_path):
    rd = RunDirectory(tmp_path)
    with pytest.raises(RuntimeError, match="outside"):
        rd.write_json_atomic("results.json", {})
    with pytest.raises(RuntimeError, match="outside"):
        rd.open_journal({})


def test_open_journal_rotates_only_without_resume(tmp_path):
    with RunDirectory(tmp_path) as rd:
        j = rd.open_journal({"a": 1}, {"sha256": "x"}, ignore=["wm"])
        j.append("k", {"v": 1})
    first = (tmp_path / "journal.jsonl").read_bytes()
    with RunDirectory(tmp_path, resume=True) as rd:
        assert rd.open_journal({"a": 1}, {"sha256": "x"}).get("k")["v"] == 1
    assert (tmp_path / "journal.jsonl").read_bytes() == first
    with RunDirectory(tmp_path) as rd:
        j = rd.open_journal({"a": 1}, {"sha256": "x"})
        assert j.get("k") is None and j.moved_to == tmp_path / "journal.jsonl.1"
    assert (tmp_path / "journal.jsonl.1").read_bytes() == first


def test_write_json_atomic(tmp_path):
    with RunDirectory(tmp_path) as rd:
        p = rd.write_json_atomic("results.json", {"a": [1, 2]})
        rd.write_json_atomic("results.json", {"a": 3})
    assert p == tmp_path / "results.json" and json.loads(p.read_text()) == {"a": 3}
    assert sorted(x.name for x in tmp_path.iterdir()) == [LOCK_NAME, "results.json"]  # no temp left
    mask = os.umask(0)
    os.umask(mask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~mask


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EACCES, errno.EROFS])
def test_a_failed_replace_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch, code):
    with RunDirectory(tmp_path) as rd:
        rd.write_json_atomic("results.json", {"old": True})
        monkeypatch.setattr(rundir_mod.os, "replace", lambda *a: (_ for _ in ()).throw(_oserror(code)))
        with pytest.raises(RunDirError) as exc:
            rd.write_json_atomic("results.json", {"new": True})
    assert exc.value.errno == code
    assert str(exc.value) == f"{tmp_path / 'results.json'}: {os.strerror(code)}"
    assert json.loads((tmp_path / "results.json").read_text()) == {"old": True}
    assert sorted(x.name for x in tmp_path.iterdir()) == [LOCK_NAME, "results.json"]


def test_a_full_disk_while_writing_is_a_run_dir_error(tmp_path, monkeypatch):
    with RunDirectory(tmp_path) as rd:

        def full(fd):
            raise _oserror(errno.ENOSPC)

        monkeypatch.setattr(rundir_mod.os, "fsync", full)
        with pytest.raises(RunDirError, match="No space left on device"):
            rd.write_json_atomic("results.json", {"a": 1})
    assert not (tmp_path / "results.json").exists()


class _Fig:
    def __init__(self, fail=False):
        self.fail = fail

    def savefig(self, fh, **kw):
        if self.fail:
            raise ValueError("cannot draw")
        fh.write(b"\x89PNG fake")


def test_save_figures_goes_on_after_a_failure(tmp_path, monkeypatch):
    def broken():
        raise RuntimeError("plot bug")

    with RunDirectory(tmp_path) as rd:
        failed = rd.save_figures({"a.png": _Fig(), "b.png": _Fig(fail=True), "c.png": broken, "d.png": lambda: _Fig()})
    assert set(failed) == {"b.png", "c.png"}
    assert "cannot draw" in str(failed["b.png"]) and "plot bug" in str(failed["c.png"])
    for name in ("a.png", "d.png"):
        assert (tmp_path / name).read_bytes() == b"\x89PNG fake"
    assert not (tmp_path / "b.png").exists() and not (tmp_path / "c.png").exists()


def test_save_figures_reports_a_full_disk_per_figure(tmp_path, monkeypatch):
    real = os.replace

    def replace(src, dst):
        if str(dst).endswith("b.png"):
            raise _oserror(errno.ENOSPC)
        return real(src, dst)

    monkeypatch.setattr(rundir_mod.os, "replace", replace)
    with RunDirectory(tmp_path) as rd:
        failed = rd.save_figures({"a.png": _Fig(), "b.png": _Fig(), "c.png": _Fig()})
    assert list(failed) == ["b.png"] and isinstance(failed["b.png"], RunDirError)
    assert str(failed["b.png"]) == f"{tmp_path / 'b.png'}: No space left on device"
    assert (tmp_path / "a.png").exists() and (tmp_path / "c.png").exists()


def test_real_matplotlib_figure(tmp_path):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1, 1))
    fig.add_subplot().plot([0, 1])
    with RunDirectory(tmp_path) as rd:
        assert rd.save_figures({"f.png": fig}, dpi=20) == {}
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
