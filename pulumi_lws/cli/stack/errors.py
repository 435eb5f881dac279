"""The one error of a project that cannot be used (bad input, exit 2), shared by the project
reader and the secrets provider so neither imports the other."""

from __future__ import annotations


class ProjectError(ValueError):
    """The project directory, its stack file or a ``--config`` argument is unusable (bad input, exit 2)."""
