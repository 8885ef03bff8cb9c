"""Packages: skills, prompt templates, themes and extensions installed as one unit (pi's ``packages``).

A package is declared in the ``packages`` setting (a source string, or pi's object form with
per-kind filters) and installed into a folder tau manages: ``<base>/git/<host>/<path>`` for git,
``<base>/npm/node_modules/<name>`` for npm, ``<base>/pip/<name>`` for pip (a ``pip --target``
folder, never the user's site-packages); a local path is used where it is. ``<base>`` is the agent
dir for the user's packages and ``<cwd>/.tau`` for the project's.
"""
