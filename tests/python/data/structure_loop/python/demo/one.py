from . import two


def g():
    return two.f
