"""Kept importable for the gateway (which will reach practice questions through ask's gRPC):
exam prep's store is :mod:`services.ask.examprep.store`."""

from .examprep.store import MAX_COMMENT_CHARS, REGENERATE_EVERY_S, Generation, NoQuestions, NotFound, QuizError, \
    RegenerationTooSoon, delete_question, edit_question, generate, get_question, lecture_material, list_questions, \
    record_attempt, report_question, validate  # noqa: F401
