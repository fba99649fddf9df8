"""Tests and effects: the statistics, bootstrap and bounded intervals, item tests, what a study could detect."""
