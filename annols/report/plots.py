"""The report's figures, drawn with matplotlib into PNG bytes.

Figures are made with :class:`matplotlib.figure.Figure` and its Agg canvas directly,
never through pyplot, so no global backend or figure state is touched and nothing needs
a display. PNGs carry no timestamp or software tag, so the same data give the same bytes.

The analyses return each figure as plain data (:class:`~annols.analysis.results.Figure`:
what to draw); :func:`png` draws it when the report writes it: matplotlib (about 27 MB) is
imported then, after the analyses have let their tables go, not beside them.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Sequence
from typing import Any, cast

from annols.analysis.results import BARS, INTERVALS, PALETTE, STACKED_BARS, Estimates, Figure, Panel


def png(figure: Figure) -> bytes:
    """The figure drawn, as PNG bytes."""
    if figure.kind == STACKED_BARS:
        panels = cast(tuple[Panel, ...], figure.panels)
        return _stacked_bars(figure.title, panels, figure.legend, figure.colors, figure.xlabel)
    if figure.kind == BARS:
        (bars,) = cast(tuple[Panel, ...], figure.panels)
        return _bars(figure.title, bars.rows, bars.segments[0], figure.xlabel)
    if figure.kind == INTERVALS:
        return _intervals(figure.title, cast(tuple[Estimates, ...], figure.panels), figure.xlabel)
    raise ValueError(f"no drawing for a figure of kind {figure.kind!r}")


def _figure(**options: Any) -> Any:
    from matplotlib.figure import Figure  # here: see the module's note

    return Figure(**options)


def _png(fig: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a glyph missing from the font (emoji in a name)
        fig.savefig(buffer, format="png", dpi=100, metadata={"Software": None})
    return buffer.getvalue()


def _font(bars: int) -> dict[str, float]:
    """Tick label options for bars thinned to fit :data:`MAX_HEIGHT`: a smaller font; none (matplotlib's) else."""
    room = (MAX_HEIGHT - 1.2) / (INCH_PER_BAR * max(1, bars))
    return {} if room >= 1 else {"fontsize": max(5.0, 10.0 * room)}


def _short(label: str, width: int = 48) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


def _stacked_bars(title: str, panels: Sequence[Panel], segment_names: Sequence[str], colors: Sequence[str],
                  xlabel: str) -> bytes:  # fmt: skip
    fig, grid = _panels([len(p.rows) for p in panels])
    two = _two_columns([len(p.rows) for p in panels])
    for ax, panel in zip(grid, panels, strict=True):
        y = list(range(len(panel.rows)))[::-1]
        left = [0.0] * len(panel.rows)
        for k, values in enumerate(panel.segments):
            clean = [0.0 if v != v else float(v) for v in values]  # nan -> 0
            ax.barh(y, clean, left=left, color=colors[k % len(colors)], label=segment_names[k], height=0.7)
            left = [a + b for a, b in zip(left, clean, strict=True)]
        ax.set_yticks(y, [_short(r) for r in panel.rows], **_font(_column_bars(panels)))
        if two:  # a short panel beside a long one: its bars at the top, no empty band between them
            ax.set_ylim(len(panel.rows) - 0.4 - max(len(q.rows) for q in panels), len(panel.rows) - 0.4)
            ax.set_xlabel(xlabel)
        ax.set_xlim(0, 100)
        ax.set_title(_short(panel.title, 90), fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
    if not two:
        grid[-1].set_xlabel(xlabel)
    handles, labels = grid[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", ncol=min(len(labels), 6), fontsize=9, frameon=False)
    fig.suptitle(_short(title, 90), x=0.01, ha="left", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.94))
    return _png(fig)


MAX_HEIGHT = 16.0  # inches (1,600 pixels): a figure of many systems fits a page
GRID_ROWS = 24  # panels with more bars than this in all are laid out two a row
INCH_PER_BAR = 0.38


def _column_bars(panels: Sequence[Panel] | Sequence[Estimates]) -> int:
    """The bars stacked in one column of :func:`_panels`' figure (of the tallest panel in each row of two)."""
    sizes = [max(1, len(p.rows)) for p in panels]
    return sum(max(sizes[i : i + 2]) for i in range(0, len(sizes), 2)) if _two_columns(sizes) else sum(sizes)


def _two_columns(sizes: Sequence[int]) -> bool:
    return len(sizes) > 1 and sum(max(1, n) for n in sizes) > GRID_ROWS


def _panels(sizes: Sequence[int], sharex: bool = False) -> tuple[Any, list[Any]]:
    """A figure of one panel per group, each as tall as its bars: stacked in one column, or two a row when
    they have more than :data:`GRID_ROWS` bars in all; never taller than :data:`MAX_HEIGHT` (bars get
    thinner instead). A figure of few bars is as before: 9 inches wide, a column of panels."""
    two = _two_columns(sizes)
    sizes = [max(1, n) for n in sizes]
    if not two:
        fig = _figure(figsize=(9, min(MAX_HEIGHT, 1.2 + INCH_PER_BAR * sum(sizes) + 0.6 * len(sizes))))
        axes = fig.subplots(len(sizes), 1, squeeze=False, sharex=sharex, gridspec_kw={"height_ratios": sizes})
        return fig, list(axes[:, 0])
    rows = [sizes[i : i + 2] for i in range(0, len(sizes), 2)]
    heights = [max(r) for r in rows]
    fig = _figure(figsize=(13, min(MAX_HEIGHT, 1.2 + INCH_PER_BAR * sum(heights) + 0.9 * len(rows))))
    axes = fig.subplots(len(rows), 2, squeeze=False, sharex=sharex, gridspec_kw={"height_ratios": heights})
    if len(sizes) % 2:
        axes[-1, 1].set_visible(False)
    return fig, [axes[i // 2, i % 2] for i in range(len(sizes))]


def _bars(title: str, labels: Sequence[str], values: Sequence[float], xlabel: str) -> bytes:
    fig = _figure(figsize=(9, min(MAX_HEIGHT, 1.2 + INCH_PER_BAR * max(1, len(labels)))))
    ax = fig.subplots()
    y = list(range(len(labels)))[::-1]
    ax.barh(y, [float(v) for v in values], color=PALETTE[0], height=0.7)
    ax.set_yticks(y, [_short(label) for label in labels], **_font(len(labels)))
    ax.set_xlabel(xlabel)
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(_short(title, 90), fontsize=12, loc="left")
    fig.tight_layout()
    return _png(fig)


def _intervals(title: str, panels: Sequence[Estimates], xlabel: str) -> bytes:
    fig, axes = _panels([len(p.rows) for p in panels], sharex=True)
    two = _two_columns([len(p.rows) for p in panels])
    for ax, panel in zip(axes, panels, strict=True):
        y = list(range(len(panel.rows)))[::-1]
        values = [float(v) for v in panel.values]
        # A missing end (no bootstrap) draws no whisker on that side.
        below = [0.0 if lo != lo else max(0.0, v - float(lo)) for v, lo in zip(values, panel.lows, strict=True)]
        above = [0.0 if hi != hi else max(0.0, float(hi) - v) for v, hi in zip(values, panel.highs, strict=True)]
        ax.errorbar(values, y, xerr=[below, above], fmt="o", color=PALETTE[0], ecolor=PALETTE[0], capsize=3)
        ax.set_yticks(y, [_short(r) for r in panel.rows], **_font(_column_bars(panels)))
        ax.set_ylim(-0.6, len(panel.rows) - 0.4)
        ax.axvline(0, color="#999999", linewidth=0.8)
        ax.set_title(_short(panel.title, 90), fontsize=10, loc="left")
        ax.grid(axis="x", alpha=0.3)
        if two:
            ax.set_xlabel(xlabel)
    if not two:
        axes[-1].set_xlabel(xlabel)
    fig.suptitle(_short(title, 90), x=0.01, ha="left", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return _png(fig)
