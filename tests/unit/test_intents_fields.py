"""The answer path's intents, each with phrasings from many fields that match and that must not.

Issue 30, item 5: the rules were written on one algorithms course; a subject word that looks like a
request ("the outline of a cell", "test statistic", "why does the price rise") must not trigger one,
and a request worded in another field's vocabulary must. Every table holds at least five of each,
from at least three fields."""

import pytest

from services.ask.definitions import asked_term
from services.ask.disfluency import clean
from services.ask.examprep import quiz_intent
from services.ask.followup import continues
from services.ask.moment import points_at_screen
from services.ask.outline import asks_for_outline, asks_for_unnamed_outline, asks_how_long, lecture_scope
from services.ask.requests_policy import unsupported

# -- outline: what one lecture, or the lecture at hand, holds -------------------------------------
OUTLINE_OF_A_LECTURE = [  # (question, the lecture it names)
    ("What are the chapters of lecture 5?", 5),
    ("summarize the third lecture", 3),
    ("what is lecture 4 about", 4),
    ("Give me an overview of lecture 2", 2),
    ("what does lecture 7 cover?", 7),
    ("What topics are in lecture twelve?", 12),
]
NOT_OUTLINE_OF_A_LECTURE = [
    "what does lecture 3 say about photosynthesis?",          # biology: a topic in a lecture
    "In lecture 2, what is price elasticity of demand?",       # economics
    "What did lecture 6 say about Le Chatelier's principle?",  # chemistry
    "which lecture covers Maxwell's equations?",              # physics: where, not what
    "What is the outline of a cell membrane in lecture 1?",   # a topic that says "outline"
    "how long does lecture 3 take to explain entropy",        # a topic with a duration word
]
# -- a topic asked of one lecture: searched in that lecture only (services.ask.outline.lecture_scope) ------
SCOPED_TO_A_LECTURE = [  # (question, the lecture it names, the question searched)
    ("How is ATP used in lecture 1?", 1, "How is ATP used?"),                             # biology
    ("In lecture 2, what is price elasticity of demand?", 2, "what is price elasticity of demand?"),  # economics
    ("What did lecture 6 say about Le Chatelier's principle?", 6, "What did say about Le Chatelier's principle?"),
    ("what is entropy according to the second lecture", 2, "what is entropy"),  # physics
    ("explain the SVD from lecture twelve", 12, "explain the SVD"),                      # linear algebra
    ("what is entropy in lecture zero?", 0, "what is entropy?"),                        # a course counting from 0
]
NOT_SCOPED = [
    "What is L2 regularization?",                    # machine learning: a field's "L2", not lecture 2
    "What is a class 2 error?",                      # statistics
    "How many lectures does the course have?",       # the course
    "Which lecture covers Maxwell's equations?",     # where, not in which
    "What is the lecture about?",                    # the lecture at hand
]


@pytest.mark.parametrize("question, number, rest", SCOPED_TO_A_LECTURE)
def test_a_topic_asked_of_a_named_lecture(question, number, rest):
    assert lecture_scope(question) == (number, rest)


@pytest.mark.parametrize("question", NOT_SCOPED)
def test_a_question_naming_no_lecture_is_not_scoped(question):
    assert lecture_scope(question) is None


# -- a lecture's length: the whole question asks it ----------------------------------------------------
HOW_LONG = [("how long is lecture 7?", 7), ("What is the duration of lecture 3?", 3), ("lecture 5's length?", 5),
            ("how long does lecture 4 last?", 4), ("How long is the 2nd lecture?", 2),
            ("how long is the third lecture in minutes?", 3)]
NOT_HOW_LONG = [
    "What did lecture 2 say about how long monetary policy takes to work?",  # economics: a trial's, got "… is 2:37 long."
    "how long does lecture 3 take to explain entropy",                       # physics
    "In lecture 1, what is the length of the loop of Henle?",                # physiology
    "how long is the refractory period in lecture 4?",                       # neuroscience
    "what is the wavelength in lecture 2?",                                  # physics
    "How long does DNA replication take according to lecture 1?",           # biology
]


@pytest.mark.parametrize("question, number", HOW_LONG)
def test_a_lectures_length_asked(question, number):
    assert asks_how_long(question) == number


@pytest.mark.parametrize("question", NOT_HOW_LONG)
def test_a_duration_inside_a_topic_is_not_the_lectures_length(question):
    assert asks_how_long(question) is None


