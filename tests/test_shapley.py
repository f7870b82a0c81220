import itertools
import math

import numpy as np
import pytest

from conflictlab.contextconflict.shapley import (
    antithetic_permutations,
    exact_shapley,
    permutation_masks,
    sampled_shapley,
)


def game_values(n, v):
    """Dense values of a game given as a function of the member tuple."""
    return np.array([v(tuple(i for i in range(n) if m >> i & 1)) for m in range(1 << n)], dtype=float)


def permutation_definition(values, n):
    """φ_i as the mean marginal contribution over all n! orders."""
    phi = np.zeros(n)
    for order in itertools.permutations(range(n)):
        mask = 0
        for i in order:
            phi[i] += values[mask | 1 << i] - values[mask]
            mask |= 1 << i
    return phi / math.factorial(n)


def test_additive_game_gives_each_player_its_weight():
    w = np.array([0.3, -1.2, 2.5, 0.0, 4.1])
    values = game_values(5, lambda s: 7.0 + sum(w[i] for i in s))
    assert np.allclose(exact_shapley(values), w, atol=1e-12)


def test_symmetric_players_get_equal_values():
    values = game_values(4, lambda s: len(s) ** 2 - 0.5 * len(s))
    phi = exact_shapley(values)
    assert np.allclose(phi, phi[0], atol=1e-12)


def test_null_player_gets_zero():
    values = game_values(5, lambda s: np.log1p(len([i for i in s if i != 2])) * (1 + (0 in s)))
    assert abs(exact_shapley(values)[2]) < 1e-12


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6])
def test_efficiency_and_permutation_definition(n):
    rng = np.random.default_rng(n)
    values = rng.normal(size=1 << n)
    phi = exact_shapley(values)
    assert abs(phi.sum() - (values[-1] - values[0])) < 1e-9
    assert np.allclose(phi, permutation_definition(values, n), atol=1e-12)


def test_exact_rejects_non_power_of_two():
    with pytest.raises(ValueError, match="2\\*\\*n"):
        exact_shapley(np.zeros(6))


def test_sampler_error_shrinks_with_budget_and_covers_truth():
    n = 12
    rng = np.random.default_rng(0)
    w = rng.normal(size=n)
    # Non-polynomial, so antithetic pairs do not make the estimate exact
    # (for games of degree <= 2 they would).
    values = game_values(n, lambda s: np.tanh(sum(w[i] for i in s)) + max((w[i] for i in s), default=0.0))
    truth = exact_shapley(values)
    errors, ses = [], []
    for budget in (8, 64, 512):
        perms = antithetic_permutations(n, budget, seed=1)
        needed = permutation_masks(perms)
        phi, se = sampled_shapley({m: values[m] for m in needed}, perms)
        errors.append(np.abs(phi - truth).mean())
        ses.append(se.mean())
    assert errors[2] < errors[1] < errors[0]
    assert ses[2] < ses[1] < ses[0]
    assert np.mean(np.abs(phi - truth) <= 3 * se) > 0.8  # the standard error is honest


def test_antithetic_pairs_and_sampled_efficiency():
    perms = antithetic_permutations(5, 6, seed=3)
    assert perms.shape == (6, 5)
    assert (perms[1] == perms[0][::-1]).all() and (perms[3] == perms[2][::-1]).all()
    values = game_values(5, lambda s: np.sqrt(sum(s) + len(s)))
    phi, _ = sampled_shapley({m: values[m] for m in permutation_masks(perms)}, perms)
    assert abs(phi.sum() - (values[-1] - values[0])) < 1e-9  # holds for every permutation
    with pytest.raises(ValueError, match="even"):
        antithetic_permutations(5, 3, seed=0)
