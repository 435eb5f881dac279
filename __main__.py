"""Program of the root Pulumi project (Pulumi.yaml): runs the quickstart example unchanged."""

import pathlib
import runpy

runpy.run_path(
    str(pathlib.Path(__file__).resolve().parent / "examples" / "quickstart" / "__main__.py"), run_name="__main__"
)
