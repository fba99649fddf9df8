"""Span agreement between annotators of the same text (spans style, qa-feedback, summary-flaws).

For every item judged by two or more annotators, every pair of them is compared
(micro-averaged over all pairs of all items):

- exact F1: spans are (start, end, label); F1 = 2 x matches / (spans of one + spans of
  the other), a match being the same offsets and label (as a multiset);
- overlap F1: a span is matched when a span of the other annotator with the same label
  shares at least one character; precision and recall are the matched shares of each
  side's spans, F1 their harmonic mean;
- Krippendorff's alpha (nominal), token level, as the chance-corrected measure: the text
  is split into whitespace tokens, each annotator gives every token the label of the
  first span (by start) that overlaps it, or "none"; units are tokens. Per label the
  same with two values (that label / anything else).

Rows with "all labels" pool the labels (a match still needs the same label).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]

from annols.analysis.inference import stats
from annols.analysis.results import Table

TOKEN = re.compile(r"\S+")
ALL = "all labels"
SPAN_COLUMNS = ["uid", "task_key", "label", "start", "end"]


@dataclass
class SpanRows:
    """Spans of every annotation, plus each item's tokens, collected while the exports stream."""

    labels: Sequence[str]
    spans: list[tuple[int, str, str, int, int]] = field(default_factory=list)
    tokens: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)  # key -> (starts, ends)

    def add(self, uid: int, key: str, text: str, spans: Sequence[tuple[str, int, int]]) -> None:
        if key not in self.tokens:
            found = [(m.start(), m.end()) for m in TOKEN.finditer(text)]
            self.tokens[key] = (np.array([s for s, _ in found], dtype=np.int64),
                                np.array([e for _, e in found], dtype=np.int64))  # fmt: skip
        self.spans.extend((uid, key, label, start, end) for label, start, end in spans if 0 <= start < end)


def _pairs(kept: pd.DataFrame) -> pd.DataFrame:
    """Every pair of counted annotations of the same item: uid_x, uid_y (annotator x < y)."""
    ann = kept[["uid", "task_key", "annotator"]]
    pairs = ann.merge(ann, on="task_key")
    return pairs[pairs["annotator_x"] < pairs["annotator_y"]][["task_key", "uid_x", "uid_y"]].reset_index(drop=True)


