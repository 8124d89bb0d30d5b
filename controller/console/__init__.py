"""The supervisor's full-screen terminal console (`tablectl console`).

client.py polls the controller's "state" and sends override commands over the control socket;
text.py turns the state into plain words; widgets.py and screens.py are the Textual parts;
app.py is the App that puts them together.
"""
