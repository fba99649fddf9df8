"""Isolated mode's instances side by side (``--jobs``), without a server: :func:`annols.study.isolate.in_order`
runs fake per-instance work and keeps results, what each says and its first failure in the instances' order,
whichever ends first; :func:`annols.study.isolate._each` names the failed instance's annotator."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from annols.cli import main
from annols.errors import AnnolsError, OptionError, ServerError
from annols.study import isolate
from annols.study.isolate import Failed, Say, in_order

WAIT = 60  # seconds a fake work waits for another before the test gives up (never reached when it passes)


def _wait(event: threading.Event) -> None:
    assert event.wait(WAIT), "a fake work waited in vain"


class Log:
    """What the works said, as the calling thread received it, and on which thread."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.threads: set[threading.Thread] = set()

    def line(self, text: str) -> Callable[[], None]:
        def call() -> None:
            self.threads.add(threading.current_thread())
            self.lines.append(text)

        return call


@pytest.mark.parametrize("jobs", [1, 2, 3, 8])
def test_results_and_what_each_says_come_in_input_order_whichever_ends_first(jobs: int) -> None:
    """Run side by side, the works end last first (each waits for the next one to end); the results and the lines
    are those of one after another, all on the calling thread. With one job they simply run one after another."""
    log = Log()
    count = 3
    ended = [threading.Event() for _ in range(count)]

    def work(n: int, say: Say) -> int:
        say(log.line(f"{n} starts"))
        if jobs >= count and n + 1 < count:
            _wait(ended[n + 1])  # side by side: the later one ends first
        say(log.line(f"{n} ends"))
        ended[n].set()
        return n * 10

    results = in_order([functools.partial(work, n) for n in range(count)], jobs)
    assert results == [0, 10, 20]
    assert log.lines == [f"{n} {what}" for n in range(count) for what in ("starts", "ends")]
    assert log.threads == {threading.main_thread()}


def test_the_first_works_words_are_called_while_it_runs() -> None:
    """The first unfinished work's words are not held back: the work waits for its own line to be called."""
    log = Log()
    heard = threading.Event()

    def first(say: Say) -> str:
        def line() -> None:
            log.line("first speaks")()
            heard.set()

        say(line)
        _wait(heard)  # would never be set were the line held until the work ends
        return "first"

    def second(say: Say) -> str:
        say(log.line("second speaks"))
        return "second"

    assert in_order([first, second], 2) == ["first", "second"]
    assert log.lines == ["first speaks", "second speaks"]


def test_the_first_failure_in_input_order_is_raised_once_every_started_work_has_ended() -> None:
    """Works 1 and 2 fail, 2 first; work 3 ends after both. Failed names work 1 (the first in input order) and every
    failure; what each said, the failed ones' too, is called in input order before it is raised."""
    log = Log()
    two_failed, three_may_end = threading.Event(), threading.Event()
    started = threading.Barrier(5, timeout=WAIT)  # every work runs before any fails: none is cancelled
    ended = []

    def work(n: int, say: Say) -> int:
        started.wait()
        say(log.line(f"{n} said"))
        if n == 1:
            _wait(two_failed)
            raise ServerError("one broke")
        if n == 2:
            two_failed.set()
            raise AnnolsError("two broke")
        if n == 3:
            _wait(three_may_end)
        ended.append(n)
        return n

    def release(say: Say) -> int:  # work 3 ends once 1 and 2 have failed: the failures do not stop it
        started.wait()
        _wait(two_failed)
        three_may_end.set()
        return 4

    works: list[Callable[[Say], int]] = [*(functools.partial(work, n) for n in range(4)), release]
    with pytest.raises(Failed) as raised:
        in_order(works, 5)
    assert (raised.value.index, raised.value.failed, str(raised.value.error)) == (1, [1, 2], "one broke")
    assert sorted(ended) == [0, 3]
    assert log.lines == ["0 said", "1 said", "2 said", "3 said"]


def test_a_failure_starts_no_more_work() -> None:
    """Two at a time: work 0 fails. Every other work started ends only once its line is called, which is after
    0's failure was seen (their lines wait for 0 to end): works 3 on were still waiting for a thread, never
    started (1 and 2 may have started, or not in time)."""
    called: list[int] = []
    released = threading.Event()

    def work(n: int, say: Say) -> int:
        called.append(n)
        if n == 0:
            raise AnnolsError("zero broke")
        say(released.set)
        _wait(released)
        return n

    with pytest.raises(Failed) as raised:
        in_order([functools.partial(work, n) for n in range(10)], 2)
    assert (raised.value.index, raised.value.failed) == (0, [0])
    assert 0 in called and set(called) <= {0, 1, 2}


