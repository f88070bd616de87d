"""specviz: does speculative decoding pay off for your traffic? The library behind the app.

Rooms, each importing only from those above it (``tests/test_layout.py`` reads every import and
fails on an arrow that runs the other way):

- base: ``errors`` (errors as types with a message key), ``i18n`` (every user-facing string, English
  and Vietnamese, from ``locales/``), ``settings`` (every path and limit, from environment variables);
- ``charts``: the Altair chart builders (imports the base only);
- ``model/``: the acceptance math and the step model (imports the base only);
- ``scenario``, ``names``, ``calculator``, ``regime``, ``workload``: the typed scenario every page,
  link and command shares, the presets recognised from the names people write, the sweeps and
  tables over it, why its verify pass costs what it does, and request latencies (import the base and
  the model);
- ``live/``: a server's metrics read now (imports the above);
- ``results/``: the store, the result formats, the SQL console and the recorder (imports the above
  and ``live``);
- ``advice/``: claims checked, serve commands written (imports the base, the model and the scenario
  layer);
- ``cli/``: the command line (imports anything).

Nothing here imports Streamlit: the pages in ``pages/`` read widgets, call specviz and render.
"""
