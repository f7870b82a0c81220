"""Values that travel through file names: each type's format and parse round-trip,
every formatted value matches the type's PATTERN (the wildcard constraint), and
parse rejects everything else with a ValueError naming the text."""

import math
import re
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from conflictlab.conflictbank.ratio import MixtureRatio
from conflictlab.contextconflict.variants import (
    METHODS,
    RESPONDER_PATTERN,
    MethodRun,
    SteeredModel,
    SteeringVariant,
    format_alpha,
    is_rerun,
)
from conflictlab.lm.methods import KINDS, Method
from conflictlab.wildcards import MODEL_NAME_PATTERN

SCHEMA = yaml.safe_load((Path(__file__).resolve().parents[1] / "schemas" / "config.schema.yaml").read_text())

# Every finite positive float: tiny and huge exponents, subnormals included.
alphas = st.floats(min_value=0.0, exclude_min=True, allow_nan=False, allow_infinity=False)
variants = st.one_of(st.just(SteeringVariant("base")), st.builds(SteeringVariant, st.sampled_from(METHODS), alphas))
model_names = st.from_regex(MODEL_NAME_PATTERN, fullmatch=True)
ratios = st.builds(MixtureRatio, st.integers(min_value=1, max_value=10**12), st.integers(min_value=0, max_value=10**12))
garbage = st.text(max_size=24)
methods = st.one_of(
    st.builds(Method, st.sampled_from([k for k in KINDS if k != "cad"])), st.builds(Method, st.just("cad"), alphas)
)


def _fullmatch(pattern, text):
    return re.fullmatch(pattern, text) is not None


# --------------------------------------------------------------------------
# Steering variants


@given(variants)
@example(SteeringVariant("all_tokens", 1e-05))
@example(SteeringVariant("cas", 0.1))
@example(SteeringVariant("first_generated", 2.5e3))
@example(SteeringVariant("cas", 5e-324))
@example(SteeringVariant("cas", 1.7976931348623157e308))
def test_variant_round_trips_and_matches_its_pattern(variant):
    text = variant.format()
    assert SteeringVariant.parse(text) == variant
    assert _fullmatch(SteeringVariant.PATTERN, text)
    assert "+" not in text and "/" not in text and " " not in text


@given(alphas)
def test_alpha_spelling_reads_back_as_the_same_float(alpha):
    assert float(format_alpha(alpha)) == alpha


@pytest.mark.parametrize(
    "alpha, name",
    [
        (0.5, "all_tokens-a0.5"),
        (1.0, "all_tokens-a1"),
        (2.0, "all_tokens-a2"),
        (4, "all_tokens-a4"),
        (1.5, "all_tokens-a1.5"),
        (0.1, "all_tokens-a0.1"),
        (1e-05, "all_tokens-a1e-05"),
        (2.5e3, "all_tokens-a2500"),
        (1e16, "all_tokens-a1e16"),
    ],
)
def test_variant_names_keep_their_spelling(alpha, name):
    # the default and paper configs' names are the ones {:g} gave them
    assert SteeringVariant("all_tokens", alpha).format() == name
    assert SteeringVariant.parse(name) == SteeringVariant("all_tokens", float(alpha))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "base-a1",
        "sideways-a1",
        "cas",
        "cas-a",
        "cas-a0",
        "cas-a-1",
        "cas-a1.0",
        "cas-a1.50",
        "cas-a01",
        "cas-a1e+16",
        "cas-ainf",
        "cas-anan",
        "cas-a1E-05",
        "all_tokens-a 1",
        "all_tokens_a1",
        "cas-a1e-5x",
        "Base",
    ],
)
def test_variant_parse_rejects_garbage_naming_it(text):
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        SteeringVariant.parse(text)


@given(garbage)
def test_variant_parse_accepts_only_canonical_names(text):
    try:
        variant = SteeringVariant.parse(text)
    except ValueError as error:
        assert repr(text) in str(error)
    else:
        assert variant.format() == text


@pytest.mark.parametrize(
    "method, alpha",
    [("cas", 0.0), ("cas", -1.0), ("cas", math.inf), ("cas", math.nan), ("cas", True), ("base", 1.0), ("up", 1.0)],
)
def test_variant_rejects_values_outside_its_domain(method, alpha):
    with pytest.raises(ValueError):
        SteeringVariant(method, alpha)


# --------------------------------------------------------------------------
# Steered reruns (name@variant): the responding model of a steered response folder


@given(model_names, variants)
def test_steered_model_round_trips_and_matches_its_patterns(model, variant):
    steered = SteeredModel(model, variant)
    text = steered.format()
    assert SteeredModel.parse(text) == steered == SteeredModel.parse_if_steered(text)
    assert _fullmatch(SteeredModel.PATTERN, text) and _fullmatch(RESPONDER_PATTERN, text)
    assert SteeredModel.parse_if_steered(model) is None and _fullmatch(RESPONDER_PATTERN, model)


@pytest.mark.parametrize(
    "text", ["m", "m@", "@cas-a1", "m@cas-a1.0", "m@sideways-a1", "a/b@cas-a1", "m@base@base", "-m@base"]
)
def test_steered_model_parse_rejects_garbage_naming_it(text):
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        SteeredModel.parse(text)


