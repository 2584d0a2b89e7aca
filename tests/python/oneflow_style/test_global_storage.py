"""Global name -> numpy storage used by watch/watch_diff callbacks (OneFlow-style)."""
import numpy as np

global_storage = {}


def Get(name):
    return global_storage[name]


def Setter(name):
    def _set(x):
        # OneFlow hands unannotated watch handlers a blob object with .numpy()
        global_storage[name] = np.array(x.numpy(), copy=True)

    return _set


def SetAndGet(name):
    return Setter(name), lambda: Get(name)


def Clear():
    global_storage.clear()
