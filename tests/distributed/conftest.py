"""The Spark session and the Dask cluster shared by the distributed tests (one each a session)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One local Spark session for every Spark test: 2 cores, a failed task tried up to 4 times.

    Java 17 is on the CI image: a missing Java fails these tests (it does not skip them).
    """
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    session = (
        SparkSession.builder.master("local[2,4]")
        .appName("bm25desk-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    """One local Dask cluster of two single-threaded worker processes for every Dask test."""
    from bm25desk.dask import local_client

    with local_client(2) as client:
        yield client
