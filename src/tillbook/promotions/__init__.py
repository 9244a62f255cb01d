"""Promotions (DESIGN §18): the back office's price rules, their states and what
they cost. The engine that prices a basket by them is ``orders/promotions.py``."""
