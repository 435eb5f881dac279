"""Entry point of the ``lws`` component provider as the Pulumi CLI launches this source plugin.

``pulumi package add <this repo>`` (and every later ``pulumi preview``/``up`` of the consuming
program) starts the plugin through the Python language host's ``RunPlugin`` with the plugin
directory (this repository's root) as the program directory. The host runs
``<virtualenv>/bin/python <plugin dir> <engine address>`` when ``<plugin dir>/__main__.py``
exists — this file — and ``python -m pulumi.run.plugin pulumi-lws ...`` otherwise, which would
serve the package under the wrong name (``pulumi-lws``, not ``lws``) and without the schema's
refinements. docs/languages.md has the CLI source behind each step.

It serves :func:`pulumi_lws.provider.__main__.main` (port on stdout, then gRPC). Importing this
file does nothing; the provider starts only when it runs as ``__main__``. The quickstart program
of the root project is ``Pulumi.yaml``'s ``main: examples/quickstart``, not this file.
"""

import pathlib
import sys


def main() -> None:
    try:
        import pulumi.provider  # noqa: F401  (the SDK the provider serves with; imported late by serve)

        from pulumi_lws.provider.__main__ import main as serve
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] == "pulumi_lws":
            raise
        requirements = pathlib.Path(__file__).resolve().parent / "requirements.txt"
        sys.exit(
            f"pulumi-lws provider: cannot import {error.name!r} with {sys.executable}: the plugin's virtualenv "
            f"lacks this package's dependencies. Install them with `{sys.executable} -m pip install -r "
            f"{requirements}` (what `pulumi package add` runs in the plugin directory)."
        )
    serve()


if __name__ == "__main__":
    main()
