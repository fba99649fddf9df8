"""The report with an adjudication pull adds the study's tables from the adjudicated judgments.

A planted pairwise-aspects study (:func:`tests.report.study.pairwise`: A, B, C x 100
samples) and a planted adjudication pull: verdicts on samples 0..11, each aspect's code
set here (1, 2 and tie in turn), by a user who is none of the annotators. Expected,
counted here from the generator's truth: the ``adjudicated_`` tables are the style's
win / tie / loss counts over the judgments where samples 0..11 have the verdict as their
one judgment (annotator ``adjudicated``) and every other sample keeps A's, B's and C's;
the study's own tables are those of the report without the adjudication pull.
"""

from __future__ import annotations

import copy
import csv
import json
from collections import Counter
from pathlib import Path

from annols.protocols import load
from annols.report import ReportOptions
from tests.report import study
from tests.report.build import build_report
from tests.report.study import ASPECTS, CODES
from tests.report.test_study_numbers import close, pairwise_judgments, pct

ADJUDICATED = range(12)
TURN = ("1", "2", "0")


def table(out: Path, name: str) -> list[dict[str, str]]:
    with (out / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_adjudicated_tables_count_the_verdicts_instead_of_the_annotators(tmp_path: Path) -> None:
    gen = study.pairwise()
    pulls = study.write_pull(tmp_path / "pull", gen.tasks)
    by_sample = {int(t["meta"]["annols_key"].rsplit(":", 1)[1]): t for t in gen.tasks}
    verdicts, meant = [], {}
    for s in ADJUDICATED:
        task = copy.deepcopy(by_sample[s])
        task["meta"]["annols_adjudication"] = 1
        shown = gen.truth[(s, study.ANNOTATORS[0])]["shown"]
        result, meant[s] = [], {}
        for i, (name, _wording) in enumerate(ASPECTS):
            code = TURN[(s + i) % 3]
            meant[s][name] = "tie" if code == "0" else shown[[CODES[0], CODES[1]].index(code)]
            result.append({"id": f"v{s}{i}", "from_name": name, "to_name": "summary_1", "type": "choices",
                           "value": {"choices": [code]}, "origin": "manual"})  # fmt: skip
        task["annotations"] = [{"id": 7000 + s, "completed_by": 99, "result": result, "lead_time": 5.0,
                                "created_at": "2024-07-01T10:00:00.000000Z", "was_cancelled": False}]  # fmt: skip
        verdicts.append(task)
    adjudication = tmp_path / "adjudication"
    adjudication.mkdir()
    (adjudication / "export.json").write_text(json.dumps(verdicts), encoding="utf-8")
    definition = load("pairwise-aspects")
    with_verdicts, plain = tmp_path / "with", tmp_path / "plain"
    build_report(definition, [pulls], with_verdicts, ReportOptions(seed=3, bootstrap=200, adjudicated=(adjudication,)))
    build_report(definition, [pulls], plain, ReportOptions(seed=3, bootstrap=200))

    # The expected judgments: the verdict stands alone on samples 0..11.
    judgments = [j for j in pairwise_judgments(gen) if j[0] not in ADJUDICATED]
    for s in ADJUDICATED:
        system, opponent = sorted(gen.truth[(s, study.ANNOTATORS[0])]["shown"])
        for aspect, pick in meant[s].items():
            outcome = "tie" if pick == "tie" else ("win" if pick == system else "loss")
            judgments.append((s, "adjudicated", aspect, system, opponent, outcome))

    groups: Counter[tuple[str, str, str, str]] = Counter()
    per_annotator: Counter[tuple[str, str, str, str, str]] = Counter()
    for _, annotator, aspect, system, opponent, outcome in judgments:
        groups[(aspect, system, opponent, outcome)] += 1
        per_annotator[(annotator, aspect, system, opponent, outcome)] += 1
    rows = table(with_verdicts, "adjudicated_pairwise_win_tie_loss")
    assert len(rows) == 9
    for row in rows:
        key = (row["aspect"], row["system"], row["opponent"])
        wins, ties, losses = (groups[(*key, o)] for o in ("win", "tie", "loss"))
        assert (int(row["wins"]), int(row["ties"]), int(row["losses"])) == (wins, ties, losses), key
        assert int(row["judgments"]) == wins + ties + losses
        close(row["win %"], pct(wins, wins + ties + losses), "win %")
    rows = table(with_verdicts, "adjudicated_pairwise_annotators")
    assert {r["annotator"] for r in rows} == {*study.ANNOTATORS, "adjudicated"}
    for row in rows:
        key = (row["annotator"], row["aspect"], row["system"], row["opponent"])
        counts = tuple(per_annotator[(*key, o)] for o in ("win", "tie", "loss"))
        assert (int(row["wins"]), int(row["ties"]), int(row["losses"])) == counts, key
    assert sum(int(r["judgments"]) for r in rows if r["annotator"] == "adjudicated") == 3 * len(ADJUDICATED)

    # The study's own tables are untouched, and the adjudicated ones differ from them.
    for name in ("pairwise_win_tie_loss", "pairwise_annotators", "pairwise_agreement"):
        assert table(with_verdicts, name) == table(plain, name)
    assert table(with_verdicts, "adjudicated_pairwise_win_tie_loss") != table(plain, "pairwise_win_tie_loss")
    assert (with_verdicts / "tables" / "adjudicated_pairwise_agreement.csv").exists()
    assert not any(p.name.startswith("adjudicated_") for p in (plain / "tables").iterdir())
    md = (with_verdicts / "report.md").read_text(encoding="utf-8")
    assert "## Adjudicated: Win / tie / loss" in md and "## Adjudication" in md
