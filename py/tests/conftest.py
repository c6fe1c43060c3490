"""Paths shared by the package tests."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture
def fixtures():
    return FIXTURES


@pytest.fixture
def root():
    return ROOT
