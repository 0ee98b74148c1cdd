"""Machine-written summaries, key takeaways and translations of a paper's abstract.

A backend (extractive or language model) turns a title and abstract into an
Enrichment; services.enrich_paper stores it as Summary rows, never over a
curator's edit unless asked.
"""
