"""Retrieved passages built from timed sentences, for tests of the extractive writer
(services.ask.writers.extractive) on real MiniLM embeddings without a search index."""

from services.ask.retrieve import Passage
from services.ask.search_index import Hit, IndexedSentence


def passage(idx: int, rows: list[tuple[float, str]], end_s: float, embed, lecture: tuple[str, int] = ("L5", 5)):
    """``(Passage, (sentences, their embeddings))`` for segment ``idx`` of ``lecture`` (id, number): one
    sentence per ``(start_s, text)`` row, each ending where the next starts (the last at ``end_s``);
    ``embed(texts)`` gives the embeddings. The pair is what ``index.sentences[(lecture_id, idx)]`` holds."""
    lid, number = lecture
    sents = [IndexedSentence(t, rows[k + 1][0] if k + 1 < len(rows) else end_s, text) for k, (t, text) in enumerate(rows)]
    return Passage(Hit(f"p{idx}", lid, number, idx, rows[0][0], end_s, " ".join(t for _, t in rows), 1.0), 1.0), \
        (sents, embed([t for _, t in rows]))
