"""lm-evaluation-harness-style benchmark tasks: configs, prompts, filters, metrics, scorers."""
