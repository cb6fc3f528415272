"""A slide as a sentence (lecturecopilot.slidetext.slide_sentence) and as a quote in an answer
(services.ask.writers.extractive.slide_excerpt): list markers are layout, each bullet is an item, and a quote is one
item, never cut inside brackets."""

from lecturecopilot.slidetext import slide_sentence, strip_bullet
from services.ask.slidequote import slide_excerpt


def test_list_markers_are_dropped_and_each_bullet_is_an_item():
    assert strip_bullet("\u2022 Insert: sift up") == (True, "Insert: sift up")
    assert strip_bullet("- k hash functions") == (True, "k hash functions")
    assert strip_bullet("-1 is negative") == (False, "-1 is negative")  # a minus sign is not a marker
    assert strip_bullet("\u2013 3") == (False, "\u2013 3")  # a spaced minus before a bare number stays
    assert strip_bullet("- 2 children per node") == (True, "2 children per node")
    assert slide_sentence(["Heaps", "\u2022 Insert: sift up", "\u2022 Extract-max:", "sift down"]) == \
        "Heaps: Insert: sift up; Extract-max: sift down."
    # without markers the lines are one text, as wrapped lines are
    assert slide_sentence(["Radix Sort", "Sort digit by digit,", "least significant first"]) == \
        "Radix Sort: Sort digit by digit, least significant first."
    assert slide_sentence(["\u2022 one bullet, no title"]) == "one bullet, no title."
    # a line ending on a word no phrase ends on goes on below (a trial's "Banks keep a fraction of deposits as" was cut)
    assert slide_sentence(["The money multiplier", "Banks keep a fraction of deposits as", "reserves",
                           "Multiplier = 1 / reserve ratio"]) == \
        "The money multiplier: Banks keep a fraction of deposits as reserves; Multiplier = 1 / reserve ratio."
    assert slide_sentence(["Dijkstra", "non-negative weights", "min-priority queue"]) == \
        "Dijkstra: non-negative weights; min-priority queue."  # lines of their own stay items
    assert slide_sentence(["\u2022", "  "]) == ""


def test_a_quoted_slide_is_one_whole_item():
    bf = slide_sentence(["Bellman-Ford", "\u2022 Bellman-Ford (Richard Bellman,", "Lester Ford)",
                         "\u2022 Allows negative edge weights", "\u2022 Relax every edge V-1 times"])
    assert slide_excerpt(bf, "who is Bellman-Ford named after?") == \
        "On the slide \u201cBellman-Ford\u201d: \u201cBellman-Ford (Richard Bellman, Lester Ford)\u201d."
    assert slide_excerpt(bf, "does it allow negative edge weights?") == \
        "On the slide \u201cBellman-Ford\u201d: \u201cAllows negative edge weights\u201d."
    sp = slide_sentence(["Shortest paths", "\u2022 Weighted directed graph G = (V, E), source s"])
    assert "G = (V, E), source s" in slide_excerpt(sp, "what graph do shortest paths use?")


def test_a_long_item_gives_its_best_clause_outside_brackets_cut_at_the_limit():
    text = ("Hashing: a hash function (say h(k) = k mod m, for a prime m) maps keys to m slots, collisions "
            "are unavoidable by the pigeonhole principle, chaining keeps a list in every slot of the table")
    quote = slide_excerpt(text, "why are collisions unavoidable?")
    assert quote == "On the slide \u201cHashing\u201d: \u201ccollisions are unavoidable by the pigeonhole principle\u201d."
    first = slide_excerpt(text, "what does a hash function map?")
    assert "(say h(k) = k mod m, for a prime m)" in first
    long = slide_excerpt("T: " + " ".join(f"w{i}" for i in range(40)), "w1")
    assert long.endswith("w19\u2026\u201d.") and len(long.split()) == 4 + 20  # "On the slide “T”:" + 20 words


