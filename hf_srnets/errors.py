"""`InputError`: bad input a user can fix, which scripts report as one line instead of a traceback."""


class InputError(ValueError):
    """A bad file, option, model path or output dir: the message names the problem and the fix.

    The scripts print it as one line, ``error: <message>``, and exit with status 2; an unexpected exception keeps its
    traceback. It subclasses `ValueError`, so code that catches a `ValueError` from option checks still does.
    """
