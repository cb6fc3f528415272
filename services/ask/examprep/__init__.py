"""Exam prep: multiple-choice practice questions written from a lecture (pure functions).

A question has a stem, 4 options (exactly one correct), a short explanation and a citation
(``cite_lecture_id``, ``cite_t_s`` = the second, from the start of the media, at which the
explaining sentence starts). Sources, all from the course's own text (``sentences`` rows):

- **extractive** (no key): key sentences of the lecture become cloze questions.
  *time* questions blank a running time in a sentence that names a term of the course
  ("the merge function takes theta of n time"); the distractors are other running-time
  classes (n log n, log n, constant, n squared, ...) in the words the course uses for them,
  minus any class the course states for that same term. *term* questions blank a distinctive
  term in a defining sentence ("____ is a ..."); the distractors are other course terms of the
  same role (algorithm names for an algorithm, data structures for a data structure, ...),
  minus any the course states the same thing of. Nothing is invented: every option is a
  phrase that occurs in the course text.
- **model** (a cloud writer's ``complete()``): one question per chapter passage, whose quote
  must be found in the passage; ``method`` records the model name.

Every question then goes through :func:`check`, a blind re-answer from the cited passage
alone (the explaining sentence and its neighbours): containment of the marked option in the
explaining sentence, no other option stated there or for the same subject in the passage, and
an embedding vote (each option filled into the statement, cosine with the passage sentences)
that must pick the marked option with a margin. Questions failing it are dropped; the share
dropped is reported by ``python -m evals.examprep``.

Modules: :mod:`.terms` (text helpers, course terms, running times, distractors), :mod:`.questions`
(what a question is; the extractive writer), :mod:`.check` (the blind check), :mod:`.model` (questions
by a cloud model), :mod:`.intent` ("quiz me on hashing" → "hashing", a pasted graded item, assessment
mode), :mod:`.pointer` (the answer to "quiz me on ..."), :mod:`.store` (the sets in Postgres). The
names of the pure modules are re-exported here.
"""


from .check import CheckResult, _without, check, checked, cited_passage, filled
from .intent import ASSESSMENT_REPLY, graded_options, looks_like_graded_item, quiz_intent, reveals, \
    strip_answer_reveals
from .model import MODEL_PROMPT, model_questions
from .questions import BLANK, EmbedFn, LectureSentence, Question, extractive_questions, statement_of
from .terms import contains, course_terms, known_terms, norm, role_of, running_times, same_term, term_distractors, \
    terms_in, time_distractors, time_vocabulary

__all__ = ["ASSESSMENT_REPLY", "BLANK", "CheckResult", "EmbedFn", "LectureSentence", "MODEL_PROMPT", "Question",
           "_without", "check", "checked", "cited_passage", "contains", "course_terms", "extractive_questions",
           "filled", "graded_options", "known_terms", "looks_like_graded_item", "model_questions", "norm",
           "quiz_intent", "reveals", "role_of", "running_times", "same_term", "statement_of", "strip_answer_reveals",
           "term_distractors", "terms_in", "time_distractors", "time_vocabulary"]
