"""The FastAPI application: the JSON API under ``/api``, the web UI's pages and assets.

``create_app`` is the only entry point (``assay serve`` and the tests call it). Routers
parse input and present output; what they do is one call into ``assay.operations`` or a
store repository, so a Python user can do everything the server can. Errors map onto
status codes here, once: not found → 404 (with the "did you mean" the lower layers
write), conflicts → 409, bad input → 422 whose ``detail`` names each field by its path.
"""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.staticfiles import StaticFiles

from assay.datasets.errors import DatasetError
from assay.operations.run_requests import RunNotStartedError
from assay.operations.scorer_preview import FieldErrors, FieldProblem
from assay.operations.stored_runs import ResumeError
from assay.optimize.config import OptimizeConfigError
from assay.optimize.optimizer import OptimizeResumeError
from assay.registry import UnknownNameError
from assay.scoring.registry import ScorerRegistryError, UnknownScorerError
from assay.server import security
from assay.server.api import annotations as annotations_api
from assay.server.api import datasets, optimizations, runs, scorers
from assay.server.base_urls import GuardEnvKeys, allowed_from_env
from assay.server.jobs import OptimizationJobs, PreviewJobs, RunJobs, StatisticsJobs
from assay.store import (
    AmbiguousRunIdError,
    DatasetExistsError,
    DuplicateItemError,
    RunExistsError,
    RunLeasedError,
    StoreError,
    open_store,
)
from assay.store.annotations_repo import AnnotationError, ItemNotInRunError
from assay.targets.resolve import TargetResolutionError

log = logging.getLogger("assay.server")

DEFAULT_MAX_UPLOAD_BYTES = 50_000_000
DATA_DIR_ENV = "ASSAY_SERVER_DATA_DIR"
DEFAULT_DATA_DIR = ".assay"
API_TITLE = "assay"
API_VERSION = "1"


def _problem_json(problems: list[FieldProblem]) -> JSONResponse:
    detail = [{**p.model_dump(), "field": p.path} for p in problems]
    return JSONResponse(status_code=422, content={"detail": detail})


_PYDANTIC_PREFIXES = ("Value error, ", "Assertion failed, ")


def _plain(msg: str) -> str:
    """A validator's own message without pydantic's "Value error, " in front. The field is
    in ``loc``/``field``; clients print ``field: msg``, so the message must not repeat it
    (the launcher showed "body: body: Value error, ...")."""
    for prefix in _PYDANTIC_PREFIXES:
        if msg.startswith(prefix):
            return msg[len(prefix) :]
    return msg


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = []
    for err in exc.errors():
        loc = [part for part in err.get("loc", ()) if isinstance(part, str | int)]
        if loc and loc[0] in ("body", "query", "path", "header", "cookie"):
            where, loc = loc[0], loc[1:]
        else:
            where = "body"
        problems.append(
            FieldProblem(
                loc=loc or [where],
                msg=_plain(str(err.get("msg", "invalid"))),
                type=str(err.get("type", "value_error")),
            )
        )
    return _problem_json(problems)


async def _field_errors(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, FieldErrors)
    return _problem_json(exc.problems)


async def _optimize_config_error(request: Request, exc: Exception) -> JSONResponse:
    """An optimization config error names its key (``budget.max_metric_calls``): the
    same 422 shape as every validation error, the key as the field."""
    assert isinstance(exc, OptimizeConfigError)
    loc: list[str | int] = [
        int(part) if part.isdigit() else part for part in (exc.key or "body").split(".")
    ]
    return _problem_json([FieldProblem(loc=loc, msg=str(exc))])


