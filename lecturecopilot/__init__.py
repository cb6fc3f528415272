"""Lecture Copilot shared code: settings, database, media storage, event bus, models.

Every service under ``services/`` imports from here and from nowhere else in the repo.
"""
