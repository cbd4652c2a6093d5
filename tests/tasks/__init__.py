"""Tests of assay.tasks."""
