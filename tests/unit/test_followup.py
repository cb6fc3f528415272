import pytest

from services.ask.followup import rewrite

H = ["What is the running time of counting sort?"]


@pytest.mark.parametrize("msg,expected", [
    ("why?", "Why? What is the running time of counting sort?"),
    ("Why", "Why? What is the running time of counting sort?"),
    ("explain that more simply", "What is the running time of counting sort?"),
    ("simpler please", "simpler please"),  # not a recognised follow-up: left alone
    ("tell me more", "What is the running time of counting sort?"),
    ("and for radix sort?", "What is the running time of radix sort?"),
    ("what about radix sort", "What is the running time of radix sort?"),
    ("how does it work?", "how does counting sort work?"),
    ("What is chaining in a hash table?", "What is chaining in a hash table?"),
])
def test_rewrite(msg, expected):
    assert rewrite(msg, H) == expected


def test_why_does_not_stick_to_the_next_follow_up():
    assert rewrite("and for radix sort?", H + ["Why? What is the running time of counting sort?"]) == \
        "What is the running time of radix sort?"


@pytest.mark.parametrize("msg", ["can you give an example?", "give me another example", "an example please"])
def test_example_requests_repeat_the_question(msg):
    assert rewrite(msg, H) == H[0]


def test_no_history_leaves_message():
    assert rewrite("why?", []) == "why?"


@pytest.mark.parametrize("prev, msg, expected", [
    ("why is counting sort stable?", "and what about radix sort?", "why is radix sort stable?"),
    ("Is merge sort in place?", "what about selection sort", "Is selection sort in place?"),
    ("What is a hash table?", "and for a linked list?", "What is a linked list?"),
    ("How long does merge sort take?", "and heaps?", "How long does heaps take?"),
])
def test_swapping_the_topic_keeps_the_rest_of_the_question(prev, msg, expected):
    assert rewrite(msg, [prev]) == expected


@pytest.mark.parametrize("msg, expected", [
    # a question of its own after "and" / "so": its pronoun takes the antecedent (the probe saw "What is is its running time?")
    ("And what is its running time?", "What is merge sort's running time?"),
    ("So is it stable?", "Is merge sort stable?"),
    ("And how does it work?", "How does merge sort work?"),
    # a topic swap whose new topic leans on the old one
    ("What about its space?", "What is merge sort's space?"),
    ("and its running time?", "What is merge sort's running time?"),
    ("and what about quicksort?", "What is quicksort?"),
])
def test_a_follow_up_with_a_conjunction_or_a_possessive_keeps_its_antecedent(msg, expected):
    assert rewrite(msg, ["What is merge sort?"]) == expected


@pytest.mark.parametrize("prev, msg, expected", [
    # no noun phrase before the pronoun: its antecedent is the previous question's topic, however long the message
    ("whats the division method for hashing?", "when does it actually work well?",
     "when does division method actually work well?"),
    ("What is merge sort?", "why does it need extra memory for the merge step?",
     "why does merge sort need extra memory for the merge step?"),
    ("What is merge sort?", "How is it different from insertion sort in practice?",
     "How is merge sort different from insertion sort in practice?"),
    # the pronoun is the object of the one word before it, a verb: "them" is still the earlier topic
    ("okazaki fragments lagging strand why", "and what joins them together at the end?",
     "What joins okazaki fragments lagging strand together at the end?"),
    ("What is glycolysis?", "what regulates it in muscle cells?", "what regulates glycolysis in muscle cells?"),
    # a message that names the topic itself, or has a noun phrase the pronoun may refer to, is left alone
    ("What is a hash table?", "how does open addressing handle them when the table is full?",
     "how does open addressing handle them when the table is full?"),
    ("What is merge sort?", "Is it true that merge sort is stable?", "Is it true that merge sort is stable?"),
    ("What is a hash table?", "What is a binary tree and how do you search it?",
     "What is a binary tree and how do you search it?"),
    # "that" before the topic's own last word stands with it for the topic (an astronomy trial's follow-up
    # became "what unit is measure distance distance in?")
    ("Is heapsort faster than mergesort?", "why is that faster?", "why is heapsort faster?"),
    ("How do astronomers measure distance with parallax?", "what unit is that distance in?",
     "what unit is astronomers measure distance in?"),
])
def test_a_pronoun_with_nothing_before_it_takes_the_previous_topic(prev, msg, expected):
    assert rewrite(msg, [prev]) == expected


@pytest.mark.parametrize("prev, msg, expected", [
    ("How fast is Fibonacci with memoization?", "what about without it?", "How fast is Fibonacci without memoization?"),
    # another preposition of the same thing: the previous question's last prepositional phrase changes it
    ("What happens at a price below equilibrium?", "and above it?", "What happens at a price above equilibrium?"),
    ("How does the gas behave below the critical temperature?", "and above that?",
     "How does the gas behave above the critical temperature?"),
    ("What does the enzyme do inside the cell?", "what about outside it?", "What does the enzyme do outside the cell?"),
    ("What is merge sort?", "how about insertion sort", "What is insertion sort?"),  # not "in" + "sertion sort"
    # a one-word topic swaps the word of a longer run spelled like it (a trial's became "Does deflation?")
    ("Does unexpected inflation hurt lenders?", "what about deflation?", "Does unexpected deflation hurt lenders?"),
    ("Why does hyperpolarization follow the spike?", "and depolarization?", "Why does depolarization follow the spike?"),
    ("What is merge sort?", "and for insertion sort?", "What is insertion sort?"),
    # an ordinal stands for what the previous question counted (an astronomy trial's became "What does second one?")
    ("What does Kepler's first law say?", "what about the second one?", "What does Kepler's second law say?"),
    ("What happens in the first phase of mitosis?", "and the third?", "What happens in the third phase of mitosis?"),
    ("What is Newton's 1st law?", "and the 2nd one?", "What is Newton's 2nd law?"),
    ("Which reaction comes first in glycolysis?", "and last?", "Which reaction comes last in glycolysis?"),
    # an ordinal and a noun: the ordinal of the same noun, else a part of what was asked (a circuits trial's
    # "what about the second step?" became "How do you find the second step of a network?")
    ("What is the first step of mitosis?", "and the second step?", "What is the second step of mitosis?"),
    ("How do you find the Thevenin equivalent of a network?", "what about the second step?",
     "what about the second step? How do you find the Thevenin equivalent of a network?"),
    ("What does Kepler's first law say?", "and the second law?", "What does Kepler's second law say?"),
])
def test_a_topic_swap_reads_whole_words(prev, msg, expected):
    assert rewrite(msg, [prev]) == expected


