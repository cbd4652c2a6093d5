"""The Ray backend's driver: join (or start) a Ray cluster, check that the run can be
shipped, seed the run's work units in the store and start the workers that claim them.

What the driver does not do: score, or keep any result. Workers store their results
(``assay.operations.ray_worker``); the engine then reads the summary back from the stored
rows, exactly as for a stored local run. The driver holds the run's lease (``StoreSink``),
so a killed driver leaves a run that ``assay runs resume`` finishes.

Everything that can be wrong is found before a unit is seeded, each as one line
(``RayBackendError``): Ray not installed, the cluster unreachable, a store the workers
cannot reach (SQLite, in memory or with a cluster of other hosts), a target or scorer
that uses a lambda, function or class of ``__main__`` (shipped by value, which breaks on
other nodes), that cannot be serialized here or loaded on a worker (a missing module there).

Ray is imported only here, and only when the Ray backend is chosen.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import math
import os
import socket
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from assay.extras import install_hint
from assay.operations.ray_limits import HostedLimits, LimitsHost, remote_limits
from assay.operations.ray_worker import WorkerSettings, work_in_process
from assay.runner.engine import RunPlan
from assay.runner.options import RunOptions
from assay.runner.progress import RunProgress
from assay.store import Store
from assay.summary.source import ResultCounts
from assay.types import Item

if TYPE_CHECKING:
    from types import ModuleType

LOCAL_WORKERS = 2
"""Workers on a local Ray (no address) when ``workers`` is not given."""


class RayBackendError(ValueError):
    """The Ray backend cannot run this run (one line saying why; the CLI exits 2)."""


RAY_FEATURE = "the Ray backend"
"""What needs the ``ray`` extra, in its one line: ``the Ray backend needs the 'ray' extra:
pip install 'assay[ray]'`` (``assay.extras.install_hint``, as for every extra)."""


def require_ray() -> ModuleType:
    """The ``ray`` module, or a ``RayBackendError`` whose message is the extras' one line
    (``install_hint``; a ``RayBackendError``, so callers that refuse a run the Ray backend
    cannot take catch this one too). Any ImportError of ``import ray`` counts: a Ray whose
    own import fails cannot run the backend either, and the fix is the same reinstall."""
    try:
        import ray
    except ImportError as exc:
        raise RayBackendError(install_hint(RAY_FEATURE, "ray")) from exc
    return ray


def connect(address: str | None, workers: int | None = None) -> ModuleType:
    """Join the cluster at ``address``, or start a local Ray (``workers`` CPUs, default 2,
    no dashboard) when ``None``; a Ray already initialized in this process is used as it is."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    if address is not None:
        _require_reachable(address)
    try:
        if address is None:
            ray.init(
                num_cpus=workers or LOCAL_WORKERS,
                include_dashboard=False,
                logging_level="WARNING",
                configure_logging=False,
            )
        else:
            ray.init(address=address, logging_level="WARNING", configure_logging=False)
    except Exception as exc:
        where = address or "a local Ray"
        raise RayBackendError(f"cannot start or reach {where}: {_first_line(exc)}") from exc
    return ray


def _require_reachable(address: str, timeout_s: float = 5.0) -> None:
    """A TCP connect to ``host:port`` (or ``ray://host:port``) first: Ray itself waits
    minutes on an address where nothing listens; ``auto`` and the like are left to Ray."""
    hostport = address.removeprefix("ray://")
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise RayBackendError(
            f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}"
        ) from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0] if text else type(exc).__name__


def _local_addresses() -> set[str]:
    names = {"127.0.0.1", "localhost", socket.gethostname()}
    with contextlib.suppress(OSError):
        names.update(socket.gethostbyname_ex(socket.gethostname())[2])
    return names


