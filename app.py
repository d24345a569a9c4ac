"""kda-sim's visual debugger: ``streamlit run app.py`` (the logic lives in kda_sim.app)."""

from pathlib import Path

from kda_sim.app.main import main

main(Path(__file__).resolve().parent)