def test_abbreviations_do_not_end_an_item():
    tries = slide_sentence(["Tries", "\u2022 Trie (from retrieval), a.k.a. prefix tree", "\u2022 Lookup in O(L)"])
    assert slide_excerpt(tries, "what is a trie also called?") == \
        "On the slide \u201cTries\u201d: \u201cTrie (from retrieval), a.k.a. prefix tree\u201d."
    vs = slide_sentence(["Compare", "\u2022 Dijkstra vs. Bellman-Ford: no negative edges", "\u2022 Both relax edges"])
    assert "Dijkstra vs. Bellman-Ford: no negative edges" in slide_excerpt(vs, "dijkstra negative edges")
    # a long item gives its best sentence, split at a real sentence end only
    long = ("Heaps: Dr. Floyd showed a heap can be built bottom up from any array of n keys in place. Insert "
            "appends the new key at the next free leaf and sifts it up past every smaller parent it meets.")
    assert slide_excerpt(long, "how does insert work?") == ("On the slide \u201cHeaps\u201d: \u201cInsert appends "
                                                            "the new key at the next free leaf and sifts it up past "
                                                            "every smaller parent it meets\u201d.")
    assert "Dr. Floyd showed" in slide_excerpt(long, "who showed heaps can be built bottom up?")


def test_brackets_numbered_lists_and_empty_items():
    rb = slide_sentence(["Red-black trees", "\u2022 Invariant (every node red or black; root black)", "\u2022 Height O(log n)"])
    assert slide_excerpt(rb, "what colour is the root") == \
        "On the slide \u201cRed-black trees\u201d: \u201cInvariant (every node red or black; root black)\u201d."
    merge = slide_sentence(["Merge sort", "1. Split the array in two halves", "2) Sort each half recursively",
                            "3. Merge the halves"])
    assert merge == "Merge sort: Split the array in two halves; Sort each half recursively; Merge the halves."
    assert slide_sentence(["Heaps", "\u2022 ,", "\u2022 x y"]) == "Heaps: x y."
    assert slide_excerpt("Heaps: \u2026", "anything") == "On the slide \u201cHeaps\u201d."
    assert slide_excerpt("T: ,", "q") == "On the slide \u201cT\u201d." and slide_excerpt(", ;", "q") == ""
    big = slide_excerpt("Graph: " + "G = (V, E, " + ", ".join(f"w{i}" for i in range(30)) + ")", "graph")
    assert big.endswith("\u2026\u201d.") and "(" in big  # no clause outside the brackets to fall back to
    url = slide_excerpt("Links: see https://example.org/" + "a" * 400, "links")
    assert len(url) < 260 and url.endswith("\u2026\u201d.")


def test_classroom_talk_does_not_open_a_slide_quote_and_the_quote_ends_a_sentence():
    from services.ask.writers.extractive import is_chatter
    said = ("Chaining: Does that make sense? So this is an idea called chaining, a list in every slot; "
            "Open addressing probes")
    quote = slide_excerpt(said, "what is chaining?", is_chatter)
    assert quote == "On the slide \u201cChaining\u201d: \u201cSo this is an idea called chaining, a list in every slot\u201d."
    assert "Does that make sense" in slide_excerpt(said, "what is chaining?")  # without a judge, kept
    only = slide_excerpt("Q: Does that make sense?", "sense", is_chatter)  # nothing follows: the talk stays
    assert "Does that make sense" in only


def test_a_slide_without_list_markers_keeps_its_lines_apart():
    text = slide_sentence(["Relaxation and running time", "relax(u, v): d[v] = min(d[v], d[u] + w(u, v))",
                           "binary heap O(E log V), Fibonacci heap O(E + V log V)"])
    assert text == ("Relaxation and running time: relax(u, v): d[v] = min(d[v], d[u] + w(u, v)); "
                    "binary heap O(E log V), Fibonacci heap O(E + V log V).")
    assert slide_excerpt(text, "what is the running time with a fibonacci heap?") == (
        "On the slide \u201cRelaxation and running time\u201d: \u201cbinary heap O(E log V), "
        "Fibonacci heap O(E + V log V)\u201d.")


def test_an_answer_does_not_say_what_its_slide_quote_just_showed():
    from services.ask.retrieve import Passage
    from services.ask.search_index import Hit, IndexedSentence
    from services.ask.writers.extractive import _written

    p = Passage(Hit("p1", "L", 4, 0, 190.0, 250.0, "", 1.0), 1.0)
    run = [(p, IndexedSentence(196.0, 200.0, "Hashing: Does that make sense? So this is an idea called chaining, "
                                             "I can put anything I want there.", "slide")),
           (p, IndexedSentence(197.0, 199.0, "So this is an idea called chaining.", "speech")),
           (p, IndexedSentence(199.0, 203.0, "Each slot keeps a linked list of the items hashed to it.", "speech"))]
    out = [s.text for s in _written(run, "what is chaining?")]
    assert out == ["On the slide \u201cHashing\u201d: \u201cSo this is an idea called chaining, I can put anything I want "
                   "there\u201d.", "Each slot keeps a linked list of the items hashed to it."]


