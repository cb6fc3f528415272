"""A slide as a sentence (lecturecopilot.slidetext.slide_sentence) and as a quote in an answer
(services.ask.write.slide_excerpt): list markers are layout, each bullet is an item, and a quote is one
item, never cut inside brackets."""

from lecturecopilot.slidetext import slide_sentence, strip_bullet
from services.ask.write import slide_excerpt


def test_list_markers_are_dropped_and_each_bullet_is_an_item():
    assert strip_bullet("\u2022 Insert: sift up") == (True, "Insert: sift up")
    assert strip_bullet("- k hash functions") == (True, "k hash functions")
    assert strip_bullet("-1 is negative") == (False, "-1 is negative")  # a minus sign is not a marker
    assert slide_sentence(["Heaps", "\u2022 Insert: sift up", "\u2022 Extract-max:", "sift down"]) == \
        "Heaps: Insert: sift up; Extract-max: sift down."
    # without markers the lines are one text, as wrapped lines are
    assert slide_sentence(["Radix Sort", "Sort digit by digit,", "least significant first"]) == \
        "Radix Sort: Sort digit by digit, least significant first."
    assert slide_sentence(["\u2022 one bullet, no title"]) == "one bullet, no title."
    assert slide_sentence(["\u2022", "  "]) == ""


def test_a_quoted_slide_is_one_whole_item():
    bf = slide_sentence(["Bellman-Ford", "\u2022 Bellman-Ford (Richard Bellman,", "Lester Ford)",
                         "\u2022 Allows negative edge weights", "\u2022 Relax every edge V-1 times"])
    assert slide_excerpt(bf, "who is Bellman-Ford named after?") == \
        "On the slide \u201cBellman-Ford\u201d: \u201cBellman-Ford (Richard Bellman, Lester Ford)\u201d"
    assert slide_excerpt(bf, "does it allow negative edge weights?") == \
        "On the slide \u201cBellman-Ford\u201d: \u201cAllows negative edge weights\u201d"
    sp = slide_sentence(["Shortest paths", "\u2022 Weighted directed graph G = (V, E), source s"])
    assert "G = (V, E), source s" in slide_excerpt(sp, "what graph do shortest paths use?")


def test_a_long_item_gives_its_best_clause_outside_brackets_cut_at_the_limit():
    text = ("Hashing: a hash function (say h(k) = k mod m, for a prime m) maps keys to m slots, collisions "
            "are unavoidable by the pigeonhole principle, chaining keeps a list in every slot of the table")
    quote = slide_excerpt(text, "why are collisions unavoidable?")
    assert quote == "On the slide \u201cHashing\u201d: \u201ccollisions are unavoidable by the pigeonhole principle\u201d"
    first = slide_excerpt(text, "what does a hash function map?")
    assert "(say h(k) = k mod m, for a prime m)" in first
    long = slide_excerpt("T: " + " ".join(f"w{i}" for i in range(40)), "w1")
    assert long.endswith("w19\u2026\u201d") and len(long.split()) == 4 + 20  # "On the slide “T”:" + 20 words


def test_abbreviations_do_not_end_an_item():
    tries = slide_sentence(["Tries", "\u2022 Trie (from retrieval), a.k.a. prefix tree", "\u2022 Lookup in O(L)"])
    assert slide_excerpt(tries, "what is a trie also called?") == \
        "On the slide \u201cTries\u201d: \u201cTrie (from retrieval), a.k.a. prefix tree\u201d"
    two = slide_excerpt("Heaps: A heap is a tree. Insert sifts up.", "how does insert work?")
    assert two == "On the slide \u201cHeaps\u201d: \u201cInsert sifts up\u201d"
