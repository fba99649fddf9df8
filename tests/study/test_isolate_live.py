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
import os
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from playwright.sync_api import Browser

from annols.cli import main
from annols.errors import InputError, ServerError
from annols.labelstudio import server, users
from annols.study import isolate
from tests.browser.conftest import VIEWPORT, Annotator, LabelingView
from tests.conftest import LiveServer
from tests.definition.test_definition import MINIMAL
from tests.labelstudio.test_incremental import vote

pytestmark = pytest.mark.server

TITLE = "isolated headlines"
ANN, BEN = "ann@example.org", "ben@example.org"
TASKS = 5
# The shared server's settings must not leak into an isolated command: each instance comes from the file.
NO_SERVER = {"LABEL_STUDIO_URL": None, "LABEL_STUDIO_API_KEY": None, "ANNOLS_DATA_DIR": None}


def cli(*args: str, cwd: Path) -> tuple[int, str, str]:
    old = os.getcwd()
    os.chdir(cwd)
    try:
        result = CliRunner(env=NO_SERVER).invoke(main, list(args))
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


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
            keys.add(view.task_key)
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
        (*push, "--isolate", "instances.toml", "--url", "http://x"): "leave out --judge, --url and --api-key",
        (*push, "--isolate", "instances.toml", "--overlap", "2"): "its overlap is 1, not 2",
        (*push, "--isolate", "instances.toml"): "needs its API token in the environment variable ANNOLS_TEST_UNSET_KEY",
        ("server", "start", "--annotator", "a@example.org"): "needs both --annotator EMAIL",
    }
    for args, message in cases.items():
        code, _, err = cli(*args, cwd=tmp_path)
        assert code != 0 and message in err, (args, err)
        assert len(err.strip().splitlines()) <= 3 and "Traceback" not in err, err
