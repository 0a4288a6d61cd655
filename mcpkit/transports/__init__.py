"""Transports: how messages travel. stdio here; streamable HTTP in ``http`` (extra ``http``)."""
