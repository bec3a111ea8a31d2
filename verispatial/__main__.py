"""``python -m verispatial``: the same command line as the ``verispatial`` console script."""

from verispatial import budget

budget.defer_sigint()  # before the imports: an interrupt while they load still exits 130 with one line

from verispatial.cli import main  # noqa: E402

raise SystemExit(main())
