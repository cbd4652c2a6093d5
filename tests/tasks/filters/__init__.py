"""Tests of assay.tasks.filters."""
