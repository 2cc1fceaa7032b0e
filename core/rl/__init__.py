"""RL methods for GUI-agent training, written once as plain NumPy; verl and trl call them through their extension
points (docs/rl-algorithms.md). No framework import here or in any module of the package.

- :mod:`core.rl.gigpo`: GiGPO's step-level credit (arXiv 2505.10978): episode + anchor-state step advantages.
- :mod:`core.rl.groups`: the group-relative advantage, negative-sample reinforcement for all-fail groups
  (arXiv 2506.01347) and the success filter of dynamic sampling (DAPO, arXiv 2503.14476).
- :mod:`core.rl.replay`: success replay into groups with nothing to learn (ARPO, arXiv 2505.16282).
- :mod:`core.rl.difficulty`: the online difficulty filter (tasks whose recent pass rate is 0 or 1 set aside).
- :mod:`core.rl.controls`: the shuffled-reward control (each sample gets another sample's reward).
"""
