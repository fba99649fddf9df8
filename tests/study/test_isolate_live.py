"""Isolated mode on real servers: one embedded Label Studio per annotator.

Two extra instances are started once for the module (``annols server start --annotator``
through the CLI, on free ports with their own data dirs). A pairwise study is pushed to
them with ``push --isolate``; each annotator logs in to their own instance through the
login form and uses their own token:

- annotator A's instance holds the study's one project, with tasks whose meta is the key
  alone, and none of B's annotations in any endpoint or the export; A's password and token
  open nothing on B's instance;
- both annotate (through the API, then one more task each in Chromium); ``pull --isolate``
  merges the instances into one pull folder that ``report`` reads, with every annotator's
  answers; ``status --isolate`` sums the instances;
- an annotation on A's instance credited to another account (posted by A in the
  coordinator's name) is a ``not-the-annotator`` finding, kept out of the merged files, and
  ``--strict`` fails on it;
- why an instance and not an organization per annotator on one server: on 1.23.2 a member of
  one organization reads and edits another organization's annotations by id.
"""

from __future__ import annotations

import csv
import json
import re
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser

from annols.errors import InputError, ServerError
from annols.labelstudio import server, users
from annols.labelstudio.client import LabelStudioClient
from annols.study import hidden_judges, isolate, manifest
from annols.study.exports import ANNOTATORS_FILE, PROJECT_FILE
from annols.study.pull import ROWS_FILE
from tests.browser.conftest import VIEWPORT, Annotator, LabelingView
from tests.conftest import LiveServer
from tests.definition.test_definition import MINIMAL
from tests.labelstudio.test_incremental import vote
from tests.study.test_push_pull import invoke

pytestmark = pytest.mark.server

TITLE = "isolated headlines"
ANN, BEN = "ann@example.org", "ben@example.org"
TASKS = 5
# The shared server's settings must not leak into an isolated command: each instance comes from the file.
NO_SERVER = {"LABEL_STUDIO_URL": None, "LABEL_STUDIO_API_KEY": None, "ANNOLS_DATA_DIR": None}


def cli(*args: str, cwd: Path) -> tuple[int, str, str]:
    return invoke(NO_SERVER, *args, cwd=cwd)