def check_store(store: Store, ray: ModuleType, address: str | None) -> None:
    """Refuse a store some worker could not reach: an in-memory SQLite always, a SQLite
    file when the cluster has a node on another host."""
    if store.dialect != "sqlite":
        return
    database = store.engine.url.database
    if database in (None, "", ":memory:") or "mode=memory" in str(store.engine.url):
        raise RayBackendError(
            "backend 'ray' needs a store its workers can open: an in-memory SQLite is "
            "private to this process (use a SQLite file, or PostgreSQL for a cluster)"
        )
    if address is None:
        return  # a local Ray: every worker is on this machine
    local = _local_addresses()
    with contextlib.suppress(Exception):
        local.add(str(ray.util.get_node_ip_address()))
    remote = sorted(
        {
            str(node.get("NodeManagerAddress"))
            for node in ray.nodes()
            if node.get("Alive") and str(node.get("NodeManagerAddress")) not in local
        }
    )
    if remote:
        raise RayBackendError(
            f"backend 'ray' with a SQLite store works only when every worker runs on this "
            f"machine, but the Ray cluster at {address} has nodes on {', '.join(remote)}: "
            "use PostgreSQL (ASSAY_DATABASE_URL=postgresql+psycopg://...)"
        )


def _serialized(ray: ModuleType, plan: RunPlan) -> list[tuple[str, bytes]]:
    """The target and each scorer, serialized as Ray will ship them (cloudpickle); the
    first that cannot be is named in a ``RayBackendError``."""
    parts: list[tuple[str, Any]] = [(f"target {plan.target.spec.label!r}", plan.target)]
    parts += [(f"scorer {scorer.id!r}", scorer) for scorer in plan.scorers]
    blobs = []
    for what, part in parts:
        try:
            blobs.append((what, ray.cloudpickle.dumps(part)))
        except Exception as exc:
            raise RayBackendError(
                f"cannot ship the {what} to Ray workers: {_first_line(exc)} (targets and "
                "scorers must be importable or serializable on every worker)"
            ) from exc
    return blobs


class _DefinedInMain(Exception):
    """Raised by ``_MainFinder`` at the first function or class of ``__main__``."""

    def __init__(self, found: object) -> None:
        super().__init__()
        self.found = found


def _main_definition(ray: ModuleType, part: object) -> object | None:
    """The first function or class defined in ``__main__`` that ``part`` refers to (at any
    depth, as the pickler walks it), else ``None``. cloudpickle ships those by value:
    that works on this machine, then breaks on nodes where the code they use differs."""
    base: type[Any] = ray.cloudpickle.CloudPickler

    class _MainFinder(base):  # type: ignore[misc]
        def reducer_override(self, obj: object) -> Any:
            if (
                isinstance(obj, types.FunctionType | type)
                and getattr(obj, "__module__", None) == "__main__"
            ):
                raise _DefinedInMain(obj)
            return super().reducer_override(obj)

    try:
        _MainFinder(io.BytesIO()).dump(part)
    except _DefinedInMain as found:
        return found.found
    except Exception:
        return None  # anything else unpicklable is named by ``_serialized``
    return None


def _describe(obj: object) -> str:
    name = getattr(obj, "__qualname__", None) or repr(obj)
    code = getattr(obj, "__code__", None)
    where = f" ({code.co_filename}, line {code.co_firstlineno})" if code is not None else ""
    if name.endswith("<lambda>"):
        return f"a lambda defined in __main__{where}"
    kind = "class" if isinstance(obj, type) else "function"
    return f"{kind} {name!r} defined in __main__{where}"


def check_importable(ray: ModuleType, plan: RunPlan) -> None:
    """Refuse a target or scorer that uses a lambda, function or class of ``__main__`` (the
    script being run), naming it: workers on other nodes cannot import it by name."""
    parts: list[tuple[str, Any]] = [(f"target {plan.target.spec.label!r}", plan.target)]
    parts += [(f"scorer {scorer.id!r}", scorer) for scorer in plan.scorers]
    for what, part in parts:
        found = _main_definition(ray, part)
        if found is not None:
            raise RayBackendError(
                f"cannot ship the {what} to Ray workers: it uses {_describe(found)}, which "
                "workers cannot import by name; move it to a module they can import"
            )


def _probe(blobs: list[tuple[str, bytes]]) -> str | None:
    """Runs on a worker: load every part; the first that fails, as a message."""
    import ray

    for what, blob in blobs:
        try:
            ray.cloudpickle.loads(blob)
        except Exception as exc:
            return f"the {what} cannot be loaded on a Ray worker: {type(exc).__name__}: {exc}"
    return None


