"""attempt"""
