"""Shared fixtures. Random instances come from :mod:`dse.synthetic` (tables built directly, no cost model)."""

from __future__ import annotations

import pytest

from dse.synthetic import random_tables

__all__ = ["random_tables"]


@pytest.fixture
def tables_factory():
    return random_tables
