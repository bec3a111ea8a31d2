"""The compiler's passes (DESIGN §3, §6): lower → tile → place → size → synthesize-handshakes → persist, each
``run(section, target) -> (section, certificate_fragment)``, refusing by name; ``compile_model`` drives them. Over
scheduled programs: ``compose`` joins sections into one program (``PROGRAM_PASSES``, with ``residency``)."""

from verispatial.passes.compile import CompiledSection, compile_model, compile_section
from verispatial.passes.compose import compose
from verispatial.passes.pipeline import PASSES, PROGRAM_PASSES, Pipeline, capped_passes, default_passes, get_pass

__all__ = ["PASSES", "PROGRAM_PASSES", "CompiledSection", "Pipeline", "capped_passes", "compile_model", "compile_section",
           "compose", "default_passes", "get_pass"]
