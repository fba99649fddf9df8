"""The CLI over the library: commands, help, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from annols import protocols
from annols.cli import main
from annols.protocols import config
from tests.conftest import ROOT
from tests.definition.test_definition import MINIMAL

EXAMPLES = Path(protocols.HERE) / "examples"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_protocols_lists_name_style_seed_and_summary() -> None:
    code, out, _ = run("protocols")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 5
    assert lines[2].split()[:3] == ["qa-feedback", "spans", "003_bc35c0f004b2a118.txt"]
    assert lines[3].startswith("sentence-errors [abstract|headline]")


def test_config_prints_and_writes(tmp_path: Path) -> None:
    code, out, _ = run("config", "sentence-errors", "--variant", "headline")
    assert code == 0
    assert out == config.label_config(protocols.load("sentence-errors", "headline"))
    target = tmp_path / "qa.xml"
    code, _, err = run("config", "qa-feedback", "-o", str(target))
    assert code == 0 and f"Wrote {target}" in err
    assert target.read_text("utf-8") == config.label_config(protocols.load("qa-feedback"))


def test_config_of_a_user_definition_file(tmp_path: Path) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(MINIMAL, encoding="utf-8")
    code, out, _ = run("config", str(path))
    assert code == 0 and 'name="fluency"' in out
    code, out, _ = run("config", str(path), "--instructions")
    assert code == 0 and out.startswith("<div><h2>Which headline is better?</h2>")


def test_errors_are_one_line_without_traceback(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(MINIMAL.replace('style = "pairwise"', 'style = "pairs"'), encoding="utf-8")
    for args in (("config", str(path)), ("config", "nope"), ("config", "sentence-errors")):
        code, out, err = run(*args)
        assert code == 1 and out == ""
        assert len(err.strip().splitlines()) == 1, err
        assert err.startswith("Error: ") and "Traceback" not in err
    assert f"{path}: style: 'pairs' is not one of" in run("config", str(path))[2]


def test_configs_check_names_stale_files(tmp_path: Path) -> None:
    code, out, _ = run("configs", "--dir", str(tmp_path))
    assert code == 0 and out.count("written") == 6
    code, out, _ = run("configs", "--check", "--dir", str(tmp_path))
    assert code == 0 and "6 config files up to date" in out
    (tmp_path / "qa-feedback.xml").write_text("<View/>", encoding="utf-8")
    (tmp_path / "summary-flaws.xml").unlink()
    code, out, err = run("configs", "--check", "--dir", str(tmp_path))
    assert code == 1
    assert "stale     " + str(tmp_path / "qa-feedback.xml") in out
    assert "missing   " + str(tmp_path / "summary-flaws.xml") in out
    assert "2 config file(s) out of date" in err


def test_python_dash_m_annols_runs_the_command_line(tmp_path: Path) -> None:
    # A checkout without the installed script: `python -m annols` must reach the same group.
    assert run("configs", "--dir", str(tmp_path))[0] == 0
    done = subprocess.run([sys.executable, "-m", "annols", "configs", "--check", "--dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (0, f"6 config files up to date in {tmp_path}\n", "")


def test_help_shows_examples_and_protocol_names() -> None:
    code, out, _ = run("config", "--help")
    assert code == 0 and "annols config summary-flaws" in out and "qa-" in out


def _export_with(result: list[dict[str, object]], tmp_path: Path) -> Path:
    task = json.loads((EXAMPLES / "sentence-errors-headline.json").read_text("utf-8"))[0]
    export = [{"id": 1, "data": task["data"], "meta": {"annols_key": "k1"},
               "annotations": [{"id": 9, "completed_by": 3, "result": result, "was_cancelled": False}]}]  # fmt: skip
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "annotators.json").write_text('{"3": "ann@example.org"}', encoding="utf-8")
    return path


def _choice(name: str, *codes: str) -> dict[str, object]:
    value = {"choices": list(codes)}
    return {"id": name, "from_name": name, "to_name": "sentence_1", "type": "choices", "value": value}


def test_validate_lists_violations_and_exits_1(tmp_path: Path) -> None:
    bad = _export_with([_choice("special_1", "OK"), _choice("mapping_1", "Omission", "Fabrication")], tmp_path)
    code, out, err = run("validate", "sentence-errors", "--variant", "headline", str(bad))
    assert code == 1
    lines = out.splitlines()
    assert any(line.split("\t")[:3] == ["k1", "ann@example.org", "one-answer-per-column"] for line in lines), out
    assert any(line.split("\t")[2] == "special-case-excludes-the-rest" for line in lines), out
    assert err.startswith("Error: ") and "rule violation(s) in 1 annotations" in err

    good = _export_with([_choice("special_1", "OK")], tmp_path)
    code, out, _ = run("validate", "sentence-errors", "--variant", "headline", str(good))
    assert code == 0 and out == "No rule violations in 1 annotations.\n"


def test_validate_needs_an_export_or_a_project() -> None:
    code, _, err = run("validate", "sentence-errors", "--variant", "headline")
    assert code == 2 and "give either EXPORT or --project" in err
