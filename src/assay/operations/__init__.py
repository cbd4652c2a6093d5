"""Operations: the Python functions the CLI and the HTTP server call.

The room is named for what it holds: each module is one family of user-level operations,
the things a person does with assay (run from a config, run and resume stored runs, write
reports, import and export datasets, the demo), joining the lower rooms (runner, store,
analysis, datasets) into one call each. ``cli`` and ``server`` only parse their input,
call these functions (or the lower rooms' public API) and present the answer, so a Python
user can do everything they can.

- ``stored_runs``: ``run_stored``, ``run_dataset``, ``resume_run``, ``compare_stored``
- ``run_config``: ``RunConfig`` (a run as YAML/JSON), ``run_config_from`` (file + flags),
  ``run_config``
- ``reports``: ``write_run_reports``, ``export_run``, ``write_comparison_report``
- ``datasets``: ``import_file``/``import_dataset``, ``export_file``, ``add_item``
- ``inputs``: text values (CLI options, form fields) → Python values
- ``demo``: the offline demo

Modules are imported on use (``from assay.operations.reports import ...``); importing this
package imports none of them, so it costs nothing.
"""
