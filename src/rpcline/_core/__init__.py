"""The classifier: scanning, messages, routes, stream framing, SSE and the HTTP ladder.

Each is a Cython module (``*_c.pyx``, with the C headers beside them) and its pure-Python
twin (``*_py.py``), mirrored function by function. This wing imports nothing else of
rpcline: the gateway, the command line and the public modules build on it.
"""
