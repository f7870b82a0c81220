"""CONFLICTS' judges: expected behaviour (one template per category) and answer recall.

The paper ("DRAGged into Conflicts", §4 Evaluation) describes its judges but
does not publish their prompts, so these are this project's, written from
that description:

* **Expected behaviour**: one template per conflict category holding the
  query, the category's description and expected behaviour (the wording of
  :data:`conflictlab.conflicts.prompts.TAXONOMY`, which is also what the
  Pipeline and Oracle prompts show), adherent and non-adherent example
  responses with a one-line reason, and the candidate; a closed reply
  ``{"adheres": "yes" | "no"}``. Where the paper's Table 3 gives a pair for
  a category, its two responses are quoted exactly as examples (the
  "Freshness" row is the outdated-information category); every other
  example, and every reason, is written here. Table 3 has no No-conflict
  pair, so both of that category's pairs are this project's. Its
  Misinformation pair is not used: its query ("When did season 5 of prison
  break come out?") is a dataset query (paper §4 discusses it as one), and a
  few-shot example about the very query being judged tells the judge which
  of its sources is wrong; that pair is replaced by an invented one. Table
  3's other queries may be dataset queries too, so an example whose query is
  the judged query is left out of that request (:func:`examples_for`).
* **Answer recall**: paper §4, "we consider a response correct if the gold
  answer y is included in ŷ", judged by an LLM for "semantic inclusion of the
  gold answer": yes whenever the gold answer appears in the response, in any
  wording, also beside other candidate answers or inside a hedge (whether
  the response *should* hedge is the behaviour judge's question, not this
  one's); ``{"includes_answer": "yes" | "no"}``. Only queries with a
  released gold answer are asked.

The factual-grounding judge is FACTS's, in :mod:`conflictlab.judges.prompts.facts`.
"""

from __future__ import annotations

from dataclasses import dataclass

from conflictlab.conflicts.prompts import TAXONOMY
from conflictlab.judges.requests import JudgeRequest

BEHAVIOUR_TEMPLATES = {
    category: f"conflicts_behaviour_{category}_v2" for category in TAXONOMY
}  # v2: no dataset query among the examples
RECALL_TEMPLATE = "conflicts_answer_recall_v2"  # v2: a hedge that includes the gold counts (paper §4)
YES_NO = ("yes", "no")


@dataclass(frozen=True)
class Example:
    query: str
    response: str
    adheres: bool
    reason: str


