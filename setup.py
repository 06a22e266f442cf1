"""Build the optional C extensions (everything else is in pyproject.toml).

They are the top-k kernel ``bm25desk.engine.scoring._topk``, the postings codec
``bm25desk.engine.index._blocks``, the bulk tokenizer ``bm25desk.engine.analysis._tokens`` and the
duplicate-id table ``bm25desk.engine.readers._seen``. All are optional: without a C compiler the
build warns and goes on, and bm25desk uses its numpy and Python paths (``HAVE_KERNEL`` in
``bm25desk.engine.scoring.topk`` is False; the numpy codec writes the same bytes).
``BM25DESK_NO_EXTENSION=1`` (or ``BM25DESK_NO_EXTENSIONS=1``, the run-time switch that makes an
installed bm25desk ignore its compiled extensions) skips them on purpose. It needs only the Python
headers (no numpy at build time), and is compiled without floating-point contraction so that its
scores are bit-identical to numpy's.
"""

import os
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class BuildExt(build_ext):
    """Pick flags for the compiler at hand (no FMA contraction, no fast-math)."""

    def build_extensions(self) -> None:
        """Set the flags on every extension, then build them."""
        if self.compiler.compiler_type == "msvc":
            flags = ["/O2", "/fp:precise"]
        else:
            flags = ["-O3", "-ffp-contract=off", "-fno-fast-math"]
        for ext in self.extensions:
            ext.extra_compile_args = flags
        super().build_extensions()


# The kernel's C sources are split by concern (cursors, postings, tables, the MaxScore loop,
# search, count): see bm25desk/engine/scoring/_topk_src/topk.h.
# The block format of the postings (segment format 3) is one header, shared by the kernel, which
# decodes blocks as it ranks, and the codec the segment writer and merges use.
BLOCKS_DIR = "bm25desk/engine/index/_blocks_src"
BLOCKS_H = f"{BLOCKS_DIR}/blocks.h"
# The hash tables of a build (the token table, the document-id table) share their index code.
DENSE_INDEX_H = "bm25desk/engine/dense_index.h"
TOPK_SOURCES = sorted(str(p) for p in Path("bm25desk/engine/scoring/_topk_src").glob("*.c"))

extensions = []
if all(
    os.environ.get(v, "") in ("", "0") for v in ("BM25DESK_NO_EXTENSION", "BM25DESK_NO_EXTENSIONS")
):
    extensions += [
        Extension(
            "bm25desk.engine.scoring._topk",
            TOPK_SOURCES,
            depends=[
                "bm25desk/engine/scoring/_topk_src/topk.h",
                "bm25desk/engine/scoring/_topk_src/exhaustive.h",
                "bm25desk/engine/scoring/_topk_src/arena.h",
                "bm25desk/engine/scoring/_topk_src/short.h",
                "bm25desk/engine/scoring/_topk_src/search.h",
                BLOCKS_H,
            ],
            include_dirs=[BLOCKS_DIR],
            optional=True,
        ),
        Extension(
            "bm25desk.engine.index._blocks",
            [f"{BLOCKS_DIR}/module.c", f"{BLOCKS_DIR}/terms.c"],
            depends=[BLOCKS_H, f"{BLOCKS_DIR}/view.h"],
            include_dirs=[BLOCKS_DIR],
            optional=True,
        ),
        Extension(
            "bm25desk.engine.analysis._tokens",
            ["bm25desk/engine/analysis/_tokens.c"],
            depends=[DENSE_INDEX_H],
            include_dirs=["bm25desk/engine"],
            optional=True,
        ),
        Extension(
            "bm25desk.engine.readers._seen",
            ["bm25desk/engine/readers/_seen.c"],
            depends=[DENSE_INDEX_H],
            include_dirs=["bm25desk/engine"],
            optional=True,
        ),
    ]

setup(ext_modules=extensions, cmdclass={"build_ext": BuildExt})
