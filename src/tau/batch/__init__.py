"""``tau batch``: many headless sessions over a JSONL file of tasks, on local worker processes.

Each task gets its own working copy, runs as one SDK session (``tau.runtime.sdk``), is judged by
its ``check`` command and ends as one line in ``results.jsonl``. Nothing here is imported by the
other commands: ``tau -p`` never pays for it.
"""
