"""Span agreement, now in :mod:`annols.analysis.span_agreement`; the names are kept here for the protocol modules."""

from annols.analysis.span_agreement import (
           AGREEMENT_NOTE,
           ALL,
           SPAN_COLUMNS,
           TOKEN,
           SpanRows,
           _f1_counts,
           _pairs,
           _token_labels,
           agreement_table,
)

__all__ = ["AGREEMENT_NOTE", "ALL", "SPAN_COLUMNS", "TOKEN", "SpanRows", "_f1_counts", "_pairs", "_token_labels",
           "agreement_table"]  # fmt: skip
