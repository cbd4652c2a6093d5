"""Run summaries: compact score columns, their statistics, and the streaming accumulator.

This room sits below the runner (which summarises while it runs) and below ``analysis``
(which compares and reports stored runs): both read the same columns and statistics.
"""
