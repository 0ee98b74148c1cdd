"""Long commands show their progress: a bar on a terminal, plain lines in logs."""

import io
import logging

from core import progress
from core.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_with_counts_and_rate():
    terminal = Terminal()

    with Progress("summaries", total=4, unit="papers", stream=terminal) as shown:
        for _ in range(4):
            shown.advance()

    drawn = terminal.getvalue()
    assert "summaries" in drawn
    assert "4/4" in drawn
    assert "papers/s" in drawn


def test_logs_get_a_line_now_and_then_and_at_the_end(caplog, monkeypatch):
    monkeypatch.setattr(progress, "LOG_EVERY_SECONDS", 0)
    caplog.set_level(logging.INFO, logger="papershelf.progress")

    with Progress("OAI-PMH records", total=2000, unit="records", stream=io.StringIO()) as shown:
        shown.advance(500)
        shown.advance(1500)

    lines = [record.getMessage() for record in caplog.records]
    assert lines[0].startswith("OAI-PMH records: 500/2,000 records (25.0%), ")
    assert lines[-1].startswith("OAI-PMH records: 2,000/2,000 records (100.0%), ")
    assert all(line.endswith("records/s") for line in lines)


def test_a_quiet_command_shows_nothing(caplog):
    caplog.set_level(logging.INFO, logger="papershelf.progress")
    stream = Terminal()

    with Progress("previews", total=3, stream=stream, enabled=False) as shown:
        shown.advance(3)

    assert stream.getvalue() == ""
    assert not caplog.records
