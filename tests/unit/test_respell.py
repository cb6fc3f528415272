"""Respelling from the slide on screen (services.transcribe.respell): misheard terms become the
slide's spelling, and nothing else changes."""

from lecturecopilot.captions import Word
from services.transcribe.respell import respell, similarity, slide_terms
from services.transcribe.vocabulary import SlideText


def _words(text: str, start_s: float = 10.0, step_s: float = 0.4) -> list[Word]:
    return [Word(start_s + i * step_s, start_s + (i + 1) * step_s, w) for i, w in enumerate(text.split())]


def _text(words: list[Word]) -> str:
    return " ".join(w.word for w in words)


PHOTO = SlideText(8.0, 30.0, "Light reactions: thylakoid, chlorophyll\nWater split, oxygen released")
THERMO = SlideText(8.0, 30.0, "Carnot efficiency\nEfficiency = 1 - Tc / Th")
MAXWELL = SlideText(8.0, 30.0, "Faraday's law of induction\nA changing magnetic flux induces an EMF")
CHEM = SlideText(8.0, 30.0, "The Haber process\nN2 + 3 H2 -> 2 NH3, iron catalyst")
KIDNEY = SlideText(8.0, 30.0, "Proximal tubule: reabsorbs sodium\nAldosterone raises sodium uptake")
DNA = SlideText(8.0, 30.0, "Polymerase copies DNA\nTelomerase extends telomeres")
NEURON = SlideText(8.0, 30.0, "Depolarization: sodium rushes in\nRelativity: gamma = 1 / sqrt(1 - v^2/c^2)")
SVD = SlideText(8.0, 30.0, "Eigendecomposition vs SVD\nCramér-Rao bound")


def test_a_misheard_term_takes_the_slides_spelling_with_its_punctuation():
    out = respell(_words("the light reactions happen in the phylocoid, a membrane"), [PHOTO])
    assert _text(out) == "the light reactions happen in the thylakoid, a membrane"


def test_a_term_split_in_two_becomes_one_word_over_both_times():
    words = _words("the car not efficiency is the best")
    out = respell(words, [THERMO])
    assert _text(out) == "the Carnot efficiency is the best"
    assert (out[1].start_s, out[2].end_s) == (words[1].start_s, words[3].end_s)
    assert out[1].end_s == out[2].start_s


def test_a_possessive_heard_as_another_name():
    out = respell(_words("this is Ferreta's law of induction"), [MAXWELL])
    assert _text(out) == "this is Faraday's law of induction"


def test_a_term_heard_as_two_words_or_a_non_word():
    out = respell(_words("the tubule reads orbs sodium under Allosterone control"), [KIDNEY])
    assert _text(out) == "the tubule reabsorbs sodium under Aldosterone control"


def test_what_is_not_a_mishearing_stays():
    # another form of the slide's word; an everyday word near an abbreviation; a word inside a longer
    # term; a term another slide spells; accents the OCR lost
    for text, slide in [("the membrane depolarizes the cell", NEURON), ("take the square of v", NEURON),
                        ("the singular value decomposition", SVD), ("then Polymerase fills the gap", DNA),
                        ("the Cramér-Rao bound", SlideText(8.0, 30.0, "Cram r-Rao bound"))]:
        assert _text(respell(_words(text), [slide])) == text


def test_ordinary_words_next_to_a_term_are_left_alone():
    text = "the process needs an iron catalyst and the light reactions need water"
    assert _text(respell(_words(text), [CHEM, PHOTO])) == text


def test_a_term_said_long_after_its_slide_went_is_not_respelled():
    late = _words("in the phylocoid", start_s=60.0)
    assert _text(respell(late, [PHOTO])) == "in the phylocoid"


def test_right_spellings_and_plurals_are_kept():
    text = "thylakoids and the thylakoid hold chlorophyll"
    assert _text(respell(_words(text), [PHOTO])) == text


def test_without_slides_nothing_changes():
    words = _words("the phylocoid")
    assert respell(words, []) == words


def test_similarity_separates_mishearings_from_other_words():
    assert similarity(["phylocoid"], ["thylakoid"]) >= 0.7
    assert similarity(["car", "not"], ["Carnot"]) == 1.0
    assert similarity(["the"], ["Haber"]) == 0.0           # too short to judge by sound
    assert similarity(["membrane"], ["thylakoid"]) < 0.5
    assert similarity(["Thylakoids"], ["thylakoid"]) == 0.0  # already spelled, plural


def test_terms_hold_a_distinctive_word_and_no_common_edges():
    terms = {" ".join(t.words) for t in slide_terms([PHOTO, CHEM])}
    assert "thylakoid" in terms and "Haber process" in terms
    assert "The Haber" not in terms and "Water split" not in terms


def test_a_non_word_that_shares_the_terms_stem_is_the_term_misheard():
    # "telomerane" is no English word: the recognizer misheard "telomerase", it did not write a form of it
    out = respell(_words("and telomerane extends the ends"), [DNA])
    assert _text(out) == "and Telomerase extends the ends"
    assert similarity(["telomerane"], ["Telomerase"]) >= 0.7


def test_a_real_word_or_a_longer_spelling_is_still_another_form():
    # a known word is a form of the term ("depolarizes"), a span that spells the whole (OCR-broken)
    # term inside it is kept, and a non-word plus a real word is not respelled as a two-word term
    broken = SlideText(8.0, 30.0, "Mohorovi i discontinuity")
    period = SlideText(8.0, 30.0, "Refractory period")
    for text, slide in [("the membrane depolarizes the cell", NEURON), ("the Mohorovičić discontinuity", broken),
                        ("Refractoryness is also", period)]:
        assert _text(respell(_words(text), [slide])) == text
