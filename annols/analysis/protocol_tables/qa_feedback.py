"""qa-feedback: error types, missing information, evidence sizes, span agreement, from the judgments table.

Counts what the result files hold (:func:`annols.formats.qa_feedback.feedback_from_result`),
with the dataset's error type names (``Redundant`` for Repetitive, ``Wrong-Grounding`` for
Inconsistent Fact, ...). A response is one counted judgment of one task's prediction.

- Error types: the ``span`` rows of the prediction's labels, per type, and the share of
  responses with at least one.
- Missing information: an entry is a group of passage regions joined by links (the
  runs of one entry), typed by the region the links start from; its sentences are the
  passage sentences its regions cover.
- Evidence sizes: sentences cited by each Wrong-Grounding error (its ``evidence``
  span-answers from the first passage cited) and by each missing-information entry.
- Corrected prediction: the text answer, counted as answered.
- Span agreement over the error spans (:mod:`annols.analysis.raters.span_agreement`), when items
  have two or more annotators.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis import results
from annols.analysis.by_style.spans import EACH_NOTE, each_annotator
from annols.analysis.raters import span_agreement
from annols.analysis.results import Finding, Table, percent
from annols.definition import Definition
from annols.formats.qa_feedback import CORRECTED, ERROR_LABELS, EVIDENCE, MISSING_LABELS, STORED_ERRORS, STORED_MISSING

ANY_ERROR = "any error"
ANY_MISSING = "any missing information"
# The style's sections these tables restate (the same statistics): left out of the report.
RESTATED = ("Span agreement",)
_EVIDENCE = re.compile(r"^P(\d+):S(\d+)$")


def sections(definition: Definition, tidy: pd.DataFrame, judged: pd.DataFrame | None,
             tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None) -> list[Finding]:  # fmt: skip
    """``judged``: every counted annotation (uid, task_key, annotator); ``tokens``: each prediction's
    whitespace tokens by item key, for token alpha."""
    if judged is None:
        raise ValueError("the qa-feedback sections need the counted annotations (judged)")
    spec = definition.spec
    responses = len(judged)
    errors = _errors(tidy, spec.labels_name)
    missing = _missing(tidy, {f"{p.name}_labels" for p in spec.context if p.kind == "paragraphs"})
    corrected = tidy.loc[(tidy["kind"] == "text") & (tidy["question"] == CORRECTED), "uid"].nunique()
    error_table = _by_type(errors, ERROR_LABELS, ANY_ERROR, responses, "spans", "qa_error_types",
                           "Error spans per type")  # fmt: skip
    missing_table = _by_type(missing, MISSING_LABELS, ANY_MISSING, responses, "entries", "qa_missing_info",
                             "Missing information per type")  # fmt: skip
    missing_table.frame.insert(3, "sentences", [
        int(missing.loc[missing["type"] == t, "sentences"].sum()) if t != ANY_MISSING
        else int(missing["sentences"].sum()) for t in missing_table.frame["type"]])  # fmt: skip
    overview = pd.DataFrame({
        "measure": ["responses judged", "with at least one error span", "with missing information",
                    "with a corrected prediction"],
        "responses": [responses, errors["uid"].nunique(), missing["uid"].nunique(), corrected],
    })  # fmt: skip
    overview["responses %"] = percent(overview["responses"], responses)
    intro = [
        f"{responses} responses judged (one per item and annotator). Types use the dataset's names "
        "(label: the name annotators saw). A response counts once per type however many spans it has."
    ]
    counts = error_table.frame[error_table.frame["type"] != ANY_ERROR]
    gaps = missing_table.frame[missing_table.frame["type"] != ANY_MISSING]
    plot = results.bars(
        "qa_feedback_counts",
        "Error spans and missing-information entries per type",
        [*counts["type"], *gaps["type"]],
        [*counts["spans"], *gaps["entries"]],
        "count",
    )
    out = [
        Finding("Feedback", intro, [Table("qa_responses", "Responses", overview), error_table, missing_table],
                [plot]),
        Finding("Evidence sizes", ["Sentences cited as evidence: by each Wrong-Grounding (Inconsistent Fact) "
                                   "error, and by each missing-information entry."],
                [_evidence(errors, missing)]),
    ]  # fmt: skip
    if (judged.groupby("task_key").size() >= 2).any():
        rows = span_agreement.SpanRows(labels=tuple(ERROR_LABELS), tokens=dict(tokens or {}))
        found = errors[(errors["start"] >= 0) & (errors["start"] < errors["end"])]
        rows.spans = list(found[["uid", "task_key", "type", "start", "end"]].itertuples(index=False, name=None))
        spans = pd.DataFrame(rows.spans, columns=span_agreement.SPAN_COLUMNS)
        each = each_annotator(spans, judged, list(tuple(ERROR_LABELS)), "qa_span_agreement_annotators")
        out.append(Finding("Span agreement", [span_agreement.AGREEMENT_NOTE, EACH_NOTE],
                           [span_agreement.agreement_table("qa_span_agreement", rows, judged), each]))  # fmt: skip
    return out


def _errors(tidy: pd.DataFrame, labels_name: str) -> pd.DataFrame:
    """The error spans (uid, task_key, type, start, end, evidence), in result order; ``type`` the dataset's name."""
    part = tidy[(tidy["kind"] == "span") & (tidy["question"] == labels_name) & tidy["value"].isin(STORED_ERRORS)]
    errors = pd.DataFrame({
        "uid": part["uid"].to_numpy(),
        "task_key": part["task_key"].astype(str).to_numpy(),
        "type": part["value"].astype(str).map(STORED_ERRORS).to_numpy(),
        "start": part["start"].astype(int).to_numpy(),
        "end": part["end"].astype(int).to_numpy(),
    })  # fmt: skip
    cited: dict[tuple[int, str], list[str]] = {}
    answers = tidy[(tidy["kind"] == "span-answer") & (tidy["question"] == EVIDENCE)]
    for uid, region, code in zip(answers["uid"], answers["region"].astype(str), answers["value"], strict=True):
        cited.setdefault((int(uid), region), []).append(str(code))
    regions = part["region"].astype(str).to_numpy()
    errors["evidence"] = [_evidence_size(cited.get((int(u), r), [])) if t == "Wrong-Grounding" else 0
                          for u, r, t in zip(errors["uid"], regions, errors["type"], strict=True)]  # fmt: skip
    return errors


