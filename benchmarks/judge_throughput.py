"""Judge throughput: concurrency efficiency, 429 resilience, the model cache, cost per item.

Every number goes through the real model stack a judge scorer uses in production,
``CachedModel(ReliableModel(OpenAICompatibleModel))`` over its HTTP client
(``assay.models.http``), pointed at the project's mock OpenAI-compatible server
(``assay.testing.openai_server.MockOpenAIServer``) on 127.0.0.1. Five tables:

0. The user path (the goal's measurement): ``run_evals`` with default settings, start-up
   included, 200 and 1,000 items x ``faithfulness(reason="llm")`` at concurrency 32 against
   the mock with 100 ms latency, each run in a fresh process with the judge model given as a
   model string plus ``base_url`` (model resolution, the HTTP client and its connections, the
   endpoint's limiter and the default SQLite call cache all start inside the timed call).
   Goal: efficiency >= 0.85 at 1,000 items and >= 0.7 at 200 (median of ``--repeats``).
   Each row also gives the run's client CPU per judge call (the child's CPU time over the
   timed call / judge calls) and the load average when it ended.
   The same runs against 10% HTTP 429s with ``Retry-After: 1`` and against 10% HTTP 500s
   must lose no item. With ``--timeline``, one more run per size (not counted in the
   figures: the transport is wrapped to timestamp it) gives where its wall time goes:
   process start -> ``run_evals`` called -> first request started -> HTTP client ready
   (``aiohttp`` imported, session made) -> first answer -> last answer -> ``run_evals``
   returned.
1. Efficiency: 1,000 items x ``faithfulness`` with ``reason="llm"`` (three judge calls per
   item: claims -> verdicts -> reason) at concurrency 32 (an ``asyncio.Semaphore`` around
   ``scorer.run``), 100 ms server latency, cache off. efficiency = ideal time (calls x
   latency / concurrency) / measured wall time; goal >= 0.85. Repeated (``--repeats``),
   because a 2-core VM is noisy; the goal is judged on the median.
2. 10% injected 429s (``Retry-After: 0.1``): every item must still end ``ready``; the retry
   count comes from ``ReliableModel.stats``.
3. Cache: the same 1,000 items on a fresh SQLite cache file (read-write), then again: with a
   new model stack and a new ``SQLiteModelCache`` on the same file (run 2: nothing in
   memory, as in a new process), and with run 2's stack once more (run 2b: the store's
   in-memory LRU is warm). The repeats must send zero HTTP requests (counted by the server),
   give the same scores and reasons, and be >= 20x faster than the first run.
4. Cost: judge calls and prompt tokens per item for every registered judge scorer, on one
   item with a question, a three-sentence answer, three ~65-word context passages and a
   ground-truth sentence; with ``reason="template"`` where the scorer has a ``reason``
   param, and with its defaults.

Why the server runs in a child process for tables 1-3: in-process, its event loop shares the
GIL with the client under test and steals the CPU being measured; a real endpoint is another
machine. (Table 4 counts tokens, not time, and runs the server in-process to read its request
records.)

Why the server answers with ``plausible_answer`` rather than its default schema example: the
default fills every array with one ``"example"`` item, so every item of a run would send the
same verdict and reason prompts (the cache would answer them within the first run) and the
prompts would be unrealistically short. ``plausible_answer`` sizes its answers like a real
judge's: one claim/statement per sentence of the judged text, one verdict per numbered item
or rubric criterion or trajectory step, empty "missing"/"extra" lists, one-sentence reasons.

Tables 1-3 measure the model stack alone (``scorer.run`` under a semaphore, one warm-up
item not timed) and configure the adaptive limiter explicitly for this endpoint:
``AdaptiveLimiter(initial=32, maximum=64)``, so it never caps below the benchmark's
concurrency of 32. (Inside a run the limiter now starts at the run's concurrency by itself;
outside one it starts at 16.) A fresh limiter per run keeps runs independent.

Usage::

    .venv/bin/python benchmarks/judge_throughput.py [--items 1000] [--repeats 3]
        [--only user efficiency 429 cache cost] [--timeline]

About 70 s on 2 cores. Other processes on the machine show up in the numbers, so each table
prints the load average it started at.

Exits with status 1 if a correctness check fails (items lost, errors, HTTP requests during
the cached run, different results from the cache); performance goals are reported as met or
not met.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.metadata
import json
import multiprocessing
import os
import platform
import re
import statistics
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from assay.models.cache import CachedModel, ModelCache
    from assay.models.openai_compat import OpenAICompatibleModel
    from assay.models.reliability import AdaptiveLimiter, ReliableModel

LATENCY_S = 0.1
CONCURRENCY = 32
ITEMS = 1000
RATE_LIMIT = 0.1
RETRY_AFTER = "0.1"
EFFICIENCY_GOAL = 0.85
CACHE_SPEEDUP_GOAL = 20.0
LIMITER_INITIAL = CONCURRENCY
LIMITER_MAXIMUM = 2 * CONCURRENCY
THROUGHPUT_SCORER = "faithfulness"
THROUGHPUT_PARAMS: dict[str, Any] = {"reason": "llm"}

JSON = dict[str, Any]

# ---------------------------------------------------------------------------- the item
QUESTION = "When was the Eiffel Tower built, and how tall is it?"
ANSWER = (
    "The Eiffel Tower was built between 1887 and 1889 as the entrance arch to the 1889 "
    "World's Fair. It stands about 330 metres tall including its antennas. It was the "
    "tallest man-made structure in the world until 1930."
)
CONTEXT = (
    "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. "
    "It is named after the engineer Gustave Eiffel, whose company designed and built the tower "
    "from 1887 to 1889. It was constructed as the centrepiece of the 1889 World's Fair, held to "
    "celebrate the centennial of the French Revolution, and was at first criticised by some of "
    "France's leading artists.",
    "The tower is 330 metres tall, about the same height as an 81-storey building, and is the "
    "tallest structure in Paris. Its base is square, measuring 125 metres on each side. During "
    "its construction it surpassed the Washington Monument to become the tallest man-made "
    "structure in the world, a title it held for 41 years until the Chrysler Building in New "
    "York was finished in 1930.",
    "The tower has three levels for visitors, with restaurants on the first and second levels. "
    "The top level's upper platform is 276 metres above the ground, the highest observation "
    "deck accessible to the public in the European Union. Tickets can be bought to go up by "
    "stairs or lift to the first and second levels; the climb from ground level to the first "
    "level is over 300 steps.",
)
GROUND_TRUTH = "The Eiffel Tower was built from 1887 to 1889 and is about 330 metres tall."
SYSTEM_PROMPT = "You are a helpful travel assistant. Answer concisely and stick to facts."


def throughput_item(index: int) -> dict[str, Any]:
    """Item ``index`` of the throughput runs: the cost item, made unique (a tag in the answer
    and in each passage) so no two items share a judge prompt."""
    return {
        "input": QUESTION,
        "output": f"{ANSWER} (Answer {index}.)",
        "context": [f"(Document {index}-{k}.) {text}" for k, text in enumerate(CONTEXT)],
        "ground_truth": GROUND_TRUTH,
    }


# ------------------------------------------------------------- a judge-sized mock answer
REASON_TEXT = (
    "The score is 1 because every claim in the response is supported by the context: the "
    "passages state the construction dates, the height and the record it held until 1930."
)
EXPLANATION = "The passage states this directly, with the same dates and figures as the response."
_BLOCK = re.compile(r"<<<DATA ([^>]*)>>>\n(.*?)\n<<<END DATA>>>", re.S)
_NUMBERED = re.compile(r"^\[\d+\] (.*)$", re.M)
_STEP_LINE = re.compile(r"^\s*\d+\. \[[^\]]+\] (\S+)", re.M)
_RUBRIC_LINE = re.compile(r"^\d+\. \[(?:required|optional)\] (.+)$", re.M)
_ONE_OF = re.compile(r"One of: ([^.]+)\.")
_QUOTED = re.compile(r'"([^"]+)"')
_EMPTY_LIST_NAMES = re.compile(r"missing|extra|contradiction|major|unsupported|unanswered", re.I)
_SUBJECT_LABELS = (
    "response",
    "summary",
    "reference answer",
    "output to grade",
    "noisy response",
    "agent response",
    "agent final response",
)
_TARGET_LABELS = ("claims", "statements", "items", "questions", "ground truth units")
_ITEM_TEXT_FIELDS = {
    "claim",
    "statement",
    "opinion",
    "question",
    "criterion",
    "toolcalled",
    "stepname",
    "groundtruthunit",
    "requirement",
}


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def _norm(name: str) -> str:
    return re.sub(r"[^a-z]", "", name.lower()).removesuffix("s")


@dataclass
class _Prompt:
    """What a judge would read off the prompt: the judged text and the items to judge."""

    blocks: list[tuple[str, str]]
    subject: list[str]
    targets: list[str]
    numbered: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def parse(cls, prompt: str) -> _Prompt:
        blocks = [(label.strip().lower(), text) for label, text in _BLOCK.findall(prompt)]
        numbered = {label: _NUMBERED.findall(text) for label, text in blocks}
        numbered = {label: items for label, items in numbered.items() if items}
        subject_text = next((t for lbl, t in blocks if lbl in _SUBJECT_LABELS), None)
        if subject_text is None:
            subject_text = blocks[0][1] if blocks else prompt
        subject = _sentences(subject_text)
        targets: list[str] = _RUBRIC_LINE.findall(prompt)
        for label, text in blocks:
            if not targets and label == "actual trajectory":
                targets = _STEP_LINE.findall(text)
            if not targets and label.startswith("tools the agent called"):
                targets = [line.strip() for line in text.splitlines() if line.strip()]
        if not targets:
            preferred = [items for label, items in numbered.items() if label in _TARGET_LABELS]
            targets = preferred[0] if preferred else []
        if not targets and numbered:
            targets = list(numbered.values())[-1]
        return cls(blocks, subject, targets or subject, numbered)

    def block_sentences(self, *labels: str) -> list[str]:
        for label, text in self.blocks:
            if label in labels:
                return _sentences(text)
        return []


def _resolve(node: JSON, root: JSON) -> JSON:
    while "$ref" in node:
        target: Any = root
        for part in str(node["$ref"]).removeprefix("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node = target if isinstance(target, dict) else {}
    options = [o for o in node.get("anyOf", []) if o.get("type") != "null"]
    return _resolve(options[0], root) if options else node


def _fill(node: JSON, root: JSON, prompt: _Prompt, name: str, index: int) -> Any:
    node = _resolve(node, root)
    description = str(node.get("description", ""))
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return node["enum"][0]
    kind = node.get("type")
    if kind == "object" or "properties" in node:
        return {
            key: _fill(sub, root, prompt, key, index)
            for key, sub in node.get("properties", {}).items()
        }
    if kind == "array":
        if _EMPTY_LIST_NAMES.search(name):
            return []
        items = _resolve(node.get("items", {}), root)
        if items.get("type") == "string":
            return _string_list(name, prompt)
        count = len(prompt.targets)
        for sub in items.get("properties", {}).values():
            one_of = _ONE_OF.search(str(_resolve(sub, root).get("description", "")))
            if one_of:
                count = len(one_of.group(1).split(","))
        return [_fill(items, root, prompt, name, i) for i in range(count)]
    if kind == "string":
        return _string(name, description, prompt, index)
    if kind == "integer":
        return index if name.lower().endswith("index") else int(node.get("minimum", 1))
    if kind == "number":
        return float(node.get("maximum", 1.0))
    if kind == "boolean":
        return True
    return None


def _string_list(name: str, prompt: _Prompt) -> list[str]:
    key = _norm(name)
    if "question" in key:
        source = prompt.block_sentences("source", "context") or prompt.subject
        return [f"Does the source say that {s.rstrip('.').lower()}?" for s in source][:10]
    if "groundtruth" in key:
        return prompt.block_sentences("ground truth") or prompt.subject
    return list(prompt.subject)


def _string(name: str, description: str, prompt: _Prompt, index: int) -> str:
    key = _norm(name)
    one_of = _ONE_OF.search(description)
    if one_of:
        options = [o.strip() for o in one_of.group(1).split(",")]
        return options[index % len(options)]
    for label, items in prompt.numbered.items():
        if _norm(label).endswith(key) and index < len(items):
            return items[index]
    if key in _ITEM_TEXT_FIELDS and index < len(prompt.targets):
        return prompt.targets[index]
    quoted = _QUOTED.findall(description)
    return quoted[0] if quoted else EXPLANATION


def plausible_answer(body: JSON) -> str | JSON:
    """A judge-sized answer to a chat request (see the module docstring)."""
    fmt = body.get("response_format")
    schema = fmt.get("json_schema", {}).get("schema") if isinstance(fmt, dict) else None
    if not isinstance(schema, dict):
        return REASON_TEXT
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    prompt = _Prompt.parse(str(users[-1].get("content", "")) if users else "")
    answer = _fill(schema, schema, prompt, "", 0)
    return answer if isinstance(answer, dict) else {"value": answer}


# ------------------------------------------------------------- the server, in a child
def _serve(conn: Connection, options: JSON) -> None:
    """Child process: run the mock server until the parent says stop (or goes away)."""
    from assay.testing.openai_server import MockOpenAIServer

    server = MockOpenAIServer(responder=plausible_answer, record_requests=False, **options)
    server.start()
    conn.send(server.base_url)
    with suppress(EOFError):
        conn.recv()
    server.stop()


@dataclass
class ServerHandle:
    base_url: str
    pid: int | None = None

    def cpu_s(self) -> float | None:
        """CPU seconds the server process has used (Linux ``/proc``; else ``None``)."""
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stats(self) -> JSON:
        root = self.base_url.removesuffix("/v1")
        with urllib.request.urlopen(f"{root}/mock/stats", timeout=10) as response:
            data: JSON = json.loads(response.read())
        return data


@contextmanager
def server_process(**options: Any) -> Iterator[ServerHandle]:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    process = context.Process(target=_serve, args=(child, options), daemon=True)
    process.start()
    try:
        deadline = time.monotonic() + 60
        while not parent.poll(0.1):
            if not process.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the mock server process did not start ({process.exitcode=})")
        yield ServerHandle(str(parent.recv()), process.pid)
    finally:
        with suppress(OSError):
            parent.send("stop")
        process.join(10)
        if process.is_alive():
            process.terminate()
            process.join(5)


# ------------------------------------------------------------------ the model stack
@dataclass
class Stack:
    """The model stack of one run, and its parts (for their counters)."""

    model: CachedModel
    reliable: ReliableModel
    limiter: AdaptiveLimiter
    inner: OpenAICompatibleModel


def build_stack(
    base_url: str, *, cache_path: Path | None = None, store: ModelCache | None = None
) -> Stack:
    """``CachedModel(ReliableModel(OpenAICompatibleModel))`` for the mock endpoint, with a
    fresh limiter that starts at the run's concurrency; cache off unless ``cache_path`` (a
    new ``SQLiteModelCache`` on that file) or ``store`` (an existing one) is given."""
    from assay.models.cache import CachedModel, SQLiteModelCache
    from assay.models.openai_compat import OpenAICompatibleModel
    from assay.models.reliability import AdaptiveLimiter, ReliableModel

    inner = OpenAICompatibleModel("mock-judge", base_url=base_url, provider="mock")
    limiter = AdaptiveLimiter(LIMITER_INITIAL, maximum=LIMITER_MAXIMUM)
    reliable = ReliableModel(inner, limiter=limiter)
    if store is None and cache_path is not None:
        store = SQLiteModelCache(cache_path)
    if store is None:
        model = CachedModel(reliable, policy="off")
    else:
        model = CachedModel(reliable, cache=store, policy="read-write")
    return Stack(model, reliable, limiter, inner)


@dataclass
class RunResult:
    wall_s: float
    cpu_s: float
    results: list[Any]
    calls: int
    server_requests: int
    statuses: dict[str, int]
    max_in_flight: int
    server_cpu_s: float | None = None

    @property
    def server_cpu_ms_per_request(self) -> str:
        if self.server_cpu_s is None or not self.server_requests:
            return "-"
        return f"{self.server_cpu_s / self.server_requests * 1000:.2f}"

    @property
    def ready(self) -> int:
        return sum(1 for r in self.results if r.status == "ready")

    @property
    def ideal_s(self) -> float:
        return self.calls * LATENCY_S / CONCURRENCY

    @property
    def efficiency(self) -> float:
        return self.ideal_s / self.wall_s


async def _score_all(scorer: Any, items: Sequence[Mapping[str, Any]]) -> list[Any]:
    semaphore = asyncio.Semaphore(CONCURRENCY)

    async def one(item: Mapping[str, Any]) -> Any:
        async with semaphore:
            return await scorer.run(**item)

    return await asyncio.gather(*(one(item) for item in items))


async def timed_run(
    stack: Stack, server: ServerHandle, items: Sequence[Mapping[str, Any]]
) -> RunResult:
    """One warm-up item (imports, the HTTP client, the first connection), then the timed
    run of ``items`` with server counters taken around it."""
    import assay

    scorer = assay.create_scorer(THROUGHPUT_SCORER, **THROUGHPUT_PARAMS)
    scorer = scorer.with_judge_model(stack.model)
    warm = await scorer.run(**throughput_item(-1))
    if warm.status != "ready":
        raise RuntimeError(f"warm-up item failed: {warm.error}")
    before, server_cpu = server.stats(), server.cpu_s()
    cpu, started = time.process_time(), time.perf_counter()
    results = await _score_all(scorer, items)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    after, server_cpu_after = server.stats(), server.cpu_s()
    await stack.inner.aclose()
    statuses = {
        code: count - int(before["statuses"].get(code, 0))
        for code, count in after["statuses"].items()
        if count - int(before["statuses"].get(code, 0))
    }
    return RunResult(
        wall_s=wall,
        cpu_s=cpu,
        results=results,
        calls=sum(len(r.judge_calls) for r in results),
        server_requests=int(after["requests"]) - int(before["requests"]),
        statuses=statuses,
        max_in_flight=int(after["max_in_flight"]),
        server_cpu_s=None
        if server_cpu is None or server_cpu_after is None
        else server_cpu_after - server_cpu,
    )


# ------------------------------------------------------------------------ printing
def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [ln for ln in cpuinfo.read_text().splitlines() if ln.startswith("model name")]
        cpu = names[0].split(":", 1)[1].strip() if names else cpu
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    versions = []
    for package in ("aiohttp", "pydantic"):
        try:
            versions.append(f"{package} {importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return (
        f"machine: {cpu}, {os.cpu_count()} cores ({usable} usable), {platform.system()} "
        f"{platform.release()}; Python {platform.python_version()} "
        f"({platform.python_implementation()}); {', '.join(versions)}"
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), rule, *(line(row) for row in cells[1:])])


def heading(title: str, settings: str) -> None:
    print(f"\n## {title}\n")
    print(MACHINE)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"load average (1 min) at start: {load:.2f} (other processes add noise)")
    print(f"settings: {settings}\n")


MACHINE = ""
STACK = (
    "CachedModel(ReliableModel(OpenAICompatibleModel)) over assay.models.http; mock server "
    "(MockOpenAIServer) in a child process on 127.0.0.1"
)
LIMITER = (
    f"AdaptiveLimiter(initial={LIMITER_INITIAL}, maximum={LIMITER_MAXIMUM}) set explicitly "
    "(default: initial 16, maximum 64)"
)


def fmt_s(seconds: float) -> str:
    return f"{seconds:.2f}"


# ------------------------------------------------------------------------- sections
async def efficiency(items: list[JSON], repeats: int) -> list[str]:
    heading(
        "1. Efficiency",
        f"{len(items)} items x {THROUGHPUT_SCORER}(reason='llm') = 3 judge calls/item; "
        f"concurrency {CONCURRENCY} (asyncio.Semaphore around scorer.run); latency "
        f"{LATENCY_S * 1000:.0f} ms; cache off; {LIMITER}; RetryPolicy defaults; {STACK}; "
        "one warm-up item per run, not timed",
    )
    failures: list[str] = []
    rows = []
    effs = []
    with server_process(latency_s=LATENCY_S) as server:
        for repeat in range(repeats):
            stack = build_stack(server.base_url)
            run = await timed_run(stack, server, items)
            effs.append(run.efficiency)
            rows.append(
                [
                    repeat + 1,
                    len(items),
                    run.ready,
                    run.calls,
                    run.server_requests,
                    fmt_s(run.ideal_s),
                    fmt_s(run.wall_s),
                    f"{run.efficiency:.3f}",
                    f"{run.cpu_s / max(1, run.calls) * 1000:.2f}",
                    run.server_cpu_ms_per_request,
                    run.max_in_flight,
                    stack.limiter.peak_in_flight,
                ]
            )
            if run.ready != len(items):
                failures.append(f"efficiency run {repeat + 1}: {len(items) - run.ready} not ready")
    print(
        table(
            [
                "run",
                "items",
                "ready",
                "judge calls",
                "HTTP requests",
                "ideal s",
                "wall s",
                "efficiency",
                "client CPU ms/call",
                "server CPU ms/request",
                "server max in flight",
                "limiter peak",
            ],
            rows,
        )
    )
    median = statistics.median(effs)
    verdict = "met" if median >= EFFICIENCY_GOAL else "NOT met"
    print(
        f"\nmedian efficiency {median:.3f} (min {min(effs):.3f}, max {max(effs):.3f}); "
        f"goal >= {EFFICIENCY_GOAL}: {verdict}"
    )
    return failures


async def rate_limits(items: list[JSON]) -> list[str]:
    heading(
        "2. Injected 429s",
        f"{len(items)} items x {THROUGHPUT_SCORER}(reason='llm'); concurrency {CONCURRENCY}; "
        f"latency {LATENCY_S * 1000:.0f} ms; rate_limit_rate={RATE_LIMIT} (seeded) with "
        f"Retry-After: {RETRY_AFTER} s, 429s answered at once; cache off; {LIMITER}; "
        "RetryPolicy defaults (6 attempts, 120 s total, backoff base 0.5 s full jitter, "
        f"Retry-After as the minimum wait); {STACK}",
    )
    with server_process(
        latency_s=LATENCY_S, rate_limit_rate=RATE_LIMIT, retry_after=RETRY_AFTER
    ) as server:
        stack = build_stack(server.base_url)
        stats_before = stack.reliable.stats.as_dict()
        run = await timed_run(stack, server, items)
        stats = {k: v - stats_before[k] for k, v in stack.reliable.stats.as_dict().items()}
    limiter = stack.limiter
    lost = len(items) - run.ready
    print(
        table(
            [
                "items",
                "ready",
                "lost",
                "judge calls",
                "HTTP requests",
                "HTTP 429",
                "retries",
                "throttles",
                "failed calls",
                "retry wait s (sum)",
                "limiter decreases",
                "limit at end",
                "wall s",
                "ideal s (no 429s)",
            ],
            [
                [
                    len(items),
                    run.ready,
                    lost,
                    run.calls,
                    run.server_requests,
                    run.statuses.get("429", 0),
                    int(stats["retries"]),
                    int(stats["throttles"]),
                    int(stats["failures"]),
                    f"{stats['retry_wait_s']:.1f}",
                    limiter.decreases,
                    limiter.limit,
                    fmt_s(run.wall_s),
                    fmt_s(run.ideal_s),
                ]
            ],
        )
    )
    print(f"\nzero items lost: {'yes' if lost == 0 else 'NO'}")
    return [f"429 run: {lost} items lost"] if lost else []


async def cache(items: list[JSON]) -> list[str]:
    heading(
        "3. Cache",
        f"{len(items)} items x {THROUGHPUT_SCORER}(reason='llm'), three runs; concurrency "
        f"{CONCURRENCY}; latency {LATENCY_S * 1000:.0f} ms; fresh SQLite cache file "
        "(SQLiteModelCache, policy read-write, temperature 0); run 2 = a new model stack "
        "and a new SQLiteModelCache on the same file (nothing in memory: like a new "
        "process); run 2b = run 2's stack again (the store's in-memory LRU is warm); "
        f"{LIMITER}; {STACK}",
    )
    failures: list[str] = []
    rows = []
    with (
        tempfile.TemporaryDirectory(prefix="assay-bench-") as tmp,
        server_process(latency_s=LATENCY_S) as server,
    ):
        path = Path(tmp) / "cache.db"
        runs: list[tuple[str, RunResult, Stack, int]] = []
        for label in ("1 (fresh file)", "2 (same file, new store)", "2b (same store)"):
            if label.startswith("2b"):
                stack = build_stack(server.base_url, store=runs[-1][2].model.cache)
            else:
                stack = build_stack(server.base_url, cache_path=path)
            requests_before = int(server.stats()["requests"])
            run = await timed_run(stack, server, items)
            requests_all = int(server.stats()["requests"]) - requests_before  # incl. warm-up
            runs.append((label, run, stack, requests_all))
            stats = stack.model.stats
            rows.append(
                [
                    label,
                    run.ready,
                    run.calls,
                    requests_all,
                    stats.hits,
                    stats.misses,
                    stats.writes,
                    stats.errors,
                    fmt_s(run.wall_s),
                ]
            )
            if run.ready != len(items):
                failures.append(f"cache run {label}: {len(items) - run.ready} not ready")
            if not label.startswith("1") and requests_all != 0:
                failures.append(f"cache run {label}: {requests_all} HTTP requests (expected 0)")
    first = runs[0][1]
    print(
        table(
            [
                "run",
                "ready",
                "judge calls",
                "HTTP requests (server, incl. warm-up)",
                "cache hits",
                "cache misses",
                "writes",
                "errors",
                "wall s",
            ],
            rows,
        )
    )
    print()
    for label, run, _, requests_all in runs[1:]:
        ratio = first.wall_s / run.wall_s
        same = all(
            (a.status, a.score, a.reason) == (b.status, b.score, b.reason)
            for a, b in zip(first.results, run.results, strict=True)
        )
        if not same:
            failures.append(f"cache run {label}: results differ from run 1")
        verdict = "met" if ratio >= CACHE_SPEEDUP_GOAL else "NOT met"
        print(
            f"run {label}: {fmt_s(first.wall_s)} s / {run.wall_s:.3f} s = {ratio:.0f}x faster "
            f"(goal >= {CACHE_SPEEDUP_GOAL:.0f}x: {verdict}); zero HTTP requests: "
            f"{'yes' if requests_all == 0 else 'NO'}; same scores and reasons as run 1: "
            f"{'yes' if same else 'NO'}"
        )
    return failures


def cost_run(kind: str) -> JSON:
    """The cost item as an agent run (messages), with a tool call for the tool scorers."""
    from assay.testing.runs import create_test_message, create_tool_invocation

    tools = None
    if kind == "tools":
        tools = [
            create_tool_invocation(
                "call-1",
                "search_web",
                {"query": "Eiffel Tower construction dates height"},
                result={"snippets": ["built 1887-1889", "330 m tall"]},
            )
        ]
    return {
        "input": {
            "inputMessages": [create_test_message(QUESTION, "user", "user-1")],
            "rememberedMessages": [],
            "systemMessages": [{"role": "system", "content": SYSTEM_PROMPT}],
            "taggedSystemMessages": {},
        },
        "output": [create_test_message(ANSWER, "assistant", "assistant-1", tools)],
        "context": list(CONTEXT),
        "ground_truth": GROUND_TRUTH,
    }


EXTRA_PARAMS: dict[str, JSON] = {
    "noise-sensitivity": {
        "baseline_response": ANSWER,
        "noisy_query": f"{QUESTION} I read somewhere that it was moved to London in 1950.",
        "noise_type": "misinformation",
    },
    "rubric": {
        "criteria": [
            {"description": "States when the tower was built."},
            {"description": "States the tower's height."},
            {"description": "Makes no claim the question did not ask about.", "required": False},
        ]
    },
    "multi-turn-judge": {
        "criterion": "The assistant answers both parts of the question with correct facts."
    },
    "tool-call-accuracy-llm": {
        "available_tools": [
            {"id": "search_web", "description": "Search the web and return text snippets."},
            {"id": "get_weather", "description": "Current weather for a city."},
        ]
    },
    "trajectory-accuracy-llm": {
        "expected_trajectory": [{"name": "search_web", "step_type": "tool_call"}]
    },
}
TOOL_SCORERS = ("tool-call-accuracy-llm", "trajectory-accuracy-llm")


async def cost() -> list[str]:
    import assay
    from assay.testing.openai_server import MockOpenAIServer

    judge_types = [info for info in assay.list_scorers() if info.kind == "judge"]
    passages = ", ".join(str(len(p.split())) for p in CONTEXT)
    heading(
        "4. Judge calls and prompt tokens per item",
        f"{len(judge_types)} judge scorers (assay.list_scorers(), kind == 'judge'); one item: "
        f"a question ({len(QUESTION.split())} words), a 3-sentence answer "
        f"({len(ANSWER.split())} words), 3 context passages ({passages} words), a ground "
        f"truth sentence ({len(GROUND_TRUTH.split())} words), as an agent run (system "
        "prompt, user message, assistant message; the tool scorers' message has one "
        "search_web call); mock answers from plausible_answer; structured output 'strict' "
        "(schema in response_format, not in the messages); cache off; mock server "
        "in-process (its request records give the message sizes)",
    )
    print(
        "prompt tok (mock) = the mock server's usage.prompt_tokens (whitespace words of all "
        "messages); msgs chars/4 = characters of all messages / 4 (close to BPE tokens for "
        "English); +schema chars/4 = the response_format JSON / 4, which real providers also "
        "bill as prompt tokens.\n"
    )
    failures: list[str] = []
    rows = []
    goal_line = ""
    with MockOpenAIServer(responder=plausible_answer) as server:
        stack = build_stack(server.base_url)
        for info in judge_types:
            modes: list[JSON] = [{}]
            if "reason" in info.params_schema.get("properties", {}):
                modes.append({"reason": "template"})
            for mode in modes:
                params = {**EXTRA_PARAMS.get(info.type, {}), **mode}
                scorer = assay.create_scorer(info.type, **params).with_judge_model(stack.model)
                run = cost_run("tools" if info.type in TOOL_SCORERS else "plain")
                server.reset()
                result = await scorer.run(**run)
                bodies = [r.body or {} for r in server.chat_requests]
                message_chars = sum(
                    len(str(m.get("content", ""))) for b in bodies for m in b.get("messages", [])
                )
                schema_chars = sum(
                    len(json.dumps(b["response_format"])) for b in bodies if "response_format" in b
                )
                prompt_tokens = sum(c.usage.input_tokens for c in result.judge_calls)
                completion_tokens = sum(c.usage.output_tokens for c in result.judge_calls)
                reason = "-" if len(modes) == 1 else str(mode.get("reason", "llm (default)"))
                rows.append(
                    [
                        info.type,
                        reason,
                        len(bodies),
                        prompt_tokens,
                        round(message_chars / 4),
                        round(schema_chars / 4),
                        completion_tokens,
                        result.status,
                    ]
                )
                if result.status != "ready":
                    failures.append(f"cost {info.type} {mode}: {result.status}: {result.error}")
                if info.type == "faithfulness" and mode.get("reason") == "template":
                    ok = len(bodies) <= 2 and prompt_tokens <= 1100 and message_chars / 4 <= 1100
                    goal_line = (
                        f"faithfulness, reason='template': {len(bodies)} calls, {prompt_tokens} "
                        f"prompt tokens (mock), {message_chars / 4:.0f} (chars/4), "
                        f"{(message_chars + schema_chars) / 4:.0f} with the schema; goal <= 2 "
                        f"calls and <= 1,100 prompt tokens: {'met' if ok else 'NOT met'}"
                    )
        await stack.inner.aclose()
    print(
        table(
            [
                "scorer",
                "reason",
                "judge calls",
                "prompt tok (mock)",
                "msgs chars/4",
                "+schema chars/4",
                "completion tok (mock)",
                "status",
            ],
            rows,
        )
    )
    print(f"\n{goal_line}")
    return failures


# ------------------------------------------------------------------- the user path
USER_PATH_SIZES = (200, 1000)
USER_PATH_GOALS = {200: 0.7, 1000: 0.85}
FAULT_RATE = 0.1


def faulty_answer(status: int, rate: float, seed: int = 0) -> Callable[[JSON], Any]:
    """``plausible_answer``, but a seeded ``rate`` of the requests get HTTP ``status`` (with
    ``Retry-After: 1`` for a 429) after the usual latency."""
    import random

    from assay.testing.openai_server import MockReply

    rng = random.Random(seed)

    def answer(body: JSON) -> Any:
        if rng.random() < rate:
            headers = {"Retry-After": "1"} if status == 429 else {}
            return MockReply(status=status, headers=headers)
        return plausible_answer(body)

    return answer


def _serve_faulty(conn: Connection, options: JSON) -> None:
    """Child process: the mock server with ``faulty_answer`` (see ``_serve``)."""
    from assay.testing.openai_server import MockOpenAIServer

    status, rate = options.pop("fault_status"), options.pop("fault_rate")
    responder = faulty_answer(status, rate) if status else plausible_answer
    server = MockOpenAIServer(responder=responder, record_requests=False, **options)
    server.start()
    conn.send(server.base_url)
    with suppress(EOFError):
        conn.recv()
    server.stop()


def _user_run(
    conn: Connection,
    base_url: str,
    count: int,
    workdir: str,
    spawned_at: float | None = None,
) -> None:
    """Child process: what a user's script does, timed from the ``run_evals`` call: default
    settings except ``concurrency``; the judge model is a model string with ``base_url`` (so
    model resolution, the HTTP client, the limiter and the default SQLite call cache in a new
    working directory all start inside the timed call). ``workdir`` belongs to the parent,
    which removes it. ``spawned_at`` (the parent's ``time.time()`` before starting this
    process): a timeline run, whose transport is wrapped to timestamp the first request, the
    first answer and the last answer."""
    os.chdir(workdir)
    os.environ.setdefault("OPENAI_API_KEY", "sk-mock")
    marks: dict[str, float] = {}
    if spawned_at is not None:
        _timestamp_requests(marks)
    import assay

    items = [
        {
            "id": f"item-{i}",
            "input": row["input"],
            "output": row["output"],
            "context": row["context"],
        }
        for i, row in enumerate(throughput_item(i) for i in range(count))
    ]
    scorer = {
        "type": THROUGHPUT_SCORER,
        "params": {
            **THROUGHPUT_PARAMS,
            "model": "openai-compatible/mock-judge",
            "base_url": base_url,
        },
    }
    called_at = time.time()
    cpu, started = time.process_time(), time.perf_counter()
    run = assay.run_evals(items, None, [scorer], concurrency=CONCURRENCY, progress=False)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    scores = [r.scores[THROUGHPUT_SCORER] for r in run.results]
    timeline = None
    if spawned_at is not None:
        timeline = {
            "run_evals called": called_at - spawned_at,
            **{name: at - called_at for name, at in marks.items()},
            "run_evals returned": wall,
        }
    conn.send(
        {
            "timeline": timeline,
            "wall_s": wall,
            "cpu_s": cpu,
            "load": os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"),
            "results": len(run.results),
            "ready": sum(1 for s in scores if s.status == "ready"),
            "errors": [s.error.message for s in scores if s.error is not None][:3],
            "calls": sum(len(s.judge_calls) for s in scores),
        }
    )


def _timestamp_requests(marks: dict[str, float]) -> None:
    """Wrap the transport to record (``time.time()``) when the first request starts (the
    run's own start-up is done), when the HTTP client is ready (``aiohttp`` imported, the
    session made), and when the first and the last answers arrive (a timeline run only)."""
    from assay.models import http

    post, open_session = http.AiohttpTransport.post, http.AiohttpTransport._open

    async def timed_open(self: Any) -> Any:
        session = await open_session(self)
        marks.setdefault("HTTP client ready", time.time())
        return session

    async def timed_post(
        self: Any, path: str, body: bytes, headers: Mapping[str, str]
    ) -> http.HTTPReply:
        marks.setdefault("first request", time.time())
        reply = await post(self, path, body, headers)
        marks.setdefault("first answer", time.time())
        marks["last answer"] = time.time()
        return reply

    http.AiohttpTransport.post = timed_post  # type: ignore[method-assign]
    http.AiohttpTransport._open = timed_open  # type: ignore[method-assign]


def user_run(base_url: str, count: int, *, timeline: bool = False) -> JSON:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    with tempfile.TemporaryDirectory(prefix="assay-judge-user-") as workdir:
        spawned_at = time.time() if timeline else None
        process = context.Process(
            target=_user_run, args=(child, base_url, count, workdir, spawned_at), daemon=True
        )
        process.start()
        try:
            outcome: JSON = parent.recv()
        finally:
            process.join(30)
    return outcome


@contextmanager
def faulty_server(fault_status: int, fault_rate: float) -> Iterator[ServerHandle]:
    context = multiprocessing.get_context("spawn")
    parent, child = context.Pipe()
    options = {"latency_s": LATENCY_S, "fault_status": fault_status, "fault_rate": fault_rate}
    process = context.Process(target=_serve_faulty, args=(child, options), daemon=True)
    process.start()
    try:
        yield ServerHandle(str(parent.recv()), process.pid)
    finally:
        with suppress(OSError):
            parent.send("stop")
        process.join(10)
        if process.is_alive():
            process.terminate()
            process.join(5)


def timeline_table(base_url: str) -> str:
    """One timestamped run per size: seconds from the ``run_evals`` call (the first column:
    from the process's start to that call, outside the timed part)."""
    phases = [
        "first request",
        "HTTP client ready",
        "first answer",
        "last answer",
        "run_evals returned",
    ]
    rows = []
    for count in USER_PATH_SIZES:
        outcome = user_run(base_url, count, timeline=True)
        marks = outcome["timeline"]
        rows.append(
            [
                count,
                f"{marks['run_evals called']:.2f}",
                *(f"{marks[name]:.3f}" if name in marks else "-" for name in phases),
                f"{count * 3 * LATENCY_S / CONCURRENCY:.3f}",
                f"{outcome['load']:.1f}",
            ]
        )
    return table(
        [
            "items",
            "process start -> run_evals called s",
            *(f"{name} s" for name in phases),
            "ideal s",
            "load",
        ],
        rows,
    )


async def user_path(repeats: int, timeline: bool = False) -> list[str]:
    heading(
        "0. The user path: run_evals with default settings, start-up included",
        f"a fresh process per run: items as dicts (input, output, context), no target, "
        f"scorer {{'type': '{THROUGHPUT_SCORER}', 'params': {{'reason': 'llm', 'model': "
        f"'openai-compatible/mock-judge', 'base_url': ...}}}}; run_evals(..., concurrency="
        f"{CONCURRENCY}, progress=False), everything else default (limiter, retries, the "
        f"SQLite call cache in a new working directory); timed from the run_evals call; "
        f"latency {LATENCY_S * 1000:.0f} ms; efficiency = judge calls x latency / "
        f"{CONCURRENCY} / wall",
    )
    failures: list[str] = []
    rows = []
    cases = [
        ("none", 0, 0.0),
        ("429, Retry-After 1 s", 429, FAULT_RATE),
        ("HTTP 500", 500, FAULT_RATE),
    ]
    timelines = ""
    for label, status, rate in cases:
        with faulty_server(status, rate) as server:
            if timeline and not status:
                timelines = timeline_table(server.base_url)
            for count in USER_PATH_SIZES:
                before = server.stats()["statuses"]
                runs = [
                    user_run(server.base_url, count) for _ in range(repeats if not status else 1)
                ]
                after = server.stats()["statuses"]
                faults = int(after.get(str(status), 0)) - int(before.get(str(status), 0))
                effs = [r["calls"] * LATENCY_S / CONCURRENCY / r["wall_s"] for r in runs]
                median = statistics.median(effs)
                last = runs[-1]
                lost = count - last["ready"]
                goal = USER_PATH_GOALS[count]
                verdict = "-" if status else ("met" if median >= goal else "NOT met")
                rows.append(
                    [
                        label,
                        count,
                        last["ready"],
                        lost,
                        last["calls"],
                        faults if status else "-",
                        " / ".join(f"{r['wall_s']:.2f}" for r in runs),
                        " / ".join(f"{e:.3f}" for e in effs),
                        f"{median:.3f}",
                        " / ".join(f"{r['cpu_s'] / r['calls'] * 1000:.2f}" for r in runs),
                        " / ".join(f"{r['load']:.1f}" for r in runs),
                        f">= {goal}" if not status else "0 lost",
                        verdict if not status else ("met" if lost == 0 else "NOT met"),
                    ]
                )
                if lost:
                    failures.append(
                        f"user path, {label}, {count} items: {lost} lost {last['errors']}"
                    )
    print(
        table(
            [
                "faults",
                "items",
                "ready",
                "lost",
                "judge calls",
                "HTTP errors answered (all runs)",
                "wall s (runs)",
                "efficiency (runs)",
                "median",
                "client CPU ms/call (runs)",
                "load (runs)",
                "goal",
                "verdict",
            ],
            rows,
        )
    )
    if timelines:
        print("\nWhere a run's wall time goes (one timestamped run per size, not in the figures):")
        print(timelines)
    return failures


# ----------------------------------------------------------------------------- main
async def main(items_count: int, repeats: int, sections: set[str], timeline: bool = False) -> int:
    global MACHINE
    MACHINE = machine()
    print("# Judge throughput benchmark")
    items = [throughput_item(i) for i in range(items_count)]
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("user", lambda: user_path(repeats, timeline)),
        ("efficiency", lambda: efficiency(items, repeats)),
        ("429", lambda: rate_limits(items)),
        ("cache", lambda: cache(items)),
        ("cost", cost),
    ]
    failures: list[str] = []
    started = time.perf_counter()
    for name, step in steps:
        if name in sections:
            failures += await step()
    print(f"\ntotal benchmark time: {time.perf_counter() - started:.0f} s")
    for failure in failures:
        print(f"CHECK FAILED: {failure}")
    return 1 if failures else 0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=ITEMS, help="items per throughput run")
    parser.add_argument("--repeats", type=int, default=3, help="efficiency runs (median)")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=["user", "efficiency", "429", "cache", "cost"],
        default=["user", "efficiency", "429", "cache", "cost"],
        help="run only these sections",
    )
    parser.add_argument(
        "--timeline",
        action="store_true",
        help="user path: one more timestamped run per size (where the wall time goes)",
    )
    return parser.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    sys.exit(asyncio.run(main(args.items, args.repeats, set(args.only), args.timeline)))