@dataclass
class Study:
    folder: Path
    instances: list[isolate.Instance]
    passwords: dict[str, str]

    def api(self, email: str, instance: isolate.Instance) -> httpx.Client:
        """The annotator's own API session on ``instance``: logged in through the form, then their token."""
        with users.logged_in(instance.url, email, self.passwords[email]) as session:
            token = session.get("api/current-user/token").json()["token"]
        return httpx.Client(base_url=instance.url, headers={"Authorization": f"Token {token}"}, timeout=120)


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Study]:
    folder = tmp_path_factory.mktemp("isolated")
    data = folder / "servers"
    code, out, err = cli("server", "start", "--data-dir", str(data), "--annotator", ANN, "--annotator", BEN,
                         "--isolate", "instances.toml", cwd=folder)  # fmt: skip
    try:
        assert code == 0, err + out
        instances = isolate.read_instances(folder / "instances.toml")
        assert [i.annotator for i in instances] == [ANN, BEN]
        assert "token" not in (folder / "instances.toml").read_text(encoding="utf-8").lower()
        (folder / "headlines.toml").write_text(MINIMAL, encoding="utf-8")
        records = [{"headline_1": f"First {i}", "headline_2": f"Second {i}", "systems": ["sysa", "sysb"], "id": i}
                   for i in range(TASKS)]  # fmt: skip
        (folder / "study.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        passwords = {ANN: secrets.token_urlsafe(12), BEN: secrets.token_urlsafe(12)}
        (folder / "passwords.txt").write_text(f"{passwords[ANN]}\n{passwords[BEN]}\n", encoding="utf-8")
        yield Study(folder, [i for i in instances if i.url], passwords)
    finally:
        for d in (data / "isolated").glob("*"):
            server.stop(d)


PUSH = ("push", "headlines.toml", "study.jsonl", "--project", TITLE, "--isolate", "instances.toml")


def test_push_fans_out_and_is_idempotent(study: Study) -> None:
    code, out, err = cli(*PUSH, "--password-file", "passwords.txt", cwd=study.folder)
    assert code == 0, err + out
    lines = out.splitlines()
    for email in (ANN, BEN):
        (line,) = [x for x in lines if x.startswith(f"{email}: ")]
        assert line.endswith(f"created {TASKS}, already present 0, total {TASKS}; account created"), line
    record = json.loads((study.folder / ".annols" / "isolated-headlines.isolated.json").read_text(encoding="utf-8"))
    assert [(r["annotator"], r["url"]) for r in record["instances"]] == [(i.annotator, i.url) for i in study.instances]
    code, out, err = cli(*PUSH, cwd=study.folder)
    assert code == 0, err + out
    assert sum(line.endswith(f"created 0, already present {TASKS}, total {TASKS}; account exists")
               for line in out.splitlines()) == 2, out  # fmt: skip
    # No token in any file the push wrote.
    tokens = [server.api_token(i.data_dir) for i in study.instances if i.data_dir is not None]
    for path in (study.folder / ".annols").rglob("*"):
        if path.is_file():
            assert not any(t in path.read_text(encoding="utf-8", errors="replace") for t in tokens), path


def _annotate(api: httpx.Client) -> list[int]:
    """Vote on every task of the annotator's project as that annotator; the annotation ids."""
    (project,) = api.get("/api/projects/").json()["results"]
    tasks = api.get("/api/tasks/", params={"project": project["id"], "page_size": 100}).json()["tasks"]
    made = []
    for task in tasks:
        answer = api.post(f"/api/tasks/{task['id']}/annotations/", json={"result": vote("1"), "lead_time": 3})
        assert answer.status_code == 201, answer.text[:300]
        made.append(int(answer.json()["id"]))
    return made


def test_annotators_are_kept_apart_and_pull_merges(study: Study) -> None:
    a, b = study.instances
    ann, ben = study.api(ANN, a), study.api(BEN, b)
    assert len(_annotate(ann)) == TASKS
    assert len(_annotate(ben)) == TASKS

    # A's instance: one project (the study's), meta is the key alone, and nothing of Ben anywhere.
    projects = ann.get("/api/projects/").json()["results"]
    assert [p["title"] for p in projects] == [TITLE]
    pid = projects[0]["id"]
    tasks = ann.get("/api/tasks/", params={"project": pid, "page_size": 100, "fields": "all"}).json()["tasks"]
    assert {tuple(t["meta"]) for t in tasks} == {("annols_key",)}
    export = ann.get(f"/api/projects/{pid}/export", params={"exportType": "JSON"})
    assert export.status_code == 200
    who = {a_["completed_by"] for t in export.json() for a_ in t["annotations"]}
    me = ann.get("/api/current-user/whoami").json()["id"]
    assert who == {me}
    seen = [ann.get(f"/api/tasks/{t['id']}/").text for t in tasks] + [export.text, json.dumps(tasks)]
    accounts = ann.get("/api/users/").json()
    assert BEN not in "".join(seen) and BEN not in json.dumps(accounts)

    # A's credentials open nothing on B's instance: neither the login form nor A's token.
    with pytest.raises(ServerError), users.logged_in(b.url, ANN, study.passwords[ANN]):
        pass
    token_a = ann.headers["Authorization"]
    for path in ("/api/projects/", "/api/tasks/", f"/api/projects/{pid}/export?exportType=JSON"):
        answer = httpx.get(b.url + path, headers={"Authorization": token_a}, timeout=60)
        assert answer.status_code == 401, (path, answer.status_code)
    first = ben.get("/api/projects/").json()["results"][0]["id"]
    ben_annotations = ben.get("/api/tasks/", params={"project": first, "fields": "all"}).json()["tasks"]
    some = ben_annotations[0]["annotations"][0]["id"]
    assert httpx.delete(f"{b.url}/api/annotations/{some}/", headers={"Authorization": token_a}).status_code == 401
    assert httpx.patch(f"{b.url}/api/annotations/{some}/", headers={"Authorization": token_a},
                       json={"result": vote("2")}).status_code == 401  # fmt: skip

    # Pull merges both instances into one folder; status sums them; report reads the merged pull.
    code, out, err = cli("pull", "headlines.toml", "--project", TITLE, "-o", "pulled", "--isolate",
                         "instances.toml", "--strict", cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    assert f"Merged 2 instances: {TASKS} tasks, {2 * TASKS} annotations, 0 skipped." in out
    pulled = study.folder / "pulled"
    with open(pulled / "results.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {r["annotator"] for r in rows} == {ANN, BEN}
    assert len({r["annotation_id"] for r in rows}) == 2 * TASKS
    assert len({r["task_key"] for r in rows}) == TASKS
    assert {r["systems"] for r in rows} <= {"sysa | sysb", "sysb | sysa"}  # unblinded from the manifests
    assert json.loads((pulled / "project.json").read_text(encoding="utf-8"))["overlap"] == 2
    for instance in study.instances:
        assert (pulled / "instances" / instance.annotator / "export.json").exists()

    code, out, err = cli("status", "headlines.toml", "--project", TITLE, "--isolate", "instances.toml", "--json",
                         cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    summed = json.loads(out)
    assert (summed["tasks"], summed["annotations"], summed["missing"]) == (2 * TASKS, 2 * TASKS, 0)
    assert sorted(a["annotator"] for a in summed["annotators"]) == [ANN, BEN]
    assert [line.split(": ")[0] for line in summed["instances"]] == [ANN, BEN]
    code, out, err = cli("status", "headlines.toml", "--project", TITLE, "--isolate", "instances.toml",
                         cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    assert f"{ANN}: {a.url}/projects/" in out.splitlines()[0] and f"{2 * TASKS} tasks" in out

    code, out, err = cli("report", "headlines.toml", "pulled", "-o", "report", cwd=study.folder)
    assert code == 0, err + out
    report = (study.folder / "report" / "report.md").read_text(encoding="utf-8")
    assert "sysa" in report and "sysb" in report


def test_an_annotation_credited_to_another_is_a_finding(study: Study) -> None:
    a = study.instances[0]
    ann = study.api(ANN, a)
    (project,) = ann.get("/api/projects/").json()["results"]
    task = ann.get("/api/tasks/", params={"project": project["id"]}).json()["tasks"][0]
    coordinator = next(u for u in ann.get("/api/users/").json() if u["email"] != ANN)
    forged = ann.post(f"/api/tasks/{task['id']}/annotations/",
                      json={"result": vote("2"), "completed_by": coordinator["id"]})  # fmt: skip
    assert forged.status_code == 201, forged.text[:300]
    forged_id = forged.json()["id"]

    code, out, err = cli("pull", "headlines.toml", "--project", TITLE, "-o", "strict", "--isolate",
                         "instances.toml", "--strict", cwd=study.folder)  # fmt: skip
    assert code == 1
    assert f"task {task['id']}" in err and f"annotation {forged_id}: not-the-annotator" in err
    assert not (study.folder / "strict" / "results.csv").exists()

    code, out, err = cli("pull", "headlines.toml", "--project", TITLE, "-o", "pulled", "--isolate",
                         "instances.toml", cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    assert f"annotation {forged_id}: not-the-annotator: on {ANN}'s instance" in err
    pulled = study.folder / "pulled"
    with open(pulled / "findings.csv", encoding="utf-8") as f:
        found = [r for r in csv.DictReader(f) if r["finding"] == "not-the-annotator"]
    assert [(r["task_id"], r["annotation_id"]) for r in found] == [(str(task["id"]), str(forged_id))]
    with open(pulled / "results.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {r["annotator"] for r in rows} == {ANN, BEN}  # the forged one stays out
    assert len({r["annotation_id"] for r in rows}) == 2 * TASKS


def test_pulling_the_instances_side_by_side_writes_what_one_after_another_does(study: Study) -> None:
    """pull --isolate of the same study (annotated, with a finding) into two new folders, once with --jobs 1 (one
    instance after the other) and once with --jobs 2 (both at once): the same files byte for byte, every
    instance's folder too, and the same lines in the same order."""
    said = {}
    for jobs in ("1", "2"):
        code, out, err = cli("pull", "headlines.toml", "--project", TITLE, "-o", f"jobs-{jobs}", "--isolate",
                             "instances.toml", "--jobs", jobs, cwd=study.folder)  # fmt: skip
        assert code == 0, err + out
        said[jobs] = (out.replace(f"jobs-{jobs}", "OUT"), err.replace(f"jobs-{jobs}", "OUT"))
    assert f"Merged 2 instances: {TASKS} tasks" in said["1"][0] and "not-the-annotator" in said["1"][1]
    assert said["2"] == said["1"]
    one_by_one, side_by_side = _files(study.folder / "jobs-1"), _files(study.folder / "jobs-2")
    assert f"instances/{ANN}/export.json" in one_by_one and f"instances/{BEN}/export.json" in one_by_one
    assert "results.csv" in one_by_one and "findings.csv" in one_by_one
    assert sorted(side_by_side) == sorted(one_by_one)
    assert [name for name in one_by_one if side_by_side[name] != one_by_one[name]] == []


def _task_key(study: Study, instance: isolate.Instance, title: str, task_id: int) -> str:
    """A task's key as result files name it, from the manifest of the instance it is on (LabelingView.task_key
    looks a project id up among the shared server's pushes: an instance numbers its projects from 1 too)."""
    path = manifest.manifest_path(isolate.instance_manifest_dir(study.folder / ".annols", title, instance), title)
    return str(next(r["key"] for r in manifest.read_rows(path)[1] if r.get("task_id") == task_id))


def test_annotators_in_chromium_each_on_their_own_instance(study: Study, browser: Browser, tmp_path: Path) -> None:
    """A new task pushed to both instances, annotated in the browser by each annotator on their own
    instance (the login form, Label All Tasks, a click, Submit): the merged pull holds both answers."""
    records = [{"headline_1": f"First {i}", "headline_2": f"Second {i}", "systems": ["sysa", "sysb"], "id": i}
               for i in range(TASKS + 1)]  # fmt: skip
    (study.folder / "more.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, out, err = cli("push", "headlines.toml", "more.jsonl", "--project", TITLE, "--isolate", "instances.toml",
                         cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    assert sum(f"created 1, already present {TASKS}" in line for line in out.splitlines()) == 2, out
    keys = set()
    for email, instance in zip((ANN, BEN), study.instances, strict=True):
        context = browser.new_context(viewport=VIEWPORT)
        context.set_default_timeout(60_000)
        try:
            live = LiveServer(instance.url, "", instance.data_dir or tmp_path)  # the view uses its URL only
            view = LabelingView(context.new_page(), live, tmp_path)
            view.log_in(Annotator(email, study.passwords[email], 0))
            (project,) = study.api(email, instance).get("/api/projects/").json()["results"]
            view.open(int(project["id"]))
            keys.add(_task_key(study, instance, TITLE, int(view.task["id"])))
            view.choose(view.page.locator(".lsf-choices").first, "2")
            saved = view.submit()
        finally:
            context.close()
        assert saved["completed_by"] == study.api(email, instance).get("/api/current-user/whoami").json()["id"]
    (key,) = keys  # the same new task on both instances
    code, out, err = cli("pull", "headlines.toml", "--project", TITLE, "-o", "pulled", "--isolate",
                         "instances.toml", cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    with open(study.folder / "pulled" / "results.csv", encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["task_key"] == key]
    assert sorted((r["annotator"], r["answer"]) for r in rows) == [(ANN, "2"), (BEN, "2")]


def test_the_instances_file_holds_no_token(tmp_path: Path) -> None:
    bad = tmp_path / "instances.toml"
    bad.write_text('[[instance]]\nannotator = "a@example.org"\nurl = "http://x"\ntoken = "secret"\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"instance 1, field 'token': tokens and passwords never go in this file"):
        isolate.read_instances(bad)
    bad.write_text('[[instance]]\nannotator = "a@example.org"\ndata_dir = "a"\n'
                   '[[instance]]\nannotator = "A@example.org"\ndata_dir = "b"\n', encoding="utf-8")  # fmt: skip
    with pytest.raises(InputError, match=r"instance 2, field 'annotator': a@example\.org has an instance already"):
        isolate.read_instances(bad)
    ok = tmp_path / "ok.toml"
    isolate.write_instances(ok, [isolate.Instance("a@example.org", "http://h:1", None, "A_KEY")])
    (read,) = isolate.read_instances(ok)
    assert (read.annotator, read.url, read.api_key_env) == ("a@example.org", "http://h:1", "A_KEY")


# Made inside the instance's own Django (as a shell on the server could): a second organization with
# its own member, project, task and annotation. The community edition has no API to make one.
_SECOND_ORGANIZATION = r'''
import django, json
django.setup()
from organizations.models import Organization
from projects.models import Project
from rest_framework.authtoken.models import Token
from tasks.models import Annotation, Task
from users.models import User
other = User.objects.create_user(email="other@org.example", password="pw-other-1234", username="other@org.example")
org = Organization.create_organization(created_by=other, title="Other organization")
other.active_organization = org
other.save()
org.jwt.legacy_api_tokens_enabled = True
org.jwt.save()
token, _ = Token.objects.get_or_create(user=other)
project = Project.objects.create(title="Other study", organization=org, created_by=other,
                                 label_config='<View><Text name="t" value="$t"/></View>')
task = Task.objects.create(project=project, data={"t": "other text"}, meta={"annols_key": "other"})
annotation = Annotation.objects.create(task=task, project=project, completed_by=other, result=[])
print(json.dumps({"token": token.key, "project": project.id, "task": task.id, "annotation": annotation.id}))
'''


def test_one_organization_per_annotator_would_be_no_boundary(study: Study) -> None:
    """Why isolated mode runs an instance per annotator: on 1.23.2 CE, organizations on one server keep
    projects and tasks apart, but not annotations. A member of one organization reads and edits an
    annotation of another by its id, and annotates another organization's task. If this test fails, a
    Label Studio release may have made organizations a real boundary: then the cheaper design is worth a look."""
    import label_studio

    a = study.instances[0]
    assert a.data_dir is not None
    env = {**server.environment(), "DJANGO_SETTINGS_MODULE": "core.settings.label_studio",
           "LABEL_STUDIO_BASE_DATA_DIR": str(a.data_dir)}  # fmt: skip
    made = subprocess.run([sys.executable, "-c", _SECOND_ORGANIZATION], env=env, capture_output=True, text=True,
                          cwd=Path(label_studio.__file__).parent, timeout=300)  # fmt: skip
    assert made.returncode == 0, made.stderr[-2000:]
    other = json.loads(made.stdout.strip().splitlines()[-1])
    ann = study.api(ANN, a)
    them = httpx.Client(base_url=a.url, headers={"Authorization": f"Token {other['token']}"}, timeout=120)
    # What the organization does keep apart: projects, tasks, the export, the users list.
    assert ann.get(f"/api/projects/{other['project']}/").status_code == 404
    assert ann.get(f"/api/tasks/{other['task']}/").status_code == 404
    assert ann.get(f"/api/projects/{other['project']}/export", params={"exportType": "JSON"}).status_code == 404
    assert "other@org.example" not in ann.get("/api/users/").text
    # What it does not: annotations by id, both ways.
    read = ann.get(f"/api/annotations/{other['annotation']}/")
    assert read.status_code == 200 and read.json()["task"] == other["task"]
    edited = ann.patch(f"/api/annotations/{other['annotation']}/", json={"result": vote("2")})
    assert edited.status_code == 200
    assert them.get(f"/api/annotations/{other['annotation']}/").json()["result"][0]["value"] == {"choices": ["2"]}
    (project,) = ann.get("/api/projects/").json()["results"]
    mine = ann.get("/api/tasks/", params={"project": project["id"]}).json()["tasks"][0]["id"]
    assert them.post(f"/api/tasks/{mine}/annotations/", json={"result": vote("1")}).status_code == 201


def test_isolate_refuses_what_it_does_not_do(tmp_path: Path) -> None:
    """Each refusal is one line and nothing is started or sent (no server is given)."""
    (tmp_path / "headlines.toml").write_text(MINIMAL, encoding="utf-8")
    (tmp_path / "study.jsonl").write_text(json.dumps({"headline_1": "a", "headline_2": "b", "id": 1}) + "\n",
                                          encoding="utf-8")  # fmt: skip
    (tmp_path / "instances.toml").write_text('[[instance]]\nannotator = "a@example.org"\nurl = "http://127.0.0.1:9"\n'
                                             'api_key_env = "ANNOLS_TEST_UNSET_KEY"\n', encoding="utf-8")  # fmt: skip
    push = ("push", "headlines.toml", "study.jsonl", "--project", "p")
    cases = {
        (*push, "--password-file", "instances.toml"): "--password-file is for --isolate",
        (*push, "--isolate", "instances.toml", "--url", "http://x"): "leave out --url and --api-key",
        (*push, "--isolate", "instances.toml", "--overlap", "2"): "each task goes to that many of the 1 instance(s)",
        (*push, "--isolate", "instances.toml"): "needs its API token in the environment variable ANNOLS_TEST_UNSET_KEY",
        ("server", "start", "--annotator", "a@example.org"): "needs both --annotator EMAIL",
    }
    for args, message in cases.items():
        code, _, err = cli(*args, cwd=tmp_path)
        assert code != 0 and message in err, (args, err)
        assert len(err.strip().splitlines()) <= 3 and "Traceback" not in err, err


# --- an instance that does not answer ----------------------------------------------------------


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_an_instance_that_does_not_answer_is_named_and_nothing_is_pulled_pushed_or_summed(
    label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    """The session's server is one annotator's instance, the other's URL a loopback port nothing listens on (bound,
    never listening: the connection is refused). pull, push and status --isolate refuse in one line naming the
    instance that does not answer and where it is; the earlier pull (merged files and the instance's own folder)
    stays byte for byte as it was, a first pull writes no folder at all, and the push sends nothing."""
    import socket

    up, down = "iso-up@example.org", "iso-down@example.org"
    title = "isolated with one down"
    (tmp_path / "headlines.toml").write_text(MINIMAL, encoding="utf-8")
    records = [{"headline_1": f"First {i}", "headline_2": f"Second {i}", "systems": ["sysa", "sysb"], "id": i}
               for i in range(3)]  # fmt: skip
    (tmp_path / "study.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))  # held, not listening: nothing else takes the port while the test runs
    try:
        dead = f"http://127.0.0.1:{closed.getsockname()[1]}"
        one = f'[[instance]]\nannotator = "{up}"\nurl = "{label_studio.url}"\napi_key_env = "ANNOLS_TEST_UP_KEY"\n'
        (tmp_path / "one.toml").write_text(one, encoding="utf-8")
        (tmp_path / "both.toml").write_text(one + f'[[instance]]\nannotator = "{down}"\nurl = "{dead}"\n'
                                            'api_key_env = "ANNOLS_TEST_DOWN_KEY"\n', encoding="utf-8")  # fmt: skip
        env = {**NO_SERVER, "ANNOLS_TEST_UP_KEY": label_studio.api_key, "ANNOLS_TEST_DOWN_KEY": "not-a-token"}

        def run(*args: str) -> tuple[int, str, str]:
            return invoke(env, *args, cwd=tmp_path)

        code, out, err = run("push", "headlines.toml", "study.jsonl", "--project", title, "--isolate", "one.toml")
        assert code == 0, err + out
        project = client.find_project(title)
        assert project is not None and project.task_count == 3
        annotator = client.users()[up]
        for task in client.export_tasks(project.id):
            client.create_annotation(int(task["id"]), vote("1"), completed_by=annotator, lead_time=2.0)
        pull = ("pull", "headlines.toml", "--project", title, "-o", "pulled", "--isolate")
        code, out, err = run(*pull, "one.toml")
        assert code == 0 and "Merged 1 instances: 3 tasks, 3 annotations" in out, err + out
        before = _files(tmp_path / "pulled")
        assert f"instances/{up}/export.json" in before and "results.csv" in before

        said = f"the instance of {down} at {dead} does not answer (ConnectError): start it, or correct its url in"
        code, out, err = run(*pull, "both.toml")
        assert code == 1 and len(err.splitlines()) == 1 and said in err and "nothing was pulled" in err, err + out
        assert "Traceback" not in err and label_studio.api_key not in err
        assert _files(tmp_path / "pulled") == before  # the earlier pull, the up instance's folder too
        code, out, err = run("pull", "headlines.toml", "--project", title, "-o", "fresh", "--isolate", "both.toml")
        assert code == 1 and said in err
        assert not (tmp_path / "fresh").exists() and not list(tmp_path.glob(".fresh*"))  # nothing staged left

        code, out, err = run("status", "headlines.toml", "--project", title, "--isolate", "both.toml")
        assert code == 1 and len(err.splitlines()) == 1 and said in err, err + out
        more = tmp_path / "more.jsonl"
        more.write_text((tmp_path / "study.jsonl").read_text(encoding="utf-8") + json.dumps(
            {**records[0], "id": 9, "headline_1": "First 9"}) + "\n", encoding="utf-8")  # fmt: skip
        code, out, err = run("push", "headlines.toml", "more.jsonl", "--project", title, "--isolate", "both.toml")
        assert code == 1 and said in err and "nothing was pushed" in err, err + out
        assert client.find_project(title).task_count == 3  # type: ignore[union-attr]  # not sent to the one up
    finally:
        closed.close()


def test_an_embedded_instance_that_is_not_running_is_named_with_how_to_start_it(tmp_path: Path) -> None:
    (tmp_path / "headlines.toml").write_text(MINIMAL, encoding="utf-8")
    (tmp_path / "instances.toml").write_text('[[instance]]\nannotator = "a@example.org"\ndata_dir = "servers/a"\n',
                                             encoding="utf-8")  # fmt: skip
    code, out, err = cli("pull", "headlines.toml", "--project", "p", "-o", "pulled", "--isolate", "instances.toml",
                         cwd=tmp_path)  # fmt: skip
    where = Path("servers/a")  # as the file names it, beside the file
    assert code == 1 and len(err.splitlines()) == 1, err + out
    assert (f"the instance of a@example.org at {where} does not answer (not running): start it (annols server start "
            f"--data-dir {where}) and run the command again; nothing was pulled") in err  # fmt: skip
    assert not (tmp_path / "pulled").exists()


# --- isolated mode gives the same files as shared mode ------------------------------------------

ALIKE = "isolated and shared alike"  # a new study on both sides: the tests above leave findings on TITLE
# Ids Label Studio numbers (each server its own; the merge numbers annotations anew), when an annotation
# was made (the server's clock) and how long it took (the client's timing): they differ between any two
# runs of one study. "project id": an isolated study has a project on each instance, so none of its own.
_RUN_COLUMNS = {"task_id", "annotation_id", "created_at", "lead_time", "project id"}
# Not result files: Label Studio's raw export (ids, timestamps, each server's layout; the merge writes it
# anew), the incremental pull's mark of one server (an isolated pull keeps one per instance, under
# instances/) and those per-instance pull folders themselves, which shared mode has no counterpart of.
# The rows index is a pull's cache for its next re-pull (the server's task ids, each task's bytes): a shared
# pull keeps one, a merge of instances does not.
_NOT_COMPARED = {"export.json", "pull-state.json", ROWS_FILE, isolate.INSTANCES_DIR}
def _prefers(email: str, record: int) -> str:
    """The system an annotator prefers in a record: fixed per (annotator, record), not per shown position."""
    if email == ANN:
        return "sysa" if record % 2 == 0 else "sysb"
    return "sysb" if record % 3 == 0 else "sysa"


def _answer(email: str, task: dict[str, object]) -> list[dict[str, object]]:
    """The vote of ``email`` on a task as shown: the position of the system preferred (records give
    sysa the "First" headline, so the text shown says which system is first)."""
    data = task["data"]
    assert isinstance(data, dict)
    first = str(data["headline_1"])
    record = int(first.split()[-1])
    shown_first = "sysa" if first.startswith("First ") else "sysb"
    return vote("1" if _prefers(email, record) == shown_first else "2")


def _normalised(folder: Path, annotators: set[str], title: str = ALIKE) -> dict[str, object]:
    """A pull or report folder's files, less what legitimately differs between two runs of one study."""
    found: dict[str, object] = {}
    for path in sorted(folder.rglob("*")):
        rel = path.relative_to(folder).as_posix()
        if not path.is_file() or rel.split("/")[0] in _NOT_COMPARED:
            continue
        if path.suffix == ".csv":
            with open(path, encoding="utf-8", newline="") as f:
                rows = [{k: v for k, v in r.items() if k not in _RUN_COLUMNS} for r in csv.DictReader(f)]
            found[rel] = sorted(json.dumps(r, sort_keys=True) for r in rows)  # in id order: sorted by content
        elif path.suffix == ".jsonl":
            lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            found[rel] = sorted(json.dumps({k: v for k, v in r.items() if k not in _RUN_COLUMNS}, sort_keys=True)
                                for r in lines)  # fmt: skip
        elif rel == ANNOTATORS_FILE:
            # User id -> email: ids are each server's; a shared server lists every account of its
            # organization (the coordinator's too), the merge those with an annotation in the study.
            found[rel] = sorted(set(json.loads(path.read_text(encoding="utf-8")).values()) & annotators)
        elif rel == PROJECT_FILE:
            # The server's project id and URL, or the instances' URLs: where the study ran.
            settings = json.loads(path.read_text(encoding="utf-8"))
            found[rel] = {k: v for k, v in settings.items() if k not in {"id", "url", "isolated"}}
        elif rel in ("report.md", "report.html"):
            # The sources table's "project id" cell (see _RUN_COLUMNS), in Markdown and in HTML.
            text = path.read_text(encoding="utf-8")
            text = re.sub(rf"(\| {re.escape(title)} \|) *\d* *\|", r"\1 ID |", text)
            found[rel] = re.sub(rf"(<td>{re.escape(title)}</td>\n)<td( class=\"n\")?>\d*</td>", r"\1<td>ID</td>", text)
        else:
            found[rel] = path.read_bytes()
    return found


def _answer_on_instances(study: Study, title: str) -> int:
    """Each annotator votes on every task of ``title`` on their own instance, as themselves (:func:`_answer`);
    the annotations made."""
    made = 0
    for email, instance in zip((ANN, BEN), study.instances, strict=True):
        api = study.api(email, instance)
        (project,) = [p for p in api.get("/api/projects/").json()["results"] if p["title"] == title]
        tasks = api.get("/api/tasks/", params={"project": project["id"], "page_size": 100, "fields": "all"})
        for task in tasks.json()["tasks"]:
            answer = api.post(f"/api/tasks/{task['id']}/annotations/", json={"result": _answer(email, task),
                                                                              "lead_time": 3})  # fmt: skip
            assert answer.status_code == 201, answer.text[:300]
            made += 1
    return made


def _as_shared(study: Study, label_studio: LiveServer, client: LabelStudioClient, folder: Path, title: str,
               names: tuple[str, ...], *push: str) -> None:  # fmt: skip
    """The isolated study ``title`` once more in ``folder`` (its files ``names``, the definition, the input, then
    any the options ``push`` name, copied from the study's), on the session's shared server with an overlap of two:
    both annotators vote on every task as on their instances, then pull and report, into ``folder/alike`` and
    ``folder/alike-report``."""
    folder.mkdir()
    for name in names:
        (folder / name).write_bytes((study.folder / name).read_bytes())
    env = {"LABEL_STUDIO_URL": label_studio.url, "LABEL_STUDIO_API_KEY": label_studio.api_key, "ANNOLS_DATA_DIR": None}

    def shared_cli(*args: str) -> None:
        code, out, err = invoke(env, *args, cwd=folder)
        assert code == 0, err + out

    # The same study: its secret, from which push draws each task's shown order, is the isolated push's
    # (a push draws a new one for a study it has no manifest of); a manifest of the header alone passes it.
    headers = [manifest.read_header(manifest.manifest_path(isolate.instance_manifest_dir(
        study.folder / ".annols", title, i), title)) for i in study.instances]  # fmt: skip
    header = headers[0]
    assert header is not None and header["secret"]
    assert all(h is not None and h["secret"] == header["secret"] for h in headers)  # one study on every instance
    own = manifest.manifest_path(folder / ".annols", title)
    own.parent.mkdir()
    # The isolated study's secret and placement scheme: the same tasks, placed and sent alike.
    own.write_text(json.dumps({"protocol": header["protocol"], "version": header["version"],
                               "secret": header["secret"], "placement": header["placement"]}) + "\n",
                   encoding="utf-8")  # fmt: skip
    shared_cli("push", *names[:2], "--project", title, "--overlap", "2", *push)
    project = client.find_project(title)
    assert project is not None
    known = client.users()
    ids = {e: known.get(e) or client.create_user(e) for e in (ANN, BEN)}
    for email in (ANN, BEN):
        for task in client.export_tasks(project.id):
            client.create_annotation(int(task["id"]), _answer(email, task), completed_by=ids[email], lead_time=3.0)
    shared_cli("pull", names[0], "--project", title, "-o", "alike", "--strict")
    shared_cli("report", names[0], "alike", "-o", "alike-report")


def _compare(isolated: Path, shared: Path, title: str, folders: tuple[str, ...] = ("alike", "alike-report")) -> None:
    """The isolated and the shared run's ``folders`` hold the same files, but for what differs between runs."""
    with open(shared / "alike" / "results.csv", encoding="utf-8") as f:
        annotators = {r["annotator"] for r in csv.DictReader(f)}
    assert {ANN, BEN} <= annotators
    for folder in folders:
        isolated_files = _normalised(isolated / folder, annotators, title)
        shared_files = _normalised(shared / folder, annotators, title)
        assert sorted(isolated_files) == sorted(shared_files)
        different = [name for name in isolated_files if isolated_files[name] != shared_files[name]]
        assert not different, [(n, _first_difference(isolated_files[n], shared_files[n])) for n in different]


def test_isolated_mode_gives_the_files_of_shared_mode(
    study: Study, label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    """The same study, the same two annotators giving the same answers to the same tasks, once on one
    instance each (push/pull --isolate) and once on the session's shared server: pull and report write
    the same files, but for Label Studio's ids, timestamps, URLs and lead times."""
    # Isolated: pushed to both instances, each annotator votes on their own as themselves.
    code, out, err = cli("push", "headlines.toml", "study.jsonl", "--project", ALIKE, "--isolate", "instances.toml",
                         "--password-file", "passwords.txt", cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    _answer_on_instances(study, ALIKE)
    code, out, err = cli("pull", "headlines.toml", "--project", ALIKE, "-o", "alike", "--isolate", "instances.toml",
                         "--strict", cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    code, out, err = cli("report", "headlines.toml", "alike", "-o", "alike-report", cwd=study.folder)
    assert code == 0, err + out

    # Shared: the same files in a folder of its own, pushed to the shared server with an overlap of two.
    shared = tmp_path / "shared"
    _as_shared(study, label_studio, client, shared, ALIKE, ("headlines.toml", "study.jsonl"))
    with open(shared / "alike" / "results.csv", encoding="utf-8") as f:
        assert {r["annotator"] for r in csv.DictReader(f)} == {ANN, BEN}
    _compare(study.folder, shared, ALIKE)


def _first_difference(a: object, b: object) -> tuple[object, object]:
    if isinstance(a, list) and isinstance(b, list):
        return next(((x, y) for x, y in zip(a, b, strict=False) if x != y), (len(a), len(b)))
    if isinstance(a, bytes) and isinstance(b, bytes):
        at = next((n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b)))
        return a[max(0, at - 80) : at + 80], b[max(0, at - 80) : at + 80]
    return a, b


# --- each task to some of the instances (--overlap K) -----------------------------------------

SHARED = "isolated and shared out"  # a new study on the same two instances


def test_overlap_one_sends_each_task_to_one_instance(study: Study) -> None:
    """push --isolate --overlap 1 on the module's two instances: each task goes to exactly one of them (the two
    sets disjoint, covering the study, as the study file records and each instance's project holds), a re-push
    sends nothing and another K or seed is refused; status counts each task once against one judgment; the
    merged pull holds each task once with its one annotator, and the report reads it."""
    push = ("push", "headlines.toml", "study.jsonl", "--project", SHARED, "--isolate", "instances.toml")
    code, out, err = cli(*push, "--overlap", "1", "--password-file", "passwords.txt", cwd=study.folder)
    assert code == 0, err + out
    assert "each task on 1 of them (seed 0)" in out
    record = json.loads(isolate.study_file(study.folder / ".annols", SHARED).read_text(encoding="utf-8"))
    assert (record["overlap"], record["seed"], record["annotators"]) == (1, 0, [ANN, BEN])
    assignment = record["assignment"]
    assert len(assignment) == TASKS and all(len(who) == 1 for who in assignment.values())
    mine = {email: {k for k, who in assignment.items() if who == [email]} for email in (ANN, BEN)}
    assert not mine[ANN] & mine[BEN] and len(mine[ANN] | mine[BEN]) == TASKS
    assert abs(len(mine[ANN]) - len(mine[BEN])) <= 1
    projects = {}
    for email, instance in zip((ANN, BEN), study.instances, strict=True):
        (line,) = [x for x in out.splitlines() if x.startswith(f"{email}: ")]
        n = len(mine[email])
        assert f": created {n}, already present 0, total {n}; account " in line, line  # made or kept
        path = manifest.manifest_path(isolate.instance_manifest_dir(study.folder / ".annols", SHARED, instance), SHARED)
        assert {r["key"] for r in manifest.read_rows(path)[1]} == mine[email]
        api = study.api(email, instance)
        (project,) = [p for p in api.get("/api/projects/").json()["results"] if p["title"] == SHARED]
        assert project["task_number"] == n
        projects[email] = (api, project["id"])

    code, out, err = cli(*push, cwd=study.folder)  # the recorded K
    assert code == 0, err + out
    assert sum(f"created 0, already present {len(mine[e])}, total {len(mine[e])}" in line
               for e in (ANN, BEN) for line in out.splitlines() if line.startswith(f"{e}: ")) == 2, out  # fmt: skip
    assert json.loads(isolate.study_file(study.folder / ".annols", SHARED).read_text(encoding="utf-8")) == record
    for extra in (("--overlap", "2"), ("--seed", "1")):
        code, out, err = cli(*push, *extra, cwd=study.folder)
        assert code != 0 and len(err.strip().splitlines()) == 1, err + out
        assert "drawn with --overlap 1 --seed 0" in err, err

    def status() -> dict[str, int]:
        code, out, err = cli("status", "headlines.toml", "--project", SHARED, "--isolate", "instances.toml", "--json",
                             cwd=study.folder)  # fmt: skip
        assert code == 0, err + out
        found = json.loads(out)
        return {k: found[k] for k in ("tasks", "overlap", "annotations", "complete", "short", "missing")}

    assert status() == {"tasks": TASKS, "overlap": 1, "annotations": 0, "complete": 0, "short": TASKS,
                        "missing": TASKS}  # fmt: skip
    api, pid = projects[ANN]
    for task in api.get("/api/tasks/", params={"project": pid, "page_size": 100}).json()["tasks"]:
        assert api.post(f"/api/tasks/{task['id']}/annotations/", json={"result": vote("1"), "lead_time": 3}).is_success
    n = len(mine[ANN])
    assert status() == {"tasks": TASKS, "overlap": 1, "annotations": n, "complete": n, "short": TASKS - n,
                        "missing": TASKS - n}  # fmt: skip
    api, pid = projects[BEN]
    for task in api.get("/api/tasks/", params={"project": pid, "page_size": 100}).json()["tasks"]:
        assert api.post(f"/api/tasks/{task['id']}/annotations/", json={"result": vote("2"), "lead_time": 3}).is_success
    assert status() == {"tasks": TASKS, "overlap": 1, "annotations": TASKS, "complete": TASKS, "short": 0,
                        "missing": 0}  # fmt: skip

    code, out, err = cli("pull", "headlines.toml", "--project", SHARED, "-o", "shared-out", "--isolate",
                         "instances.toml", "--strict", cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    assert f"Merged 2 instances: {TASKS} tasks, {TASKS} annotations, 0 skipped." in out
    pulled = study.folder / "shared-out"
    with open(pulled / "results.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert sorted(r["task_key"] for r in rows) == sorted(assignment)  # each task once
    assert {r["task_key"]: [r["annotator"]] for r in rows} == assignment  # with its one annotator
    assert {r["answer"] for r in rows if r["annotator"] == BEN} == {"2"}
    assert json.loads((pulled / PROJECT_FILE).read_text(encoding="utf-8"))["overlap"] == 1

    code, out, err = cli("report", "headlines.toml", "shared-out", "-o", "shared-report", cwd=study.folder)
    assert code == 0, err + out
    report = (study.folder / "shared-report" / "report.md").read_text(encoding="utf-8")
    assert "sysa" in report and "sysb" in report and f"{TASKS} items" in out


# --- hidden judges and hybrid studies ---------------------------------------------------------

HYBRID = "isolated hybrid"  # a new study on the same two instances
JUDGE = "copycat"
HYBRID_RECORDS = 12


def _hybrid_files(study: Study) -> list[str]:
    """Twelve records shaped as the module's (so that :func:`_answer` votes on them) and a judge answering each
    as the first annotator would, in the input's order (candidate 1 is sysa); their task keys' draw."""
    records = [{"headline_1": f"First {i}", "headline_2": f"Second {i}", "systems": ["sysa", "sysb"], "id": f"r{i}"}
               for i in range(HYBRID_RECORDS)]  # fmt: skip
    (study.folder / "hybrid.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    lines = [{"id": f"r{i}", "judge": JUDGE, "answers": {"fluency": "1" if _prefers(ANN, i) == "sysa" else "2"}}
             for i in range(HYBRID_RECORDS)]  # fmt: skip
    (study.folder / "judge.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return ["headlines.toml", "hybrid.jsonl", "judge.jsonl"]


def _humans(study: Study, share: float, seed: int) -> frozenset[str]:
    from annols import protocols
    from annols.study import hybrid

    d = protocols.load(str(study.folder / "headlines.toml"))
    return hybrid.draw(d, [study.folder / "hybrid.jsonl"], share, seed).humans


def _instance_keys(study: Study, title: str, instance: isolate.Instance) -> set[str]:
    path = manifest.manifest_path(isolate.instance_manifest_dir(study.folder / ".annols", title, instance), title)
    return {str(r["key"]) for r in manifest.read_rows(path)[1]}


def test_a_hidden_judge_and_a_human_share_stay_off_every_instance_and_pull_like_shared_mode(
    study: Study, label_studio: LiveServer, client: LabelStudioClient, tmp_path: Path
) -> None:
    """push --isolate --judge --human-share 0.5: the drawn half of the items goes to both instances, nothing of the
    judge (its name, its answers, the judge-only items) to either; the judge is kept once, beside the study file; a
    re-push sends nothing and another seed, or none, is refused. Both annotators vote on their instance; pull
    --isolate adds the judge to the merged folder only, and the report has the judge-assisted (PPI++) estimates.
    The same inputs, judge and answers pushed, pulled and reported in shared mode give the same files."""
    names = _hybrid_files(study)
    push = ("push", "headlines.toml", "hybrid.jsonl", "--project", HYBRID, "--isolate", "instances.toml", "--judge",
            "judge.jsonl", "--human-share", "0.5", "--seed", "5")  # fmt: skip
    code, out, err = cli(*push, "--password-file", "passwords.txt", cwd=study.folder)
    assert code == 0, err + out
    half = HYBRID_RECORDS // 2
    assert f"hybrid study: humans get {half} of {HYBRID_RECORDS} items (share 0.5, seed 5)" in out
    store = hidden_judges.store_dir(study.folder / ".annols", HYBRID)
    assert f"judges {JUDGE} kept in {Path('.annols') / store.name} (not on any instance)" in out
    humans = _humans(study, 0.5, 5)
    assert len(humans) == half
    record = json.loads(isolate.study_file(study.folder / ".annols", HYBRID).read_text(encoding="utf-8"))
    assert record["hybrid"] == {"share": 0.5, "seed": 5, "items": HYBRID_RECORDS, "humans": half}
    # Kept once for the study, beside the study file; no instance's manifest folder holds any of it.
    assert store.parent == isolate.study_file(study.folder / ".annols", HYBRID).parent
    assert sorted(p.name for p in store.iterdir()) == ["judge.jsonl", "pool.jsonl", "project.json"]
    pool = [json.loads(line) for line in (store / "pool.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(pool) == half and not humans & {p["key"] for p in pool}
    instance_dirs = isolate.study_file(study.folder / ".annols", HYBRID).with_suffix("")
    assert not [p for p in instance_dirs.rglob("*") if "judge" in p.name or p.name == "pool.jsonl"]

    # Nothing of the judge on either server: each instance's full export (admin's view) holds the humans' half,
    # no prediction or annotation, no judge name, none of the judge-only items.
    only = [p["data"]["headline_1"] for p in pool]
    for instance in study.instances:
        assert _instance_keys(study, HYBRID, instance) == set(humans)
        admin = instance.connect()
        project = admin.find_project(HYBRID)
        assert project is not None
        export = tmp_path / f"{instance.slug}.json"
        admin.export_to(project.id, export)
        text = export.read_text(encoding="utf-8")
        tasks = json.loads(text)
        assert len(tasks) == half
        assert not any(t["predictions"] or t["annotations"] or t.get("drafts") for t in tasks)
        assert JUDGE not in text and "judge" not in text.lower()
        assert not any(f'"{headline}"' in text for headline in only)
        assert {tuple(t["meta"]) for t in tasks} == {("annols_key",)}

    code, out, err = cli(*push, cwd=study.folder)  # the same draw: nothing sent twice
    assert code == 0, err + out
    assert sum(f"created 0, already present {half}, total {half}" in line for line in out.splitlines()) == 2, out
    for other in (("--seed", "6"), ()):
        args = (*push[:-2], *other) if other else push[:7]  # another seed; no --judge nor --human-share
        code, out, err = cli(*args, cwd=study.folder)
        assert code != 0 and len(err.strip().splitlines()) == 1, err + out
        assert "records a hybrid draw of share 0.5 with seed 5 over 12 items" in err, err

    assert _answer_on_instances(study, HYBRID) == 2 * half
    run = study.folder / "hybrid-run"
    code, out, err = cli("pull", "headlines.toml", "--project", HYBRID, "-o", "hybrid-run/alike", "--isolate",
                         "instances.toml", "--strict", cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    assert f"Merged 2 instances: {half} tasks, {2 * half} annotations, 0 skipped." in out
    merged = run / "alike"
    assert sorted(p.name for p in (merged / "judges").iterdir()) == ["judge.jsonl", "pool.jsonl"]
    with open(merged / "results.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert {r["annotator"] for r in rows} == {ANN, BEN, f"judge:{JUDGE}"}
    assert {r["task_key"] for r in rows} == set(humans)
    for instance in study.instances:  # the instances' own pull folders: the server's, no judge
        own = merged / isolate.INSTANCES_DIR / instance.slug
        assert (own / "results.csv").is_file() and not (own / "judges").exists()
        assert JUDGE not in (own / "results.csv").read_text(encoding="utf-8")
    # From inside the run's folder: the report names its source as given, "alike" as in the shared run.
    code, out, err = cli("report", "../headlines.toml", "alike", "-o", "alike-report", cwd=run)
    assert code == 0, err + out
    report = (run / "alike-report" / "report.md").read_text(encoding="utf-8")
    assert "Judge-assisted estimates (PPI++)" in report
    assert f"{half} items have the judge's answers only, {half} the humans'" in report

    shared = tmp_path / "shared"
    _as_shared(study, label_studio, client, shared, HYBRID, tuple(names), "--judge", "judge.jsonl", "--human-share",
               "0.5", "--seed", "5")  # fmt: skip
    assert sorted(p.name for p in (shared / "alike" / "judges").iterdir()) == ["judge.jsonl", "pool.jsonl"]
    for name in ("judge.jsonl", "pool.jsonl"):  # the judges' files, byte for byte
        assert (merged / "judges" / name).read_bytes() == (shared / "alike" / "judges" / name).read_bytes()
    _compare(run, shared, HYBRID)  # and every other file of the pull and the report, less what runs differ in


def test_overlap_k_draws_over_the_human_share(study: Study) -> None:
    """push --isolate --overlap 1 --judge --human-share 0.5: the K-draw runs over the humans' items only; each goes
    to one instance, the judge-only items to none."""
    _hybrid_files(study)
    title = "isolated hybrid one each"
    code, out, err = cli("push", "headlines.toml", "hybrid.jsonl", "--project", title, "--isolate", "instances.toml",
                         "--judge", "judge.jsonl", "--human-share", "0.5", "--seed", "2", "--overlap", "1",
                         "--password-file", "passwords.txt", cwd=study.folder)  # fmt: skip
    assert code == 0, err + out
    humans = _humans(study, 0.5, 2)
    record = json.loads(isolate.study_file(study.folder / ".annols", title).read_text(encoding="utf-8"))
    assert record["hybrid"]["humans"] == HYBRID_RECORDS // 2 and record["overlap"] == 1
    assert set(record["assignment"]) == humans
    ann, ben = (_instance_keys(study, title, i) for i in study.instances)
    assert not ann & ben and ann | ben == humans and abs(len(ann) - len(ben)) <= 1
    assert {k: [ANN] if k in ann else [BEN] for k in humans} == record["assignment"]
