"""Latent risk trajectories of the arbitration benchmark.

Reproduces the benchmark of "When Text and Numbers Disagree: Evidence
Arbitration in LLMs" (Appendix B-C). Every instance derives from a latent
risk trajectory in [0, 1]; the model must say whether the value at T+k is
high (> 0.5) or low (< 0.5). In conflict conditions exactly one of two
sources agrees with the truth; unimodal references show that source alone.

Trajectories (B.1): label high/low; margin m ~ U(m_low, m_high); target
y = 0.5 ± m; slope s ~ U(-0.05, 0.05), shared by both labels; x_T = y − s·k − ε,
then backwards x_t = x_{t+1} − s + ε_t, ε ~ N(0, σ²). A draw is rejected and
redrawn when a value leaves [0, 1] or the forward check fails: a fresh
k-step forward simulation from x_T must land on the label's side of 0.5 by
at least m_low − 1.5·σ·√k (our reading of the paper's "margin condition",
which is ≥ 0 exactly when the configuration is valid). A configuration with
m_low < 1.5·σ·√k is refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

THRESHOLD = 0.5


@dataclass(frozen=True)
class TrajectoryConfig:
    length: int = 16  # T observed points
    horizon: int = 1  # k
    sigma: float = 0.05
    margin: tuple[float, float] = (0.35, 0.45)
    slope: float = 0.05  # s ~ U(-slope, slope)

    def validate(self) -> None:
        low, high = self.margin
        if not 0 < low <= high < 0.5:
            raise ValueError(f"margin range {self.margin} must satisfy 0 < m_low <= m_high < 0.5")
        if low < 1.5 * self.sigma * math.sqrt(self.horizon):
            raise ValueError(
                f"invalid configuration: m_low={low} < 1.5·σ·√k = {1.5 * self.sigma * math.sqrt(self.horizon):.4f} "
                f"(σ={self.sigma}, k={self.horizon}); the noise over the horizon could flip labels"
            )
        if self.length < 2 or self.horizon < 1:
            raise ValueError(f"need T >= 2 and k >= 1, got T={self.length}, k={self.horizon}")


@dataclass
class Trajectory:
    label: str  # "high" | "low"
    values: list[float]
    target: float
    margin: float
    slope: float
    attempts: int


def sample_trajectory(
    label: str, cfg: TrajectoryConfig, rng: np.random.Generator, max_attempts: int = 10_000
) -> Trajectory:
    """One trajectory with the given label, by rejection sampling (B.1)."""
    sign = 1.0 if label == "high" else -1.0
    min_forward = cfg.margin[0] - 1.5 * cfg.sigma * math.sqrt(cfg.horizon)
    for attempt in range(1, max_attempts + 1):
        margin = rng.uniform(*cfg.margin)
        target = THRESHOLD + sign * margin
        slope = rng.uniform(-cfg.slope, cfg.slope)
        values = np.empty(cfg.length)
        values[-1] = target - slope * cfg.horizon - rng.normal(0.0, cfg.sigma)
        for t in range(cfg.length - 2, -1, -1):
            values[t] = values[t + 1] - slope + rng.normal(0.0, cfg.sigma)
        forward = values[-1] + slope * cfg.horizon + rng.normal(0.0, cfg.sigma * math.sqrt(cfg.horizon))
        if sign * (forward - THRESHOLD) < min_forward:
            continue
        if values.min() < 0.0 or values.max() > 1.0 or not 0.0 <= target <= 1.0:
            continue
        return Trajectory(label, values.tolist(), float(target), float(margin), float(slope), attempt)
    raise RuntimeError(f"no valid {label} trajectory in {max_attempts} attempts for {cfg}")
