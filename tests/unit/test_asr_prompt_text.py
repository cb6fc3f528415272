"""Which slide text goes into a speech-recognition prompt (services.transcribe.vocabulary.prompt_text):
titles, bullets and formulas whole; a line of prose only by its rare terms."""

from services.transcribe.vocabulary import SlideText, Vocabulary, is_prose, prompt_text


def test_bullets_titles_and_formulas_are_not_prose():
    for line in ("Binary heaps", "Max-heap property", "Insert: sift up", "Children of i: 2i+1 and 2i+2",
                 "Bloom filter (Burton Bloom, 1970): bit array of m bits + k hash functions",
                 "Rolling hash: window as a number in some base, O(1) update per shift",
                 "Every node red or black; root black; nil leaves black"):
        assert not is_prose(line), line


def test_a_sentence_on_a_slide_gives_only_its_rare_terms():
    assert is_prose("Does that make sense? So this is an idea called chaining")
    assert prompt_text("Hashing\nDoes that make sense? So this is an idea called chaining") == "Hashing\nchaining"
    assert prompt_text("If I have two items here, like a and b, these are") == ""  # no rare word: nothing


def test_the_prompt_holds_the_slides_terms_not_their_sentences():
    vocab = Vocabulary(titles=["Hashing"], slides=[
        SlideText(0.0, 30.0, "Chaining\nSo this is an idea that we call chaining in a hash table, right"),
        SlideText(30.0, 60.0, "Open addressing\nLinear probing")])
    first = vocab.prompt(0.0, 29.0)
    assert "Chaining" in first and "idea" not in first and "right" not in first
    assert "Linear probing" in vocab.prompt(31.0, 59.0)


def test_list_markers_stay_out_of_the_prompt():
    """Whisper copies what its prompt holds: a "•" there came back inside a transcribed sentence."""
    text = prompt_text("Bloom filters\n• Counting Bloom filter: small counters\n\u25aa Double hashing: h1 + i·h2\n- k hash functions")
    assert text == "Bloom filters\nCounting Bloom filter: small counters\nDouble hashing: h1 + i·h2\nk hash functions"
    prompt = Vocabulary(slides=[SlideText(0.0, 30.0, "Heaps\n• Insert: sift up")]).prompt(0.0, 29.0)
    assert "\u2022" not in prompt and "Insert: sift up" in prompt


def test_a_slide_is_judged_line_by_line_as_the_stage_hands_it_on():
    """The stage passes the slide's OCR lines, not its one-sentence form: a prose line among bullets
    gives only its rare terms, while the title and bullets go in whole."""
    slide = SlideText.from_lines(0.0, 30.0, ["Hashing", "\u2022 Bloom filter: bit array", "\u2022 Rolling hash: O(1) update",
                                             "So this is an idea that we call chaining in a hash table, right"])
    assert slide.text.splitlines()[:3] == ["Hashing", "\u2022 Bloom filter: bit array", "\u2022 Rolling hash: O(1) update"]
    prompt = Vocabulary(slides=[slide]).prompt(0.0, 29.0)
    assert "Bloom filter: bit array" in prompt and "Rolling hash" in prompt and "chaining" in prompt
    assert "idea" not in prompt and "right" not in prompt and "\u2022" not in prompt
