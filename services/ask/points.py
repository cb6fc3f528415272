"""What a point of the search index is: its named vectors, its kinds, and the course id no query
can name from the API (evaluation's isolation-off ablation)."""

DENSE = "dense"      # all-MiniLM-L6-v2, cosine
SPARSE = "bm25"      # Qdrant's BM25 tokens
SEGMENT = "segment"  # a point's ``kind``: a segment (at most 90 s) ...
SUBCHUNK = "subchunk"  # ... or one of its ~20 s sub-chunks
ALL_COURSES = "*all-courses*"  # evaluation only: the isolation-off ablation; never reachable from the API
