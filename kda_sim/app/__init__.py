"""The visual debugger (``streamlit run app.py``): views over timelines, simulated and real.

``data`` loads and caches runs, ``figures`` draws them (plotly), ``outcome`` turns the
checks', importers' and comparisons' failures into messages, ``views`` holds one module a page
section and ``main`` lays the page out.
"""