def _status(code: int) -> Any:
    async def handler(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse(status_code=code, content={"detail": str(exc)})

    return handler


def _store_error(request: Request, exc: Exception) -> Any:
    if isinstance(exc, AmbiguousRunIdError):
        code = 409
    elif isinstance(exc, LookupError):
        code = 404
    elif isinstance(exc, DatasetExistsError | RunExistsError | DuplicateItemError | RunLeasedError):
        code = 409
    else:
        code = 503 if type(exc).__name__ == "StoreUnavailableError" else 400
    return JSONResponse(status_code=code, content={"detail": str(exc)})


def _mount_ui(app: FastAPI) -> None:
    from assay.server.ui import STATIC_DIR
    from assay.server.ui import router as ui_router
    from assay.server.ui.assets import VersionedStaticFiles

    app.include_router(ui_router, include_in_schema=False)  # pages are not the API
    app.mount("/static", VersionedStaticFiles(directory=STATIC_DIR), name="static")


def create_app(
    *,
    store_url: str | None = None,
    token: str | None = None,
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES,
    data_dir: str | Path | None = None,
    allowed_base_urls: Sequence[str] | None = None,
    allowed_hosts: Sequence[str] | None = None,
    bind_host: str | None = None,
) -> FastAPI:
    """The app over the store at ``store_url`` (default: ``ASSAY_DATABASE_URL`` or
    ``./assay.db``). With ``token`` every request must present it (see
    ``server.security``); bodies above ``max_upload_bytes`` are refused with 413.

    ``data_dir`` (default ``ASSAY_SERVER_DATA_DIR``, else ``.assay``) is where the server
    keeps what is not in the store: GEPA's state of the optimizations it starts, under
    ``optimizations/<id>``. ``allowed_base_urls`` (default ``ASSAY_SERVER_ALLOWED_BASE_URLS``,
    comma-separated) are the model endpoints besides loopback ones a request may name
    (``server.base_urls``).

    A request's ``Host`` must be a loopback name, ``bind_host`` (what ``assay serve``
    bound) or one of ``allowed_hosts`` (default ``ASSAY_SERVER_ALLOWED_HOSTS``; ``*``
    allows any); others get 421 (``server.security``: DNS rebinding). A ``token`` below the
    floor of ``security.token_weakness`` raises ``WeakTokenError``."""
    if token:
        security.check_token(token)
    hosts = security.allowed_hosts(
        bind_host,
        security.allowed_hosts_from_env() if allowed_hosts is None else allowed_hosts,
    )
    security.keep_tokens_out_of_logs()
    store = open_store(store_url)
    allowed = allowed_from_env() if allowed_base_urls is None else tuple(allowed_base_urls)
    preview_jobs = PreviewJobs(allowed_base_urls=allowed)
    run_jobs = RunJobs(store, allowed_base_urls=allowed)
    statistics_jobs = StatisticsJobs(store)
    folder = Path(data_dir or os.environ.get(DATA_DIR_ENV) or DEFAULT_DATA_DIR).resolve()
    optimization_jobs = OptimizationJobs(store, data_dir=folder, allowed_base_urls=allowed)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await optimization_jobs.shutdown()
            await run_jobs.shutdown()
            statistics_jobs.shutdown()
            store.close()

    app = FastAPI(
        title=API_TITLE,
        version=API_VERSION,
        description="Evaluate LLM applications: the assay store and operations over HTTP.",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
    )
    _mount_api_docs(app)
    app.state.store = store
    app.state.preview_jobs = preview_jobs
    app.state.run_jobs = run_jobs
    app.state.statistics_jobs = statistics_jobs
    app.state.optimization_jobs = optimization_jobs

    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(FieldErrors, _field_errors)
    app.add_exception_handler(UnknownNameError, _status(404))
    app.add_exception_handler(UnknownScorerError, _status(404))  # before its base class
    app.add_exception_handler(ScorerRegistryError, _status(422))
    app.add_exception_handler(TargetResolutionError, _status(422))
    app.add_exception_handler(DatasetError, _status(422))
    app.add_exception_handler(ResumeError, _status(409))
    app.add_exception_handler(RunNotStartedError, _status(422))
    app.add_exception_handler(StoreError, _store_error)
    app.add_exception_handler(ItemNotInRunError, _status(404))
    app.add_exception_handler(AnnotationError, _status(422))
    app.add_exception_handler(OptimizeConfigError, _optimize_config_error)
    app.add_exception_handler(OptimizeResumeError, _status(409))

    # annotations before runs: .../items/{item_id:path}/annotations must not be read as an
    # item id ending in "/annotations" by the runs router's .../items/{item_id:path}
    for module in (scorers, datasets, annotations_api, runs, optimizations):
        app.include_router(module.router, prefix="/api")
    _mount_ui(app)

    # added last = outermost: errors wrap the token check, which wraps the size limit ...
    app.add_middleware(GuardEnvKeys, allowed=allowed)
    app.add_middleware(security.CheckCsrf)
    app.add_middleware(security.LimitBody, max_bytes=max_upload_bytes)
    if token:
        app.add_middleware(security.RequireToken, token=token)
    app.add_middleware(security.CheckHost, hosts=hosts)
    app.add_middleware(security.CatchErrors)
    app.add_middleware(security.SecurityHeaders)
    return app


DOCS_ASSETS = "/static-docs"


def _mount_api_docs(app: FastAPI) -> None:
    """``/docs`` (Swagger UI) and ``/redoc`` from assets shipped in a package
    (``fastapi-offline``), not a CDN: the API docs work on a machine without internet,
    FastAPI's documented way of self-hosting them."""
    import fastapi_offline
    from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
    from fastapi.responses import HTMLResponse

    assets = Path(fastapi_offline.__file__).parent / "static"
    app.mount(DOCS_ASSETS, StaticFiles(directory=assets), name="static-docs")

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/openapi.json",
            title=f"{API_TITLE} - Swagger UI",
            swagger_js_url=f"{DOCS_ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{DOCS_ASSETS}/swagger-ui.css",
            swagger_favicon_url="/favicon.ico",
        )

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url="/openapi.json",
            title=f"{API_TITLE} - ReDoc",
            redoc_js_url=f"{DOCS_ASSETS}/redoc.standalone.js",
            redoc_favicon_url="/favicon.ico",
            with_google_fonts=False,
        )


def app_from_env() -> FastAPI:
    """The app ``assay serve`` runs (uvicorn's factory): the store from
    ``ASSAY_DATABASE_URL``, the token from ``ASSAY_SERVER_TOKEN``, the bound address from
    ``ASSAY_SERVER_HOST``."""
    return create_app(
        store_url=os.environ.get("ASSAY_DATABASE_URL") or None,
        token=os.environ.get("ASSAY_SERVER_TOKEN") or None,
        bind_host=os.environ.get(security.BIND_HOST_ENV) or None,
    )


__all__ = ["app_from_env", "create_app"]
