"""The web UI's live pages: the monitors list and one monitor's counts and latest rows."""

from __future__ import annotations

from fastapi.testclient import TestClient

from assay.live import monitor
from assay.store import Store
from assay.types import ItemResult, RunInfo, TargetSpec


def test_live_pages_show_the_monitor(store: Store, client: TestClient) -> None:
    wrapped = monitor(
        lambda text: text,
        scorers=["exact-match"],
        rate=1.0,
        store=store,
        name="web/<bot> #1?",
        budget_usd=1.0,
        observation_id=lambda text: f"id-{text}",
    )
    for i in range(3):
        wrapped(f"q{i}")
    wrapped.monitor.close()
    listing = client.get("/live")
    assert listing.status_code == 200 and "web/&lt;bot&gt; #1?" in listing.text
    # the list links the monitor as one escaped segment, and that link answers
    assert 'href="/live/web%2F%3Cbot%3E%20%231%3F"' in listing.text
    page = client.get("/live/web%2F%3Cbot%3E%20%231%3F")
    assert page.status_code == 200
    assert "id-q2" in page.text and 'data-testid="live-budget"' in page.text
    assert "<bot>" not in page.text  # escaped
    assert client.get("/live/nobody").status_code == 404
    # the live run is a run: its page (linked from the monitor's) shows its observations
    run_id = store.live.run_ids("web/<bot> #1?")[0]
    assert f'href="/runs/{run_id}"' in page.text
    run_page = client.get(f"/runs/{run_id}")
    assert run_page.status_code == 200
    assert all(f"id-q{i}" in run_page.text for i in range(3))
    # an observation's own page says how its row came to be stored: sampled, at which rate
    item_page = client.get(f"/runs/{run_id}/items/id-q1")
    assert item_page.status_code == 200
    assert 'data-testid="item-meta">sampled at rate 1.0 · scored</p>' in item_page.text


def test_a_batch_runs_item_page_has_no_live_line(store: Store, client: TestClient) -> None:
    store.runs.create(RunInfo(id="batch-1", target=TargetSpec(kind="callable", label="f")))
    store.runs.write_results("batch-1", [ItemResult(item_id="i0", output="x")])
    page = client.get("/runs/batch-1/items/i0")
    assert page.status_code == 200 and 'data-testid="item-output"' in page.text
    assert 'data-testid="item-meta"' not in page.text
