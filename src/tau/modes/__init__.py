"""Run modes: print (text), JSON event stream, RPC and the interactive terminal UI."""
