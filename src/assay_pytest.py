"""assay's pytest plugin (entry point ``pytest11``): evals as tests.

pytest loads every installed ``pytest11`` plugin in every test suite, so this module is the
part of assay a suite that never uses it pays for: it imports nothing but ``pytest`` (loaded
already) and defines a few options, one fixture and a few cheap hooks. Everything of assay is
imported inside the fixture and inside ``assay.testing``'s functions, i.e. only once a test
uses them; until then there is no session object, no database, no network call and no file
(``tests/testing/test_plugin_inert.py`` checks ``sys.modules`` in a fresh interpreter).

It lives outside the ``assay`` package on purpose: importing ``assay.anything`` runs
``assay/__init__.py``, which builds the public API (about 0.8 s of imports).

What it adds, once used (``assay.testing.session``): the session's scores stored as runs
tagged with the session and its git commit and branch, ``--assay-baseline`` comparisons,
``--assay-update-baseline``, and a Markdown summary (``--assay-summary``).

PYTEST_DONT_REWRITE: the module has no asserts; without the marker a pytest run inside a
pytest run (``pytester``) warns that the already imported plugin cannot be rewritten.
"""

from __future__ import annotations

from typing import Any

import pytest

SESSION_KEY = pytest.StashKey[Any]()
"""``config.stash[SESSION_KEY]``: the ``assay.testing.session.AssaySession``, created by the
first assay test of the session (absent when none ran)."""

_running: list[pytest.Item] = []
_configs: list[pytest.Config] = []


def current_item() -> pytest.Item | None:
    """The test whose body is running (``assert_score`` records its scores under it)."""
    return _running[-1] if _running else None


def current_config() -> pytest.Config | None:
    """The innermost configured pytest session (``cases`` reads ``--assay-db`` from it)."""
    return _configs[-1] if _configs else None


def pytest_configure(config: pytest.Config) -> None:
    _configs.append(config)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay", "assay: evals as tests")
    group.addoption(
        "--assay-baseline",
        metavar="NAME",
        help="Compare each eval test's run with its baseline run (the newest run of that test "
        "tagged baseline=NAME, or tagged NAME when it has a '='), with the paired statistics "
        "of `assay runs compare`; a significant regression fails the session.",
    )
    group.addoption(
        "--assay-update-baseline",
        action="store_true",
        help="Record this session's runs as the baseline (--assay-baseline NAME, default "
        "'default').",
    )
    group.addoption(
        "--assay-summary",
        metavar="PATH",
        help="Write a Markdown summary of the session's runs (for a pull-request comment).",
    )
    group.addoption(
        "--assay-db",
        metavar="URL",
        help="Where the session's runs are stored (default: $ASSAY_DATABASE_URL, else "
        ".assay/assay.db).",
    )
    group.addoption(
        "--assay-no-store",
        action="store_true",
        help="Do not store the session's runs (no baselines, no summary links).",
    )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.pop()


@pytest.fixture
def assay_eval(request: pytest.FixtureRequest) -> Any:
    """Run a dataset through a target and scorers and gate on its summary:
    ``assay_eval(data, target, scorers, fail_under={...})`` (see ``assay.testing.AssayEval``).
    """
    from assay.testing.evaluate import AssayEval

    return AssayEval(request.node)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(SESSION_KEY, None)
    if state is not None:
        state.finish(session)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash.get(SESSION_KEY, None)
    if state is not None:
        state.report(terminalreporter)


def pytest_unconfigure(config: pytest.Config) -> None:
    if config in _configs:
        _configs.remove(config)
    state = config.stash.get(SESSION_KEY, None)
    if state is not None:
        state.close()
