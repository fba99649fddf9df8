"""``annols plan``'s ratings defaults are the figures of a real study (SQuALITY), scaled to each scale's range."""

from __future__ import annotations

import importlib.util
import tomllib
from types import ModuleType

import numpy as np
import pandas as pd  # type: ignore[import-untyped, unused-ignore]
import pytest

from annols import protocols
from annols.analysis.planning import plan
from annols.protocols import parse_definition
from tests.conftest import ROOT


def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("annols_script_plan_defaults", ROOT / "scripts" / "plan_defaults.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_ratings_defaults_are_the_studys_medians_as_shares_of_its_range() -> None:
    s = script()
    table = s.fits()
    assert len(table) == 9 and set(table["items"]) == {100} and set(table["reviewers"]) == {4}
    # Independent of the fits: the mean differences are the plain means of the paired differences in the file.
    frame = pd.read_csv(s.FIXTURE, dtype=str)
    assert len(frame) == 900
    ratings = frame.assign(overall=frame["overall"].astype(float), item=frame["passage"] + ":" + frame["question"])
    wide = ratings.pivot_table(index=["item", "reviewer"], columns="system", values="overall")
    row = table[(table["property"] == "overall") & (table["pair"] == "bart-dpr - bart")].iloc[0]
    assert row["mean"] == pytest.approx(float((wide["bart-dpr"] - wide["bart"]).dropna().mean()))
    medians = {k: float(np.median(table[k])) / 100 for k in ("item_sd", "annotator_sd", "residual_sd")}
    assert {k: round(v, 3) for k, v in medians.items()} == plan.STUDY_SHARES
    assert plan.DEFAULTS["ratings"] == {"effect": 0.3, **{k: round(v * 4, 4) for k, v in plan.STUDY_SHARES.items()}}


def test_each_scale_gets_the_shares_times_its_range() -> None:
    five = plan.assumptions(protocols.load(str(ROOT / "examples" / "summeval-ratings.toml")))
    slider = plan.assumptions(protocols.load(str(ROOT / "examples" / "wmt-da.toml")))
    assert (five.item_sd, five.annotator_sd, five.residual_sd, five.effect) == pytest.approx((0.54, 0.428, 0.888, 0.3))
    assert (slider.item_sd, slider.annotator_sd, slider.residual_sd, slider.effect) == pytest.approx(
        (13.5, 10.7, 22.2, 7.5))
    assert "SQuALITY" in plan.describe(five)[2]
    seven = parse_definition(tomllib.loads(
        'name = "seven"\nstyle = "ratings"\nsummary = "s"\nguideline = "g"\n'
        '[[candidates]]\nname = "a"\ntitle = "A"\n[[candidates]]\nname = "b"\ntitle = "B"\n'
        + "".join(f'[[answers]]\ncode = "{c}"\n' for c in range(1, 8))
        + '[[aspects]]\nname = "quality"\ntext = "Quality"\n'), "seven.toml")  # fmt: skip
    assert plan.scale_range(seven) == 6
    assert plan.assumptions(seven).item_sd == pytest.approx(0.135 * 6)


def test_the_doc_holds_the_scripts_table() -> None:
    s = script()
    text = (ROOT / "docs" / "statistics.md").read_text(encoding="utf-8")
    assert f"{s.START}\n{s.markdown(s.fits())}\n{s.END}" in text
