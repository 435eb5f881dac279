"""``python -m pulumi_lws.cli``: same as the ``pulumi-lws`` command."""

import sys

from pulumi_lws.cli import main

sys.exit(main())
