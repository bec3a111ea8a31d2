"""The tt-metal front end: a host description (``host``) and the kernels' C++ (``cpp``, ``preprocess``) lowered to
choreography ops (``lower``, ``api``) make one program.json whose every op names its C++ file:line; what cannot be
read is refused by name (``refusals``). docs/ttmetal.md is the user's guide.

``import_host(path)`` is the one entry point: the CLI's ``verispatial import ttmetal`` and ``verispatial certify
HOST.yaml`` call it.
"""

from verispatial.frontends.ttmetal.assemble import import_host
from verispatial.frontends.ttmetal.refusals import Refused

__all__ = ["Refused", "import_host"]
