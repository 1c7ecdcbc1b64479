"""The ``rpcline`` command's subcommands (check, classify, bench, sample, proxy, serve) and
what they share; ``rpcline.cli`` puts them together.
"""