UNNAMED_OUTLINE = [
    "What are the chapters?",
    "Give me an outline of the lecture",
    "summarize this video",
    "what's the agenda for today's class?",
    "Can I get an overview of the course?",
]
NOT_UNNAMED_OUTLINE = [
    "What are the sections of a neuron?",                 # physiology
    "Give me a summary of the Krebs cycle",               # biology
    "What topics in macroeconomics use elasticity?",      # economics
    "summarize the Carnot cycle",                         # physics
    "what are the parts of a hash function?",             # computer science
    "What is the summary statistic for spread?",          # statistics
]


@pytest.mark.parametrize("question, number", OUTLINE_OF_A_LECTURE)
def test_outline_of_a_named_lecture(question, number):
    assert asks_for_outline(question) == number


@pytest.mark.parametrize("question", NOT_OUTLINE_OF_A_LECTURE)
def test_a_topic_question_naming_a_lecture_is_not_an_outline(question):
    assert asks_for_outline(question) is None


@pytest.mark.parametrize("question", UNNAMED_OUTLINE)
def test_outline_of_the_lecture_at_hand(question):
    assert asks_for_unnamed_outline(question)


@pytest.mark.parametrize("question", NOT_UNNAMED_OUTLINE)
def test_a_subject_with_an_outline_word_is_not_an_outline(question):
    assert not asks_for_unnamed_outline(question)


# -- follow-up: more of the same answer --------------------------------------------------------------
CONTINUES = ["why?", "explain that more simply", "Can you say it another way?", "why does it work?",
             "how come?", "but why is that?"]
NEW_TOPIC = [
    "why do plants need light?",                         # biology
    "Why does the price rise when supply falls?",        # economics
    "why is entropy always increasing in an isolated system?",  # physics
    "What is the null hypothesis?",                      # statistics
    "why are neurons myelinated?",                       # physiology
    "How does a catalyst lower the activation energy?",  # chemistry
]


@pytest.mark.parametrize("message", CONTINUES)
def test_a_follow_up_that_asks_for_more_of_the_same(message):
    assert continues(message)


@pytest.mark.parametrize("message", NEW_TOPIC)
def test_a_why_question_with_its_own_topic_is_a_new_question(message):
    assert not continues(message)


# -- request policy: what lectures cannot serve -----------------------------------------------------
UNSUPPORTED = ["grade my answer please", "remind me to revise on Friday", "do my homework on enzyme kinetics",
               "send an email to the professor", "set a reminder for the chemistry midterm",
               "write my essay on the Industrial Revolution"]
SUPPORTED = [
    "How do enzymes check my understanding of substrate binding?",  # biology, has "check"
    "What is the score function in maximum likelihood?",           # statistics, has "score"
    "How does memory remember a conditioned response?",            # psychology, has "remember"
    "What does a test statistic measure?",                         # statistics
    "how do you correct for multiple comparisons?",                # statistics, has "correct"
    "What is the marking of a Petri net?",                         # computer science, "marking"
]


@pytest.mark.parametrize("message", UNSUPPORTED)
def test_requests_the_lectures_cannot_serve(message):
    assert unsupported(message)


@pytest.mark.parametrize("message", SUPPORTED)
def test_subject_questions_with_request_words_are_answered(message):
    assert not unsupported(message)


# -- quiz intent: practice questions asked for ----------------------------------------------------------
QUIZ = [("quiz me on photosynthesis", "photosynthesis"), ("give me practice questions about elasticity", "elasticity"),
        ("test me", ""), ("make 3 multiple choice questions on entropy", "entropy"),
        ("I want to practice eigenvalues", "eigenvalues"), ("Write a quiz about the nephron", "nephron")]
NOT_QUIZ = [
    "What is a hypothesis test?",                     # statistics
    "How do you test for a normal distribution?",     # statistics
    "what is the final exam question about RSA?",     # a given exam's question
    "Which questions did Pavlov ask about salivation?",  # psychology
    "What does the Michelson-Morley experiment test?",   # physics
    "how does the kidney practise water conservation",   # physiology, "practise" as a verb of the subject
]


@pytest.mark.parametrize("message, topic", QUIZ)
def test_a_request_for_practice_questions(message, topic):
    assert quiz_intent(message) == topic


@pytest.mark.parametrize("message", NOT_QUIZ)
def test_a_subject_question_is_not_a_quiz_request(message):
    assert quiz_intent(message) is None


