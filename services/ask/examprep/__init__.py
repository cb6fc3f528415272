"""Exam prep: multiple-choice practice questions written from a lecture (pure functions).

A question has a stem, 4 options (exactly one correct), a short explanation and a citation
(``cite_lecture_id``, ``cite_t_s`` = the second, from the start of the media, at which the
explaining sentence starts). Sources, all from the course's own text (``sentences`` rows):

- **extractive** (no key), for a lecture of any field: key sentences of the lecture become cloze
  questions. A sentence qualifies when it defines a term ("____ is the process by which ...",
  "... is called ____") or teaches a cause, result, comparison, quantity or step. *term* questions
  blank a term of the course, found statistically (a phrase the course says at least twice, or a
  word rare in general English by wordfreq; no subject's word list); the distractors are other
  course terms of the same shape and word class, nearest in meaning (embedding cosine), minus
  near-synonyms and any the course says the same thing of. *quantity* questions blank a spoken
  number or formula with its unit ("twenty five degrees celsius", "n log n time", "p minus one
  times q minus one"); the distractors are other quantities the course says with the same unit,
  never one it states for the same subject, never another spelling of the same value. Nothing
  is invented: every option is a phrase that occurs in the course text. A lecture gets one
  question per two minutes, at least 8 (:func:`target_questions`), where its sentences allow.
- **model** (a cloud writer's ``complete()``): one question per chapter passage, whose quote
  must be found in the passage; ``method`` records the model name.

Every question then goes through :func:`check`, a blind re-answer from the cited passage
alone (the explaining sentence and its neighbours): containment of the marked option in the
explaining sentence, no other option stated there or for the same subject in the passage, and
an embedding vote (each option filled into the statement, cosine with the passage sentences)
that must pick the marked option with a margin. Questions failing it are dropped; the share
dropped is reported by ``python -m evals.examprep``.

Modules: :mod:`.words` (containment, tokens, word frequency), :mod:`.quantities` (spoken numbers and
formulas with their units), :mod:`.terms` (the course's terms and the distractors), :mod:`.questions`
(what a question is; the extractive writer), :mod:`.check` (the blind check), :mod:`.model` (questions
by a cloud model), :mod:`.intent` ("quiz me on hashing" → "hashing", a pasted graded item, assessment
mode), :mod:`.pointer` (the answer to "quiz me on ..."), :mod:`.store` (the sets in Postgres). The
names of the pure modules are re-exported here.
"""


from .check import CheckResult, _without, check, checked, cited_passage, filled
from .intent import ASSESSMENT_REPLY, graded_options, looks_like_graded_item, quiz_intent, reveals, \
    strip_answer_reveals
from .model import MODEL_PROMPT, model_questions
from .questions import BLANK, EmbedFn, LectureSentence, Question, extractive_questions, statement_of, \
    target_questions
from .terms import DistractorPicks, Vocabulary, canonical, contains, course_terms, course_vocabulary, known_terms, norm, \
    quantities_in, quantity_distractors, same_term, term_distractors, terms_in, unit_of

__all__ = ["ASSESSMENT_REPLY", "BLANK", "CheckResult", "DistractorPicks", "EmbedFn", "LectureSentence", "MODEL_PROMPT", "Question",
           "_without", "check", "checked", "cited_passage", "contains", "course_terms", "extractive_questions",
           "filled", "graded_options", "known_terms", "looks_like_graded_item", "model_questions", "norm",
           "quiz_intent", "reveals", "same_term", "statement_of", "strip_answer_reveals", "target_questions",
           "term_distractors", "terms_in", "Vocabulary", "canonical", "course_vocabulary", "quantities_in",
           "quantity_distractors", "unit_of"]
