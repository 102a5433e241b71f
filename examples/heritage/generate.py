"""Generate the synthetic heritage example project (run from the repository root).

    python examples/heritage/generate.py

Everything here is invented: the institutions, places, ISIL codes, Wikidata-style ids (Q9xxxxxx,
which are not real Wikidata items), documents, questions and both systems' outputs. The generator
is deterministic (fixed seed), so the committed files are exactly what it writes.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
SEED = 20250601

TYPES = ["M"] * 24 + ["A"] * 14 + ["L"] * 12 + ["S"] * 5 + ["G"] * 5
NER_LABEL = {
    "M": "GRP.HER.MUS",
    "A": "GRP.HER.ARC",
    "L": "GRP.HER.LIB",
    "S": "GRP.HER.SOC",
    "G": "GRP.HER.MUS",
}
COUNTRIES = ["NL"] * 30 + ["BE"] * 12 + ["GB"] * 12 + ["IE"] * 6

NL_PRE = [
    "Veen",
    "Hoog",
    "Linde",
    "Ooster",
    "Wester",
    "Zand",
    "Beek",
    "Eik",
    "Mol",
    "Ruis",
    "Wolde",
    "Brem",
]
NL_SUF = ["drecht", "meer", "wold", "hoven", "laar", "dijk", "horst", "broek", "zande", "kerke"]
EN_PRE = ["Ash", "Brook", "Elder", "Fern", "Holm", "Kings", "Mill", "Stan", "Thorn", "Wil"]
EN_SUF = ["bury", "ford", "ham", "ley", "mouth", "wick", "stead", "combe"]

NL_KIND = {
    "M": ["Museum {c}", "Stedelijk Museum {c}", "Streekmuseum {c}", "Museum Het {c}se Huis"],
    "A": ["Regionaal Archief {c}", "Stadsarchief {c}", "Waterschapsarchief {c}"],
    "L": ["Openbare Bibliotheek {c}", "Bibliotheek {c}", "Stadsbibliotheek {c}"],
    "S": ["Heemkundekring {c}", "Historische Vereniging {c}"],
    "G": ["Kunstgalerie {c}", "Galerie De {c}se Poort"],
}
EN_KIND = {
    "M": ["{c} Museum", "{c} Town Museum", "{c} Folk Museum"],
    "A": ["{c} Record Office", "{c} County Archives"],
    "L": ["{c} Public Library", "{c} Library"],
    "S": ["{c} Historical Society", "{c} Local History Society"],
    "G": ["{c} Art Gallery", "{c} Gallery of Fine Art"],
}
NL_COLL = {
    "M": [
        "een collectie klederdracht",
        "de grootste collectie turfgereedschap van de regio",
        "schilderijen uit de negentiende eeuw",
        "archeologische vondsten uit de ijzertijd",
    ],
    "A": [
        "de notariële archieven van de regio",
        "bouwtekeningen van de gemeente",
        "de doop-, trouw- en begraafboeken",
    ],
    "L": ["een collectie streekliteratuur", "oude drukken en handschriften"],
    "S": ["een beeldbank met oude foto's", "een verzameling bidprentjes"],
    "G": ["hedendaagse grafiek", "werk van regionale schilders"],
}
EN_COLL = {
    "M": [
        "a collection of lace and costume",
        "tools of the local mining industry",
        "Victorian paintings",
        "Bronze Age finds",
    ],
    "A": ["parish registers of the county", "estate papers and maps"],
    "L": ["a local studies collection", "early printed books"],
    "S": ["a photographic archive", "oral history recordings"],
    "G": ["contemporary prints", "works by regional painters"],
}
DISTRACTORS = [
    (
        "Subsidieregeling erfgoed 2024",
        "De provincie opent een nieuwe subsidieregeling voor digitalisering van erfgoedcollecties.",
    ),
    (
        "Open Monumentendag",
        "Tijdens Open Monumentendag zijn veel historische gebouwen gratis toegankelijk.",
    ),
    (
        "Heritage Lottery grants",
        "A new round of heritage grants supports volunteer-run museums and archives.",
    ),
    ("Digital preservation guide", "Guidance on file formats and checksums for small archives."),
    (
        "Restauratie van de stadsmolen",
        "De stadsmolen wordt dit jaar gerestaureerd door vrijwilligers.",
    ),
    ("Museum card statistics", "Visitor numbers for museum card holders rose in the last decade."),
    (
        "Nieuwe collectieregistratie",
        "Veel kleine musea stappen over op een gedeeld collectieregistratiesysteem.",
    ),
    (
        "Archive volunteers wanted",
        "The record office is looking for volunteers to index parish registers.",
    ),
]


def place(rng: random.Random, nl: bool, used: set[str]) -> str:
    while True:
        name = rng.choice(NL_PRE if nl else EN_PRE) + rng.choice(NL_SUF if nl else EN_SUF)
        if name not in used:
            used.add(name)
            return name


def build(rng: random.Random) -> tuple[list[dict], list[dict], list[dict]]:
    types = TYPES[:]
    countries = COUNTRIES[:]
    rng.shuffle(types)
    rng.shuffle(countries)
    used: set[str] = set()
    institutions = []
    for i, (ctype, country) in enumerate(zip(types, countries, strict=True)):
        nl = country in ("NL", "BE")
        city = place(rng, nl, used)
        name = rng.choice((NL_KIND if nl else EN_KIND)[ctype]).format(c=city)
        prefix = {"NL": "NL", "BE": "BE", "GB": "GB", "IE": "IE"}[country]
        isil = f"{prefix}-{city[:3]}{ctype}{i:02d}"
        year = rng.randint(1820, 1995)
        coll = rng.choice((NL_COLL if nl else EN_COLL)[ctype])
        institutions.append(
            {
                "n": i + 1,
                "type": ctype,
                "country": country,
                "lang": "nl" if nl else "en",
                "city": city,
                "name": name,
                "isil": isil,
                "year": year,
                "collection": coll,
                "qid": None if rng.random() < 0.15 else f"Q9{rng.randint(100000, 999999)}",
                "tier": rng.choice([1, 1, 2, 2, 3]),
                "source": rng.choice(["web", "web", "registry", "wikidata"]),
            }
        )
    gold, corpus = [], []
    for inst in institutions:
        n = inst["n"]
        if inst["lang"] == "nl":
            text = (
                f"{inst['name']} in {inst['city']} (ISIL: {inst['isil']}) werd opgericht in "
                f"{inst['year']} en beheert {inst['collection']}."
            )
        else:
            text = (
                f"The {inst['name']} in {inst['city']} (ISIL: {inst['isil']}) was founded in "
                f"{inst['year']} and holds {inst['collection']}."
            )
        doc = f"doc-{n:03d}"
        corpus.append({"id": doc, "title": inst["name"], "text": text})
        name_at = text.index(inst["name"])
        city_at = text.index(f" in {inst['city']}", name_at + len(inst["name"])) + 4
        isil_at = text.index(inst["isil"], city_at)
        year_at = text.index(str(inst["year"]), isil_at + len(inst["isil"]))
        ents = [
            {"text": surface, "type": label, "start": start, "end": start + len(surface)}
            for surface, label, start in (
                (inst["name"], NER_LABEL[inst["type"]], name_at),
                (inst["city"], "TOP", city_at),
                (inst["isil"], "IDENTIFIER", isil_at),
                (str(inst["year"]), "TMP", year_at),
            )
        ]
        link = {
            "mention_id": f"s{n:03d}-m1",
            "mention": inst["name"],
            "start": ents[0]["start"],
            "end": ents[0]["end"],
            "wikidata_id": inst["qid"],
            "isil_code": inst["isil"],
        }
        template = [
            "founding_year_of_CUSTODIAN",
            "location_of_CUSTODIAN",
            "collection_of_CUSTODIAN",
        ][n % 3]
        answerable = n % 8 != 0
        qid = f"s{n:03d}-q1"
        nl = inst["lang"] == "nl"
        if not answerable:
            question = (
                f"Hoeveel bezoekers had {inst['name']} in 2019?"
                if nl
                else f"How many visitors did the {inst['name']} have in 2019?"
            )
            qa = {
                "qid": qid,
                "question": question,
                "answer_type": "unanswerable",
                "answerable": False,
                "gold_claim_substr": [],
                "gold_citations": [],
                "template_id": "visitors_of_CUSTODIAN",
            }
        else:
            if template == "founding_year_of_CUSTODIAN":
                question = (
                    f"Wanneer is {inst['name']} opgericht?"
                    if nl
                    else f"When was the {inst['name']} founded?"
                )
                short = str(inst["year"])
                claim = f"in {inst['year']}"
            elif template == "location_of_CUSTODIAN":
                question = (
                    f"In welke plaats is {inst['name']} gevestigd?"
                    if nl
                    else f"Where is the {inst['name']}?"
                )
                short = inst["city"]
                claim = inst["city"]
            else:
                question = (
                    f"Wat beheert {inst['name']}?" if nl else f"What does the {inst['name']} hold?"
                )
                short = inst["collection"]
                claim = inst["collection"]
            sentence = (
                f"{inst['name']} werd opgericht in {inst['year']}."
                if template.startswith("founding") and nl
                else f"The {inst['name']} was founded in {inst['year']}."
                if template.startswith("founding")
                else f"{inst['name']} ligt in {inst['city']}."
                if template.startswith("location") and nl
                else f"The {inst['name']} is in {inst['city']}."
                if template.startswith("location")
                else f"{inst['name']} beheert {inst['collection']}."
                if nl
                else f"The {inst['name']} holds {inst['collection']}."
            )
            qa = {
                "qid": qid,
                "question": question,
                "answer": sentence,
                "answer_type": "factual",
                "golden_answers": [short, sentence],
                "supporting_facts": [claim],
                "gold_claim_substr": [claim] if len(claim) >= 5 else [],
                "gold_citations": [doc],
                "answerable": True,
                "template_id": template,
                "reference_steps": [
                    [
                        {
                            "name": "retrieval",
                            "args": {"query": question, "k": 5},
                            "output": json.dumps([{"id": doc}]),
                        }
                    ]
                ],
            }
        sample = {
            "id": f"s{n:03d}",
            "text": text,
            "language": inst["lang"],
            "strata": {
                "custodian_type": inst["type"],
                "country": inst["country"],
                "data_tier": inst["tier"],
                "source_type": inst["source"],
                "group": inst["qid"] or f"nil-{n:03d}",
            },
            "ner_annotations": ents,
            "type_classification": {"primary_type": inst["type"], "secondary_types": []},
            "entity_linking": [link],
            "qa_pairs": [qa],
        }
        if answerable:
            related = f"doc-{((n + 6) % len(institutions)) + 1:03d}"
            sample["relevant_docs"] = {qid: {doc: 2, related: 1} if n % 4 == 0 else {doc: 2}}
        gold.append(sample)
    for j, (title, text) in enumerate(DISTRACTORS, start=1):
        corpus.append({"id": f"news-{j:02d}", "title": title, "text": text})
    return gold, corpus, institutions


def system_outputs(
    rng: random.Random, gold: list[dict], corpus: list[dict], strong: bool
) -> dict[str, list]:
    docs = [d["id"] for d in corpus]
    texts = {d["id"]: d["text"] for d in corpus}
    run_lines, answers, traces, entities = [], [], [], []
    tag = "hybrid-v1" if strong else "bm25-v3"
    p_top = 0.86 if strong else 0.62
    for s in gold:
        qa = s["qa_pairs"][0]
        qid = qa["qid"]
        main = f"doc-{int(s['id'][1:]):03d}"
        others = [d for d in docs if d != main]
        rng.shuffle(others)
        if rng.random() < p_top:
            ranking = [main, *others[:9]]
        elif rng.random() < (0.85 if strong else 0.6):
            pos = rng.randint(1, 4)
            ranking = [*others[:pos], main, *others[pos:9]]
        else:
            ranking = others[:10]
        for rank, doc in enumerate(ranking, start=1):
            score = round(30.0 - rank * (1.7 if strong else 1.2) + rng.random() * 0.5, 3)
            run_lines.append(f"{qid} Q0 {doc} {rank} {score} {tag}")
        top5 = ranking[:5]
        nl = s["language"] == "nl"
        refusal = "not in context"
        if not qa["answerable"]:
            refuse = rng.random() < (1.0 if strong else 0.5)
            answer = (
                refusal
                if refuse
                else ("Ongeveer 12.000 bezoekers." if nl else "About 12,000 visitors.")
            )
            cites = [] if refuse else [top5[0]]
        else:
            found = main in top5
            if found and rng.random() < (0.93 if strong else 0.75):
                answer = (
                    qa["golden_answers"][1]
                    if rng.random() < (0.75 if strong else 0.35)
                    else qa["golden_answers"][0]
                )
                cites = [main]
            elif rng.random() < (0.04 if strong else 0.12):
                answer, cites = refusal, []
            else:
                wrong = gold[(int(s["id"][1:]) + 3) % len(gold)]["qa_pairs"][0]
                answer = wrong.get("answer") or (
                    "Dat weet ik niet zeker." if nl else "I am not sure."
                )
                cites = [top5[0]]
        answers.append(
            {
                "id": qid,
                "answer": answer,
                "citations": cites,
                "retrieved_ids": top5,
                "contexts": [{"id": d, "text": texts[d]} for d in top5[:3]],
            }
        )
        if qa.get("reference_steps"):
            steps_out = ranking[:5] if strong or rng.random() < 0.7 else ranking[1:6]
            traces.append(
                {
                    "question_id": qid,
                    "actual_answer": answer,
                    "actual_steps": [
                        {
                            "id": f"call-{qid}-1",
                            "name": "retrieval",
                            "args": {"query": qa["question"], "k": 5},
                            "status": "success",
                            "output": json.dumps([{"id": d} for d in steps_out]),
                        }
                    ],
                    "input_tokens": rng.randint(800, 2400),
                    "output_tokens": rng.randint(20, 120),
                    "elapsed_sec": round(rng.uniform(0.8, 4.5) * (0.8 if strong else 1.0), 2),
                }
            )
        # NER, types and links
        preds = []
        for e in s["ner_annotations"]:
            r = rng.random()
            if r < (0.04 if strong else 0.14):
                continue  # missed
            label = e["type"]
            if rng.random() < (0.04 if strong else 0.12) and label.startswith("GRP.HER"):
                label = "GRP.HER.ARC" if label != "GRP.HER.ARC" else "GRP.HER.MUS"
            start, end = e["start"], e["end"]
            if rng.random() < (0.03 if strong else 0.10) and " " in e["text"]:
                start = s["text"].index(" ", start) + 1  # boundary error: first word dropped
            preds.append({"start": start, "end": end, "type": label, "text": s["text"][start:end]})
        if rng.random() < (0.05 if strong else 0.2):
            word = s["text"].split()[-1].strip(".")
            start = s["text"].rindex(word)
            preds.append({"start": start, "end": start + len(word), "type": "TOP", "text": word})
        true_type = s["type_classification"]["primary_type"]
        if rng.random() < (0.9 if strong else 0.7):
            ptype = true_type
        else:
            ptype = rng.choice([t for t in "MALSG" if t != true_type])
        link = s["entity_linking"][0]
        gold_q = link["wikidata_id"]
        pool = [f"Q9{rng.randint(100000, 999999)}" for _ in range(4)]
        if gold_q is None:
            nil = rng.random() < (0.8 if strong else 0.5)
            cands = [] if nil else [{"kb_id": pool[0], "score": round(rng.uniform(0.3, 0.6), 3)}]
        else:
            nil = rng.random() < (0.03 if strong else 0.1)
            r = rng.random()
            if nil:
                order = []
            elif r < (0.85 if strong else 0.6):
                order = [gold_q, *pool[:2]]
            elif r < (0.95 if strong else 0.8):
                order = [pool[0], gold_q, pool[1]]
            else:
                order = pool[:3]
            cands = [
                {"kb_id": k, "score": round(0.95 - 0.2 * i - rng.random() * 0.05, 3)}
                for i, k in enumerate(order)
            ]
        entities.append(
            {
                "id": s["id"],
                "ner_annotations": preds,
                "type_classification": {"primary_type": ptype, "secondary_types": []},
                "entity_linking": [
                    {"mention_id": link["mention_id"], "candidates": cands, "nil": nil}
                ],
            }
        )
    return {"run": run_lines, "answers": answers, "traces": traces, "entities": entities}


def write_jsonl(path: Path, rows: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def main() -> None:
    rng = random.Random(SEED)
    gold, corpus, _ = build(rng)
    write_jsonl(HERE / "data" / "gold.jsonl", gold)
    write_jsonl(HERE / "data" / "corpus.jsonl", corpus)
    for name, strong in (("bm25", False), ("hybrid", True)):
        out = system_outputs(random.Random(f"{SEED}-{name}"), gold, corpus, strong)
        (HERE / "outputs").mkdir(exist_ok=True)
        (HERE / "outputs" / f"{name}.trec").write_text(
            "\n".join(out["run"]) + "\n", encoding="utf-8"
        )
        write_jsonl(HERE / "outputs" / f"{name}-answers.jsonl", out["answers"])
        write_jsonl(HERE / "outputs" / f"{name}-traces.jsonl", out["traces"])
        write_jsonl(HERE / "outputs" / f"{name}-entities.jsonl", out["entities"])
    write_baseline_bm25()


def write_baseline_bm25() -> None:
    """outputs/baseline-bm25.trec: a real BM25 baseline over the corpus, the output of

        ragmeter baseline bm25 --corpus examples/heritage/data/corpus.jsonl \\
            --queries examples/heritage/data/gold.jsonl \\
            -o examples/heritage/outputs/baseline-bm25.trec

    (run from the repository root), computed here with the same library calls but without the
    command's timing sidecar, so that this script stays byte-reproducible.
    """
    from ragmeter.baselines import BM25Index, read_corpus, read_queries, write_run

    index = BM25Index.build(read_corpus(HERE / "data" / "corpus.jsonl"))
    run = index.search(read_queries(HERE / "data" / "gold.jsonl"), k=100)
    write_run(run, HERE / "outputs" / "baseline-bm25.trec", tag="ragmeter-bm25")


if __name__ == "__main__":
    main()
