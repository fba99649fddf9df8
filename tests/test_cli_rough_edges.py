"""What a newcomer meets first in a fresh clone: usage mistakes, typos, Ctrl-C, a missing extra,
a CSV of their own. Each answer is one line that says what to do."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from annols import protocols
from annols.cli import main
from tests.conftest import ROOT
from tests.test_cli import run
from tests.test_protocol_mismatch import summary_flaws_export

CHAT_ARENA = ROOT / "examples" / "chat-arena.toml"


def one_line(err: str) -> str:
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


# --- the CSV systems column of your own definition ---------------------------------------------


def chat_csv(path: Path, systems: str) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["prompt", "response_a", "response_b", "systems"])
        writer.writerow(["Say hi.", "Hi!", "Hello.", "model-x|model-y"])
        writer.writerow(["Say bye.", "Bye!", "Goodbye.", systems])
    return path


def test_a_csv_systems_cell_takes_names_separated_by_a_bar(tmp_path: Path) -> None:
    out = tmp_path / "tasks.json"
    code, _, err = run("tasks", str(CHAT_ARENA), str(chat_csv(tmp_path / "ok.csv", "model-y|model-x")), "-o",
                       str(out), "--manifest-dir", str(tmp_path / "m"))  # fmt: skip
    assert code == 0, err
    manifest = (tmp_path / "m" / "tasks.manifest.jsonl").read_text("utf-8").splitlines()[1:]
    assert sorted(sorted(json.loads(line)["systems"]) for line in manifest) == [["model-x", "model-y"]] * 2


@pytest.mark.parametrize("cell,separator", [("model-y,model-x", "','"), ("model-y; model-x", "';'")])
def test_a_csv_systems_cell_with_another_separator_is_named(tmp_path: Path, cell: str, separator: str) -> None:
    source = chat_csv(tmp_path / "bad.csv", cell)
    code, out, err = run("tasks", str(CHAT_ARENA), str(source), "-o", str(tmp_path / "tasks.json"))
    assert code == 1 and out == "" and not (tmp_path / "tasks.json").exists()
    assert one_line(err) == (
        f"Error: {source}, line 3, field 'systems': {cell!r} names 1 system(s) for 2 candidates: separate the "
        f"names with '|', not {separator} (e.g. 'model-y|model-x')"
    )


def test_a_csv_systems_cell_of_the_wrong_count_says_how_to_write_it(tmp_path: Path) -> None:
    source = chat_csv(tmp_path / "bad.csv", "model-y|model-x|model-z")
    code, _, err = run("tasks", str(CHAT_ARENA), str(source), "-o", str(tmp_path / "tasks.json"))
    assert code == 1
    assert one_line(err) == (
        f"Error: {source}, line 3, field 'systems': 'model-y|model-x|model-z' names 3 system(s) for 2 "
        "candidates: give one name per candidate, in order, separated by '|' (e.g. 'A|B')"
    )


# --- options, commands and usage ----------------------------------------------------------------


@pytest.mark.parametrize("args,expected", [
    (["--effect", "0"], "Error: --effect: a pairwise effect is wins minus losses over decided judgments, between 0 "
                        "and 1 (0.2: 60% of decided judgments won), not 0.0"),
    (["--tie-rate", "1"], "Error: --tie-rate: a tie rate is between 0 and 1 (below 1), not 1.0"),
    (["--item-sd", "-1"], "Error: --item-sd: a standard deviation cannot be negative, not -1.0"),
    (["--residual-sd", "1"], "Error: --residual-sd: the pairwise simulation has no such parameter (it uses --effect, "
                             "--tie-rate, --item-sd, --annotator-sd)"),
])  # fmt: skip
def test_a_bad_plan_value_names_its_option(args: list[str], expected: str) -> None:
    code, out, err = run("plan", "pairwise-aspects", "--simulations", "10", *args)
    assert code == 1 and out == ""
    assert one_line(err) == expected


@pytest.mark.parametrize("args,expected", [
    (["reprot"], "Error: no such command 'reprot'; did you mean 'report' or 'export'? See 'annols --help'."),
    (["pul"], "Error: no such command 'pul'; did you mean 'pull'? See 'annols --help'."),
    (["server", "strat"], "Error: no such command 'strat'; did you mean 'start' or 'status'? "
                          "See 'annols server --help'."),
    (["stlye"], f"Error: no such command 'stlye'; the commands are {', '.join(sorted(main.commands))}. "
                "See 'annols --help'."),
])  # fmt: skip
def test_a_mistyped_command_gets_close_matches(args: list[str], expected: str) -> None:
    result = CliRunner().invoke(main, args, prog_name="annols")
    assert result.exit_code == 2 and result.stdout == ""
    assert one_line(result.stderr) == expected


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    """Click's own words (they vary between Click versions) on one line, with where to read more."""
    missing = tmp_path / "nope.csv"
    present = tmp_path / "there.jsonl"
    present.write_text("{}\n", encoding="utf-8")
    cases = [
        (["push", "qa-feedback", str(missing), "--project", "P"], [str(missing), "does not exist"], "annols push"),
        (["push", "qa-feedback", str(present)], ["Missing option", "--project"], "annols push"),
        (["pull", "qa-feedback", "-o", str(tmp_path / "out")], ["Missing option", "--project"], "annols pull"),
        (["plan", "pairwise-aspects", "--items", "ten"], ["--items", "comma-separated", "'ten'"], "annols plan"),
        (["--nope"], ["No such option", "--nope"], "annols"),
    ]  # fmt: skip
    for args, words, command in cases:
        result = CliRunner().invoke(main, args, prog_name="annols")
        assert result.exit_code == 2, (args, result.output)
        assert result.stdout == "" and "Usage:" not in result.stderr, args
        line = one_line(result.stderr)
        assert line.startswith("Error: ") and line.endswith(f". See '{command} --help'."), line
        assert all(word in line for word in words), (line, words)


