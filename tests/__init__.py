"""Tests of tawa-xdsl."""