def _work(
    store_url: str, info_json: str, payload: bytes, settings: WorkerSettings, limits: Any
) -> tuple[str, int, int]:
    """Runs on a worker: the worker loop (``ray_worker.work_in_process``), its model calls
    under the run's limits ``limits`` (``HostedLimits``)."""
    import ray

    target, scorers = ray.cloudpickle.loads(payload)
    shared = remote_limits(limits) if limits is not None else None
    try:
        report = work_in_process(store_url, info_json, target, scorers, settings, shared)
    finally:
        if shared is not None:
            shared.close()  # this worker's slots back to the others
    return report.owner, report.claimed, report.stored


MAX_IN_FLIGHT_ENV = "ASSAY_MAX_IN_FLIGHT"
"""The run-wide ceiling of model calls in flight per endpoint (default: workers x
concurrency, what the workers' lanes could put in flight)."""
MAX_RATE_ENV = "ASSAY_MAX_REQUESTS_PER_S"
"""The run-wide budget of model requests per second per endpoint (default: none)."""


def run_limits_from_env(workers: int, concurrency: int) -> tuple[int, float | None]:
    """``(max_in_flight, rate_per_s)`` of the run's limits; a bad value is one
    ``RayBackendError`` naming the variable."""
    raw = os.environ.get(MAX_IN_FLIGHT_ENV, "").strip()
    ceiling = workers * concurrency
    if raw:
        try:
            ceiling = int(raw)
        except ValueError:
            ceiling = 0
        if ceiling < 1:
            raise RayBackendError(f"{MAX_IN_FLIGHT_ENV} must be a whole number >= 1, got {raw!r}")
    raw = os.environ.get(MAX_RATE_ENV, "").strip()
    rate: float | None = None
    if raw:
        try:
            rate = float(raw)
        except ValueError:
            rate = 0.0
        if not (rate > 0 and math.isfinite(rate)):
            raise RayBackendError(f"{MAX_RATE_ENV} must be a positive number, got {raw!r}")
    return ceiling, rate


@dataclass
class RayDispatch:
    """The ``UnitDispatch`` of the Ray backend (built by ``prepare``, checked already)."""

    store: Store
    ray: Any
    workers: int
    payload: bytes
    settings: WorkerSettings = field(default_factory=WorkerSettings)
    poll_s: float = 0.5
    max_in_flight: int = 32
    rate_per_s: float | None = None
    reports: list[tuple[str, int, int]] = field(default_factory=list)
    limits_stats: dict[str, Any] = field(default_factory=dict)

    async def __call__(
        self, plan: RunPlan, units: Iterator[tuple[int, Item, int]], bar: RunProgress
    ) -> None:
        run_id = plan.info.id
        repo = self.store.work_units
        await asyncio.to_thread(repo.release_gone, run_id)
        await asyncio.to_thread(repo.seed, run_id, units)
        url = self.store.engine.url.render_as_string(hide_password=False)
        limits = await asyncio.to_thread(
            open_limits, self.ray, run_id, self.max_in_flight, self.rate_per_s
        )
        task = self.ray.remote(num_cpus=1, max_retries=3, retry_exceptions=False)(_work)
        refs = [
            task.remote(url, plan.info.model_dump_json(), self.payload, self.settings, limits)
            for _ in range(self.workers)
        ]
        seen = await asyncio.to_thread(self.store.runs.completed_count, run_id)
        try:
            pending = list(refs)
            while pending:  # woken as soon as the workers end, at the latest every poll_s
                _, pending = await asyncio.to_thread(
                    self.ray.wait, pending, num_returns=len(pending), timeout=self.poll_s
                )
                await asyncio.to_thread(repo.release_gone, run_id)
                if bar.enabled:
                    done = await asyncio.to_thread(self.store.runs.completed_count, run_id)
                    bar.advance(done - seen)
                    seen = done
            self.reports = [tuple(r) for r in self.ray.get(refs)]
        except BaseException:
            for ref in refs:
                with contextlib.suppress(Exception):
                    self.ray.cancel(ref, force=True)
            raise
        finally:
            with contextlib.suppress(Exception):
                closed = limits.host.close.remote(run_id)
                self.limits_stats = await asyncio.to_thread(self.ray.get, closed, timeout=30)
        left = await asyncio.to_thread(repo.remaining, run_id)
        if left:
            raise RayBackendError(f"{left} units of run {run_id[:8]} were not stored")

    def stored_counts(self, plan: RunPlan) -> ResultCounts:
        """The run's counts from its stored rows (aggregate queries): the summary's items,
        results, item errors, judge calls and usage."""
        return self.store.runs.summary_source(plan.info.id).counts()