def _f1_counts(spans: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    """Per label: spans on each side, exact matches, overlap-matched spans on each side."""
    pairs = pairs.assign(pair=np.arange(len(pairs)))
    x = pairs.merge(spans.rename(columns={"uid": "uid_x"}), on=["task_key", "uid_x"])
    y = pairs.merge(spans.rename(columns={"uid": "uid_y"}), on=["task_key", "uid_y"])
    x = x.assign(span=np.arange(len(x)))
    y = y.assign(span=np.arange(len(y)))
    keys = ["pair", "label", "start", "end"]
    cx = x.groupby(keys).size().rename("nx")
    cy = y.groupby(keys).size().rename("ny")
    exact = pd.concat([cx, cy], axis=1, join="inner").min(axis=1).groupby(level="label").sum()
    both = x.merge(y, on=["pair", "label"], suffixes=("_x", "_y"))
    both = both[(both["start_x"] < both["end_y"]) & (both["start_y"] < both["end_x"])]
    out = pd.DataFrame({
        "spans x": x.groupby("label").size(),
        "spans y": y.groupby("label").size(),
        "exact": exact,
        "matched x": both.groupby("label")["span_x"].nunique(),
        "matched y": both.groupby("label")["span_y"].nunique(),
    })  # fmt: skip
    return out.fillna(0)


def _token_labels(rows: SpanRows, kept: pd.DataFrame, spans: pd.DataFrame, values: dict[str, int]) -> np.ndarray:
    """Units (tokens of items with two or more judgments) x values: how many annotators gave each.

    Vectorised: the tokens of all items are laid end to end (each item's offsets shifted
    past the previous item's text), so one ``searchsorted`` finds every span's tokens.
    """
    judged = kept.groupby("task_key")["uid"].size()
    judged = judged[judged >= 2]
    empty = np.zeros(0, dtype=np.int64)
    token_arrays = [rows.tokens.get(str(k), (empty, empty)) for k in judged.index]
    lengths = np.array([len(t[0]) for t in token_arrays], dtype=np.int64)
    width = np.array([int(t[1][-1]) + 1 if len(t[1]) else 1 for t in token_arrays], dtype=np.int64)
    base = np.concatenate([[0], np.cumsum(width)[:-1]]).astype(np.int64)
    first_token = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    starts = np.concatenate([t[0] + b for t, b in zip(token_arrays, base, strict=True)] or [empty])
    ends = np.concatenate([t[1] + b for t, b in zip(token_arrays, base, strict=True)] or [empty])
    n_values = len(values) + 1
    counts = np.zeros((len(starts), n_values), dtype=np.int64)
    counts[:, 0] = np.repeat(judged.to_numpy(), lengths)  # everyone says "none" ...
    item = spans["task_key"].map({k: i for i, k in enumerate(judged.index)})
    ordered = spans[item.notna()].assign(item=item[item.notna()].astype(np.int64))
    ordered = ordered.sort_values(["uid", "start", "end"], kind="stable")
    i = ordered["item"].to_numpy()
    lo = np.maximum(np.searchsorted(ends, ordered["start"].to_numpy() + base[i], side="right"), first_token[i])
    hi = np.minimum(np.searchsorted(starts, ordered["end"].to_numpy() + base[i], side="left"), first_token[i + 1])
    n = np.maximum(hi - lo, 0)
    token = np.repeat(lo, n) + np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
    covered = pd.DataFrame({
        "uid": np.repeat(ordered["uid"].to_numpy(), n),
        "token": token,
        "value": np.repeat(ordered["label"].map(values).to_numpy(dtype=np.int64), n),
    }).drop_duplicates(["uid", "token"], keep="first")  # spans in start order: the first one wins  # fmt: skip
    # ... except the labelled tokens, which move from "none" to their label.
    flat = np.bincount(covered["token"].to_numpy() * n_values + covered["value"].to_numpy(),
                       minlength=counts.size).reshape(counts.shape)  # fmt: skip
    counts += flat
    counts[:, 0] -= flat.sum(axis=1)
    return counts


def agreement_table(name: str, rows: SpanRows, kept: pd.DataFrame) -> Table:
    """Exact and overlap F1 and token-level alpha, per label and for all labels."""
    spans = pd.DataFrame(rows.spans, columns=SPAN_COLUMNS)
    spans = spans[spans["uid"].isin(kept["uid"]) & spans["label"].isin(rows.labels)]
    pairs = _pairs(kept)
    counts = _f1_counts(spans, pairs).reindex(list(rows.labels)).fillna(0)
    counts.loc[ALL] = counts.sum()
    values = {label: i + 1 for i, label in enumerate(rows.labels)}
    units = _token_labels(rows, kept, spans, values)
    alphas = {ALL: stats.krippendorff_alpha(units, "nominal")}
    for label, i in values.items():
        binary = np.stack([units.sum(axis=1) - units[:, i], units[:, i]], axis=1)
        alphas[label] = stats.krippendorff_alpha(binary, "nominal")
    total = counts["spans x"] + counts["spans y"]
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = np.where(total > 0, 2 * counts["exact"] / total, np.nan)
        p = counts["matched x"] / counts["spans x"]
        r = counts["matched y"] / counts["spans y"]
        overlap = np.where((p + r) > 0, 2 * p * r / (p + r), np.nan)
    table = pd.DataFrame({
        "label": counts.index,
        "annotator pairs": len(pairs),
        "spans": total.astype(int).to_numpy(),
        "exact matches": counts["exact"].astype(int).to_numpy(),
        "exact F1": exact,
        "overlap F1": overlap,
        "token alpha": [alphas[label] for label in counts.index],
    })  # fmt: skip
    table["token units"] = int((units.sum(axis=1) >= 2).sum())
    return Table(name, "Span agreement between annotators of the same item", table)


AGREEMENT_NOTE = (
    "Every pair of annotators of an item is compared, micro-averaged. Exact F1: same offsets and label. "
    "Overlap F1: a span counts as found when the other annotator has a span with the same label sharing a "
    "character. Token alpha: Krippendorff's alpha (nominal) over whitespace tokens labelled with the first "
    "span covering them or none; per label, that label against everything else. 'spans' counts both sides."
)
