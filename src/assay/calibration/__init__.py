"""Judge calibration, one room: how well a scorer agrees with human labels.

Read it in the order a calibration happens (docs/calibration.md):

- ``config``: the YAML config (``CalibrationConfig``: scorer, labelled data, ``kind``,
  ``label``/``label_map``, ``split``, gates) and its one error type;
- ``data``: the labelled items (labels on one scale, pairwise items, splits, data keys);
- ``run``: ``calibrate``/``calibrate_async``: the scorer as the target of a stored run over
  the labelled items, then the steps that set its scores against the labels (the room's
  one module above ``operations``: it runs through ``operations.stored_runs``);
- ``statistics/``: the statistics with seeded bootstrap CIs (pure functions of arrays);
- ``measures``: which statistics a ``kind`` reports, shaped as JSON sections;
- ``gates``: the bounds a scorer must clear; ``results``: the report models;
- ``certificates``: a passed calibration bound to the scorer's fingerprint, and the
  ``calibrated: yes (...)`` status runs and reports show;
- ``judge_corrected``: prediction-powered means of a stored run with some human labels;
- ``report``: the terminal tables, the HTML report's section and the files ``assay
  calibrate`` writes; ``view``: the web UI's calibration page data.

Nothing is imported here, so ``import assay.calibration.config`` stays cheap (the
statistics need the ``calibration`` extra: scipy, scikit-learn).
"""
