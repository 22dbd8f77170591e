"""Contracts and cases from elsewhere: the providers' tool JSON, MCP servers, BFCL.

Each importer reads a source written by someone else and writes toolstand's own files
(a contract, case files, a config); nothing here runs a model or judges an answer.
"""
