"""The Spark session and the Dask cluster shared by the distributed tests (one each a session)."""

from __future__ import annotations

import os
import shutil
import subprocess
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

    check_java()
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


def check_java() -> None:
    """Fail (never skip) with one clear line unless the Java Spark would start runs.

    Spark takes ``$JAVA_HOME/bin/java`` when ``JAVA_HOME`` is set, else ``java`` on the PATH;
    without this check a missing Java shows as Spark's "Java gateway process exited".
    """
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    where = f"JAVA_HOME={home}" if home else "java on the PATH"
    try:
        if java is None:
            raise FileNotFoundError("not found")
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise OSError(f"'java -version' exited with {out.returncode}")
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.fail(f"the Spark tests need Java 17 ({where}: {exc}); they fail, never skip")


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    """One local Dask cluster of two single-threaded worker processes for every Dask test."""
    from bm25desk.dask import local_client

    with local_client(2) as client:
        yield client