def test_one_job_runs_them_here_one_after_another_up_to_the_first_failure() -> None:
    called: list[int] = []

    def work(n: int, say: Say) -> int:
        called.append(n)
        assert threading.current_thread() is threading.main_thread()
        if n == 1:
            raise AnnolsError("one broke")
        return n

    with pytest.raises(Failed) as raised:
        in_order([functools.partial(work, n) for n in range(4)], 1)
    assert (raised.value.index, raised.value.failed, called) == (1, [1], [0, 1])


def test_what_fails_when_said_is_the_failure_of_the_work_that_said_it() -> None:
    """A line the calling thread cannot write (the study file on a full disk) fails the work that said it."""

    def full_disk() -> None:
        raise AnnolsError("cannot write the study file")

    def works(n: int) -> Callable[[Say], int]:
        def work(say: Say) -> int:
            if n == 1:
                say(full_disk)
            return n

        return work

    for jobs in (1, 3):
        with pytest.raises(Failed) as raised:
            in_order([works(n) for n in range(3)], jobs)
        assert (raised.value.index, str(raised.value.error)) == (1, "cannot write the study file")


INSTANCES = [isolate.Instance(f"{name}@example.org", f"http://127.0.0.1:{port}") for name, port in
             (("ann", 1), ("ben", 2), ("cas", 3))]  # fmt: skip


def test_a_failure_names_the_first_failed_annotator_and_how_many_others_failed() -> None:
    def work(n: int, say: Say, started: threading.Barrier | None = None) -> int:
        if started is not None:
            started.wait()  # every instance's work runs before any fails: none is cancelled
        if n == 0:
            return 0
        if n == 1:
            raise ServerError("no project titled 'x' on http://127.0.0.1:2\nsecond line")
        raise AnnolsError("disk full")

    for jobs in (None, 3):  # by default, all three at once
        started = threading.Barrier(3, timeout=WAIT)
        with pytest.raises(ServerError) as raised:
            isolate._each(INSTANCES, lambda n, say: work(n, say, started), jobs)  # noqa: B023
        assert str(raised.value) == (
            "the instance of ben@example.org (1 other instance(s) failed too: cas@example.org): "
            "no project titled 'x' on http://127.0.0.1:2\nsecond line"
        )
    # One after another, the first failure stops them: nobody else failed.
    with pytest.raises(ServerError, match=r"^the instance of ben@example\.org: no project titled"):
        isolate._each(INSTANCES, work, 1)
    with pytest.raises(AnnolsError, match=r"^the instance of cas@example\.org: disk full$") as other:
        isolate._each(INSTANCES, lambda n, say: n if n < 2 else work(n, say), 2)
    assert type(other.value) is AnnolsError  # not a server's error

    def bug(n: int, say: Say) -> int:
        raise KeyError(n)  # not an AnnolsError: as it came (ANNOLS_DEBUG shows its traceback)

    with pytest.raises(KeyError):
        isolate._each(INSTANCES, bug, 2)


def test_jobs_default_to_every_instance_up_to_a_few() -> None:
    assert isolate.jobs_for(INSTANCES, None) == min(3, isolate.DEFAULT_JOBS)
    assert isolate.jobs_for(INSTANCES * 5, None) == isolate.DEFAULT_JOBS
    assert isolate.jobs_for(INSTANCES, 1) == 1
    with pytest.raises(OptionError, match="--jobs"):
        isolate.jobs_for(INSTANCES, 0)


@pytest.mark.parametrize("command", [["push", "x.toml", "in.jsonl"], ["pull", "x.toml", "-o", "out"],
                                     ["status", "x.toml"]])  # fmt: skip
def test_jobs_is_an_option_of_isolate(command: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = CliRunner()
    base = [*command, "--project", "p"]
    help_text = runner.invoke(main, [command[0], "--help"]).output
    assert "--jobs N" in help_text and f"at most {isolate.DEFAULT_JOBS}" in help_text
    monkeypatch.chdir(tmp_path)
    for name in ("x.toml", "in.jsonl"):
        (tmp_path / name).touch()
    result = runner.invoke(main, [*base, "--jobs", "2"])
    assert result.exit_code == 2 and "--jobs is for --isolate" in result.output, result.output
    result = runner.invoke(main, [*base, "--jobs", "0", "--isolate", "x.toml"])
    assert result.exit_code == 2 and "'--jobs': 0 is not in the range x>=1" in result.output, result.output