@pytest.mark.parametrize("msg, more", [
    ("why does it work?", True), ("why is that faster?", True), ("why?", True),
    ("Why is merge sort stable?", False), ("why do we hash keys at all?", False),
])
def test_a_why_question_about_the_answer_asks_for_more_of_it(msg, more):
    from services.ask.followup import continues

    assert continues(msg) is more


@pytest.mark.parametrize("msg, history, moment", [
    ("what does this mean?", [], True), ("why is that?", [], True), ("explain this", [], True),
    ("why is that?", ["What is merge sort?"], False),         # an earlier exchange to refer to
    ("What is merge sort?", [], False),                        # a topic of its own
    ("what is this algorithm's running time?", [], False),
])
def test_this_or_that_is_the_moment_when_there_is_no_earlier_exchange(msg, history, moment):
    from services.ask.followup import refers_to_moment, rewrite

    assert refers_to_moment(msg, history) is moment
    if moment:
        assert rewrite(msg, history) == msg  # nothing to rewrite it into: the moment says what "this" is


@pytest.mark.parametrize("prev,msg,expected", [
    # a newcomer's trial: "and what about 99%?" became "How do you build a 95% 99?"
    ("How do you build a 95% confidence interval?", "and what about 99%?", "How do you build a 99% confidence interval?"),
    ("What does 95% confidence mean?", "what about 99 percent?", "What does 99% confidence mean?"),
    ("How long does insertion sort take for 5 items?", "and for 10 items?", "How long does insertion sort take for 10 items?"),
    ("Is a sample of n = 30 always enough?", "and 40?", "Is a sample of n = 40 always enough?"),
    ("What is the p-value at z of 1.96?", "and 2.5?", "What is the p-value at z of 2.5?"),
    ("What is the rate constant at 25 degrees?", "what about at 100 degrees?", "What is the rate constant at 100 degrees?"),
    # a label and its number: "and in lecture 2?" gave "… in lecture 2 1?"
    ("How is ATP used in lecture 1?", "and in lecture 2?", "How is ATP used in lecture 2?"),
    ("What happens in step 2 of glycolysis?", "and step 3?", "What happens in step 3 of glycolysis?"),
    # a label the question did not have places it there ("and in chapter 2?" gave "… a 95% chapter 2?")
    ("How do you build a 95% confidence interval?", "and in chapter 2?",
     "How do you build a 95% confidence interval in chapter 2?"),
    ("What is entropy?", "what about lecture 3?", "What is entropy in lecture 3?"),
])
def test_a_quantity_swaps_the_quantity_that_counts_the_same_thing(prev, msg, expected):
    assert rewrite(msg, [prev]) == expected


@pytest.mark.parametrize("msg, history, moment", [
    ("why is that?", ["what does this mean?"], True),            # a trial's follow-up, declined before
    ("why?", ["what does this mean?"], True),
    ("explain that more simply", ["Explain this moment."], True),
    ("why is that?", ["Why? what does this mean?"], True),       # a third turn about it
    ("What is glycolysis?", ["what does this mean?"], False),     # a topic of its own
    ("why?", ["What is merge sort?"], False),                     # the earlier exchange had a topic
])
def test_a_follow_up_of_a_question_about_the_moment_is_about_it_too(msg, history, moment):
    from services.ask.followup import refers_to_moment

    assert refers_to_moment(msg, history) is moment


def test_a_rewrite_never_grows_past_the_longest_question():
    """A hostile conversation grew its rewritten question by 1,980 commas a turn (21,799 characters after
    eleven), each turn slower for every user of the service; a rewrite over the limit is the message."""
    from services.ask.domain import MAX_QUESTION_CHARS
    from services.ask.followup import resolve

    class Store:
        def history(self, conversation_id, course_id, n=3):
            return ["What is " + "," * 1990 + "merge sort?"]

        def said(self, conversation_id, course_id, n=3):
            return set()

    message = "and " + "," * 1980 + "merge sort?"
    question, _, _ = resolve(Store(), [], "c", "k", message)
    assert len(question) <= MAX_QUESTION_CHARS and question == message


@pytest.mark.parametrize("msg, expected", [
    ("and in lecture 1.5?", "How is ATP used in lecture 1.5?"),  # the number as asked (no lecture has it: not scoped)
])
def test_a_decimal_is_no_lectures_number(msg, expected):
    assert rewrite(msg, ["How is ATP used in lecture 7?"]) == expected


def test_a_formula_is_no_place_in_the_course():
    """"CO2" reads like a label and its number ("chapter 2"), but nothing is placed "in CO2"."""
    assert "in CO2" not in rewrite("and for CO2?", ["What does photosynthesis produce?"])
    assert rewrite("and in figure 4?", ["What does the enzyme bind?"]) == "What does the enzyme bind in figure 4?"
