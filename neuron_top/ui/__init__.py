"""The Textual layer's terminal side, shared by every screen: the app's base class (terminal.py) and the driver
whose key reader sleeps until a key arrives (driver.py). Like app.py, screens/ and widgets/, it imports Textual;
the headless core never imports it."""
