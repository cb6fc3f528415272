"""The hand-kept word lists that tune behaviour, in one place, each with where it is used and why.

Regular expressions stay with the step they belong to (a pattern is read with its code: the
framing of a request in ``services/ask/gate.py``, classroom chatter in ``write.py``, quiz and
policy requests in ``examprep/intent.py`` and ``requests_policy.py``, hedges and tags in
``disfluency.py``, follow-up shapes in ``followup.py``); what is here is only words. Where
"very common English words" is what a list means, it comes from ``wordfreq`` (its Zipf scale:
log10 of a word's frequency per billion words; 6.0 ≈ once per 1,000 words) plus the few lecture
fillers wordfreq does not rank that high ("um", "gonna", "folks").

Used by services/ask (gate, followup, spelling, outline, disfluency, refine, examprep) and
services/index (chapter titles); a list changed here changes every step that names it.
"""

from __future__ import annotations

from functools import lru_cache

import wordfreq


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


@lru_cache(maxsize=8)
def common_english(min_zipf: float, n: int = 2000) -> frozenset[str]:
    """The alphabetic words among wordfreq's ``n`` most frequent English words whose Zipf frequency
    is at least ``min_zipf`` (6.0: "the", "with", "because", "people", "time")."""
    return frozenset(w for w in wordfreq.top_n_list("en", n)
                     if w.isalpha() and wordfreq.zipf_frequency(w, "en") >= min_zipf)


# -- services/ask/gate.py: coverage of a question ---------------------------------------------
# A word at least this common (Zipf; 5.7 ≈ once per 2,000 words: "work", "time", "take", "use",
# "long", "get") names no topic, so a course's silence on it says nothing about coverage ("how does
# chaining work?" is still about chaining). Topic words stay below: "chain" 4.65, "sort" 5.0,
# "France" 4.94, "system" 5.56. Read through wordfreq per word (gate.common_word).
COMMON_ZIPF = 5.7
# A phrase names a thing when one of its words is below this Zipf frequency ("light reactions": "reactions"
# 4.3; "set up" names nothing): exam prep's course terms (services/ask/examprep/terms.py) and the acronyms
# a question may use for them (services/ask/spelling.py). Set by hand with the extractive practice writer.
TERM_ZIPF = 5.5
# Words of a request that name no topic although wordfreq ranks them lower ("chaining vs open addressing").
GATE_FUNCTION_WORDS = _words("vs versus please thanks")

# -- services/ask/followup.py: the topic phrase of a question ---------------------------------
# The verb of "how long does merge sort take?" is not part of its topic: a run of content words
# stops at these when the topic of a follow-up is cut out of the previous question.
QUESTION_VERBS = _words("take takes work works mean means cost costs run runs happen happens use used need needs")

# -- services/ask/spelling.py: correcting a question toward the course's words ----------------
# Never corrected to a course word (question and request words: "does" must not become "dose" of a
# pharmacology course's vocabulary) and themselves targets of correction ("waht" → "what", not the
# course's "want"). Includes words wordfreq ranks low ("lecture", "covers"), so it stays a hand list.
SPELLING_KEEP = _words("""what which when where why how who whom whose does dose did do is are was were the a an of
to in on for with and or but not no yes can could would should will shall may might must explain describe define tell
show give list compare difference between about lecture lectures course courses video videos class many long covers
cover covered there this that""")

# -- services/ask/outline.py: "lecture three", "the third lecture" ----------------------------
# Spelled-out lecture numbers and ordinals (0–20 and 1st–20th), read into the lecture-number patterns.
NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
ORDINALS = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth thirteenth fourteenth "
    "fifteenth sixteenth seventeenth eighteenth nineteenth twentieth".split())}

# -- services/ask/disfluency.py: cleaning spoken sentences for an answer ----------------------
# A word said twice in a row is a stutter ("the the") unless it is one of these, doubled on purpose:
# "log log n", "very very", "had had", "that that" ("the question is, is this efficient?").
MEANT_TWICE = _words("log very had that bye no so dot is was")

# -- services/ask/refine.py: which transcript sentence a citation lands on --------------------
# Stopwords and classroom fillers left out of the distinctive-word overlap (an answer sentence and
# a transcript sentence sharing "the" says nothing). A hand list on purpose: "time", "one", "first"
# are very common English words yet carry content in a lecture ("running time", "first element").
REFINE_STOP = _words("""a an the of to in on at by for with from and or but if then so as is are was were be been
being it its this that these those there here we you i he she they them our your my me us do does did can could would
should will just like right okay ok yeah um uh what which who whom how why when where not no yes all any some more most
very about into over also than too have has had get got let""")

