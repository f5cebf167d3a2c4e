"""Hypothesis tests: semantics, round trips, fuzzing."""
