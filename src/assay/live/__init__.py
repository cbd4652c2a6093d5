"""Live scoring: a sample of a running application's calls scored in the background and
stored as live runs (``assay.monitor``), and recorded traffic scored offline (ingest)."""

from assay.live.fate import totals
from assay.live.monitoring import Monitor, MonitoredAgent, MonitoredTarget, live_run_id, monitor

__all__ = ["Monitor", "MonitoredAgent", "MonitoredTarget", "live_run_id", "monitor", "totals"]
