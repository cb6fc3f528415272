"""Lecture Copilot shared code: settings, database, media storage, event bus, models.

Every service under ``services/`` imports from here and from nowhere else in the repo; this package
imports no service and none of the operator tooling above it (``lecturecopilot_ops``), save the
``python -m lecturecopilot`` wiring of ``__main__.py`` (tests/unit/test_service_boundaries.py).
"""