def _evidence_size(choices: list[str]) -> int:
    """Sentences a Wrong-Grounding explanation cites: its evidence choices from the first passage cited."""
    refs = [(int(m[1]), int(m[2])) for c in choices if (m := _EVIDENCE.match(c))]
    return sum(1 for p, _ in refs if p == refs[0][0]) if refs else 0


def _missing(tidy: pd.DataFrame, controls: set[str]) -> pd.DataFrame:
    """The missing-information entries (uid, type, sentences): passage regions grouped by their links."""
    rows: list[tuple[int, str, int]] = []
    part = tidy[tidy["kind"].isin(["span", "link"]) & tidy["question"].isin(controls)]
    for uid, mine in part.groupby("uid", sort=False):
        rows += [(int(uid), kind, size) for kind, size in _entries(mine)]
    return pd.DataFrame(rows, columns=["uid", "type", "sentences"])


def _entries(rows: pd.DataFrame) -> list[tuple[str, int]]:
    """One annotation's entries (type, sentences), as :func:`annols.formats.qa_feedback.feedback_from_result`
    groups them: regions joined by links, the group's first region not linked to typing it."""
    spans = rows[rows["kind"] == "span"].drop_duplicates("region")  # a region's first label
    regions = {str(r): (str(v), int(s), int(e)) for r, v, s, e in
               zip(spans["region"], spans["value"], spans["start"], spans["end"], strict=True)}  # fmt: skip
    order = {r: i for i, r in enumerate(regions)}
    parent = {r: r for r in regions}

    def root(region: str) -> str:
        while parent[region] != region:
            region = parent[region]
        return region

    targets: set[str] = set()
    links = rows[rows["kind"] == "link"]
    for a, b in zip(links["region"].astype(str), links["value"].astype(str), strict=True):
        if a in regions and b in regions and a != b:
            targets.add(b)
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb, key=order.__getitem__)] = min(ra, rb, key=order.__getitem__)
    groups: dict[str, list[str]] = {}
    for region in regions:
        groups.setdefault(root(region), []).append(region)
    out = []
    for members in groups.values():
        heads = [r for r in members if r not in targets]
        head = heads[0] if heads else members[0]
        kind = STORED_MISSING.get(regions[head][0])
        # paragraph indexes, end one past the last: the sentences covered, each run counted in full
        covered = sum(max(max(s, e - 1) - max(min(s, e - 1), 0) + 1, 0) for _, s, e in (regions[r] for r in members))
        if kind is not None and covered:
            out.append((kind, covered))
    return out


def _by_type(frame: pd.DataFrame, labels: dict[str, str], any_row: str, responses: int, count: str, name: str,
             title: str) -> Table:  # fmt: skip
    rows = []
    for kind, label in labels.items():
        part = frame[frame["type"] == kind]
        rows.append((kind, label, len(part), part["uid"].nunique()))
    rows.append((any_row, "", len(frame), frame["uid"].nunique()))
    table = pd.DataFrame(rows, columns=["type", "label", count, "responses"])
    table["responses %"] = percent(table["responses"], responses)
    return Table(name, title, table)


def _evidence(errors: pd.DataFrame, missing: pd.DataFrame) -> Table:
    groups = [("Wrong-Grounding evidence", errors.loc[errors["type"] == "Wrong-Grounding", "evidence"])]
    groups += [(kind, missing.loc[missing["type"] == kind, "sentences"]) for kind in MISSING_LABELS]
    rows = []
    for kind, sizes in groups:
        values = sizes.to_numpy(dtype=float)
        has = len(values) > 0
        rows.append((kind, len(values), int((values == 0).sum()), float(values.mean()) if has else np.nan,
                     float(np.median(values)) if has else np.nan, int(values.max()) if has else 0))  # fmt: skip
    columns = ["cited by", "entries", "without evidence", "mean sentences", "median sentences", "max sentences"]
    return Table("qa_evidence_sizes", "Evidence sizes (sentences cited)", pd.DataFrame(rows, columns=columns),
                 whole=("median sentences",))  # fmt: skip
