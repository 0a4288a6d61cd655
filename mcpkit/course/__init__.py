"""Course tooling: build the bilingual notebooks from ``course/`` and grade lab submissions.

``source`` turns one bilingual jupytext source into per-language notebooks, ``build`` executes
and writes the three trees (``notebooks/``, ``labs/``, ``solutions/``), ``grade`` runs nbval on
a folder of submissions, and ``cli`` is the ``mcpkit-course`` command. None of it is imported
by the protocol library.
"""
