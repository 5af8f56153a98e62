__version__ = "4.57.1"
