"""The long commands' progress (``kubesched.kit.progress.Steps``): a bar with an ETA on a terminal,
one line per step elsewhere, nothing at all for a quiet command."""

from __future__ import annotations

import pytest

from kubesched.kit.progress import Steps


def test_lines_when_stderr_is_no_terminal(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    with Steps("grid", 2, show=True) as step:
        step("first")
        step("second")
    assert capsys.readouterr().err == "[1/2] first\n[2/2] second\n"


def test_no_progress_is_lines_and_quiet_is_nothing(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    with Steps("grid", 1, show=False) as step:
        step("done")
    with Steps("tuning", 1, show=False, lines=False) as step:
        step("best 3")
    assert capsys.readouterr().err == "[1/1] done\n"


def test_a_bar_with_eta_on_a_terminal(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    monkeypatch.setenv("COLUMNS", "100")
    with Steps("grid", 4, show=True) as step:
        step("one run")
    err = capsys.readouterr().err
    assert "grid" in err and "1/4" in err and "one run" in err and "[1/4]" not in err
    assert err.count(":") >= 4  # elapsed and remaining time, each h:mm:ss