def test_steered_model_writes_a_path_template():
    assert SteeredModel("{model}", "cas-a1").format() == "{model}@cas-a1"


# --------------------------------------------------------------------------
# Conflict-resolution methods and their reruns (name@method)


@given(methods)
def test_method_round_trips_and_matches_its_pattern(method):
    text = method.format()
    assert Method.parse(text) == method and _fullmatch(Method.PATTERN, text)
    assert not _fullmatch(SteeringVariant.PATTERN, text)  # one responder name, one kind of rerun


@given(variants)
def test_no_steering_variant_reads_as_a_method(variant):
    assert not _fullmatch(Method.PATTERN, variant.format())


@given(model_names, methods)
def test_method_run_round_trips_and_matches_its_patterns(model, method):
    run = MethodRun(model, method)
    text = run.format()
    assert MethodRun.parse(text) == run == MethodRun.parse_if_method(text)
    assert _fullmatch(MethodRun.PATTERN, text) and _fullmatch(RESPONDER_PATTERN, text)
    assert SteeredModel.parse_if_steered(text) is None and is_rerun(text)
    assert MethodRun.parse_if_method(model) is None and not is_rerun(model)


@pytest.mark.parametrize(
    "text", ["m", "m@", "@adacad", "m@cad-a0", "m@cad-a1.0", "m@cfp", "a/b@adacad", "m@adacad@adacad", "m@cas-a1"]
)
def test_method_run_parse_rejects_garbage_naming_it(text):
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        MethodRun.parse(text)


def test_a_steered_rerun_is_a_rerun_but_not_a_method_run():
    assert is_rerun("m@cas-a1") and MethodRun.parse_if_method("m@cas-a1") is None
    assert MethodRun("{model}", "adacad").format() == "{model}@adacad"


# --------------------------------------------------------------------------
# ConflictBank mixture ratios


@given(ratios)
@example(MixtureRatio(1, 0))
@example(MixtureRatio(2, 3))
@example(MixtureRatio(10, 1))
def test_ratio_round_trips_in_both_spellings(ratio):
    assert MixtureRatio.parse(ratio.format()) == ratio == MixtureRatio.from_label(ratio.label())
    assert _fullmatch(MixtureRatio.PATTERN, ratio.format()) and _fullmatch(MixtureRatio.LABEL_PATTERN, ratio.label())
    assert MixtureRatio.parse(ratio.format()).parts() == (ratio.default, ratio.conflicting)


@pytest.mark.parametrize("label, name", [("1:0", "1-0"), ("2:3", "2-3"), ("10:1", "10-1")])
def test_ratio_spellings(label, name):
    assert MixtureRatio.from_label(label).format() == name
    assert MixtureRatio.parse(name).label() == label


@pytest.mark.parametrize(
    "text", ["", "0-1", "2", "a-b", "1--1", "1-01", "01-1", "2:3", "1-0-0", " 1-0", "1.5-2", "+1-0"]
)
def test_ratio_parse_rejects_garbage_naming_it(text):
    with pytest.raises(ValueError, match=re.escape(repr(text))):
        MixtureRatio.parse(text)


@given(garbage)
def test_ratio_parse_accepts_only_canonical_names(text):
    for parse, spell in ((MixtureRatio.parse, MixtureRatio.format), (MixtureRatio.from_label, MixtureRatio.label)):
        try:
            ratio = parse(text)
        except ValueError as error:
            assert repr(text) in str(error)
        else:
            assert spell(ratio) == text


# --------------------------------------------------------------------------
# The config schema allows what the types allow


def _valid(schema, value) -> bool:
    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError:
        return False
    return True


@given(st.one_of(st.from_regex(r"[0-9]{1,3}:[0-9]{1,3}", fullmatch=True), garbage))
@example("1:0")
@example("2:03")
def test_schema_ratio_labels_are_the_types_labels(text):
    schema = SCHEMA["properties"]["conflictbank"]["properties"]["embedded"]["properties"]["ratios"]
    try:
        MixtureRatio.from_label(text)
        accepted = True
    except ValueError:
        accepted = False
    assert _valid(schema, [text]) == accepted


@given(st.one_of(alphas, st.floats(allow_nan=False), st.integers(min_value=-5, max_value=10**6)))
@example(1e-05)
@example(2.5e3)
@example(math.inf)
def test_schema_alphas_are_the_types_alphas(alpha):
    steering = SCHEMA["properties"]["steering"]["properties"]
    try:
        SteeringVariant("cas", alpha)
        accepted = True
    except ValueError:
        accepted = False
    assert _valid(steering["alpha"], alpha) == accepted
    assert _valid(steering["alpha_sweep"], [alpha]) == accepted


def test_schema_method_names_are_the_types_pattern():
    assert SCHEMA["properties"]["methods"]["properties"]["list"]["items"]["pattern"] == f"^(?:{Method.PATTERN})$"


def test_schema_model_names_are_the_registry_pattern():
    assert SCHEMA["properties"]["models"]["propertyNames"]["pattern"] == f"^{MODEL_NAME_PATTERN}$"
