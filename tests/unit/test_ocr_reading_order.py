"""Reading order of a slide's OCR boxes (``services/transcribe/ocr.py``): columns one after the
other, a table row by row, a bullet with its item, whatever the order the boxes' tops fall in."""

from __future__ import annotations

from services.transcribe.ocr import Box, TextLine, joined_rows, reading_order


def _texts(boxes: list[Box]) -> list[str]:
    return [" ".join(b.text for b in row) for row in reading_order(boxes)]


# boxes as RapidOCR found them on a 960×540 slide of three bullets beside a table (evals/slide_designs:
# "two-column" with a table): the table's rows fall between the bullets' lines
BULLETS_BESIDE_TABLE = [
    Box(56, 37, 640, 80, "Inflation and interest rates"),
    Box(60, 122, 73, 135, "●"), Box(83, 113, 475, 145, "Real rate equals nominal rate"),
    Box(539, 129, 607, 161, "Year"), Box(667, 131, 778, 158, "Inflation"), Box(790, 130, 857, 159, "Rate"),
    Box(100, 153, 297, 180, "minus inflation"),
    Box(540, 170, 607, 202, "2019"), Box(666, 172, 731, 201, "1.8%"), Box(789, 171, 856, 202, "2.4%"),
    Box(60, 198, 73, 211, "●"), Box(83, 189, 475, 218, "Lenders lose when inflation is"),
    Box(540, 213, 607, 244, "2020"), Box(665, 213, 732, 244, "1.2%"), Box(790, 213, 856, 245, "0.3%"),
    Box(100, 227, 258, 258, "unexpected"),
    Box(84, 263, 522, 296, "Central banks target two percent"),
    Box(540, 255, 607, 287, "2021"), Box(665, 255, 732, 286, "4.7%"), Box(790, 255, 856, 287, "0.1%"),
    Box(60, 273, 73, 286, "●"),
]


def test_bullets_beside_a_table_are_read_column_after_column_and_the_table_row_by_row():
    assert _texts(BULLETS_BESIDE_TABLE) == [
        "Inflation and interest rates",
        "● Real rate equals nominal rate", "minus inflation",
        "● Lenders lose when inflation is", "unexpected",
        "● Central banks target two percent",
        "Year Inflation Rate", "2019 1.8% 2.4%", "2020 1.2% 0.3%", "2021 4.7% 0.1%",
    ]


def test_a_table_row_is_read_left_to_right_though_its_cells_tops_differ():
    # the right cell's top is 4 px above the left's: sorting by top read "Rate Year"
    boxes = [Box(100, 104, 180, 130, "Year"), Box(300, 100, 380, 128, "Rate"),
             Box(100, 150, 180, 176, "2019"), Box(300, 147, 380, 177, "2.4%")]
    assert _texts(boxes) == ["Year Rate", "2019 2.4%"]


def test_columns_with_lines_of_their_own_are_read_one_after_the_other():
    # a left column of four lines and a right column of three, each typeset on its own pitch
    left = [Box(60, 120 + 46 * i, 420, 150 + 46 * i, f"left {i}") for i in range(4)]
    right = [Box(520, 140 + 60 * i, 900, 170 + 60 * i, f"right {i}") for i in range(3)]
    assert _texts([Box(60, 30, 700, 80, "A title over both columns"), *right, *left]) == [
        "A title over both columns", "left 0", "left 1", "left 2", "left 3", "right 0", "right 1", "right 2"]


def test_a_single_column_stays_top_to_bottom_and_side_by_side_lines_stay_rows():
    one = [Box(60, 100 + 40 * i, 300 + 50 * i, 130 + 40 * i, f"line {i}") for i in range(5)]
    assert _texts(list(reversed(one))) == [f"line {i}" for i in range(5)]
    # two columns whose lines share rows cannot be told from a table: they are read row by row
    rows = [b for i in range(3) for b in (Box(60, 100 + 40 * i, 400, 130 + 40 * i, f"a{i}"),
                                          Box(500, 101 + 40 * i, 900, 131 + 40 * i, f"b{i}"))]
    assert _texts(rows) == ["a0 b0", "a1 b1", "a2 b2"]
    assert reading_order([]) == []


def test_joined_rows_joins_the_boxes_of_one_row_only():
    lines = [TextLine("●", 0.1, 0.2, 0), TextLine("Real rate", 0.3, 0.2, 0), TextLine("minus inflation", 0.3, 0.3, 1),
             TextLine("Year", 0.6, 0.25, 2), TextLine("Rate", 0.8, 0.25, 2)]
    assert joined_rows(lines) == ["● Real rate", "minus inflation", "Year Rate"]
    assert joined_rows([]) == []


def test_a_title_wrapped_over_two_lines_in_larger_type_is_one_line():
    """An ecology trial's "Why Predator and Prey" / "Populations Cycle" (35 and 34 px a character over body
    lines of 21–22) was a title and a first item. Size is read from the character pitch (box width per
    character): box heights differ by up to 30 % between lines of one font."""
    def line(text, y, row, pitch):
        return TextLine(text, 0.4, y, row, pitch)

    body = [line("● Snowshoe hare and lynx pelt records", 0.36, 2, 0.017), line("● Lynx peaks follow hare peaks", 0.44, 3, 0.0165)]
    body[0:0] = [line("●", 0.1, 2, 0.01)]  # a bullet glyph in the row of its item: the item's pitch counts
    wrapped = [line("Why Predator and Prey", 0.13, 0, 0.0277), line("Populations Cycle", 0.22, 1, 0.0264)]
    assert joined_rows(wrapped + body) == ["Why Predator and Prey Populations Cycle",
                                           "● ● Snowshoe hare and lynx pelt records", "● Lynx peaks follow hare peaks"]
    one = [line("Trophic Cascades", 0.13, 0, 0.027)] + [line(t.text, t.y, t.row - 1, t.pitch) for t in body]
    assert joined_rows(one)[0] == "Trophic Cascades" and len(joined_rows(one)) == 3  # a one-line title: as it was
    same = [line("Step one", 0.13, 0, 0.017), line("Step two", 0.22, 1, 0.017)] + body  # body type only: no title
    assert joined_rows(same)[:2] == ["Step one", "Step two"]
    lines = [line(f"Line {k}", 0.2 + 0.1 * k, k, 0.017) for k in range(3)] + [line("Course 101", 0.93, 3, 0.008)]
    assert joined_rows(lines) == ["Line 0", "Line 1", "Line 2", "Course 101"]  # body over a small footer
    close = [line("Inflation and interest rates", 0.11, 0, 0.024), line("Real rate equals nominal rate", 0.24, 1, 0.022),
             line("minus inflation", 0.31, 2, 0.02), line("Lenders lose", 0.38, 3, 0.02)]  # title 1.2x the body
    assert joined_rows(close) == [t.text for t in close]
    unknown = [line(t.text, t.y, t.row, 0.0) for t in wrapped + body]  # no sizes: rows as they are
    assert joined_rows(unknown) == ["Why Predator and Prey", "Populations Cycle", "● ● Snowshoe hare and lynx pelt records",
                                    "● Lynx peaks follow hare peaks"]
