"""`python -m bm25desk`: the same entry point as the `bm25desk` command."""

from bm25desk.launcher import main

raise SystemExit(main())