# -- disfluency: what is removed from a quoted sentence ----------------------------------------------------
DISFLUENT = [  # (spoken, cleaned)
    ("So, um, the thylakoid membrane holds the chlorophyll.", "The thylakoid membrane holds the chlorophyll."),
    ("The demand curve, you know, slopes downward.", "The demand curve slopes downward."),
    ("Entropy is a measure of of disorder, right?", "Entropy is a measure of disorder."),
    ("Okay, so the glomerulus, uh, filters the blood.", "The glomerulus filters the blood."),
    ("The eigenvalue is, I mean, the stretch factor.", "The eigenvalue is the stretch factor."),
]
FLUENT = [  # subject words that look like disfluencies stay
    "The right ventricle pumps blood to the lungs.",                  # physiology
    "Firms like Apple set prices above marginal cost.",               # economics
    "A kind of enzyme called a kinase adds a phosphate group.",       # biology
    "The model is right skewed when the mean exceeds the median.",    # statistics
    "Stars like the Sun fuse hydrogen into helium.",                  # astronomy
    "The ratio of 4 to 4 is one.",                                    # mathematics
]


@pytest.mark.parametrize("spoken, cleaned", DISFLUENT)
def test_disfluencies_are_removed(spoken, cleaned):
    assert clean(spoken, opening=True) == cleaned


@pytest.mark.parametrize("sentence", FLUENT)
def test_subject_words_that_look_like_disfluencies_stay(sentence):
    assert clean(sentence, opening=True) == sentence


# -- moment: a question that points at the screen (issue 33 item 1) ----------------------------------------
POINTS_AT_SCREEN = [
    "what does this mean?",
    "why is that?",
    "explain this slide",
    "What did he just say about the Krebs cycle?",             # biology, named after the pointing
    "what is she writing on the board?",
    "Can you explain this equation?",                          # physics or mathematics alike
    "I don't get this part",
    "how does it work?",
    "What's on the screen right now?",
    "why did the professor just draw the demand curve shifting left?",  # economics
]
NOT_POINTING = [
    "What is a red-black tree?",                               # computer science
    "Why does the price rise when supply falls?",              # economics
    "How does a screen reader work?",                          # accessibility: "screen" as a subject
    "What is the board of directors responsible for?",         # business: "board" as a subject
    "What did Newton say about gravity?",                      # physics: someone named, not the speaker now
    "Why is the null hypothesis rejected here at the 5% level?",  # statistics: "here" with a topic
    "What is this algorithm's running time?",                  # a topic after "this"
    "Explain the slide in oil prices in 2015",                 # economics: "slide" as a fall
    "What does lecture 3 say about photosynthesis?",           # biology: a lecture named
]


@pytest.mark.parametrize("question", POINTS_AT_SCREEN)
def test_a_question_pointing_at_the_screen(question):
    assert points_at_screen(question)


@pytest.mark.parametrize("question", NOT_POINTING)
def test_a_question_naming_its_topic_does_not_point_at_the_screen(question):
    assert not points_at_screen(question)


# -- a definition asked for: the term (services.ask.definitions.asked_term) ------------------------
ASKS_FOR_DEFINITION = [  # (question, the term)
    ("What is perihelion?", "perihelion"), ("what's a keystone species", "keystone species"),
    ("whats the time constant", "time constant"), ("Define elasticity.", "elasticity"),
    ("what does RC mean", "RC"), ("What is meant by opportunity cost?", "opportunity cost"),
    ("What is the epicenter of an earthquake?", "epicenter"), ("so what are Okazaki fragments?", "Okazaki fragments"),
    ("What is the definition of a martingale?", "martingale")]
NOT_ASKS_FOR_DEFINITION = [  # a relation, a quantity, a cause, a process: no term to define
    "What is the running time of binary search?", "what is the difference between a stack and a queue",
    "What are the steps of the Calvin cycle?", "and what's left after the explosion?",
    "Why is RuBisCO called wasteful?", "How does a capacitor charge?", "what is in lecture 3",
    "What is the main idea of Kirchhoff's voltage law and why does it hold in every loop?"]


@pytest.mark.parametrize("question,term", ASKS_FOR_DEFINITION)
def test_a_definition_question_names_its_term(question, term):
    assert asked_term(question) == term


@pytest.mark.parametrize("question", NOT_ASKS_FOR_DEFINITION)
def test_other_questions_ask_for_no_definition(question):
    assert asked_term(question) is None
