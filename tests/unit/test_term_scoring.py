"""The benchmarks' term scoring (evals.asr_terms.term_occurrences, evals.fields._present): a term counts
where it is said in a plural or possessive form, never where only its first words are."""

from evals.asr_terms import normalise, term_occurrences
from evals.fields import _present


def test_a_possessive_or_plural_holds_the_term():
    for said in ("Adam Smith's version of it", "two Adam Smiths", "the Adam Smith view"):
        words = " ".join(normalise(said))
        assert _present("Adam Smith", words), said
        assert [t for _, _, t in term_occurrences(normalise(said), ["Adam Smith"])] == ["adam smith"], said


def test_another_word_or_half_the_term_does_not():
    for said in ("Adam Smithson's version", "Adam wrote it", "a smith's forge"):
        words = " ".join(normalise(said))
        assert not _present("Adam Smith", words), said
        assert term_occurrences(normalise(said), ["Adam Smith"]) == [], said
