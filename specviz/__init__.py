"""specviz: does speculative decoding pay off for your traffic? The library behind the app.

Modules: ``spec`` (acceptance math), ``roofline`` (what a forward pass costs on given hardware),
``settings`` (every path and limit, from environment variables), ``charts`` (Altair builders),
``i18n`` (user-facing strings), ``cli`` (``python -m specviz``). Nothing here imports Streamlit.
"""