EXAMPLES: dict[str, tuple[Example, ...]] = {
    "no_conflict": (
        Example(
            "What is the capital of Australia?",
            "The capital of Australia is Canberra [1][2].",
            True,
            "A clear, direct answer that the results agree on.",
        ),
        Example(
            "What is the capital of Australia?",
            "Some sources say the capital is Canberra [1], but others mention Sydney, the largest city [3], so the "
            "answer is not certain.",
            False,
            "Hedges and invents a disagreement although the results agree on Canberra.",
        ),
        Example(
            "How many moons does Mars have?",
            "Mars has two moons, Phobos and Deimos [1][4].",
            True,
            "Answers directly with the answer every result gives.",
        ),
        Example(
            "How many moons does Mars have?",
            "Opinions differ on Mars's moons: one source names Phobos [1] and another names Deimos [4].",
            False,
            "Frames two parts of the same answer as conflicting viewpoints instead of answering.",
        ),
    ),
    "complementary": (
        Example(  # paper Table 3, adherent
            "Who has the biggest airport?",
            "The world’s largest airport can be defined in several ways, including by land area, passenger volume, or "
            "flight volume [6]. King Fahd International Airport in Saudi Arabia is the largest airport by total area "
            "[1]. "
            "In terms of passenger traffic, Hartsfield-Jackson Atlanta International Airport in the United States is "
            "the "
            "busiest airport in the world [4, 5].",
            True,
            "Consolidates the answers for each sense of 'biggest' into one response.",
        ),
        Example(  # paper Table 3, non-adherent
            "Who has the biggest airport?",
            "The King Fahd International Airport in Saudi Arabia is the largest airport in the world by land area "
            "[1][6][7]. It spans nearly 300 square miles, an area comparable to the size of New York City’s five "
            "boroughs "
            "combined [6].",
            False,
            "Gives only one of the compatible answers.",
        ),
        Example(
            "What are the benefits of drinking green tea?",
            "Green tea contains antioxidants called catechins [2], its caffeine can improve alertness [3], and some "
            "studies link it to lower cholesterol [5].",
            True,
            "Combines the benefits named by different results without presenting them as a debate.",
        ),
        Example(
            "What are the benefits of drinking green tea?",
            "Sources disagree about green tea: one says it helps alertness [3], while another argues it lowers "
            "cholesterol [5].",
            False,
            "Presents compatible answers as a disagreement.",
        ),
    ),
    "conflicting_opinions": (
        Example(  # paper Table 3, adherent
            "Where did the style hot dog originated?",
            "The exact origin of the hot dog is not definitively clear, making it a subject of some debate among "
            "historians [6]. Two European cities, Frankfurt, Germany, and Vienna, Austria, both claim to be the "
            "birthplace of the sausage that served as the precursor to the hot dog [7]. The Chicago-style hot dog, "
            "with "
            "its specific set of toppings, emerged later, during the Great Depression in the 1930s [1].",
            True,
            "Presents the debate and the competing claims neutrally.",
        ),
        Example(  # paper Table 3, non-adherent
            "Where did the style hot dog originated?",
            "The Chicago-style hot dog originated during the Great Depression in the 1930s in Chicago [1]. It was "
            "created to provide a hearty and affordable meal, with a nickel buying a hot dog loaded with condiments "
            "[1].",
            False,
            "Gives one account only and ignores the disputed origin.",
        ),
        Example(
            "Is coffee bad for your heart?",
            "Research is divided. Several large studies associate moderate coffee drinking with a lower risk of heart "
            "disease [2][4], while others report that high intake can raise blood pressure in some people [3].",
            True,
            "States that the question is debated and summarises each side.",
        ),
        Example(
            "Is coffee bad for your heart?",
            "Coffee is good for your heart: moderate drinkers have a lower risk of heart disease [2][4].",
            False,
            "Takes one side of a debated question as settled.",
        ),
    ),
    "outdated": (
        Example(  # paper Table 3 ("Freshness"), adherent
            "How many people have been on the International Space Station?",
            "As of March 2024, 279 individuals from 22 countries have visited the International Space Station [2]. "
            "Older "
            "figures indicate that as of May 2022, 258 people from 20 countries had visited the station [5], and as of "
            "September 12, 2021, 244 people had made 403 spaceflights to the ISS [3].",
            True,
            "Leads with the most recent figure and marks the older ones as older.",
        ),
        Example(  # paper Table 3 ("Freshness"), non-adherent
            "How many people have been on the International Space Station?",
            "As of May 2022, 258 individuals from 20 countries have visited the International Space Station (ISS) [5]. "
            "Other sources state over 260 individuals from 20 countries and five International Partners have visited "
            "the station [7].",
            False,
            "Presents outdated figures side by side as if they disagreed, without the most recent one.",
        ),
        Example(
            "Who is the prime minister of the United Kingdom?",
            "Keir Starmer has been prime minister since July 2024 [1]; an older article still names Rishi Sunak, who "
            "held the office before him [4].",
            True,
            "Gives the current answer and notes why an older source differs.",
        ),
        Example(
            "Who is the prime minister of the United Kingdom?",
            "The prime minister of the United Kingdom is Rishi Sunak [4].",
            False,
            "Answers from an outdated source.",
        ),
    ),
    "misinformation": (
        Example(
            "When did the Larkfield public library reopen after its renovation?",
            "The Larkfield public library reopened on 12 September 2019 [1][3]. The renovation had kept it closed for "
            "two years [1].",
            True,
            "Answers from the reliable sources and leaves out the wrong date.",
        ),
        Example(
            "When did the Larkfield public library reopen after its renovation?",
            "The Larkfield public library reopened on 12 September 2019 [1]. Another source says it reopened in March "
            "2015 [4].",
            False,
            "Reports the unreliable source's date as a second answer instead of disregarding it.",
        ),
        Example(
            "How tall is Mount Everest?",
            "Mount Everest is 8,849 metres tall, the height China and Nepal announced in 2020 [1][2].",
            True,
            "Gives the reliable figure and disregards a page claiming 9,500 metres.",
        ),
        Example(
            "How tall is Mount Everest?",
            "Mount Everest is either 8,849 metres [1] or 9,500 metres [3] tall, depending on the source.",
            False,
            "Treats a false figure as a valid alternative.",
        ),
    ),
}
assert set(EXAMPLES) == set(TAXONOMY)


def _example_text(example: Example) -> str:
    verdict = "adheres" if example.adheres else "does not adhere"
    return f"Query: {example.query}\nResponse: {example.response}\nVerdict: {verdict}. {example.reason}"


def _same_query(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()).rstrip("?") == " ".join(b.casefold().split()).rstrip("?")


def examples_for(category: str, question: str) -> tuple[Example, ...]:
    """The category's examples, less any about ``question`` itself."""
    return tuple(e for e in EXAMPLES[category] if not _same_query(e.query, question))


def behaviour_request(category: str, question: str, response: str) -> JudgeRequest:
    """Does ``response`` follow the expected behaviour of the query's (gold) ``category``?"""
    kind = TAXONOMY[category]
    examples = "\n\n".join(_example_text(e) for e in examples_for(category, question))
    user = (
        "You check whether a response written from search results handles them the way their type of knowledge "
        f"conflict calls for.\n\nConflict type: {kind.label}. {kind.definition}\nExpected behaviour: "
        f"{kind.behaviour}\n\n"
        f"Examples:\n\n{examples}\n\nNow judge this response. Judge only whether it follows the expected behaviour, "
        "not "
        f"whether its facts are right.\nQuery: {question}\nResponse: {response}\n\n"
        'Reply with JSON: {"adheres": "yes"} or {"adheres": "no"}.'
    )
    return JudgeRequest(
        template=BEHAVIOUR_TEMPLATES[category], messages=(("user", user),), fields=("adheres",), options=YES_NO
    )


def recall_request(question: str, gold: str, response: str) -> JudgeRequest:
    """Does ``response`` include the gold answer (semantically)?"""
    user = (
        "You check whether a response includes the correct answer to a question. Reply yes when the correct answer "
        "appears anywhere in the response, in any wording (a paraphrase, an equivalent form, or with more detail), "
        "also when the response gives other answers beside it or hedges between several answers that include it. "
        "Reply no only when the correct answer is not in the response.\n\n"
        f"Question: {question}\nCorrect answer: {gold}\nResponse: {response}\n\n"
        'Reply with JSON: {"includes_answer": "yes"} or {"includes_answer": "no"}.'
    )
    return JudgeRequest(
        template=RECALL_TEMPLATE, messages=(("user", user),), fields=("includes_answer",), options=YES_NO
    )
