"""A planted Wikidata dump: people with known facts and the places, schools,
employers and awards they name, in the dump's exact line layout, for the
scale measurement (benchmarks/construction_scale.py) and tests.

``planted_entities(n_people)`` yields about ``n_people * 1.02`` entities: the
objects first (1 per 50 people per relation, at least 3 of each type so that
every fact has two same-type substitutes), then the people, each with the
demo relations. Every fact is therefore known: ``n_people * len(RELATIONS)``.
"""

from __future__ import annotations

from collections.abc import Iterator

# relation -> (object type id, object type name)
RELATIONS = {
    "P69": ("Q3918", "university"),
    "P108": ("Q4830453", "business"),
    "P19": ("Q515", "city"),
    "P166": ("Q618779", "award"),
}
HUMAN = "Q5"


def _item(qid: str, label: str, description: str, claims: dict[str, list[str]]) -> dict:
    def statement(prop: str, target: str) -> dict:
        return {
            "mainsnak": {
                "snaktype": "value",
                "property": prop,
                "datatype": "wikibase-item",
                "datavalue": {
                    "value": {"entity-type": "item", "numeric-id": int(target[1:]), "id": target},
                    "type": "wikibase-entityid",
                },
            },
            "type": "statement",
            "rank": "normal",
        }

    return {
        "type": "item",
        "id": qid,
        "labels": {"en": {"language": "en", "value": label}},
        "descriptions": {"en": {"language": "en", "value": description}},
        "aliases": {},
        "sitelinks": {},
        "claims": {prop: [statement(prop, t) for t in targets] for prop, targets in claims.items()},
    }


def planted_entities(n_people: int) -> Iterator[dict]:
    """The planted entities in dump order (ids from Q1000000 up)."""
    per_relation = max(3, n_people // 50)
    next_id = 1_000_000
    objects: dict[str, list[str]] = {}
    for relation, (type_id, type_name) in RELATIONS.items():
        objects[relation] = []
        for k in range(per_relation):
            qid = f"Q{next_id}"
            next_id += 1
            objects[relation].append(qid)
            yield _item(
                qid, f"Planted {type_name} {k}", f"{type_name} number {k} of the planted dump", {"P31": [type_id]}
            )
    for person in range(n_people):
        qid = f"Q{next_id}"
        next_id += 1
        claims = {"P31": [HUMAN]}
        for r, relation in enumerate(RELATIONS):
            pool = objects[relation]
            claims[relation] = [pool[(person * 7 + r) % len(pool)]]
        yield _item(qid, f"Planted person {person}", f"planted person of occupation {person % 40}", claims)
