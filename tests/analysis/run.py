"""Running the analysis of a planted study: its sections and its tables by name."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from annols.analysis import style_sections
from annols.analysis.options import AnalysisOptions
from annols.analysis.results import Finding
from tests.analysis import planted

OPTIONS = AnalysisOptions(seed=7, bootstrap=300)


@dataclass
class Analysed:
    sections: list[Finding]

    def table(self, name: str) -> pd.DataFrame:
        found = [t.frame for s in self.sections for t in s.tables if t.name == name]
        assert len(found) == 1, name
        return found[0].reset_index(drop=True)

    def row(self, name: str, **match: object) -> pd.Series:
        frame = self.table(name)
        hit = frame[np.logical_and.reduce([frame[k] == v for k, v in match.items()])]
        assert len(hit) == 1, f"{name}: {match} matches {len(hit)} rows"
        return hit.iloc[0]

    def section(self, title: str) -> Finding:
        found = [s for s in self.sections if s.title == title]
        assert len(found) == 1, title
        return found[0]

    @property
    def names(self) -> set[str]:
        return {t.name for s in self.sections for t in s.tables}


def analyse(toml: str, study: planted.Study, tokens: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
            options: AnalysisOptions = OPTIONS) -> Analysed:  # fmt: skip
    frame, judged = planted.frames(study)
    return Analysed(style_sections(planted.definition(toml), frame, judged, options, tokens))
