"""oneflow.experimental"""


def enable_typing_check(value=True):
    pass
