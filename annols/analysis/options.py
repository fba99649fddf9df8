"""What the analyses read besides the judgments: the bootstrap's resamples and seed."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AnalysisOptions:
    seed: int = 0  # of the bootstrap
    bootstrap: int = 1000  # resamples; 0 turns intervals off
