"""oneflow.train: OneFlow 0.3's legacy CheckPoint. Variables initialise at session start, so
init() does nothing; files arrive with the checkpoint feature."""


class CheckPoint:
    def init(self):
        pass

    def save(self, path):
        raise NotImplementedError("saving checkpoints (CheckPoint.save) arrives in a later version")

    def load(self, path):
        raise NotImplementedError("loading checkpoints (CheckPoint.load) arrives in a later version")

