"""A study in rounds through the real server: next-round pushes a batch, annotators judge it (a clear planted
effect, through the API), pull, next-round decides or pushes the next batch, and says when every comparison is
decided; a spent budget pushes nothing; the report has the sequential section."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from annols.labelstudio.client import LabelStudioClient
from annols.study import manifest
from tests.conftest import LiveServer
from tests.study.test_push_pull import cli, study  # noqa: F401  (the fixture)


def judge(client: LabelStudioClient, manifest_dir: Path, title: str, user: int, keys: list[str],
          winner: Callable[[int, str, list[str]], str | None]) -> None:  # fmt: skip
    """One fluency judgment by ``user`` per task of ``keys`` (the i-th): ``winner(i, key, systems shown)`` is the
    system it prefers (None: a tie), answered as the position the task shows it in."""
    rows = {r["key"]: r for r in manifest.read_rows(manifest.manifest_path(manifest_dir, title))[1]}
    for i, key in enumerate(keys):
        shown = rows[key]["systems"]
        preferred = winner(i, key, shown)
        code = "0" if preferred is None else "1" if shown[0] == preferred else "2"
        result = [{"id": "f", "from_name": "fluency", "to_name": "headline_1", "type": "choices",
                   "value": {"choices": [code]}, "origin": "manual"}]  # fmt: skip
        client.create_annotation(rows[key]["task_id"], result, completed_by=user, lead_time=2.0)


def judge_all(client: LabelStudioClient, manifest_dir: Path, title: str, user: int, keys: list[str]) -> None:
    """bart better in fluency, wherever it is shown, but on 4 items of 20."""
    judge(client, manifest_dir, title, user, keys, lambda i, *_: "pegasus" if i % 20 in (0, 5, 10, 15) else "bart")


def test_rounds_stop_when_the_comparison_is_decided(
    label_studio: LiveServer, client: LabelStudioClient, study: tuple[Path, Path], tmp_path: Path  # noqa: F811
) -> None:
    definition, inputs = study  # 40 items of bart against pegasus
    title = "rounds decided"
    rounds = ["next-round", str(definition), str(inputs), "--project", title, "--effect", "0.5", "--overlap", "1",
              "--batch", "20"]  # fmt: skip
    code, out, err = cli(label_studio, *rounds, cwd=tmp_path)
    assert code == 0, err
    assert "round 1: pushed 20 item(s) (20 new), 20 study items in the project" in out
    assert "fluency: bart vs pegasus: 0 items: undecided" in out
    project = client.find_project(title)
    assert project is not None and project.task_count == 20
    record = tmp_path / ".annols" / "rounds-decided.rounds.jsonl"
    first = [json.loads(line) for line in record.read_text("utf-8").splitlines()]
    assert len(first) == 1 and len(first[0]["pushed"]) == 20 and first[0]["tests"] == 1
    assert first[0]["fixed"]["judgments"] > 0  # plan's fixed design for effect 0.5, one annotator

    # Without a pull the next round cannot see the first: refused, nothing pushed.
    code, out, err = cli(label_studio, *rounds, cwd=tmp_path)
    assert code == 1 and "give the latest pull of it (--pull)" in err
    user = client.users().get("rounds@example.org") or client.create_user("rounds@example.org")
    judge_all(client, tmp_path / ".annols", title, user, first[0]["pushed"])
    pulled = tmp_path / "pulled"
    pull = ["pull", str(definition), "--project", title, "-o", str(pulled)]
    assert cli(label_studio, *pull, cwd=tmp_path)[0] == 0

    # A budget of 20 items is spent: nothing pushed, and it says why.
    code, out, err = cli(label_studio, *rounds, "--pull", str(pulled), "--budget", "20", cwd=tmp_path)
    assert code == 0, err
    assert "nothing pushed: the budget is spent (20 study items, 20 judgments)" in out
    assert client.find_project(title).task_count == 20  # type: ignore[union-attr]

    # 16 items for bart, 4 for pegasus: mean 0.6, the interval still holds 0: round 3 pushes 20 more.
    code, out, err = cli(label_studio, *rounds, "--pull", str(pulled), cwd=tmp_path)
    assert code == 0, err
    assert "fluency: bart vs pegasus: 20 items, mean +0.600" in out and "undecided" in out
    assert "round 3: pushed 20 item(s) (20 new), 40 study items in the project" in out
    rows = [json.loads(line) for line in record.read_text("utf-8").splitlines()]
    assert [r["round"] for r in rows] == [1, 2, 3] and rows[1]["reason"] == "budget"
    assert not set(rows[2]["pushed"]) & set(first[0]["pushed"])

    judge_all(client, tmp_path / ".annols", title, user, rows[2]["pushed"])
    assert cli(label_studio, *pull, cwd=tmp_path)[0] == 0
    code, out, err = cli(label_studio, *rounds, "--pull", str(pulled), cwd=tmp_path)
    assert code == 0, err
    assert "fluency: bart vs pegasus: 40 items, mean +0.600" in out and "first better" in out
    assert "round 4: nothing pushed: every comparison is decided (40 study items, 40 judgments)" in out
    assert client.find_project(title).task_count == 40  # type: ignore[union-attr]

    # Asked again: the same answer, not another round.
    code, out, err = cli(label_studio, *rounds, "--pull", str(pulled), cwd=tmp_path)
    assert code == 0 and "round 4: nothing pushed" in out
    assert len(record.read_text("utf-8").splitlines()) == 4

    report = tmp_path / "report"
    code, out, err = cli(label_studio, "report", str(definition), str(pulled), "-o", str(report), "--rounds",
                         str(record), "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    md = (report / "report.md").read_text("utf-8")
    assert "## Sequential study" in md and "ran in 4 round(s)" in md
    assert "40 human judgments; every comparison was decided" in md
    other = tmp_path / "other.rounds.jsonl"  # a record naming none of the pull's items
    other.write_text(json.dumps({**rows[0], "pushed": ["not-this-project"]}) + "\n", encoding="utf-8")
    code, out, err = cli(label_studio, "report", str(definition), str(pulled), "-o", str(tmp_path / "r2"),
                         "--rounds", str(other))  # fmt: skip
    assert code == 1 and "none of its rounds' items is in the sources" in err and not (tmp_path / "r2").exists()
    table = (report / "tables" / "sequential_comparisons.csv").read_text("utf-8")
    assert "first better" in table and ",4\n" in table  # decided at round 4


def test_goal_best_stops_when_the_best_system_is_known(
    label_studio: LiveServer, client: LabelStudioClient, study: tuple[Path, Path], tmp_path: Path  # noqa: F811
) -> None:
    """Three systems, an item holding one pair (20 items each of a-b, a-c, b-c): a wins every judgment, b and c
    split. With --goal best the rounds stop once a is decided better than both, b against c never settled and its
    remaining items never pushed; the record keeps the goal, another goal is refused, the report states both."""
    definition, _ = study
    pool = tmp_path / "three.jsonl"
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    with open(pool, "w", encoding="utf-8") as f:
        for i in range(60):
            first, second = pairs[i % 3]
            f.write(json.dumps({"headline_1": f"Headline {i} by {first}", "headline_2": f"Headline {i} by {second}",
                                "systems": [first, second], "id": i}) + "\n")  # fmt: skip
    title = "rounds best"
    rounds = ["next-round", str(definition), str(pool), "--project", title, "--effect", "0.5", "--overlap", "1",
              "--batch", "15", "--goal", "best"]  # fmt: skip
    manifest_dir = tmp_path / ".annols"
    user = client.users().get("best@example.org") or client.create_user("best@example.org")
    pulled = tmp_path / "pulled"
    record = manifest_dir / "rounds-best.rounds.jsonl"
    out = ""
    for n in range(1, 5):
        code, out, err = cli(label_studio, *rounds, *(["--pull", str(pulled)] if n > 1 else []), cwd=tmp_path)
        assert code == 0, err
        if "nothing pushed" in out:
            break
        pushed = [json.loads(line) for line in record.read_text("utf-8").splitlines()][-1]["pushed"]
        judge(client, manifest_dir, title, user, pushed,
              lambda _, key, shown: "a" if "a" in shown else ("b" if sum(map(ord, key)) % 2 else "c"))  # fmt: skip
        assert cli(label_studio, "pull", str(definition), "--project", title, "-o", str(pulled), cwd=tmp_path)[0] == 0
    assert "fluency: best: a" in out
    assert "nothing pushed: the comparisons that decide the best system are decided" in out
    assert "fluency: b vs c:" in out and out.split("fluency: b vs c:")[1].split("\n")[0].endswith("undecided")
    recorded = [json.loads(line) for line in record.read_text("utf-8").splitlines()]
    assert all(r["goal"] == "best" for r in recorded) and recorded[-1]["reason"] == "best"
    assert recorded[-1]["items"] < 60  # b against c's remaining items were never pushed

    code, out, err = cli(label_studio, *rounds[:-1], "all", "--pull", str(pulled), cwd=tmp_path)
    assert code == 1 and "--goal all" in err and "fixed at round 1" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1

    report = tmp_path / "report"
    code, out, err = cli(label_studio, "report", str(definition), str(pulled), "-o", str(report), "--rounds",
                         str(record), "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    md = (report / "report.md").read_text("utf-8")
    assert "Goal: the best system." in md and "Conclusion: fluency: best: a." in md
    assert "the comparisons that decide the best system were decided" in md and "the stopping saved" in md


def test_a_second_pass_reopens_items_on_the_server_and_decides(
    label_studio: LiveServer, client: LabelStudioClient, study: tuple[Path, Path], tmp_path: Path  # noqa: F811
) -> None:
    """A pool of 20 items too small to decide with one annotator (bart wins 12, loses 4, ties 4): with --passes 2 the
    round after the pool is pushed re-opens every item for a second annotator, raising each task's overlap on the
    server: Label Studio offers the items again to an annotator who has not judged them, not to the first. Run
    again on the same pull it re-opens nothing; a re-push and a reset of the overlaps by hand do not undo it (the
    next round sets the recorded overlaps again). The second annotator prefers bart on every item: pass 2 (each
    item the mean of its two judgments) decides, and the record and the report say it was pass 2."""
    import secrets

    from annols.labelstudio import users

    definition, inputs = study
    pool = tmp_path / "twenty.jsonl"
    pool.write_text("".join(inputs.read_text("utf-8").splitlines(keepends=True)[:20]), encoding="utf-8")
    title = "rounds passes"
    manifest_dir = tmp_path / ".annols"
    rounds = ["next-round", str(definition), str(pool), "--project", title, "--effect", "0.5", "--overlap", "1",
              "--batch", "20", "--passes", "2"]  # fmt: skip
    record = manifest_dir / "rounds-passes.rounds.jsonl"
    password = secrets.token_urlsafe(12)
    first, second = "passes-one@example.org", "passes-two@example.org"
    ids = {a.email: a.id for a in users.add_accounts(client, [first, second], [password, password])}

    def offered(email: str, project: int) -> int | None:
        """The task Label Studio's label stream gives ``email`` next (None: nothing left for them)."""
        with users.logged_in(label_studio.url, email, password) as session:
            answer = session.get(f"api/projects/{project}/next/")
        assert answer.status_code in (200, 404), answer.text
        return int(answer.json()["id"]) if answer.status_code == 200 else None

    def overlaps(project: int) -> dict[int, int]:
        return {int(t["id"]): int(t["overlap"]) for t in client.task_fields(project, "id,overlap")}

    code, out, err = cli(label_studio, *rounds, cwd=tmp_path)
    assert code == 0, err
    assert "round 1: pushed 20 item(s) (20 new), 20 study items in the project" in out
    keys = json.loads(record.read_text("utf-8").splitlines()[0])["pushed"]
    judge(client, manifest_dir, title, ids[first], keys,
          lambda i, *_: "pegasus" if i % 5 == 0 else None if i % 5 == 1 else "bart")  # fmt: skip
    project = client.find_project(title)
    assert project is not None and offered(second, project.id) is None  # one annotator a task: all done
    pulled = tmp_path / "pulled"
    pull = ["pull", str(definition), "--project", title, "-o", str(pulled)]
    assert cli(label_studio, *pull, cwd=tmp_path)[0] == 0

    # Pass 1 (12 wins, 4 losses, 4 ties over 20 items) is undecided and the pool is exhausted: pass 2 re-opens.
    code, out, err = cli(label_studio, *rounds, "--pull", str(pulled), cwd=tmp_path)
    assert code == 0, err
    assert "fluency: bart vs pegasus: 20 items, mean +0.400" in out and "undecided (pass 1)" in out
    assert "round 2: re-opened 20 task(s) for 2 annotators each (pass 2), 20 study items in the project" in out
    assert set(overlaps(project.id).values()) == {2}
    assert offered(first, project.id) is None and offered(second, project.id) in overlaps(project.id)
    rows = [json.loads(line) for line in record.read_text("utf-8").splitlines()]
    assert rows[1]["pass"] == 2 and rows[1]["reopened"] == dict.fromkeys(keys, 2) and rows[1]["passes"] == 2

    # The same pull again: refused in one line, nothing re-opened twice, no round recorded.
    code, out, err = cli(label_studio, *rounds, "--pull", str(pulled), cwd=tmp_path)
    assert code == 1 and "re-opened for pass 2 is complete for it in the pull" in err and len(err.splitlines()) == 1
    assert len(record.read_text("utf-8").splitlines()) == 2 and set(overlaps(project.id).values()) == {2}
    # A re-push of the pool keeps the overlaps; the project's maximum_annotations changed by hand resets them.
    assert cli(label_studio, "push", str(definition), str(pool), "--project", title, "--overlap", "1",
               cwd=tmp_path)[0] == 0  # fmt: skip
    assert set(overlaps(project.id).values()) == {2}
    client.update_project(project.id, maximum_annotations=2)
    client.update_project(project.id, maximum_annotations=1)
    assert set(overlaps(project.id).values()) == {1}  # what Label Studio does: the next round sets them again

    judge(client, manifest_dir, title, ids[second], keys, lambda *_: "bart")
    assert cli(label_studio, *pull, cwd=tmp_path)[0] == 0
    code, out, err = cli(label_studio, *rounds, "--pull", str(pulled), cwd=tmp_path)
    assert code == 0, err
    assert "fluency: bart vs pegasus: 20 items, mean +0.800" in out and "first better (pass 2)" in out
    assert "round 3: nothing pushed: every comparison is decided (20 study items, 40 judgments)" in out
    assert set(overlaps(project.id).values()) == {2}
    rows = [json.loads(line) for line in record.read_text("utf-8").splitlines()]
    assert rows[2]["comparisons"][0]["pass"] == 2 and rows[2]["comparisons"][0]["decision"] == "first better"
    assert rows[2]["reopened"] == {}

    report = tmp_path / "report"
    code, out, err = cli(label_studio, "report", str(definition), str(pulled), "-o", str(report), "--rounds",
                         str(record), "--bootstrap", "0")  # fmt: skip
    assert code == 0, err
    md = (report / "report.md").read_text("utf-8")
    assert "Passes: 2." in md and "Decided: 1 in pass 2." in md
    table = (report / "tables" / "sequential_comparisons.csv").read_text("utf-8")
    assert table.splitlines()[0].endswith(",decided at round,pass") and table.splitlines()[1].endswith(",3,2")
    history = (report / "tables" / "sequential_rounds.csv").read_text("utf-8").splitlines()
    assert ",pass,tasks re-opened," in history[0] and ",2,20," in history[2]  # round 2: pass 2, 20 tasks
