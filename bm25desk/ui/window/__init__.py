"""The main window's parts.

Menus and shortcuts, opening indexes, builds, the folder watcher's notice, and the session
remembered between runs.
"""
