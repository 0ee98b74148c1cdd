"""Extract from a schema.org release the part of its vocabulary that the paper
pages' JSON-LD test checks against (tests/test_metadata.py): the types the
JSON-LD uses with their supertypes, the data types, and every property whose
domain includes one of those types, with its domains, ranges and successor.

    python tests/data/schemaorg/extract.py [RELEASE_JSONLD_PATH_OR_URL] \\
        > tests/data/schemaorg/vocabulary.json

Without an argument it reads the release named in RELEASE from GitHub.
"""

import json
import sys
import urllib.request

RELEASE = "30.0"
SOURCE = (
    "https://raw.githubusercontent.com/schemaorg/schemaorg/main/data/releases/"
    f"{RELEASE}/schemaorg-current-https.jsonld"
)
# The types a paper page's JSON-LD uses (catalog.exports.scholarly_article).
USED_TYPES = ("ScholarlyArticle", "Person", "Organization", "PropertyValue", "Periodical")
DATA_TYPES = ("Text", "URL", "Date", "DateTime", "Time", "Boolean", "Number", "Integer", "Float")


def ids(value) -> list[str]:
    """schema.org names of a node's reference or references ("schema:Text" -> "Text")."""
    if value is None:
        return []
    values = value if isinstance(value, list) else [value]
    return [v["@id"].removeprefix("schema:") for v in values if v["@id"].startswith("schema:")]


def extract(graph: list[dict]) -> dict:
    nodes = {node["@id"].removeprefix("schema:"): node for node in graph}
    types: dict[str, dict] = {}
    pending = [*USED_TYPES, *DATA_TYPES]
    while pending:
        name = pending.pop()
        if name in types:
            continue
        supertypes = ids(nodes[name].get("rdfs:subClassOf"))
        types[name] = {"subClassOf": supertypes}
        pending.extend(supertypes)
    properties = {}
    for name, node in sorted(nodes.items()):
        kinds = node.get("@type")
        if "rdf:Property" not in (kinds if isinstance(kinds, list) else [kinds]):
            continue
        domains = ids(node.get("schema:domainIncludes"))
        if not set(domains) & set(types):
            continue
        properties[name] = {
            "domainIncludes": domains,
            "rangeIncludes": ids(node.get("schema:rangeIncludes")),
            "supersededBy": ids(node.get("schema:supersededBy")),
        }
    return {
        "release": RELEASE,
        "source": SOURCE,
        "types": dict(sorted(types.items())),
        "properties": properties,
    }


def main() -> None:
    source = sys.argv[1] if len(sys.argv) > 1 else SOURCE
    if source.startswith("https://"):
        with urllib.request.urlopen(source) as response:
            document = json.load(response)
    else:
        with open(source, encoding="utf-8") as file:
            document = json.load(file)
    json.dump(extract(document["@graph"]), sys.stdout, indent=1, sort_keys=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
