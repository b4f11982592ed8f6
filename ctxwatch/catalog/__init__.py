"""The model catalogue: each model's context window and prices, from genai-prices' bundled snapshot (never the
network), with the rules the catalogue does not state (the 1M-token beta window, batch rates).

:mod:`.entries` looks models up in the catalogue, :mod:`.memo` keeps its answers across starts, :mod:`.windows`
picks a call's window and :mod:`.prices` its cost.  A stage of its own below the readers: a reader may ask how
large a model's window can be; the accounting asks for the window and the cost of every call.
"""
