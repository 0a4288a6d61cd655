"""Example servers shipped with mcpkit: ``notes``, ``verbs`` (and ``everything`` for the
conformance suite). Run one with ``mcpkit serve mcpkit.examples.notes:server``."""