def test_hostile_slides_give_short_quotes_with_words_in_linear_time():
    import time

    assert slide_excerpt(slide_sentence(["Zebra Facts", "= " * 25 + "zebra"]), "zebra") == "On the slide \u201cZebra Facts\u201d."
    assert slide_excerpt("T: " + "(" * 5000 + "hash", "hash") == "On the slide \u201cT\u201d."
    long_title = slide_excerpt("word " * 1000 + ": hash tables", "hash")
    assert len(long_title) < 160 and long_title.endswith("\u201d: \u201chash tables\u201d.")
    t0 = time.perf_counter()
    slide_excerpt("Title: " + "abc etc. Abc " * 16000, "abc")  # 208 KB of abbreviations took 54 s
    assert time.perf_counter() - t0 < 5


def test_a_slide_whose_items_share_no_word_with_the_question_is_quoted_as_its_list():
    ways = slide_sentence(["Two ways to resolve collisions", "\u2022 Keep O(1) direct access by index",
                           "\u2022 Open addressing: another free slot", "\u2022 Chaining: another structure per slot"])
    assert slide_excerpt(ways, "What are the two ways to resolve collisions?") == (
        "On the slide \u201cTwo ways to resolve collisions\u201d: \u201cKeep O(1) direct access by index; Open "
        "addressing: another free slot; Chaining: another structure per slot\u201d.")
    # an item that shares a content word is the quote, a plural counting as its singular
    assert slide_excerpt(ways, "what slot does open addressing use?") == (
        "On the slide \u201cTwo ways to resolve collisions\u201d: \u201cOpen addressing: another free slot\u201d.")
    assert slide_excerpt(ways, "what structures does chaining use") == (
        "On the slide \u201cTwo ways to resolve collisions\u201d: \u201cChaining: another structure per slot\u201d.")
    # function words are not shared words: "the" and "by" do not pick the first item
    assert "; " in slide_excerpt(ways, "what is the way by which collisions are resolved")
    osmosis = slide_sentence(["Osmosis", "\u2022 Water crosses a semipermeable membrane",
                              "\u2022 From low to high solute concentration", "\u2022 Driven by water potential",
                              "\u2022 Plant cells become turgid", "\u2022 Animal cells may burst in pure water"])
    listed = slide_excerpt(osmosis, "explain osmosis")
    assert listed.startswith("On the slide \u201cOsmosis\u201d: \u201cWater crosses a semipermeable membrane; From")
    assert listed.endswith("Plant cells become turgid; \u2026\u201d.")  # whole items within SLIDE_WORDS



def test_lines_repeated_below_most_slides_titles_are_recurring():
    from lecturecopilot.slidetext import recurring_lines, without_recurring

    deck = [("Osmosis", "Diffusion of water", "BIO 101 · Cell Biology   2"),
            ("• Aquaporins speed it up",),  # a build step: one line, not counted among full slides
            ("Active transport", "Uses ATP", "BIO 101 · Cell Biology   3"),
            ("Pump", "3 Na out, 2 K in", "BIO 101· Cell Biologv   4"),  # an OCR slip
            ("Tonicity", "Hypertonic: shrinks", "Hypotonic: swells")]
    recurring = recurring_lines(deck)
    assert [without_recurring(s, recurring) for s in deck] == [
        ("Osmosis", "Diffusion of water"), ("• Aquaporins speed it up",), ("Active transport", "Uses ATP"),
        ("Pump", "3 Na out, 2 K in"), ("Tonicity", "Hypertonic: shrinks", "Hypotonic: swells")]


