"""The visual debugger (``streamlit run app.py``): views over timelines, simulated and real.

``data`` loads and caches runs, ``figures`` draws them (plotly), ``plugins`` finds the
checks / importers / compare modules when they exist, ``views`` holds one module a page
section and ``main`` lays the page out.
"""
