"""``python -m verispatial``: the same command line as the ``verispatial`` console script."""

from verispatial.cli import main

raise SystemExit(main())
