"""Output files (bench/outputs.py): a path that cannot be written is found before a run by
really trying (root passes every permission test; /proc and /sys refuse new files), and a
write that fails later (a full disk: /dev/full) names the file the user gave."""
from __future__ import annotations

import os

import pytest

from bench import outputs as O


def test_writable_places_pass_and_nothing_is_left_behind(tmp_path):
    assert O.check_output_path(None) is None
    assert O.check_output_path(str(tmp_path / "new.json")) is None
    old = tmp_path / "old.json"
    old.write_text("kept")
    before = os.stat(old)
    assert O.check_output_path(str(old)) is None
    assert O.check_output_path(str(old), replace=True) is None
    assert old.read_text() == "kept" and os.stat(old).st_mtime_ns == before.st_mtime_ns
    # missing directories that the run creates: the nearest existing one is probed
    assert O.check_output_path(str(tmp_path / "a" / "b" / "c.txt"), mkdir=True) is None
    assert sorted(os.listdir(tmp_path)) == ["old.json"]          # no probe file, no directory


@pytest.mark.parametrize("path,why", [
    ("/proc/x.json", "cannot create a file in /proc"),           # the directory bits say writable (root)
    ("/proc/self/x.json", "cannot create a file in /proc/self"),
    ("/sys/x.json", "cannot create a file in /sys"),
    ("/proc/a/b/x.json", "no such directory"),
])
def test_places_that_refuse_new_files_are_found_before_the_run(path, why):
    if not os.path.isdir("/proc/self") or not os.path.isdir("/sys/kernel"):
        pytest.skip("needs Linux /proc and /sys")
    msg = O.check_output_path(path, "--json")
    assert msg is not None and msg.startswith(f"--json {path}: ") and why in msg, msg


def test_proc_and_sys_refuse_new_files_even_with_mkdir():
    if not os.path.isdir("/proc/self"):
        pytest.skip("needs Linux /proc")
    msg = O.check_output_path("/proc/a/b/x.txt", "--out", mkdir=True)
    assert msg is not None and "cannot create a file in /proc" in msg, msg


def test_an_existing_file_that_cannot_be_written():
    if not os.path.isfile("/proc/version"):
        pytest.skip("needs Linux /proc")
    msg = O.check_output_path("/proc/version", "--pgn")
    assert msg is not None and msg.startswith("--pgn /proc/version: cannot write it"), msg


def test_a_read_only_directory(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes into a read-only directory (the /proc and /sys cases cover root)")
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        msg = O.check_output_path(str(d / "x.json"))
    finally:
        d.chmod(0o700)
    assert msg is not None and "cannot create a file" in msg, msg


def test_replace_needs_a_regular_file(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    # renaming a new file over a device would replace the device itself
    msg = O.check_output_path("/dev/full", "--out", replace=True)
    assert msg is not None and "not a regular file" in msg
    assert O.check_output_path("/dev/full", "--out") is None      # appended or written in place: allowed


def test_a_write_that_fails_later_names_the_path():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with pytest.raises(OSError) as e:
        O.write_text("/dev/full", "{}")
    assert e.value.filename == "/dev/full" and O.error_line(e.value) == "/dev/full: No space left on device"
    with pytest.raises(OSError) as e:
        with O.naming("/dev/full"), open("/dev/full", "w") as fh:
            fh.write("x")
    assert O.error_line(e.value) == "/dev/full: No space left on device"
    assert O.error_line(OSError(28, "No space left on device")) == "No space left on device"
