"""Config checks made before any job (conflictlab.run_config): hosted models
without their key, hosted models where weights are needed, judges."""

import copy

import pytest
import yaml

from conflictlab import run_config as rc

from .conftest import REPO


def merged(*files) -> dict:
    """config.yaml under ``files``, merged as Snakemake merges config files."""

    def merge(base, over):
        return {
            k: merge(base[k], v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
            for k, v in {**base, **over}.items()
        }

    config = {}
    for name in ("config.yaml", *files):
        config = merge(config, yaml.safe_load((REPO / name).read_text()))
    return config


HOSTED = {
    "hosted": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "TEST_KEY"},
    "skip_without_key": True,
}


def demo_with(**models) -> dict:
    config = merged()
    config["models"].update(copy.deepcopy(models))
    return config


def test_a_model_without_its_key_leaves_every_list_and_is_reported_once():
    config = demo_with(closed=HOSTED)
    config["generators"] = [*config["generators"], "closed"]
    config["conflicts"]["models"] = ["closed", *config["conflicts"]["models"]]
    kept = copy.deepcopy(config)
    assert rc.skip_hosted_without_key(config, {"TEST_KEY": ""}) == {"closed": "TEST_KEY"}
    assert all("closed" not in names for names in rc.model_lists(config).values())
    assert rc.skip_hosted_without_key(kept, {"TEST_KEY": "k"}) == {} and "closed" in kept["generators"]


def test_skipping_every_generator_or_a_flag_without_a_variable_is_refused():
    config = demo_with(closed=HOSTED)
    config["generators"] = ["closed"]
    with pytest.raises(ValueError, match=r"every generator was skipped \(skip_without_key; unset: TEST_KEY\)"):
        rc.skip_hosted_without_key(config, {})
    bad = demo_with(closed={**HOSTED, "hosted": {"base_url": "http://x/v1", "model": "m"}})
    with pytest.raises(ValueError, match=r"models.closed.skip_without_key needs models.closed.hosted.api_key_env"):
        rc.skip_hosted_without_key(bad, {})


def test_a_hosted_judge_without_its_key_stops_the_run_naming_the_variable():
    config = demo_with(closed=HOSTED)
    config["judges"] |= {"model": "closed", "backend": "openai"}
    rc.skip_hosted_without_key(config, {})  # a judge is never skipped
    (problem,) = rc.hosted_problems(config, {})
    assert "environment variable TEST_KEY (the API key) is not set or empty" in problem and "judges.model" in problem
    assert rc.hosted_problems(config, {"TEST_KEY": "k"}) == []
    with pytest.raises(ValueError, match="TEST_KEY"):
        rc.check_hosted_models(config, {})


def test_every_problem_is_named_at_once():
    config = demo_with(closed=HOSTED)
    config["scorers"] = ["closed"]  # Shapley scoring needs weights
    config["judges"] |= {"backend": "openai"}  # a local judge behind the openai backend
    config["conflicts"]["models"] = ["nowhere"]
    problems = rc.hosted_problems(config, {"TEST_KEY": "k"})
    assert len(problems) == 3, problems
    assert "missing from 'models': nowhere" in problems[0]
    assert problems[1].startswith("scorers names closed, a hosted model (m): Shapley scoring: model closed runs on")
    assert "backend hosted (chat), which lacks capability loglikelihood" in problems[1]
    assert problems[2].startswith("judges.backend openai with judges.model smollm2-135m-instruct")
    endpoint = demo_with(closed={"hosted": {"base_url": "http://x/v1", "model": "m", "concurrency": 0}})
    endpoint["generators"] = ["closed"]
    assert rc.hosted_problems(endpoint, {}) == [
        "models.closed.hosted: endpoint concurrency must be a positive integer, got 0"
    ]


def test_the_conflicts_judge_is_its_keys_over_judges():
    config = merged()
    assert list(rc.judges(config)) == ["judges"] and rc.conflicts_judge(config) is config["judges"]
    config["conflicts"]["judge"] = {"model": "other", "backend": "openai"}
    judge = rc.conflicts_judge(config)
    assert (judge["model"], judge["backend"], judge["gold"]) == ("other", "openai", config["judges"]["gold"])
    assert "other" in rc.used_models(config)


@pytest.mark.parametrize(
    "path, variables",
    [
        ("config/paper.yaml", {"OPENAI_API_KEY", "GEMINI_API_KEY"}),
        ("config/paper-contextconflict.yaml", {"OPENAI_API_KEY"}),
        ("config/paper-conflicts.yaml", {"GEMINI_API_KEY"}),
    ],
)
def test_the_paper_configs_need_their_judges_keys_and_the_open_overlay_none(path, variables):
    config = merged(path)
    rc.skip_hosted_without_key(config, {})
    problems = rc.hosted_problems(config, {})
    assert {p.split("environment variable ")[1].split(" ")[0] for p in problems} == variables, problems
    open_judges = merged(path, "config/paper-open-judges.yaml")
    rc.skip_hosted_without_key(open_judges, {})
    assert rc.hosted_problems(open_judges, {}) == []
    keyed = merged(path)
    keys = {v: "k" for v in variables}
    rc.skip_hosted_without_key(keyed, keys)
    assert rc.hosted_problems(keyed, keys) == []