def prepare(store: Store, plan: RunPlan, options: RunOptions) -> RayDispatch:
    """Check everything before any unit exists and record the backend on the plan's run
    (``RunInfo.backend``/``workers``); the returned dispatch runs the units."""
    hooks = options.run_hooks
    if hooks is not None and hooks.has_item_hooks:
        raise RayBackendError(
            "backend 'ray' runs items on workers: item hooks (on_item_start/"
            "on_item_complete) cannot run there; use run hooks, or read the stored results"
        )
    if options.sink is not None:
        raise RayBackendError("backend 'ray' stores results from the workers: no extra sink")
    check_importable(require_ray(), plan)
    ray = connect(options.ray_address, options.workers)
    check_store(store, ray, options.ray_address)
    blobs = _serialized(ray, plan)
    limits_host(ray)  # its process starts while the probes below load the run's code
    workers = options.workers or _default_workers(ray, options.ray_address)
    probe = ray.remote(num_cpus=1, max_retries=0)(_probe)
    try:  # one probe per worker: each worker process loads the run's code once, here
        problems = ray.get([probe.remote(blobs) for _ in range(workers)])
    except Exception as exc:
        raise RayBackendError(f"a Ray worker could not start: {_first_line(exc)}") from exc
    problem = next((found for found in problems if found is not None), None)
    if problem is not None:
        raise RayBackendError(problem)
    max_in_flight, rate = run_limits_from_env(workers, plan.info.concurrency)
    plan.info = plan.info.model_copy(update={"backend": "ray", "workers": workers})
    payload = ray.cloudpickle.dumps((plan.target, list(plan.scorers)))
    return RayDispatch(
        store=store,
        ray=ray,
        workers=workers,
        payload=payload,
        max_in_flight=max_in_flight,
        rate_per_s=rate,
    )


_HOSTS: dict[tuple[str, str], Any] = {}
"""The ``LimitsHost`` actor of this driver, by (Ray node, job): one per Ray session."""


def _session_key(ray: ModuleType) -> tuple[str, str] | None:
    try:
        context = ray.get_runtime_context()
        return str(context.get_node_id()), str(context.get_job_id())
    except Exception:  # a Ray client connection may not say: no reuse then
        return None


def limits_host(ray: ModuleType, *, fresh: bool = False) -> Any:
    """This driver's ``LimitsHost`` actor, started with its first Ray run and kept for the
    runs after it (an actor start is a new process: ~2 s on the test machine); a new one
    when Ray was restarted since, or when ``fresh`` (the kept one died)."""
    key = _session_key(ray)
    found = _HOSTS.get(key) if key is not None and not fresh else None
    if found is None:
        found = ray.remote(num_cpus=0, max_concurrency=100_000)(LimitsHost).remote()
        if key is not None:
            _HOSTS[key] = found
    return found


def open_limits(
    ray: ModuleType, run_id: str, max_in_flight: int, rate_per_s: float | None
) -> HostedLimits:
    """Open ``run_id``'s limits in this driver's host (a new host if the kept one died);
    returns what the workers call. Waits for the host to answer (60 s at most)."""
    host = limits_host(ray)
    try:
        ray.get(host.open.remote(run_id, max_in_flight, rate_per_s), timeout=60)
    except ray.exceptions.RayActorError:
        host = limits_host(ray, fresh=True)
        ray.get(host.open.remote(run_id, max_in_flight, rate_per_s), timeout=60)
    return HostedLimits(host, run_id)


def _default_workers(ray: ModuleType, address: str | None) -> int:
    cpus = int(ray.cluster_resources().get("CPU", 1))
    return max(1, min(cpus, LOCAL_WORKERS) if address is None else cpus)


def shutdown() -> None:
    """Stop the local Ray this process started (tests, benchmarks)."""
    _HOSTS.clear()
    with contextlib.suppress(ImportError):
        import ray

        if ray.is_initialized():
            ray.shutdown()
