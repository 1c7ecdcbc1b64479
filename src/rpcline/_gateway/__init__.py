"""The gateway: child processes and their pipes, pending tables, the relay of ``rpcline proxy``,
the shared child and its pool, the Guard, the bridge's HTTP, session, era and line pieces,
and the internals of ``rpcline.sdk``'s transport. It builds on ``rpcline._core`` only.
"""
