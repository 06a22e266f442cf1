"""Settings live under the data dir's config when it is overridden, and survive bad values."""

from __future__ import annotations

from bm25desk.ui.common.settings import Settings


def test_settings_round_trip_under_the_data_dir(data_dir) -> None:
    s = Settings()
    assert s.file_name.startswith(str(data_dir / "config"))
    s.variant = "bm25l"
    s.set_params("bm25l", {"k1": 0.9, "b": 0.4, "delta": 0.5})
    s.last_index = "cisi"
    s.sync()
    again = Settings()
    assert again.variant == "bm25l"
    assert again.params("bm25l") == {"k1": 0.9, "b": 0.4, "delta": 0.5}
    assert again.last_index == "cisi"
    assert again.params("okapi") == {}


def test_damaged_values_fall_back_to_defaults(data_dir) -> None:
    s = Settings()
    s.set_value("params/okapi", "{not json")
    s.set_value("params/atire", "[1, 2]")
    assert s.params("okapi") == {}
    assert s.params("atire") == {}
    assert s.layout("geometry") is None
    assert s.variant == "lucene"
