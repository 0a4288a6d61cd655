"""Example servers shipped with mcpkit: ``notes``, ``verbs``, ``tricks`` (a files server
that plays the tricks hostile servers play on hosts, for lesson 10), and ``everything`` for
the conformance suite. Run one with ``mcpkit serve mcpkit.examples.notes:server``
(``tricks`` takes its flags as ``python -m mcpkit.examples.tricks --poison``)."""
