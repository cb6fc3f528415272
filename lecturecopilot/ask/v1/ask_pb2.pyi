from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Empty(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ListPracticeRequest(_message.Message):
    __slots__ = ("lecture_id", "course_id", "with_answers")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    COURSE_ID_FIELD_NUMBER: _ClassVar[int]
    WITH_ANSWERS_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    course_id: str
    with_answers: bool
    def __init__(self, lecture_id: _Optional[str] = ..., course_id: _Optional[str] = ..., with_answers: _Optional[bool] = ...) -> None: ...

class PracticeQuestion(_message.Message):
    __slots__ = ("id", "course_id", "lecture_id", "lecture_number", "question", "options", "citation", "answer_index", "explanation", "method", "report_comments", "reports", "attempts", "wrong", "checkpoint_attempts", "checkpoint_wrong")
    ID_FIELD_NUMBER: _ClassVar[int]
    COURSE_ID_FIELD_NUMBER: _ClassVar[int]
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    LECTURE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    CITATION_FIELD_NUMBER: _ClassVar[int]
    ANSWER_INDEX_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    METHOD_FIELD_NUMBER: _ClassVar[int]
    REPORT_COMMENTS_FIELD_NUMBER: _ClassVar[int]
    REPORTS_FIELD_NUMBER: _ClassVar[int]
    ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    WRONG_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_ATTEMPTS_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_WRONG_FIELD_NUMBER: _ClassVar[int]
    id: str
    course_id: str
    lecture_id: str
    lecture_number: int
    question: str
    options: _containers.RepeatedScalarFieldContainer[str]
    citation: Citation
    answer_index: int
    explanation: str
    method: str
    report_comments: _containers.RepeatedScalarFieldContainer[str]
    reports: int
    attempts: int
    wrong: int
    checkpoint_attempts: int
    checkpoint_wrong: int
    def __init__(self, id: _Optional[str] = ..., course_id: _Optional[str] = ..., lecture_id: _Optional[str] = ..., lecture_number: _Optional[int] = ..., question: _Optional[str] = ..., options: _Optional[_Iterable[str]] = ..., citation: _Optional[_Union[Citation, _Mapping]] = ..., answer_index: _Optional[int] = ..., explanation: _Optional[str] = ..., method: _Optional[str] = ..., report_comments: _Optional[_Iterable[str]] = ..., reports: _Optional[int] = ..., attempts: _Optional[int] = ..., wrong: _Optional[int] = ..., checkpoint_attempts: _Optional[int] = ..., checkpoint_wrong: _Optional[int] = ...) -> None: ...

class ListPracticeResponse(_message.Message):
    __slots__ = ("questions", "generated_at", "regenerate_every_s")
    QUESTIONS_FIELD_NUMBER: _ClassVar[int]
    GENERATED_AT_FIELD_NUMBER: _ClassVar[int]
    REGENERATE_EVERY_S_FIELD_NUMBER: _ClassVar[int]
    questions: _containers.RepeatedCompositeFieldContainer[PracticeQuestion]
    generated_at: str
    regenerate_every_s: float
    def __init__(self, questions: _Optional[_Iterable[_Union[PracticeQuestion, _Mapping]]] = ..., generated_at: _Optional[str] = ..., regenerate_every_s: _Optional[float] = ...) -> None: ...

class PracticeQuestionRef(_message.Message):
    __slots__ = ("question_id",)
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    question_id: str
    def __init__(self, question_id: _Optional[str] = ...) -> None: ...

class OptionList(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, values: _Optional[_Iterable[str]] = ...) -> None: ...

class UpdatePracticeQuestionRequest(_message.Message):
    __slots__ = ("question_id", "question", "options", "answer_index", "explanation", "cite_lecture_id", "cite_t_s")
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    ANSWER_INDEX_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    CITE_LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    CITE_T_S_FIELD_NUMBER: _ClassVar[int]
    question_id: str
    question: str
    options: OptionList
    answer_index: int
    explanation: str
    cite_lecture_id: str
    cite_t_s: float
    def __init__(self, question_id: _Optional[str] = ..., question: _Optional[str] = ..., options: _Optional[_Union[OptionList, _Mapping]] = ..., answer_index: _Optional[int] = ..., explanation: _Optional[str] = ..., cite_lecture_id: _Optional[str] = ..., cite_t_s: _Optional[float] = ...) -> None: ...

class ReportPracticeQuestionRequest(_message.Message):
    __slots__ = ("question_id", "comment")
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    question_id: str
    comment: str
    def __init__(self, question_id: _Optional[str] = ..., comment: _Optional[str] = ...) -> None: ...

class PracticeAnswer(_message.Message):
    __slots__ = ("question_id", "choice", "checkpoint")
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    CHOICE_FIELD_NUMBER: _ClassVar[int]
    CHECKPOINT_FIELD_NUMBER: _ClassVar[int]
    question_id: str
    choice: int
    checkpoint: bool
    def __init__(self, question_id: _Optional[str] = ..., choice: _Optional[int] = ..., checkpoint: _Optional[bool] = ...) -> None: ...

class AnswerPracticeRequest(_message.Message):
    __slots__ = ("answers", "person", "staff")
    ANSWERS_FIELD_NUMBER: _ClassVar[int]
    PERSON_FIELD_NUMBER: _ClassVar[int]
    STAFF_FIELD_NUMBER: _ClassVar[int]
    answers: _containers.RepeatedCompositeFieldContainer[PracticeAnswer]
    person: str
    staff: bool
    def __init__(self, answers: _Optional[_Iterable[_Union[PracticeAnswer, _Mapping]]] = ..., person: _Optional[str] = ..., staff: _Optional[bool] = ...) -> None: ...

class PracticeResult(_message.Message):
    __slots__ = ("question_id", "choice", "correct", "answer_index", "explanation", "citation")
    QUESTION_ID_FIELD_NUMBER: _ClassVar[int]
    CHOICE_FIELD_NUMBER: _ClassVar[int]
    CORRECT_FIELD_NUMBER: _ClassVar[int]
    ANSWER_INDEX_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    CITATION_FIELD_NUMBER: _ClassVar[int]
    question_id: str
    choice: int
    correct: bool
    answer_index: int
    explanation: str
    citation: Citation
    def __init__(self, question_id: _Optional[str] = ..., choice: _Optional[int] = ..., correct: _Optional[bool] = ..., answer_index: _Optional[int] = ..., explanation: _Optional[str] = ..., citation: _Optional[_Union[Citation, _Mapping]] = ...) -> None: ...

class AnswerPracticeResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[PracticeResult]
    def __init__(self, results: _Optional[_Iterable[_Union[PracticeResult, _Mapping]]] = ...) -> None: ...

class GeneratePracticeRequest(_message.Message):
    __slots__ = ("lecture_id",)
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    def __init__(self, lecture_id: _Optional[str] = ...) -> None: ...

class GeneratePracticeResponse(_message.Message):
    __slots__ = ("method", "written", "kept", "seconds", "question_ids")
    METHOD_FIELD_NUMBER: _ClassVar[int]
    WRITTEN_FIELD_NUMBER: _ClassVar[int]
    KEPT_FIELD_NUMBER: _ClassVar[int]
    SECONDS_FIELD_NUMBER: _ClassVar[int]
    QUESTION_IDS_FIELD_NUMBER: _ClassVar[int]
    method: str
    written: int
    kept: int
    seconds: float
    question_ids: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, method: _Optional[str] = ..., written: _Optional[int] = ..., kept: _Optional[int] = ..., seconds: _Optional[float] = ..., question_ids: _Optional[_Iterable[str]] = ...) -> None: ...

