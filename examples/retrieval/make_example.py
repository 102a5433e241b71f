"""Writes the synthetic demo collection in this folder (qrels.txt, bm25.run, hybrid.run).

The data is synthetic: 30 questions about a made-up museum collection, a pool of 600 passage
ids, graded judgments (0-3) and two systems' runs drawn from a seeded numpy generator. The
"hybrid" system is the "bm25" ranking fused with a dense retriever that finds more of the
relevant passages, so it should win on nDCG@10 and recall. Re-running this script rewrites the
same bytes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TOPICS = [
    "who painted the harbour at dawn",
    "when was the east wing opened",
    "origin of the bronze ritual vessel",
    "restoration of the flemish altarpiece",
    "letters of the founding curator",
    "textile collection from the silk road",
    "photographs of the 1931 flood",
    "provenance of the ivory chess set",
    "map of the old city walls",
    "coins minted under the last duke",
    "botanical drawings by the sisters",
    "ship models in the maritime hall",
    "archive of the printing workshop",
    "portraits of the guild masters",
    "excavation of the roman villa",
    "costumes of the court theatre",
    "clockwork automaton in the west gallery",
    "manuscripts on astronomy",
    "ceramic tiles from the mosque",
    "war posters from the occupation",
    "stained glass of the abbey church",
    "tools of the clog makers",
    "herbarium sheets from the colonial expedition",
    "jewellery of the merchant family",
    "musical instruments of the conservatory",
    "furniture of the country house",
    "glass negatives of the street markets",
    "sculpture garden acquisitions",
    "diaries of the lighthouse keeper",
    "woodcuts of the dance of death",
]


def main() -> None:
    rng = np.random.default_rng(20250101)
    pool = [f"P{i:04d}" for i in range(600)]
    qrels_lines, bm25_lines, hybrid_lines = [], [], []
    for t, _topic in enumerate(TOPICS, start=1):
        qid = f"Q{t:03d}"
        docs = rng.choice(len(pool), size=80, replace=False)
        n_rel = int(rng.integers(2, 7))
        grades = {int(d): int(rng.integers(1, 4)) for d in docs[:n_rel]}
        for d in docs[n_rel : n_rel + 10]:
            grades[int(d)] = 0
        for d, g in sorted(grades.items()):
            qrels_lines.append(f"{qid} 0 {pool[d]} {g}\n")
        # bm25: relevant passages somewhere in the top 40, lexical noise elsewhere
        base = rng.normal(0.0, 1.0, size=docs.size)
        for i, d in enumerate(docs):
            if grades.get(int(d), 0) > 0:
                base[i] += rng.normal(1.2, 1.0)
        dense = base + rng.normal(0.0, 0.8, size=docs.size)
        for i, d in enumerate(docs):
            if grades.get(int(d), 0) > 0:
                dense[i] += rng.normal(1.0, 0.5)
        fused = 0.4 * base + 0.6 * dense
        for name, scores, out in (("bm25", base, bm25_lines), ("hybrid", fused, hybrid_lines)):
            order = np.argsort(-scores, kind="stable")[:50]
            for rank, i in enumerate(order, start=1):
                out.append(f"{qid} Q0 {pool[int(docs[i])]} {rank} {15 + scores[i]:.4f} {name}\n")
    (HERE / "qrels.txt").write_text("".join(qrels_lines))
    (HERE / "bm25.run").write_text("".join(bm25_lines))
    (HERE / "hybrid.run").write_text("".join(hybrid_lines))
    (HERE / "topics.tsv").write_text("".join(f"Q{t:03d}\t{x}\n" for t, x in enumerate(TOPICS, 1)))


if __name__ == "__main__":
    main()
