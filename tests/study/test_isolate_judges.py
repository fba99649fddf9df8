"""Hidden judges and hybrid studies in isolated mode (``push --isolate --judge [--human-share]``), without a
server: every refusal of a shared push's judge, the same line, before any instance is asked and with nothing
written; the study's one judge store (beside the study file, of no project); a re-push that would change the
recorded human share. The end to end run on two instances: tests/study/test_isolate_live.py."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from annols import protocols
from annols.errors import AnnolsError, OptionError
from annols.study import hidden_judges, hybrid, isolate
from annols.study import push as push_lib
from tests.definition.test_definition import MINIMAL
from tests.study import test_isolate_share as isolate_share
from tests.study.test_push_pull import invoke

PEOPLE = ["a0@example.org", "a1@example.org"]
UNREACHABLE = "needs its API token in the environment variable ANNOLS_TEST_UNSET_KEY"
RECORDS = 6


def _study(folder: Path) -> None:
    (folder / "headlines.toml").write_text(MINIMAL, encoding="utf-8")
    records = [{"headline_1": f"First {i}", "headline_2": f"Second {i}", "systems": ["sysa", "sysb"], "id": f"h{i}"}
               for i in range(RECORDS)]  # fmt: skip
    (folder / "study.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    one = '[[instance]]\nannotator = "{}"\nurl = "http://127.0.0.1:9"\napi_key_env = "ANNOLS_TEST_UNSET_KEY"\n'
    (folder / "instances.toml").write_text("".join(one.format(p) for p in PEOPLE), encoding="utf-8")


def _judge(folder: Path, lines: list[dict[str, object]], name: str = "judge.jsonl") -> str:
    (folder / name).write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return name


def _every(items: range = range(RECORDS)) -> list[dict[str, object]]:
    return [{"id": f"h{i}", "judge": "copycat", "answers": {"fluency": "1" if i % 2 else "2"}} for i in items]


def _run(folder: Path, *args: str) -> tuple[int, str]:
    """push in ``folder``: isolated (with --isolate: no shared server in the environment) or shared, to a server
    that does not answer."""
    shared = "--isolate" not in args
    env = {"LABEL_STUDIO_URL": "http://127.0.0.1:9" if shared else None,
           "LABEL_STUDIO_API_KEY": "secret-token-x" if shared else None, "ANNOLS_DATA_DIR": None,
           "ANNOLS_TEST_UNSET_KEY": None}  # fmt: skip
    result = invoke(env, "push", "headlines.toml", "study.jsonl", "--project", "p", *args, cwd=folder)
    assert "Traceback" not in result[2] and "secret-token-x" not in result[1] + result[2]
    return result[0], result[2]


@pytest.mark.parametrize(
    ("lines", "extra", "said"),
    [
        (None, ("--human-share", "0.5"), "--human-share: needs --judge"),
        (_every(range(RECORDS - 1)), ("--human-share", "0.5"), "study.jsonl: line 6: no judge answers item"),
        ([*_every(), {"id": "h99", "judge": "copycat", "answers": {"fluency": "1"}}], (),
         "line 7, field 'id': id 'h99' is no task of this study"),
        ([{"id": "h0", "judge": "copycat", "answers": {"fluency": "3"}}], (), "field 'answers.fluency'"),
        ([{"id": "h0", "judge": "copy cat", "answers": {"fluency": "1"}}], (), "field 'judge'"),
        (_every(), ("--human-share", "1.5"), "--human-share: must be above 0 and at most 1, not 1.5"),
    ],
)
def test_a_judge_is_refused_as_a_shared_push_refuses_it_before_any_instance(
    tmp_path: Path, lines: list[dict[str, object]] | None, extra: tuple[str, ...], said: str
) -> None:
    """The same refusal, word for word, as the shared push of the same judge; nothing asked or written."""
    _study(tmp_path)
    judge = ("--judge", _judge(tmp_path, lines)) if lines is not None else ()
    code, isolated = _run(tmp_path, *judge, *extra, "--isolate", "instances.toml")
    assert code != 0 and said in isolated and UNREACHABLE not in isolated, isolated
    assert len(isolated.strip().splitlines()) == 1, isolated
    code, shared = _run(tmp_path, *judge, *extra)
    assert code != 0 and shared == isolated
    assert not (tmp_path / ".annols").exists()


def test_a_good_judge_goes_on_to_the_instances_and_nothing_is_kept_before_they_answer(tmp_path: Path) -> None:
    _study(tmp_path)
    judge = _judge(tmp_path, _every())
    for extra in ((), ("--human-share", "0.5", "--seed", "3"), ("--human-share", "0.5", "--overlap", "1")):
        code, err = _run(tmp_path, "--judge", judge, *extra, "--isolate", "instances.toml")
        assert code != 0 and UNREACHABLE in err, err
        assert not (tmp_path / ".annols").exists()  # no judge store, no study file: nothing was pushed


# --- the study's one judge store -------------------------------------------------------------------


def test_the_judge_store_of_an_isolated_study_names_the_study_not_a_project(tmp_path: Path) -> None:
    d = protocols.load(str(_write(tmp_path)))
    judge = tmp_path / _judge(tmp_path, _every())
    store = hidden_judges.store_dir(tmp_path / ".annols", "My study")
    assert store.parent == isolate.study_file(tmp_path / ".annols", "My study").parent  # beside the study file
    kept = hidden_judges.store(d, [judge], store, None, "My study")
    assert [p.name for p in kept] == ["judge.jsonl"]
    header = json.loads((store / hidden_judges.PROJECT_FILE).read_text(encoding="utf-8"))
    assert header == {"id": None, "title": "My study", "protocol": "headline-check", "variant": None,
                      "isolated": True}  # fmt: skip
    assert hidden_judges.stored(store, None, "My study") == kept
    with pytest.raises(AnnolsError, match=r"holds the judges of the isolated study 'My study', not of project 4 "
                       r"\('My study'\): two studies of one folder name"):  # fmt: skip
        hidden_judges.stored(store, 4, "My study")
    with pytest.raises(AnnolsError, match=r"not of the isolated study 'My-study'"):  # the same folder name
        hidden_judges.stored(store, None, "My-study")
    shared = hidden_judges.store_dir(tmp_path / "shared", "p")
    hidden_judges.store(d, [judge], shared, 7, "p")
    assert "isolated" not in json.loads((shared / hidden_judges.PROJECT_FILE).read_text(encoding="utf-8"))
    with pytest.raises(AnnolsError, match=r"holds the judges of project 7 \('p'\), not of the isolated study 'p'"):
        hidden_judges.store(d, [judge], shared, None, "p")
    with pytest.raises(AnnolsError, match=r"not of project 8 \('p'\): the project was made again"):
        hidden_judges.stored(shared, 8, "p")


def _write(folder: Path) -> Path:
    (folder / "headlines.toml").write_text(MINIMAL, encoding="utf-8")
    return folder / "headlines.toml"


# --- a re-push keeps the recorded human share ------------------------------------------------------


def _options(tmp_path: Path, **recorded: object) -> push_lib.PushOptions:
    return isolate_share._study(tmp_path, "p", **recorded)


def _push(tmp_path: Path, options: push_lib.PushOptions, share: float | None, **change: object) -> None:
    _study(tmp_path)
    d = protocols.load(str(tmp_path / "headlines.toml"))
    options = replace(options, **change)  # type: ignore[arg-type]
    inputs = [tmp_path / "study.jsonl"]
    judged = hybrid.judged(d, [tmp_path / _judge(tmp_path, _every())], inputs, share, options.seed)
    isolate.push(isolate.read_instances(tmp_path / "instances.toml"), d, inputs, options, judged=judged)


def test_a_re_push_that_would_change_the_human_share_is_refused(tmp_path: Path) -> None:
    recorded = {"share": 0.5, "seed": 3, "items": RECORDS, "humans": 3}
    options = _options(tmp_path, hybrid=recorded)
    path = isolate.study_file(options.manifest_dir, options.title)
    before = path.read_bytes()
    with pytest.raises(OptionError, match=r"records a hybrid draw of share 0\.5 with seed 3 over 6 items; this push "
                       r"asks for share 0\.5 with seed 4 over 6"):  # fmt: skip
        _push(tmp_path, options, 0.5, seed=4)
    with pytest.raises(OptionError, match=r"records a hybrid draw .* this push has no --human-share"):
        _push(tmp_path, options, None, seed=3)  # it would send the judge's only items to the annotators
    # The recorded share and seed: on to the instances (which do not answer here).
    with pytest.raises(AnnolsError, match=UNREACHABLE):
        _push(tmp_path, options, 0.5, seed=3)
    assert path.read_bytes() == before

    plain = _options(tmp_path / "plain")
    with pytest.raises(OptionError, match=r"the project was pushed without --human-share; push the hybrid study "
                       "to a new project"):  # fmt: skip
        _push(tmp_path / "plain", plain, 0.5)
    with pytest.raises(AnnolsError, match=UNREACHABLE):  # a judge added to a study pushed without one: as shared
        _push(tmp_path / "plain", plain, None)


def test_a_judge_store_of_a_shared_project_of_the_same_title_is_refused_before_any_instance(tmp_path: Path) -> None:
    d = protocols.load(str(_write(tmp_path)))
    hidden_judges.store(d, [tmp_path / _judge(tmp_path, _every())], hidden_judges.store_dir(tmp_path / ".annols",
                        "p"), 3, "p")  # fmt: skip
    with pytest.raises(AnnolsError, match=r"holds the judges of project 3 \('p'\), not of the isolated study 'p'"):
        _push(tmp_path, push_lib.PushOptions(title="p", manifest_dir=tmp_path / ".annols"), None)
    assert not isolate.study_file(tmp_path / ".annols", "p").exists()