def test_annols_alone_still_shows_its_help() -> None:
    result = CliRunner().invoke(main, [], prog_name="annols")
    assert "Usage: annols [OPTIONS] COMMAND [ARGS]..." in result.output and "Commands:" in result.output


# --- Ctrl-C says what it left, for the command it stopped ---------------------------------------


def interrupted(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str, str]:
    """The command, stopped by Ctrl-C once it starts work (loading its protocol)."""

    def ctrl_c(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(protocols, "load", ctrl_c)
    return run(*args)


def test_ctrl_c_during_pull_and_report_says_the_folder_is_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "results"
    code, _, err = interrupted(monkeypatch, "pull", "qa-feedback", "--project", "P", "-o", str(out))
    assert code == 130 and err == f"Interrupted: nothing was changed in {out}; run the pull again.\n"
    export = tmp_path / "export.json"
    export.write_text("[]", encoding="utf-8")
    code, _, err = interrupted(monkeypatch, "report", "qa-feedback", str(export), "-o", str(tmp_path / "report"))
    assert code == 130
    assert err == f"Interrupted: the report in {tmp_path / 'report'} was not finished; run the report again.\n"
    code, _, err = interrupted(monkeypatch, "push", "qa-feedback", str(export), "--project", "P")
    assert code == 130 and err == "Interrupted: a push can be re-run: tasks already sent are not sent twice.\n"
    code, _, err = interrupted(monkeypatch, "config", "qa-feedback")
    assert code == 130 and err == "Interrupted.\n"  # no promise where there is nothing to resume


# --- report --models without crowd-kit ----------------------------------------------------------


def test_report_models_without_crowd_kit_says_so_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    export = summary_flaws_export(tmp_path)
    monkeypatch.setitem(sys.modules, "crowdkit", None)  # as if not installed: find_spec gives None, import fails
    code, out, err = run("report", "summary-flaws", str(export), "-o", str(tmp_path / "report"), "--models",
                         "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    assert err == ("warning: --models: crowd-kit is not installed, so the annotator models section is left out; "
                   "install it with: pip install 'annols[models]'\n")  # fmt: skip
    assert "wrote " in out
    assert "Dawid-Skene and MACE need crowd-kit" in (tmp_path / "report" / "report.md").read_text("utf-8")
    monkeypatch.delitem(sys.modules, "crowdkit")
    code, _, err = run("report", "summary-flaws", str(export), "-o", str(tmp_path / "again"), "--bootstrap", "0")
    assert code == 0 and "crowd-kit" not in err  # without --models nothing is said


# --- push's progress bar ends its line ------------------------------------------------------------


class Terminal(io.StringIO):
    """What a terminal receives: the bar is drawn in place there (Click draws it only on a tty)."""

    def isatty(self) -> bool:
        return True


def test_a_notice_while_the_bar_is_drawn_starts_a_line_of_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    from annols.cli import _Progress

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    progress = _Progress("Importing")
    progress.update(0, 40)
    progress.notice("Label Studio is still importing 40 tasks (15 s)")
    progress.update(40, 40)
    progress.close()
    drawn = terminal.getvalue()
    assert "Importing 40 task(s)" in drawn and "100%" in drawn
    assert "%\nLabel Studio is still importing 40 tasks (15 s)\n" in drawn  # not glued to the bar
    assert drawn.endswith("\n")