# -- services/ask/grounding.py: what a cloud writer's sentence may say -----------------------
# How a writer says where a sentence comes from ("according to the lecture", "the professor explains"):
# not a claim, so not asked of the passage it cites.
GROUNDING_FRAMING = _words("""according lecture lectures lecturer professor passage passages slide slides video
says say said explains explain explained mentions mentioned notes noted describes described states stated
talks discusses discussed""")
# Words that ask the reader to act on something (hand over a credential, contact someone or something,
# pay) or announce a change to the course: the payload of an instruction injected into a writer ("send
# your password to ..."). A writer's sentence may hold one only where the passage it cites says it;
# kept to words a paraphrase of lecture content does not bring in ("call", "visit", "link", "pay" and
# "ignore" are lecture words: a recursive call, visiting a vertex, a linked list, paying log n).
GROUNDING_ACTION = _words("""password passwords passcode passphrase credential credentials login logon username
ssn bank paypal venmo bitcoin giftcard email mail inbox contact phone whatsapp telegram reply click download install
subscribe send cancelled canceled postponed rescheduled urgent urgently asap disregard exam exams midterm graded
deadline""")
# Words that say a number ("both halves", "n squared"): the numbers of a passage that says them, beside
# its digits and number words, so that "2 halves" and "O(n^2)" are found in it. Only a passage's words
# count so: a writer's "both" gives no figure.
NUMBER_HINTS = {**{w: "1" for w in "once single".split()},
                **{w: "2" for w in "half halves twice double pair both squared square quadratic binary".split()},
                **{w: "3" for w in "thrice triple cubed cubic".split()}, "quarter": "4"}
# Number words past NUMBER_WORDS' twenty: a figure in a sentence and in a passage alike.
NUMBER_WORDS_LARGE = {**{w: 10 * (i + 3) for i, w in enumerate("thirty forty fifty sixty seventy eighty ninety".split())},
                      "hundred": 100, "thousand": 1000}

# -- services/ask/examprep/terms.py: the terms and quantities practice questions are about ----
# Words that cannot start or end a term ("the giant hash table", "using a heap", "around the
# stroma"): function words, vague size/order words and the verbs of classroom talk; hand-kept
# because it holds words wordfreq ranks low ("lookup", "implement", "via"). Any field: no topic
# word is here (the course's terms are found statistically, see examprep/terms.py).
TERM_STOP = _words("""a an the this that these those my our your their his her its some any every each all whole
entire giant big little small new same other another such one two three first second last next different basic
kind of in on at to for from by with into onto about as and or but so if then than when while because is are
was were be been being am do does did have has had having get got can could will would should may might must shall
just really very also actually basically sorting we i you they he she it me us them what which who how where why
not no yes ok okay well like using use used make made want need going go take takes took call called say said
let here there now up down out over under again still even only maybe some more most less least this thing
stuff way some implement implementing implemented store build given give look lookup via per
always around away before after between both during ever few never since through too until without often usually
rarely sometimes almost nearly roughly approximately instead whether though although whose within across along
among upon toward towards yet else ago much many lot lots quite rather probably perhaps simply certainly together
usually especially mostly mainly partly finally today tomorrow yesterday example examples instance
means mean meaning called known named says say tell tells told gives give gets keep keeps put puts show shows
shown see seen saw look looks looking find finds found come comes came""")
# Spoken mathematics, for quantities and formulas in any field ("p minus one times q minus one",
# "three times ten to the eight meters per second", "n log n time"): each word's part in a formula.
# "growth" words are orders of growth, a formula only before a unit ("linear time", "constant space").
MATH_WORDS = {**{w: "operator" for w in """plus minus times over divided squared cubed power root square log
logs ln natural exponent factorial modulo mod inverse theta order percent point sqrt""".split()},
              **{w: "growth" for w in "linear quadratic cubic logarithmic exponential constant polynomial".split()},
              **{w: "variable" for w in """alpha beta gamma delta epsilon zeta eta iota kappa lambda mu nu xi pi rho
sigma tau phi chi psi omega naught nought""".split()}}
# Two spoken forms of one value (read in this order): the notations of an order of growth
# (Cormen et al., Introduction to Algorithms, ch. 3: "theta of n" = "order n" = "linear") and
# number words as digits. Used so that two forms of one value are never offered as two options.
SPOKEN_MATH_SAME = [("theta of", ""), ("big o of", ""), ("o of", ""), ("order of", ""), ("order", ""),
                    ("linear", "n"), ("quadratic", "n squared"), ("cubic", "n cubed"), ("logarithmic", "log n"),
                    ("constant", "1"), ("to the power of", "to the"), ("to the power", "to the"),
                    # the operators said: their symbols are not words, so "1 - n/k" and "1 minus n over k" read alike
                    ("divided by", ""), ("over", ""), ("times", ""), ("minus", ""), ("plus", ""),
                    *[(w, str(i)) for i, w in enumerate("""zero one two three four five six seven eight nine ten
                    eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty""".split())]]

# -- services/index/chapters.py: chapter titles ---------------------------------------------------
# Words a chapter title never starts or ends with: every very common English word (wordfreq, Zipf
# ≥ 6.0: "the", "because", "people", "much") and the lecture fillers and classroom words it ranks
# lower ("um", "gonna", "folks", "stuff", "basically", "today"), which carry no topic in a title.
TITLE_FILLERS = _words("""um uh bunch folks basically lots sort okay ok stuff gonna yeah pretty guys kind maybe
actually yes today let lot next thing another does things little same used look use last say those got take why going
too did right here need really should""")
TITLE_STOP = TITLE_FILLERS | common_english(6.0)
