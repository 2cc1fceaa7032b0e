"""Environments nobody in this project wrote, behind the shared env contract of ``core.world`` (gymnasium API,
screenshot observations in screen pixels, ``core.actions.Action`` actions, the ``info`` keys
:class:`core.rollout.EpisodeSession` reads).

- :mod:`core.envs.miniwob`: MiniWoB++ (Farama's ``miniwob`` package) in headless Chromium (``make setup-web``).

Nothing here is imported by ``import core``; each module imports its backend (selenium, miniwob) itself.
"""
