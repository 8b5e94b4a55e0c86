def f():
    from .one import g

    return g
