"""Every rendering of the checker's and the gate's results lives here; the CLI (``verispatial/cli/``) only drives.

- ``text``: the human report (header, one line per family, refutations with their counterexamples, verdict line).
- ``data``: the JSON report (``report_json``; ``Report.to_json`` is this).
- ``sarif``: SARIF 2.1.0 for code-scanning tools: one rule per rule kind, each result located by the JSON pointer
  of its op in ``program.json`` (``locate``).
- ``consequences``: which failures to prove a refuted finding explains (grouped under it by text, JSON and SARIF;
  presentation only, no verdict changes).
- ``junit``: JUnit XML, one test case per program and obligation family.
- ``gate``: the gate's summary table.
- ``progress``: progress on stderr: a plain line per step when stderr is not a terminal, a rich bar on one.

Explanations (narratives, DOT/SVG pictures, the HTML page) belong here too.
"""

from __future__ import annotations
