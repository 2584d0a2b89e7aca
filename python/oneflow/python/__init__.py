"""OneFlow 0.3 kept its framework under `oneflow.python.*`; the few internal names that
0.3-era scripts reach into are provided here (see framework/session_context.py)."""
