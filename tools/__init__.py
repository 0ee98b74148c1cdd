"""Offline tools for maintainers; nothing the site runs imports them."""
