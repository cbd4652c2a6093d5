"""``sdk_import``: a judge model string starts the SDK import in the background; others not."""

from __future__ import annotations

import subprocess
import sys

from assay.models.providers import PROVIDERS
from assay.models.sdk_import import OPENAI_PREFIXES


def _fresh(code: str) -> str:
    """Run ``code`` in a new interpreter (this one has imported the SDK already)."""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return done.stdout.strip()


def test_the_prefixes_are_the_sdk_providers() -> None:
    assert set(PROVIDERS) == OPENAI_PREFIXES


def test_a_lazy_model_of_an_sdk_provider_imports_the_sdk_in_the_background() -> None:
    out = _fresh(
        "import sys, threading\n"
        "from assay.models.resolve import LazyModel\n"
        "from assay.models import sdk_import\n"
        "before = 'openai' in sys.modules\n"
        "LazyModel('openai-compatible/judge', base_url='http://127.0.0.1:9/v1')\n"
        "thread = sdk_import._thread\n"
        "started = thread is not None and thread is not threading.current_thread()\n"
        "sdk_import.wait_for_openai()\n"
        "print(before, started, 'openai.types.chat' in sys.modules)\n"
    )
    assert out == "False True True"


def test_other_prefixes_do_not_import_the_sdk() -> None:
    out = _fresh(
        "import sys\n"
        "from assay.models.resolve import LazyModel\n"
        "from assay.models import sdk_import\n"
        "LazyModel('local/tiny'); LazyModel('myco/model')\n"
        "print(sdk_import._thread is None, 'openai' in sys.modules)\n"
    )
    assert out == "True False"


def test_making_an_openai_compatible_model_starts_the_import() -> None:
    out = _fresh(
        "import sys\n"
        "from assay.models.openai_compat import OpenAICompatibleModel\n"
        "from assay.models import sdk_import\n"
        "OpenAICompatibleModel('m', base_url='http://127.0.0.1:9/v1')\n"
        "sdk_import.wait_for_openai()\n"
        "print('openai.types.chat' in sys.modules)\n"
    )
    assert out == "True"