def test_a_title_or_a_line_on_few_slides_is_no_footer():
    from lecturecopilot.slidetext import recurring_lines

    same_title = [("Dijkstra", line) for line in ("relax every edge", "pop the nearest vertex", "a priority queue",
                                                  "non-negative weights", "shortest paths tree")]
    assert recurring_lines(same_title) == frozenset()  # a first line never counts
    twice = [("A", "x", "shared line"), ("B", "y", "shared line"), ("C", "z"), ("D", "w")]
    assert recurring_lines(twice) == frozenset()  # on 2 slides: under the 3 a footer needs
    half = [("A", "x", "shared line"), ("B", "y", "shared line"), ("C", "z", "shared line")] + [(w.upper(), w) for w in ("alpha", "beta", "gamma", "delta")]
    assert recurring_lines(half) == frozenset()  # on 3 of 7 full slides: under half


def test_a_footer_on_each_builds_first_step_recurs():
    """A trial's dark deck built its bullets one at a time: the footer was read on each slide's first step
    only (5 of 14 rows), the later steps holding the title and the new bullet."""
    from lecturecopilot.slidetext import recurring_lines, without_recurring

    footer = "BIO 101·Introductory Cell Biology"
    deck = []
    for title, bullets in [("Glycolysis", ["In the cytoplasm", "Glucose split in two", "Net 2 ATP"]),
                           ("The Krebs Cycle", ["In the matrix", "Also called the citric acid cycle"]),
                           ("Electron Transport Chain", ["Inner membrane", "NADH hands over electrons"]),
                           ("ATP Synthase", ["Protons flow back", "About 30 ATP per glucose"])]:
        deck.append((title, bullets[0], footer))
        deck += [(title, b) for b in bullets[1:]]
    recurring = recurring_lines(deck)
    assert all(footer not in without_recurring(s, recurring) for s in deck)
    assert sum(len(without_recurring(s, recurring)) for s in deck) == 2 * len(deck)  # title and bullet kept
    # one bullet repeated by three steps of one slide is no footer: it is under one title
    assert recurring_lines([("T", "a", "same"), ("T", "b", "same"), ("T", "c", "same"), ("U", "d")]) == frozenset()


def test_a_title_with_a_colon_or_wrapped_onto_a_second_line_stays_the_title():
    """An astronomy trial's slides: "Measuring Distance: Parallax" was quoted as the slide "Measuring
    Distance" saying "Parallax: Parallax: the apparent shift…"; "Kepler's Laws" / "and Orbits" as the
    slide "Kepler's Laws" saying "and Orbits"."""
    said = slide_sentence(["Measuring Distance: Parallax", "Parallax: the apparent shift of a nearby star",
                           "as Earth orbits the Sun", "1 parsec \u2248 3.26 light-years"])
    assert said == ("Measuring Distance \u2013 Parallax: Parallax: the apparent shift of a nearby star as Earth "
                    "orbits the Sun; 1 parsec \u2248 3.26 light-years.")
    assert slide_excerpt(said, "what is parallax?") == ("On the slide \u201cMeasuring Distance \u2013 Parallax\u201d: "
                                                        "\u201cParallax: the apparent shift of a nearby star as Earth "
                                                        "orbits the Sun\u201d.")
    assert slide_sentence(["Kepler's Laws", "and Orbits", "ASTR 101 Lecture 2"]) == \
        "Kepler's Laws and Orbits: ASTR 101 Lecture 2."
    # a variable named "a" opens a line of its own
    assert slide_sentence(["Third Law", "P = orbital period in years", "a = semi-major axis in AU"]) == \
        "Third Law: P = orbital period in years; a = semi-major axis in AU."


def test_a_label_that_only_echoes_the_question_is_not_the_quote():
    """A diagram's label ("White dwarfs") or a table's header ("Colour") was the whole quote for
    "Why are white dwarfs faint?": an item of a word or two that says nothing the question and the
    title do not is quoted only when nothing else is there."""
    hr = "The Hertzsprung-Russell Diagram: White dwarfs; Main sequence; White dwarfs are hot but small, so faint."
    assert slide_excerpt(hr, "Why are white dwarfs faint?") == \
        "On the slide \u201cThe Hertzsprung-Russell Diagram\u201d: \u201cWhite dwarfs are hot but small, so faint\u201d."
    assert slide_excerpt("Eccentricity: Eccentricity; e = c / a.", "What is eccentricity?") == \
        "On the slide \u201cEccentricity\u201d: \u201ce = c / a\u201d."
    assert slide_excerpt("Eccentricity: Eccentricity.", "What is eccentricity?") == \
        "On the slide \u201cEccentricity\u201d: \u201cEccentricity\u201d."
