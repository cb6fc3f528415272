"""The sentences that define a term, in many fields (services.ask.definitions; which questions ask for one:
tests/unit/test_intents_fields.py), and the extractive writer opening on the definition rather than on a later mention (astronomy trial: "What is
perihelion?" was answered with where the planet moves fastest)."""

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from lecturecopilot import models
from lecturecopilot.settings import Settings
from services.ask.definitions import defines
from services.ask.writers.extractive import extractive_answer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from passages import passage  # noqa: E402  (tests/passages.py)

def _passage(idx, rows, end_s, embed):
    return passage(idx, rows, end_s, embed, lecture=("L1", 1))


DEFINING = [("The point of the orbit closest to the Sun is called perihelion.", "perihelion", False),
            ("A keystone species is one whose removal changes the whole community.", "keystone species", False),
            ("Elasticity measures how much quantity responds to price.", "elasticity", False),
            ("Okazaki fragments are the short pieces made on the lagging strand.", "Okazaki fragment", False),
            ("Time constant: tau = RC, the time to reach 63 percent", "time constant", True),
            ("RC circuits; Time constant – how fast the capacitor charges", "time constant", True)]
NOT_DEFINING = [("At perihelion the planet moves fastest in its orbit.", "perihelion", False),
                ("Removing a keystone species can collapse a food web.", "keystone species", False),
                ("So elasticity tells us whether revenue goes up.", "elasticity", False),
                ("The lagging strand is made in Okazaki fragments.", "Okazaki fragments", False),
                ("Time constant: tau = RC", "time constant", False)]  # a slide's form, said: not a definition


@pytest.mark.parametrize("text,term,slide", DEFINING)
def test_a_sentence_that_defines_the_term(text, term, slide):
    assert defines(text, term, slide=slide)


@pytest.mark.parametrize("text,term,slide", NOT_DEFINING)
def test_a_sentence_that_only_names_the_term(text, term, slide):
    assert not defines(text, term, slide=slide)


def test_a_definition_question_is_answered_where_the_term_is_defined():
    def embed(texts):
        return models.embed(Settings().embed_model, texts)

    later = [(300.0, "Kepler's second law says a planet sweeps out equal areas in equal times."),
             (306.0, "So at perihelion the planet is moving fastest, and at aphelion it is slowest."),
             (312.0, "Earth is nearest the Sun in early January, which surprises people."),
             (318.0, "The speed changes all the way around the orbit.")]
    first = [(120.0, "Orbits are ellipses with the Sun at one focus."),
             (126.0, "The point of the orbit closest to the Sun is called perihelion."),
             (132.0, "The farthest point is called aphelion."),
             (138.0, "How stretched the ellipse is we measure with its eccentricity.")]
    p1, e1 = _passage(0, later, 324.0, embed)
    p2, e2 = _passage(1, first, 144.0, embed)
    index = SimpleNamespace(sentences={("L1", 0): e1, ("L1", 1): e2}, course_of={})
    query = "What is perihelion?"
    out = extractive_answer(index, [p1, p2], query, embed([query])[0])
    assert out[0].cites[0].t_s == 126.0, [(s.text, s.cites[0].t_s) for s in out]
    assert out[0].text == "The point of the orbit closest to the Sun is called perihelion."
    # without a definition among the passages the answer is what it was: the best run
    index.sentences[("L1", 1)] = _passage(1, [(t, s.replace("is called perihelion", "matters"))
                                              for t, s in first], 144.0, embed)[1]
    out = extractive_answer(index, [p1, p2], query, embed([query])[0])
    assert out[0].cites[0].t_s != 126.0


def test_a_run_holding_the_definition_opens_on_it():
    """An ecology trial: "What is a keystone species?" was answered in the right place, the definition last,
    after "Robert Paine showed this …"."""
    def embed(texts):
        return models.embed(Settings().embed_model, texts)

    rows = [(124.0, "Robert Paine showed this with sea stars and keystone species on the rocky shore."),
            (130.0, "A keystone species is one whose impact is far larger than its abundance."),
            (136.0, "Sea otters are another example, because they eat the urchins that eat kelp.")]
    p, e = _passage(0, rows, 142.0, embed)
    index = SimpleNamespace(sentences={("L1", 0): e}, course_of={})
    query = "What is a keystone species?"
    out = extractive_answer(index, [p], query, embed([query])[0])
    assert out[0].text.startswith("A keystone species is one whose"), [s.text for s in out]
