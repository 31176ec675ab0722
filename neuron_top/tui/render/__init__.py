"""The render engine: the fast terminal path, in one folder, installed by the app for itself at start-up.

What each file does (widgets use the first three; only ``TerminalApp`` uses the rest):

* ``light.py``: ``LightStrip``, a Textual ``Strip`` whose caches are made when first read.
* ``spans.py``: which cells of a line changed (``changed_lines``), and ``LineDiff`` for widgets drawn line by line.
* ``paint.py``: ``paint(widget, spans)`` sends a widget's changed cells, straight to the writer when it is safe.
* ``terminal.py``: ``TerminalApp``, the base of the app, which installs the engine in ``__init__``.
* ``engine.py``: ``RenderEngine`` (one app's writer state) and ``render_mode`` (``--render``,
  ``$NEURON_TOP_RENDER``).
* ``frame_writer.py``: a frame as the fewest bytes (changed spans only; full repaints as what differs from the terminal).
* ``driver.py``: the input thread that sleeps until a key comes; a frame written in one piece.
* ``private.py``: every private Textual and Rich name used here, each with why, and the start-up check.

Importing any of these changes nothing in Textual (``tests/app/test_render_engine.py`` checks it). With
``--render textual`` the app runs on Textual's public paths only and looks the same.
"""