class AnswerRef(_message.Message):
    __slots__ = ("answer_id",)
    ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    answer_id: str
    def __init__(self, answer_id: _Optional[str] = ...) -> None: ...

class AnswerInfo(_message.Message):
    __slots__ = ("answer_id", "course_id")
    ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    COURSE_ID_FIELD_NUMBER: _ClassVar[int]
    answer_id: str
    course_id: str
    def __init__(self, answer_id: _Optional[str] = ..., course_id: _Optional[str] = ...) -> None: ...

class EmbedRequest(_message.Message):
    __slots__ = ("texts",)
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    texts: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, texts: _Optional[_Iterable[str]] = ...) -> None: ...

class Vector(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class EmbedResponse(_message.Message):
    __slots__ = ("vectors",)
    VECTORS_FIELD_NUMBER: _ClassVar[int]
    vectors: _containers.RepeatedCompositeFieldContainer[Vector]
    def __init__(self, vectors: _Optional[_Iterable[_Union[Vector, _Mapping]]] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("course_id", "query", "k", "lecture_id")
    COURSE_ID_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    K_FIELD_NUMBER: _ClassVar[int]
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    course_id: str
    query: str
    k: int
    lecture_id: str
    def __init__(self, course_id: _Optional[str] = ..., query: _Optional[str] = ..., k: _Optional[int] = ..., lecture_id: _Optional[str] = ...) -> None: ...

class Passage(_message.Message):
    __slots__ = ("lecture_id", "lecture_number", "start_s", "end_s", "text", "score")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    LECTURE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    START_S_FIELD_NUMBER: _ClassVar[int]
    END_S_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    lecture_number: int
    start_s: float
    end_s: float
    text: str
    score: float
    def __init__(self, lecture_id: _Optional[str] = ..., lecture_number: _Optional[int] = ..., start_s: _Optional[float] = ..., end_s: _Optional[float] = ..., text: _Optional[str] = ..., score: _Optional[float] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("results",)
    RESULTS_FIELD_NUMBER: _ClassVar[int]
    results: _containers.RepeatedCompositeFieldContainer[Passage]
    def __init__(self, results: _Optional[_Iterable[_Union[Passage, _Mapping]]] = ...) -> None: ...

class AskRequest(_message.Message):
    __slots__ = ("course_id", "question", "lecture_id", "conversation_id", "asker", "staff", "at")
    COURSE_ID_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    ASKER_FIELD_NUMBER: _ClassVar[int]
    STAFF_FIELD_NUMBER: _ClassVar[int]
    AT_FIELD_NUMBER: _ClassVar[int]
    course_id: str
    question: str
    lecture_id: str
    conversation_id: str
    asker: str
    staff: bool
    at: Moment
    def __init__(self, course_id: _Optional[str] = ..., question: _Optional[str] = ..., lecture_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., asker: _Optional[str] = ..., staff: _Optional[bool] = ..., at: _Optional[_Union[Moment, _Mapping]] = ...) -> None: ...

class Moment(_message.Message):
    __slots__ = ("lecture_id", "t_s", "focus")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    T_S_FIELD_NUMBER: _ClassVar[int]
    FOCUS_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    t_s: float
    focus: bool
    def __init__(self, lecture_id: _Optional[str] = ..., t_s: _Optional[float] = ..., focus: _Optional[bool] = ...) -> None: ...

class Citation(_message.Message):
    __slots__ = ("lecture_id", "lecture_number", "t_s", "label")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    LECTURE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    T_S_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    lecture_number: int
    t_s: float
    label: str
    def __init__(self, lecture_id: _Optional[str] = ..., lecture_number: _Optional[int] = ..., t_s: _Optional[float] = ..., label: _Optional[str] = ...) -> None: ...

class Sentence(_message.Message):
    __slots__ = ("text", "citations")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    CITATIONS_FIELD_NUMBER: _ClassVar[int]
    text: str
    citations: _containers.RepeatedCompositeFieldContainer[Citation]
    def __init__(self, text: _Optional[str] = ..., citations: _Optional[_Iterable[_Union[Citation, _Mapping]]] = ...) -> None: ...

class Source(_message.Message):
    __slots__ = ("lecture_id", "lecture_number", "start_s", "end_s")
    LECTURE_ID_FIELD_NUMBER: _ClassVar[int]
    LECTURE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    START_S_FIELD_NUMBER: _ClassVar[int]
    END_S_FIELD_NUMBER: _ClassVar[int]
    lecture_id: str
    lecture_number: int
    start_s: float
    end_s: float
    def __init__(self, lecture_id: _Optional[str] = ..., lecture_number: _Optional[int] = ..., start_s: _Optional[float] = ..., end_s: _Optional[float] = ...) -> None: ...

class Done(_message.Message):
    __slots__ = ("answer_id", "conversation_id", "declined", "answer", "sentences", "sources", "retrieve_ms", "total_ms", "writer", "reason", "rewritten_question", "first_sentence_ms")
    ANSWER_ID_FIELD_NUMBER: _ClassVar[int]
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    DECLINED_FIELD_NUMBER: _ClassVar[int]
    ANSWER_FIELD_NUMBER: _ClassVar[int]
    SENTENCES_FIELD_NUMBER: _ClassVar[int]
    SOURCES_FIELD_NUMBER: _ClassVar[int]
    RETRIEVE_MS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_MS_FIELD_NUMBER: _ClassVar[int]
    WRITER_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    REWRITTEN_QUESTION_FIELD_NUMBER: _ClassVar[int]
    FIRST_SENTENCE_MS_FIELD_NUMBER: _ClassVar[int]
    answer_id: str
    conversation_id: str
    declined: bool
    answer: str
    sentences: _containers.RepeatedCompositeFieldContainer[Sentence]
    sources: _containers.RepeatedCompositeFieldContainer[Source]
    retrieve_ms: float
    total_ms: float
    writer: str
    reason: str
    rewritten_question: str
    first_sentence_ms: float
    def __init__(self, answer_id: _Optional[str] = ..., conversation_id: _Optional[str] = ..., declined: _Optional[bool] = ..., answer: _Optional[str] = ..., sentences: _Optional[_Iterable[_Union[Sentence, _Mapping]]] = ..., sources: _Optional[_Iterable[_Union[Source, _Mapping]]] = ..., retrieve_ms: _Optional[float] = ..., total_ms: _Optional[float] = ..., writer: _Optional[str] = ..., reason: _Optional[str] = ..., rewritten_question: _Optional[str] = ..., first_sentence_ms: _Optional[float] = ...) -> None: ...

class AskEvent(_message.Message):
    __slots__ = ("delta", "sentence", "done")
    DELTA_FIELD_NUMBER: _ClassVar[int]
    SENTENCE_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    delta: str
    sentence: Sentence
    done: Done
    def __init__(self, delta: _Optional[str] = ..., sentence: _Optional[_Union[Sentence, _Mapping]] = ..., done: _Optional[_Union[Done, _Mapping]] = ...) -> None: ...
