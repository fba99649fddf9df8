"""Hybrid studies offline (annols.study.hybrid): the human subset is drawn from the seed alone (not the records'
order), the push refuses a hybrid study without a judge or with a judge that skips an item before contacting any
server, and a re-push with another draw is refused (the end to end run: tests/test_hybrid_live.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from annols.cli import main
from annols.errors import OptionError
from annols.study import hybrid, manifest
from tests.judges_study import answers, majority_truth
from tests.own_study import STUDIES
from tests.study.test_judges import definition

STUDY = STUDIES["ratings"]
ENV = {"LABEL_STUDIO_URL": "http://127.0.0.1:9", "LABEL_STUDIO_API_KEY": "secret-token-x"}


def inputs(tmp_path: Path, items: range, name: str = "inputs.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps({**STUDY.record(i), "id": f"rec-{i}"}) + "\n" for i in items), "utf-8")
    return path


def judge(tmp_path: Path, items: range) -> Path:
    path = tmp_path / "judge.jsonl"
    lines = [{"id": f"rec-{i}", "judge": "j", "answers": answers(STUDY, i, majority_truth(STUDY, i))} for i in items]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return path


def test_the_draw_depends_on_the_seed_not_on_the_records_order(tmp_path: Path) -> None:
    d = definition("ratings")
    forward = hybrid.draw(d, [inputs(tmp_path, range(20))], 0.25, seed=3)
    backward = hybrid.draw(d, [inputs(tmp_path, range(19, -1, -1), "backward.jsonl")], 0.25, seed=3)
    assert forward.humans == backward.humans and len(forward.humans) == 5
    assert forward.header == {"share": 0.25, "seed": 3, "items": 20, "humans": 5}
    assert hybrid.draw(d, [inputs(tmp_path, range(20))], 0.25, seed=4).humans != forward.humans
    assert len(hybrid.draw(d, [inputs(tmp_path, range(20))], 0.01, seed=3).humans) == 2  # at least two
    with pytest.raises(OptionError):
        hybrid.draw(d, [inputs(tmp_path, range(20))], 1.5, seed=3)


@pytest.mark.parametrize("example", ["esa", "summary-best-worst"])
def test_best_worst_and_spans_draw_whole_items(example: str, tmp_path: Path) -> None:
    """An item holding several tasks (a source's candidates; an article's tuples) goes to humans whole, or not at
    all: a difference of two systems then has both wherever humans judged."""
    from annols import protocols
    from annols.formats import format_for

    root = Path(__file__).resolve().parents[2] / "examples"
    d = protocols.load(str(root / f"{example}.toml"))
    source = [root / f"{example}.jsonl"]
    context = "source" if example == "esa" else "document"
    tasks = list(format_for(d).read(source, d))
    items = {t.data[context] for t in tasks}
    found = hybrid.draw(d, source, 0.5, seed=1)
    assert found.header == {"share": 0.5, "seed": 1, "items": len(items), "humans": round(len(items) / 2)}
    drawn = {t.data[context] for t in tasks if t.key in found.humans}
    assert len(drawn) == found.header["humans"]
    assert found.humans == {t.key for t in tasks if t.data[context] in drawn}  # every task of a drawn item


def push(tmp_path: Path, *extra: str) -> tuple[int, str]:
    toml = tmp_path / "own.toml"
    toml.write_text(STUDY.definition, encoding="utf-8")
    args = ["push", str(toml), str(inputs(tmp_path, range(6))), "--project", "p", *extra]
    result = CliRunner(env=ENV).invoke(main, args)
    assert "Traceback" not in result.stderr and "secret-token-x" not in result.output + result.stderr
    return result.exit_code, result.stderr


def test_a_hybrid_push_needs_a_judge_on_every_item_before_any_server(tmp_path: Path) -> None:
    code, err = push(tmp_path, "--human-share", "0.5")
    assert code != 0 and err.strip().splitlines() == ["Error: --human-share: needs --judge: the judge answers every "
                                                      "item, humans a share of them"]  # fmt: skip
    code, err = push(tmp_path, "--human-share", "0.5", "--judge", str(judge(tmp_path, range(5))))
    assert code != 0 and "no judge answers item" in err and "inputs.jsonl: line 6: no judge answers item" in err
    assert not (tmp_path / ".annols").exists()


def test_another_draw_on_a_hybrid_project_is_refused(tmp_path: Path) -> None:
    path = manifest.manifest_path(tmp_path, "p")
    path.write_text(json.dumps({"protocol": "own", "hybrid": {"share": 0.5, "seed": 5, "items": 6, "humans": 3}})
                    + "\n", encoding="utf-8")  # fmt: skip
    hybrid.check_same_draw(path, {"share": 0.5, "seed": 5, "items": 6, "humans": 3})
    with pytest.raises(OptionError, match=r"records a hybrid draw of share 0\.5 with seed 5"):
        hybrid.check_same_draw(path, {"share": 0.5, "seed": 6, "items": 6, "humans": 3})


def test_a_hybrid_push_without_ppi_python_warns_before_sending(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                              ) -> None:  # fmt: skip
    """ppi-python missing (as where the extra is not installed): the warning comes first, before the push reaches
    the server (here none answers on port 9, so the connection error follows it)."""
    from annols.analysis.judging import ppi

    monkeypatch.setattr(ppi, "available", lambda: False)
    code, err = push(tmp_path, "--human-share", "0.5", "--judge", str(judge(tmp_path, range(6))),
                     "--manifest-dir", str(tmp_path))  # fmt: skip
    lines = err.strip().splitlines()
    assert lines[0] == ("warning: a hybrid study's report estimates with PPI++, which needs ppi-python: it is not "
                        f"installed here; install it with: {ppi.INSTALL}")  # fmt: skip
    assert code != 0 and len(lines) > 1  # then the connection fails: nothing was sent
    monkeypatch.setattr(ppi, "available", lambda: True)
    _, err = push(tmp_path, "--human-share", "0.5", "--judge", str(judge(tmp_path, range(6))),
                  "--manifest-dir", str(tmp_path))  # fmt: skip
    assert "ppi-python" not in err
