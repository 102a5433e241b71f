"""Annotation records below both the readers and the metrics: documents, spans, corpora.

``ragmeter.io`` builds these records from BRAT, CoNLL and heritage files and
``ragmeter.extraction`` scores them; this package imports neither, so the two never import each
other back (docs/architecture.md draws the layers). It holds the record types (:mod:`.model`),
their errors (:mod:`.errors`), KB identifiers (:mod:`.kbids`), tag schemes (:mod:`.tags`),
tokenization (:mod:`.tokenize`) and gold validation (:mod:`.validation`). The old paths under
``ragmeter.extraction`` keep working: they are the same module objects.
"""
