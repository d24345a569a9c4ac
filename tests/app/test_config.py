"""The Streamlit settings the repository ships."""

import tomllib
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"


def test_server_binds_to_localhost() -> None:
    # a local debugging tool listens on this machine only unless asked
    # (``streamlit run app.py --server.address 0.0.0.0``)
    cfg = tomllib.loads(CONFIG.read_text())
    assert cfg["server"]["address"] == "localhost"
